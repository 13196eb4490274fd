"""The `numba` target (level 6): one Python module per device.

    xdsl-opt lowered.mlir -t numba        # every device module, one after another
    dflow compile model.mlir -o out/      # out/cpu_0.py, out/gpu_0.py, ...

Input: a module after `df-lower-host` (kernels, library declarations, globals
and host functions; or one such module per device). Each device's module of
Python holds:

- its constants (`memref.global`) as NumPy arrays, bit for bit;
- each kernel as a function named after it: on a CPU, `@numba.njit(cache=True,
  error_model="numpy")` with every `scf.parallel` as nested `for` loops (with
  `parallel=True`, the outermost loop becomes `numba.prange`); on a GPU, a
  launcher that runs each top-level `scf.parallel` as a `@cuda.jit` kernel of
  one thread per iteration (the index recovered from `cuda.grid(1)`), and the
  library routines as their own launches;
- each host function as a plain Python function `main(rt, *arguments)` of calls
  to the runtime context `rt` (arena, views, send/recv, copies);
- `ENTRIES`: per host function, what the runtime checks and routes: its Python
  name (the symbol, or `f_...` where the symbol is no Python identifier), the
  part's argument and result indices in the whole entry, and the entry's argument
  and result types as `(shape, dtype)` pairs;
- on a CPU, `KERNEL_ARGUMENTS`: each kernel's arrays as `(dtype, rank)` pairs,
  so the runtime can load a kernel's cached code before its first call
  (`runtime/warm_start.py`).

Values are named after the IR's names where it has them, so the code reads like
the graph it came from. Scalars keep their element type (`numba.float32(...)`
around constants), NaN propagates through maximum and minimum as in NumPy, and
integer division rounds toward zero.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from functools import singledispatchmethod as _singledispatchmethod
from typing import IO, Any, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.target import Target

from dflow.dialects import dfrt
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df import annotations
from dflow.dialects.df.annotations import KERNEL
from dflow.dialects.df.symbols import device_scopes
from dflow.lowering.kernels import LIBRARY_PREFIX

_DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64", "i1": "bool_"}
_NUMBA_SCALARS = {
    "f32": "float32",
    "f64": "float64",
    "i32": "int32",
    "i64": "int64",
    "i1": "boolean",
}
_BINARY_SYMBOLS: dict[type[Operation], str] = {
    arith.AddfOp: "+",
    arith.SubfOp: "-",
    arith.MulfOp: "*",
    arith.DivfOp: "/",
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.MuliOp: "*",
    arith.DivUIOp: "//",
    arith.RemUIOp: "%",
}
_HELPER_CALLS: dict[type[Operation], str] = {
    arith.MaximumfOp: "_maximum",
    arith.MinimumfOp: "_minimum",
    arith.DivSIOp: "_divide_toward_zero",
    math.PowFOp: "_power",
    math.IPowIOp: "_power",
}
_BUILTIN_CALLS: dict[type[Operation], str] = {
    arith.MaxSIOp: "max",
    arith.MinSIOp: "min",
    math.AbsFOp: "abs",
    math.AbsIOp: "abs",
    math.ExpOp: "math.exp",
    math.LogOp: "math.log",
    math.SqrtOp: "math.sqrt",
    math.TanhOp: "math.tanh",
}
_COMPARISONS = {
    "oeq": "==",
    "ogt": ">",
    "oge": ">=",
    "olt": "<",
    "ole": "<=",
    "une": "!=",
    "eq": "==",
    "ne": "!=",
    "sgt": ">",
    "sge": ">=",
    "slt": "<",
    "sle": "<=",
}
_CONVERSIONS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.ExtSIOp,
    arith.TruncIOp,
    arith.ExtUIOp,
)

SCALAR_HELPERS = """
def _maximum(a, b):
    return a if a > b or a != a else b


def _minimum(a, b):
    return a if a < b or a != a else b


