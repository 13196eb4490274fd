"""CPU kernels: `@numba.njit` functions whose parallel loops are `for` loops.

Each kernel is decorated `@_kernel("<digest>")` (`runtime/kernel_cache.py`: a
numba dispatcher with NumPy's floating-point error model, cached by content): the
digest hashes the kernel's text, less its name, with the module header and the
scalar helpers, so the same kernel in two programs, or in a program before and
after an edit elsewhere, is compiled once. With `parallel`, the outermost loop of
each nest is a `numba.prange` (and the kernel `parallel=True`). `exp`, `log` and
`tanh` call the vectorizable functions of `runtime/library/vmath.py`
(`vm.exp_f32(x)`), not libm's scalar ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import cast

from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import Float32Type, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

from dflow.backend.numba.kernel import SCALAR_HELPERS, KernelPrinter, trips
from dflow.backend.numba.names import DTYPES, Names, dtype_of, element_name
from dflow.backend.numba.printer import Lines, dispatch_on_op
from dflow.dialects.upstream import RemFOp
from dflow.lowering.kernels.names import LIBRARY_PREFIX

CPU_HEADER = """import math

import numba
import numpy as np

from dflow.runtime.kernel_cache import kernel as _kernel
from dflow.runtime.library import cpu as lib
from dflow.runtime.library import vmath as vm

_inline = numba.njit(inline="always", error_model="numpy")
"""


VECTOR_FUNCTIONS: dict[type[Operation], str] = {
    math.ExpOp: "exp",
    math.LogOp: "log",
    math.TanhOp: "tanh",
}
"""The `math` ops CPU kernels compute with `runtime/library/vmath.py`."""

HALF_CONVERSIONS: dict[tuple[str, str], str] = {
    ("f16", "f32"): "f16_to_f32",
    ("f32", "f16"): "f32_to_f16",
    ("bf16", "f32"): "bf16_to_f32",
    ("f32", "bf16"): "f32_to_bf16",
}
"""The conversions CPU kernels make with `vm` (vectorizable; from f64 to a half, the
scalar helpers round once from the f64 value)."""

ROUNDING_FUNCTIONS: dict[type[Operation], str] = {
    math.FloorOp: "floor",
    math.CeilOp: "ceil",
    math.RoundEvenOp: "rint",
}
"""The `math` ops CPU kernels compute with NumPy's functions, whose results stay floats."""


class CpuKernelPrinter(KernelPrinter):
    """Kernels for `@numba.njit`: loops are `for` loops (`prange` for the outermost
    loop of each nest when `parallel`)."""

    def __init__(self, out: Lines, names: Names, parallel: bool):
        super().__init__(out, names)
        self.parallel = parallel
        self.pranges = 0

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        super().print_op(op)

    def loop_kind(self, depth: int, lb: SSAValue, ub: SSAValue, step: SSAValue) -> str:
        """`numba.prange` for the outer loop of a nest of more than one trip when
        `parallel` (a single trip is never a `prange`: numba's parfors cannot store
        into the 0-d arrays that such loops write)."""
        if self.parallel and depth == 0 and trips(lb, ub, step) > 1:
            self.pranges += 1
            return "numba.prange"
        return "range"

    @print_op.register
    def _(self, op: math.ExpOp | math.LogOp | math.TanhOp) -> None:
        """`vm.<function>_<f32|f64>(x)`: vectorizable, within `vm.ERROR_BOUNDS`."""
        suffix = "f32" if isinstance(op.result.type, Float32Type) else "f64"
        self.assign(op, f"vm.{VECTOR_FUNCTIONS[type(op)]}_{suffix}({self.value(op.operand)})")

    @print_op.register
    def _(self, op: arith.ExtFOp | arith.TruncFOp) -> None:
        """`vm.f16_to_f32(bits)` and the like (`HALF_CONVERSIONS`), else as any cast."""
        call = HALF_CONVERSIONS.get((str(op.operands[0].type), str(op.results[0].type)))
        if call is None:
            super().print_op(op)
        else:
            self.assign(op, f"vm.{call}({self.value(op.operands[0])})")

    @print_op.register
    def _(self, op: math.FloorOp | math.CeilOp | math.RoundEvenOp) -> None:
        """`np.floor(x)` (numba's `math.floor` is an int, as Python's: no -0.0, no inf),
        `np.ceil(x)`, `np.rint(x)` (halves to even)."""
        self.assign(op, f"np.{ROUNDING_FUNCTIONS[type(op)]}({self.value(op.operand)})")

    @print_op.register
    def _(self, op: RemFOp) -> None:
        """`np.fmod(a, b)`: numba has no `math.fmod` on CPUs (CUDA kernels call it)."""
        self.assign(op, f"np.fmod({self.value(op.lhs)}, {self.value(op.rhs)})")

    @print_op.register
    def _(self, op: memref.AllocOp) -> None:
        shape = tuple(op.memref.type.get_shape())
        self.assign(op, f"np.empty({shape}, {dtype_of(op.memref.type)})", "scratch")

    @print_op.register
    def _(self, op: memref.CollapseShapeOp) -> None:
        """`x.reshape(n)`: a view, as the arrays a CPU kernel gets are C-contiguous."""
        shape = tuple(op.result.type.get_shape())
        self.assign(op, f"{self.value(op.src)}.reshape({shape})")

    @print_op.register
    def _(self, op: memref.LoadOp) -> None:
        """With `parallel`, a 0-d array is read with `.item()`: numba's parfors pass
        the 0-d arrays a `prange` body reads as scalars, on which `[()]` fails to
        type (numba 0.68)."""
        if self.parallel and not op.indices:
            self.assign(op, f"{self.value(op.memref)}.item()")
        else:
            super().print_op(op)