def _divide_toward_zero(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _power(a, b):
    return a**b
"""
"""Scalar helpers every module defines, compiled for its device (`_maximum`
propagates NaN as `np.maximum`)."""

CPU_HEADER = """import math

import numba
import numpy as np

from dflow.runtime.library import cpu as lib

_inline = numba.njit(inline="always", error_model="numpy")
"""
GPU_THREADS = 256
"""Threads per block of a GPU grid kernel (`THREADS` in the emitted module)."""
GPU_HEADER = f"""import math

import numba
import numpy as np
from numba import cuda

from dflow.runtime.library import gpu as lib

_inline = cuda.jit(device=True, inline="always")
THREADS = {GPU_THREADS}
"""


def element_name(type: Attribute) -> str:
    """`f32` for a tensor, memref or element type of f32."""
    return str(cast(Attribute, getattr(type, "element_type", type)))


def dtype_of(type: Attribute) -> str:
    return f"np.{_DTYPES[element_name(type)]}"


def _identifier(hint: str | None, taken: set[str], fallback: str) -> str:
    base = re.sub(r"\W", "_", hint) if hint else fallback
    if not base or base[0].isdigit() or keyword.iskeyword(base):
        base = f"v_{base}"
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


@dataclass
class Names:
    """Python names of SSA values, unique in a function."""

    taken: set[str] = field(default_factory=lambda: {"rt", "lib", "np", "math", "numba", "cuda"})
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    aliases: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])

    def define(self, value: SSAValue, fallback: str = "v") -> str:
        name = _identifier(value.name_hint, self.taken, fallback)
        self.names[value] = name
        return name

    def alias(self, value: SSAValue, expression: str) -> None:
        self.aliases[value] = expression

    def __getitem__(self, value: SSAValue) -> str:
        return self.aliases.get(value) or self.names[value]


def _type_name(attribute: object) -> str:
    """`f32` for `1.0 : f32`."""
    return str(cast(Attribute, getattr(attribute, "type")))  # noqa: B009 (typed as Unknown)


def _literal(attribute: Attribute) -> str:
    if isinstance(attribute, FloatAttr):
        value = float(attribute.value.data)
        if np.isfinite(value):
            text = repr(value)
        else:
            text = "math.nan" if np.isnan(value) else f"{'-' if value < 0 else ''}math.inf"
        return f"numba.{_NUMBA_SCALARS[_type_name(cast(object, attribute))]}({text})"
    assert isinstance(attribute, IntegerAttr)
    value = attribute.value.data
    type_name = _type_name(cast(object, attribute))
    if type_name == "index":
        return str(value)
    if type_name == "i1":
        return "True" if value else "False"
    return f"numba.{_NUMBA_SCALARS[type_name]}({value})"


class Lines:
    """Python source, indented."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def indented(self) -> _Indent:
        return _Indent(self)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclass
class _Indent:
    lines: Lines

    def __enter__(self) -> None:
        self.lines.depth += 1

    def __exit__(self, *args: object) -> None:
        self.lines.depth -= 1


class dispatch_on_op(_singledispatchmethod):  # pyright: ignore[reportMissingTypeArgument]  # noqa: N801
    """`functools.singledispatchmethod` without the cost Python 3.11 pays on every
    attribute access (a fresh wrapper through `update_wrapper`, a fifth of the
    emitter's time; 3.12 caches it): the bound method is a plain closure."""

    def __get__(self, obj: Any, cls: type[Any] | None = None) -> Callable[..., Any]:
        dispatch: Callable[[type[Any]], Any] = self.dispatcher.dispatch  # pyright: ignore[reportUnknownMemberType]

        def method(*args: Any, **kwargs: Any) -> Any:
            return dispatch(args[0].__class__).__get__(obj, cls)(*args, **kwargs)

        return method


class KernelPrinter:
    """Prints the ops of a kernel body as Python statements (both targets)."""

    def __init__(self, out: Lines, names: Names):
        self.out = out
        self.names = names

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.print_op(op)

    def value(self, value: SSAValue) -> str:
        return self.names[value]

    def assign(self, op: Operation, expression: str, fallback: str = "v") -> None:
        self.out(f"{self.names.define(op.results[0], fallback)} = {expression}")

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        if type(op) in _BINARY_SYMBOLS:
            a, b = (self.value(o) for o in op.operands)
            self.assign(op, _wrapping(op, a, _BINARY_SYMBOLS[type(op)], b))
        elif type(op) in _HELPER_CALLS or type(op) in _BUILTIN_CALLS:
            callee = _HELPER_CALLS.get(type(op)) or _BUILTIN_CALLS[type(op)]
            self.assign(op, f"{callee}({', '.join(self.value(o) for o in op.operands)})")
        elif isinstance(op, _CONVERSIONS):
            target = _NUMBA_SCALARS[str(op.results[0].type)]
            self.assign(op, f"numba.{target}({self.value(op.operands[0])})")
        else:
            raise ValueError(f"the numba target cannot print {op.name}")

    @print_op.register
    def _(self, op: arith.ConstantOp) -> None:
        self.names.alias(op.result, _literal(op.value))

    @print_op.register
    def _(self, op: arith.NegfOp) -> None:
        self.assign(op, f"-{self.value(op.operand)}")

    @print_op.register
    def _(self, op: math.RsqrtOp) -> None:
        one = _literal(FloatAttr(1.0, op.result.type))  # type: ignore[arg-type]
        self.assign(op, f"{one} / math.sqrt({self.value(op.operand)})")

    @print_op.register
    def _(self, op: arith.CmpfOp | arith.CmpiOp) -> None:
        predicate = str(op.predicate.value.data)
        symbol = _COMPARISONS[_predicate_name(op, int(predicate))]
        self.assign(op, f"{self.value(op.lhs)} {symbol} {self.value(op.rhs)}")

    @print_op.register
    def _(self, op: arith.SelectOp) -> None:
        c, a, b = (self.value(o) for o in op.operands)
        self.assign(op, f"{a} if {c} else {b}")

    @print_op.register
    def _(self, op: memref.LoadOp) -> None:
        self.assign(op, f"{self.value(op.memref)}[{self.index(op.indices)}]")

    @print_op.register
    def _(self, op: memref.StoreOp) -> None:
        self.out(f"{self.value(op.memref)}[{self.index(op.indices)}] = {self.value(op.value)}")

    @print_op.register
    def _(self, op: memref.CastOp) -> None:
        self.names.alias(op.dest, self.value(op.source))

    @print_op.register
    def _(self, op: scf.ForOp) -> None:
        body = op.body.block
        carried = [self.names.define(a, "acc") for a in body.args[1:]]
        for name, init in zip(carried, op.iter_args, strict=True):
            self.out(f"{name} = {self.value(init)}")
        iv = self.names.define(body.args[0], "k")
        self.out(
            f"for {iv} in range({self.value(op.lb)}, {self.value(op.ub)}, {self.value(op.step)}):"
        )
        with self.out.indented():
            self.block(body)
        for result, name in zip(op.results, carried, strict=True):
            self.names.alias(result, name)

    @print_op.register
    def _(self, op: scf.YieldOp) -> None:
        block = op.parent_block()
        assert block is not None
        targets = [self.value(a) for a in block.args[1:]]
        if targets:
            self.out(f"{', '.join(targets)} = {', '.join(self.value(v) for v in op.operands)}")

    @print_op.register
    def _(self, op: scf.ParallelOp) -> None:
        """Nested `for` loops (inside a GPU thread, and on a CPU: see `loop_kind`)."""
        body = op.body.block
        for depth, (iv, lb, ub, step) in enumerate(
            zip(body.args, op.lowerBound, op.upperBound, op.step, strict=True)
        ):
            loop = self.loop_kind(depth, lb, ub, step)
            name = self.names.define(iv, f"i{depth}")
            self.out(
                f"for {name} in {loop}({self.value(lb)}, {self.value(ub)}, {self.value(step)}):"
            )
            self.out.depth += 1
        self.block(body)
        self.out.depth -= len(body.args)

    def loop_kind(self, depth: int, lb: SSAValue, ub: SSAValue, step: SSAValue) -> str:
        """The Python iterator of a parallel loop: sequential by default."""
        return "range"

    @print_op.register
    def _(self, op: scf.ReduceOp) -> None:
        """The empty terminator of a parallel loop: nothing to print."""

    @print_op.register
    def _(self, op: func.ReturnOp) -> None:
        """A kernel returns nothing: its results are in its output buffers."""

    @print_op.register
    def _(self, op: func.CallOp) -> None:
        routine = op.callee.root_reference.data.removeprefix(LIBRARY_PREFIX)
        self.out(f"lib.{routine}({', '.join(self.value(a) for a in op.arguments)})")

    def index(self, indices: tuple[SSAValue, ...] | Any) -> str:
        values = [self.value(i) for i in indices]
        if not values:
            return "()"
        return ", ".join(values)


def _wrapping(op: Operation, a: str, symbol: str, b: str) -> str:
    """`a symbol b`, wrapping as integer arithmetic must: numba computes int32 in int64
    (so the result is truncated back) and lets LLVM assume int64 never overflows (so
    int64 goes through uint64, whose arithmetic wraps)."""
    element = str(op.results[0].type)
    if not isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp):
        return f"{a} {symbol} {b}"
    if element == "i32":
        return f"numba.int32({a} {symbol} {b})"
    if element == "i64":
        return f"numba.int64(numba.uint64({a}) {symbol} numba.uint64({b}))"
    return f"{a} {symbol} {b}"


def _predicate_name(op: arith.CmpfOp | arith.CmpiOp, value: int) -> str:
    names = (
        [
            "false",
            "oeq",
            "ogt",
            "oge",
            "olt",
            "ole",
            "one",
            "ord",
            "ueq",
            "ugt",
            "uge",
            "ult",
            "ule",
            "une",
            "uno",
            "true",
        ]
        if isinstance(op, arith.CmpfOp)
        else ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    )
    return names[value]


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
        if self.parallel and depth == 0 and _trips(lb, ub, step) > 1:
            self.pranges += 1
            return "numba.prange"
        return "range"

    @print_op.register
    def _(self, op: memref.AllocOp) -> None:
        shape = tuple(op.memref.type.get_shape())
        self.assign(op, f"np.empty({shape}, {dtype_of(op.memref.type)})", "scratch")

    @print_op.register
    def _(self, op: memref.LoadOp) -> None:
        """With `parallel`, a 0-d array is read with `.item()`: numba's parfors pass
        the 0-d arrays a `prange` body reads as scalars, on which `[()]` fails to
        type (numba 0.68)."""
        if self.parallel and not op.indices:
            self.assign(op, f"{self.value(op.memref)}.item()")
        else:
            super().print_op(op)


def _trips(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int:
    """The trip count of a loop with constant bounds."""
    first, last, stride = (int(_constant_value(v)) for v in (lb, ub, step))
    return max(0, -(-(last - first) // stride))


def _static(ops: Iterator[SSAValue]) -> list[int]:
    return [int(_constant_value(v)) for v in ops]


def _constant_value(value: SSAValue) -> int:
    owner = value.owner
    assert isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr)
    return owner.value.value.data


class GpuKernelPrinter(KernelPrinter):
    """Kernels for CUDA: a host-side launcher per kernel; each top-level
    `scf.parallel` becomes a `@cuda.jit` kernel of one thread per iteration."""

    def __init__(self, out: Lines, names: Names, kernel_name: str, arguments: list[str]):
        super().__init__(out, names)
        self.kernel_name = kernel_name
        self.arguments = arguments
        self.grids: list[Lines] = []

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        super().print_op(op)

    @print_op.register
    def _(self, op: memref.AllocOp) -> None:
        shape = tuple(op.memref.type.get_shape())
        self.assign(op, f"cuda.device_array({shape}, {dtype_of(op.memref.type)})", "scratch")
        self.arguments.append(self.value(op.memref))

    @print_op.register
    def _(self, op: scf.ParallelOp) -> None:
        lows, highs, steps = (
            _static(iter(values)) for values in (op.lowerBound, op.upperBound, op.step)
        )
        extents = [
            max(0, -(-(high - low) // step))
            for low, high, step in zip(lows, highs, steps, strict=True)
        ]
        total = int(np.prod(extents))
        if total == 0:
            return
        grid = Lines()
        name = f"{self.kernel_name}_grid{len(self.grids)}"
        grid("@cuda.jit(cache=True)")
        grid(f"def {name}({', '.join(self.arguments)}):")
        with grid.indented():
            grid("thread = cuda.grid(1)")
            grid(f"if thread >= {total}:")
            with grid.indented():
                grid("return")
            stride = total
            for axis, (iv, low, step, extent) in enumerate(
                zip(op.body.block.args, lows, steps, extents, strict=True)
            ):
                stride //= extent
                position = f"thread // {stride}" if stride > 1 else "thread"
                if axis > 0:
                    position = f"{position} % {extent}" if stride > 1 else f"thread % {extent}"
                scaled = f"{position} * {step}" if step != 1 else position
                index = f"{low} + {scaled}" if low else scaled
                grid(f"{self.names.define(iv, 'i')} = {index}")
            KernelPrinter(grid, self.names).block(op.body.block)
        self.grids.append(grid)
        blocks = -(-total // GPU_THREADS)
        self.out(f"{name}[{blocks}, THREADS]({', '.join(self.arguments)})")


@dataclass
class ModulePrinter:
    """Prints one device module of a lowered module as Python source."""

    scope: ModuleOp
    parallel: bool = False
    out: Lines = field(default_factory=Lines)

    @property
    def device(self) -> str:
        return annotations.device_of(self.scope) or DEFAULT_DEVICE

    @property
    def on_gpu(self) -> bool:
        return self.device.startswith("gpu")

    def print(self) -> str:
        out = self.out
        out(f'"""dflow: the program for device {self.device} (emitted by the numba target)."""')
        out("")
        out((GPU_HEADER if self.on_gpu else CPU_HEADER).rstrip("\n"))
        out(f'DEVICE = "{self.device}"')
        for helper in SCALAR_HELPERS.strip().split("\n\n\n"):
            out("")
            out("")
            out("@_inline")
            for line in helper.split("\n"):
                out(line)
        for op in self.scope.ops:
            if isinstance(op, memref.GlobalOp):
                self.global_(op)
        for op in self.scope.ops:
            if isinstance(op, func.FuncOp) and KERNEL in op.attributes:
                self.kernel(op)
        entries: dict[str, dict[str, Any]] = {}
        for op in self.scope.ops:
            if (
                isinstance(op, func.FuncOp)
                and not op.is_declaration
                and KERNEL not in op.attributes
            ):
                entries[op.sym_name.data] = self.host(op)
        out("")
        out("")
        out(f"ENTRIES = {entries!r}")
        if not self.on_gpu:
            out(f"KERNEL_ARGUMENTS = {self.kernel_arguments()!r}")
        return out.text()

    def kernel_arguments(self) -> dict[str, list[tuple[str, int]]]:
        """Each CPU kernel's arrays as (dtype, rank): the types the host passes, so
        the runtime can load the cached code before the first call."""
        return {
            op.sym_name.data: [
                (_DTYPES[element_name(t)], len(cast(MemRefType[Attribute], t).get_shape()))
                for t in op.function_type.inputs
            ]
            for op in self.scope.ops
            if isinstance(op, func.FuncOp) and KERNEL in op.attributes
        }

    def global_(self, op: memref.GlobalOp) -> None:
        value = op.initial_value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        type = op.type
        dtype = dtype_of(type)
        data = bytes(value.data.data)
        shape = tuple(type.get_shape())
        self.out("")
        if str(type.element_type) == "i1":
            array = f"(np.frombuffer(bytes.fromhex({data.hex()!r}), np.int8) != 0)"
        else:
            array = (
                f"np.frombuffer(bytes.fromhex({data.hex()!r}), {dtype}.__name__).astype({dtype})"
            )
        self.out(f"{op.sym_name.data} = {array}.reshape({shape})")

    @cached_property
    def module_level_names(self) -> frozenset[str]:
        """The names the module defines: globals, kernels, helpers, its constants."""
        taken = {"DEVICE", "THREADS", "ENTRIES", "KERNEL_ARGUMENTS", "_inline"}
        taken |= set(re.findall(r"^def (\w+)", SCALAR_HELPERS, re.MULTILINE))
        for op in self.scope.ops:
            if isinstance(op, memref.GlobalOp | func.FuncOp):
                taken.add(op.sym_name.data)
        return frozenset(taken)

    def module_names(self) -> Names:
        """Names for one function's values, none shadowing a name of the module (a
        global, a kernel, a helper), which the function may refer to."""
        names = Names()
        names.taken |= self.module_level_names
        return names

    def kernel(self, op: func.FuncOp) -> None:
        names = self.module_names()
        arguments = [names.define(a, f"arg{i}") for i, a in enumerate(op.args)]
        self.out("")
        self.out("")
        if self.on_gpu:
            body = Lines()
            body.depth = 1
            printer = GpuKernelPrinter(body, names, op.sym_name.data, arguments)
            printer.block(op.body.block)
            for grid in printer.grids:
                for line in grid.lines:
                    self.out(line)
                self.out("")
                self.out("")
            self.out(f"def {op.sym_name.data}({', '.join(arguments[: len(op.args)])}):")
            self.out.lines.extend(body.lines or ["    pass"])
            return
        decorator = len(self.out.lines)
        self.out('@numba.njit(cache=True, error_model="numpy")')
        self.out(f"def {op.sym_name.data}({', '.join(arguments)}):")
        with self.out.indented():
            printer = CpuKernelPrinter(self.out, names, self.parallel)
            printer.block(op.body.block)
            if printer.pranges:  # parallel=True without a prange only earns a warning
                self.out.lines[decorator] = (
                    '@numba.njit(cache=True, error_model="numpy", parallel=True)'
                )
            if not any(isinstance(o, scf.ParallelOp | func.CallOp) for o in op.body.block.ops):
                self.out("pass")

    def host(self, op: func.FuncOp) -> dict[str, Any]:
        names = self.module_names()
        arguments = [names.define(a, f"arg{i}") for i, a in enumerate(op.args)]
        function = self.host_name(op.sym_name.data)
        self.out("")
        self.out("")
        self.out(f"def {function}({', '.join(['rt', *arguments])}):")
        with self.out.indented():
            HostPrinter(self.out, names).block(op.body.block)
        return {**_entry(op), "function": function}

    @cached_property
    def symbols_taken(self) -> set[str]:
        """Module-level Python names given so far (grows as host names are made)."""
        return set(self.module_level_names)

    def host_name(self, symbol: str) -> str:
        """The Python name of host function `@symbol`: the symbol itself where it is
        an identifier and no keyword, else a unique `f_...` (MLIR allows `@pass`,
        `@a.b`, `@"x y"`)."""
        if symbol.isidentifier() and not keyword.iskeyword(symbol):
            return symbol
        return _identifier(f"f_{symbol}", self.symbols_taken, "f")


def _signature(types: Sequence[Attribute]) -> list[tuple[tuple[int, ...], str]]:
    result: list[tuple[tuple[int, ...], str]] = []
    for type in types:
        assert isinstance(type, TensorType | MemRefType)
        type = cast(TensorType[Attribute] | MemRefType[Attribute], type)
        result.append((tuple(type.get_shape()), _DTYPES[element_name(type)]))
    return result


def _entry(op: func.FuncOp) -> dict[str, Any]:
    """What the runtime needs to route and check a call of this part of the entry."""
    whole = op.attributes.get(annotations.FUNCTION_TYPE)
    function_type = whole if isinstance(whole, FunctionType) else op.function_type
    arguments = op.attributes.get(annotations.ARGUMENTS)
    results = op.attributes.get(annotations.RESULTS)
    arena = op.attributes.get(annotations.ARENA_BYTES)
    return {
        "arguments": list(arguments.get_values())
        if isinstance(arguments, DenseArrayBase)
        else list(range(len(op.args))),
        "results": list(results.get_values())
        if isinstance(results, DenseArrayBase)
        else list(range(len(op.function_type.outputs))),
        "entry_arguments": _signature(function_type.inputs.data),
        "entry_results": _signature(function_type.outputs.data),
        "arena_bytes": arena.value.data if isinstance(arena, IntegerAttr) else 0,
    }


class HostPrinter(KernelPrinter):
    """A host function: one runtime call per `dfrt` op."""

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        super().print_op(op)

    @print_op.register
    def _(self, op: dfrt.ArenaOp) -> None:
        self.assign(op, f"rt.arena({op.result.type.get_shape()[0]})", "arena")

    @print_op.register
    def _(self, op: dfrt.OutputOp) -> None:
        type = op.result.type
        self.assign(op, f"rt.output({tuple(type.get_shape())}, {dtype_of(type)})")

    @print_op.register
    def _(self, op: dfrt.ViewOp) -> None:
        type = op.result.type
        shape = tuple(type.get_shape())
        self.assign(
            op,
            f"rt.view({self.value(op.arena)}, {op.offset.value.data}, {shape}, {dtype_of(type)})",
        )

    @print_op.register
    def _(self, op: dfrt.LaunchOp) -> None:
        self.out(
            f"{op.callee.root_reference.data}({', '.join(self.value(a) for a in op.arguments)})"
        )

    @print_op.register
    def _(self, op: dfrt.SendOp) -> None:
        self.out(f"rt.send({op.key.data!r}, {op.destination.data!r}, {self.value(op.buffer)})")

    @print_op.register
    def _(self, op: dfrt.RecvOp) -> None:
        self.out(f"rt.recv({op.key.data!r}, {op.source.data!r}, {self.value(op.buffer)})")

    @print_op.register
    def _(self, op: dfrt.ToDeviceOp) -> None:
        self.assign(op, f"rt.to_device({self.value(op.source)})")

    @print_op.register
    def _(self, op: dfrt.FetchOp) -> None:
        self.assign(op, f"rt.fetch({self.value(op.source)})")

    @print_op.register
    def _(self, op: memref.GetGlobalOp) -> None:
        self.names.alias(op.memref, op.name_.root_reference.data)

    @print_op.register
    def _(self, op: func.ReturnOp) -> None:
        values = [self.value(v) for v in op.operands]
        self.out(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")


def emit_modules(module: ModuleOp, parallel: bool = False) -> dict[str, str]:
    """The Python source of each device's module, by device."""
    return {
        device or DEFAULT_DEVICE: ModulePrinter(scope, parallel).print()
        for device, scope in device_scopes(module)
    }


def module_file_name(device: str) -> str:
    """`cpu:0` -> `cpu_0.py`."""
    return device.replace(":", "_") + ".py"


@dataclass(frozen=True)
class NumbaTarget(Target):
    """`xdsl-opt -t numba`: every device's Python module, each headed by a comment
    line naming its file."""

    name = "numba"

    parallel: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        for device, source in emit_modules(module, self.parallel).items():
            output.write(f"# ----- {module_file_name(device)} -----\n")
            output.write(source)