def print_cpu_kernel(
    out: Lines, kernel: func.FuncOp, names: Names, parallel: bool, name: str, epilogue_name: str
) -> str | None:
    """`kernel` as a Python function `name`: a decorated numba
    kernel, or, where it begins with library calls (`library_calls`), a plain
    function that makes them and then calls the rest of the kernel, a numba kernel
    named `epilogue_name`, if any rest is left. The name of the numba kernel, or
    None where there is none (`library_signatures` tells the calls made)."""
    arguments = [names.define(a, f"arg{i}") for i, a in enumerate(kernel.args)]
    signature = f"({', '.join(arguments)}):"
    ops = list(kernel.body.block.ops)
    calls = library_calls(ops)
    if not calls:
        _print_numba_kernel(out, name, signature, ops, names, parallel)
        return name
    wrapper = Lines(out.depth + 1)
    printer = CpuKernelPrinter(wrapper, names, parallel)
    for op in calls:  # first: the rest may use their constants
        printer.print_op(op)
    rest = ops[len(calls) :]
    has_rest = any(not isinstance(op, NO_CODE) for op in rest)
    if has_rest:
        _print_numba_kernel(out, epilogue_name, signature, rest, names, parallel)
        out("")
        out("")
        wrapper(f"{epilogue_name}({', '.join(arguments)})")
    out(f"def {name}{signature}")
    out.extend(wrapper)
    return epilogue_name if has_rest else None


NO_CODE = (arith.ConstantOp, memref.CastOp, func.ReturnOp)
"""Ops a kernel prints nothing for: constants and casts are aliases."""


def library_calls(ops: Sequence[Operation]) -> Sequence[Operation]:
    """The leading ops of a kernel body up to its last leading library call, where
    it begins with such calls (on its arguments and constants: nothing else comes
    before them). A numba kernel that calls a library routine links the routine's
    code into its own and optimizes it again: a kernel calling `conv2d_bias_f32`
    took 0.9 s to compile, one of the same loops without the call 0.15 s. Called
    from Python instead, the routine is compiled once per process and signature
    (and cached on disk by numba), whatever kernels call it."""
    leading = 0
    for index, op in enumerate(ops):
        if isinstance(op, func.CallOp):
            leading = index + 1
        elif not isinstance(op, arith.ConstantOp | memref.CastOp):
            break
    return ops[:leading]


def _print_numba_kernel(
    out: Lines,
    name: str,
    signature: str,
    ops: Sequence[Operation],
    names: Names,
    parallel: bool,
) -> None:
    body = Lines(out.depth + 1)
    printer = CpuKernelPrinter(body, names, parallel)
    for op in ops:
        printer.print_op(op)
    if not any(isinstance(o, scf.ParallelOp | func.CallOp) for o in ops):
        body("pass")
    options = ", parallel=True" if printer.pranges else ""  # without a prange: a warning
    out(f'@_kernel("{kernel_digest(options, signature, body.text())}"{options})')
    out(f"def {name}{signature}")
    out.extend(body)


def kernel_digest(options: str, signature: str, body: str) -> str:
    """What identifies a CPU kernel's machine code, given the runtime: its numba
    options, arguments and body, and the header and helpers of the module it is in."""
    text = "\0".join((CPU_HEADER, SCALAR_HELPERS, options, signature, body))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def library_signatures(ops: Sequence[Operation]) -> list[tuple[str, list[tuple[str, int]]]]:
    """The library routines the calls among `ops` make from Python, each with the
    (dtype, rank) of its arguments: arrays C-contiguous (an unranked memref has its
    cast's rank), scalars of rank -1 (an index is an int64)."""
    return [
        (
            op.callee.root_reference.data.removeprefix(LIBRARY_PREFIX),
            [_parameter(argument) for argument in op.arguments],
        )
        for op in ops
        if isinstance(op, func.CallOp)
    ]


def _parameter(value: SSAValue) -> tuple[str, int]:
    if isinstance(value.owner, memref.CastOp):
        value = value.owner.source
    memref_type = value.type
    if isinstance(memref_type, MemRefType):
        memref_type = cast(MemRefType[Attribute], memref_type)
        return DTYPES[element_name(memref_type)], len(memref_type.get_shape())
    return DTYPES.get(str(value.type), "int64"), -1


def kernel_arguments(kernels: Mapping[str, func.FuncOp]) -> dict[str, list[tuple[str, int]]]:
    """Each numba kernel's arrays as (dtype, rank), by the kernel's Python name: the
    types the host passes, so the runtime can load the cached code before the first
    call (`KERNEL_ARGUMENTS`). `kernels`: the kernel op each was printed from."""
    return {
        name: [
            (DTYPES[element_name(t)], len(cast(MemRefType[Attribute], t).get_shape()))
            for t in kernel.function_type.inputs
        ]
        for name, kernel in kernels.items()
    }
