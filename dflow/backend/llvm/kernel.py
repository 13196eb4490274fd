"""One kernel as an LLVM IR function: `scf` loops, `arith` and `math` ops, `memref`
loads and stores over statically shaped buffers, printed as LLVM's textual IR.

A kernel's memref arguments become pointers (`ptr`, opaque), indexed row-major by
their static shapes; `scf.for` becomes a loop with its carried values as `phi`s,
`scf.parallel` nested loops (run in order). Floats keep LLVM's own types (`half`,
`bfloat`, `float`, `double`), so f16 and bf16 convert by `fpext`/`fptrunc`;
`arith` ops map to LLVM's instructions and intrinsics of the same meaning (`frem`
is C's `fmod`; `arith.maximumf` is NumPy's maximum, a NaN propagated and of equal
zeros the second kept, as a compare and a select that x86 makes one `max` and a
blend). Library calls are `library.py`'s; a scratch buffer (`memref.alloc`) comes
from `malloc` and is freed at the return. What this printer does not handle yet
(the other library routines, the 8- and 4-bit floats and 2- and 4-bit integers) is
refused with an `UnsupportedKernelError` naming the op.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from math import prod
from typing import Any, cast

from xdsl.dialects import arith, func, math, memref, scf, vector
from xdsl.dialects.builtin import (
    MemRefType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from dflow.backend.llvm import threads, vectors, vmath
from dflow.backend.llvm.convolution import FREE, MALLOC
from dflow.backend.llvm.epilogue import Elementwise, fusable
from dflow.backend.llvm.library import (
    direct_convolution,
    direct_nchwc,
    direct_nchwc_pool,
    direct_pool,
    library_routine,
    print_convolution,
    print_product,
)
from dflow.backend.llvm.nchwc import GeneratedConvolution
from dflow.backend.llvm.types import UnsupportedKernelError, literal, llvm_type, suffix
from dflow.dialects.upstream import RemFOp


def fast_math(op: Operation) -> str:
    """The LLVM fast-math flags of an `arith` op's `fastmath` property, each after a
    space (` reassoc`): a fold marks its combine so (`lowering/kernels/`), which LLVM's
    loop vectorizer needs to fold in vector lanes."""
    flags = op.properties.get("fastmath")
    if not isinstance(flags, arith.FastMathFlagsAttr):
        return ""
    return "".join(f" {flag}" for flag in sorted(flags.data))


BINARY = {
    arith.AddfOp: "fadd",
    arith.SubfOp: "fsub",
    arith.MulfOp: "fmul",
    arith.DivfOp: "fdiv",
    RemFOp: "frem",
    arith.AddiOp: "add",
    arith.SubiOp: "sub",
    arith.MuliOp: "mul",
    arith.DivUIOp: "udiv",
}
"""`arith` ops that are one LLVM instruction of the same name's meaning."""

EXTREMA: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
}
"""NaN-propagating extrema, as LLVM's intrinsics where the sign of a zero result does
not matter (`nsz`: a softmax's shift): `llvm.maximum` orders -0 below +0, where NumPy
keeps the second of equal zeros (`KernelPrinter.extremum`), and its reductions are the
ones LLVM's loop vectorizer folds in vector lanes."""

INTRINSICS = {
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
    math.ExpOp: "llvm.exp",
    math.LogOp: "llvm.log",
    math.SqrtOp: "llvm.sqrt",
    math.AbsFOp: "llvm.fabs",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.RoundEvenOp: "llvm.roundeven",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.PowFOp: "llvm.pow",
}
"""Ops that are an LLVM intrinsic overloaded on their type (`llvm.exp.f32`, ...)."""

ELEMENT_BYTES = {
    "i1": 1,
    "i8": 1,
    "i16": 2,
    "i32": 4,
    "i64": 8,
    "half": 2,
    "bfloat": 2,
    "float": 4,
    "double": 8,
}
"""Bytes of one element in memory, by LLVM type (booleans are bytes)."""

SCALAR_LOOP_MAX_TRIPS = 64
"""A loop that runs at most this many times per call of its kernel (its trip count
times its enclosing loops', all constants) is marked not to be vectorized
(`llvm.loop.vectorize.enable` false): vectorizing it saves at most tens of
nanoseconds a call and costs LLVM milliseconds. The generated 200-op program's
kernels (4x8 tensors) compiled in 0.148 s instead of 0.212 s, and ran as fast
(43 us a call either way, 2026-11-29)."""

NO_VECTORIZE = '!0 = !{!"llvm.loop.vectorize.enable", i1 false}'
"""The loop property of a loop left scalar (`SCALAR_LOOP_MAX_TRIPS`)."""

TAIL_FOLDED = (
    '!{!"llvm.loop.vectorize.enable", i1 true}',
    '!{!"llvm.loop.vectorize.width", i32 16}',
    '!{!"llvm.loop.interleave.count", i32 1}',
    '!{!"llvm.loop.vectorize.predicate.enable", i1 true}',
)
"""The loop properties of a fused rest's loop (`epilogue.py`) whose body calls only
functions LLVM vectorizes (`_SCALAR_CALL`): vectorized 16 lanes
wide, its last iteration masked rather than a scalar loop after the vector one. Its
runs are short (a row of 7 to 112 columns, a tile's 32 positions), and LLVM's own
choice (16 lanes, interleaved by 2 or 4) ran runs of under 32 or 64 scalar:
EfficientNet-B0's SiLU rests took 16% of its call."""

VECTOR_MATH = {math.ExpOp: "exp", math.LogOp: "log", math.TanhOp: "tanh", math.ErfOp: "erf"}
"""Ops computed by `vmath.py`'s functions (on the types it has them for: erf on float
only), which loops vectorize; `LIBM` computes the others."""

LIBM = {math.TanhOp: "tanh", math.ErfOp: "erf"}
"""Ops that are a C library function: `tanhf` on float, `tanh` on double."""

CASTS: dict[type[Operation], str] = {
    arith.ExtFOp: "fpext",
    arith.TruncFOp: "fptrunc",
    arith.SIToFPOp: "sitofp",
    arith.UIToFPOp: "uitofp",
    arith.FPToSIOp: "fptosi",
    arith.FPToUIOp: "fptoui",
    arith.ExtSIOp: "sext",
    arith.ExtUIOp: "zext",
    arith.TruncIOp: "trunc",
}


@dataclass
class KernelPrinter:
    """Prints one kernel function; `declarations` collects the intrinsics and library
    functions it calls, for the module to declare once."""

    declarations: set[str]
    parallel_loops: bool = False
    """Whether outer parallel loops are split over threads (`threads.py`)."""
    lines: list[str] = field(default_factory=list[str])
    chunks: list[list[str]] = field(default_factory=list[list[str]])
    """The functions printed after the kernel: of the loops split over threads, and
    of a convolution with its elementwise rest fused (`epilogue.py`)."""
    shared: dict[str, str] = field(default_factory=dict[str, str])
    """Functions kernels share, by name (the NCHWc tiles): defined in units of their
    own (`program.py`), declared in the kernel's."""
    sizes: dict[str, str] = field(default_factory=dict[str, str])
    """The value of each size argument, by name: loops over them are counted as the
    constants they are (`trips`), so they print as before but for the bound."""
    scalars: list[int] = field(default_factory=list[int])
    """The kernel's shapes taken as arguments (`size_argument`): its callers pass them, after
    its buffers, so that kernels differing only in them print the same."""
    kernel: str = ""
    calls_made: bool = False
    """Whether the kernel's library calls are made before it, from Python (an
    epilogue: `program.py`), so that it prints none."""
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    scratch: list[str] = field(default_factory=list[str])
    """The scratch buffers allocated (`memref.alloc`), freed at the return."""
    counter: int = 0
    block: str = "entry"
    trips: int | None = 1
    """How many times the loop being printed runs per call (None: not a constant)."""
    scalar_loops: list[int] = field(default_factory=list[int])
    """The metadata node of each loop left scalar (`SCALAR_LOOP_MAX_TRIPS`)."""
    tail_folded: list[int] | None = None
    """Where given, every loop is vectorized with its tail masked (`TAIL_FOLDED`):
    the metadata node of each."""
    fused: dict[scf.ParallelOp, tuple[func.CallOp, GeneratedConvolution, Elementwise]] = field(
        default_factory=dict[scf.ParallelOp, tuple[func.CallOp, GeneratedConvolution, Elementwise]]
    )
    """The convolutions whose call waits for their elementwise rest, by its loop."""

    def fresh(self, hint: str = "v") -> str:
        self.counter += 1
        return f"%{hint}{self.counter}"

    def let(self, expression: str, hint: str = "v") -> str:
        """`%<new> = <expression>`, emitted; the new name."""
        name = self.fresh(hint)
        self.emit(f"{name} = {expression}")
        return name

    def value(self, value: SSAValue) -> str:
        return self.names[value]

    def size_argument(self, size: int) -> str:
        """`size` as the kernel's next `i64` argument (`%s<i>`), which its callers
        pass (`scalars`)."""
        self.scalars.append(size)
        name = f"%s{len(self.scalars) - 1}"
        self.sizes[name] = str(size)
        return name

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.block = name

    def function(self, op: func.FuncOp, symbol: str | None = None) -> list[str]:
        """`op` as `define void @<symbol>(ptr, ..., i64, ...)` (its own name by
        default; its buffers, then its `scalars`), and the chunk functions of its
        loops split over threads after it."""
        arguments: list[str] = []
        for index, argument in enumerate(op.body.block.args):
            buffer = argument.type
            if not isinstance(buffer, MemRefType):
                raise UnsupportedKernelError(
                    f"argument {index} of @{op.sym_name.data} is not a buffer"
                )
            llvm_type(cast(MemRefType[Attribute], buffer).element_type)  # refused early
            self.names[argument] = f"%a{index}"
            arguments.append(f"ptr %a{index}")
        self.kernel = symbol or op.sym_name.data
        head = len(self.lines)
        self.label("entry")
        self.ops(op.body.block)
        self.lines.append("}")
        arguments += [f"i64 %s{i}" for i in range(len(self.scalars))]
        self.lines.insert(
            head, f"define void @{llvm_symbol(self.kernel)}({', '.join(arguments)}) {{"
        )
        for chunk in self.chunks:
            self.lines += ["", *chunk]
        if self.scalar_loops:
            self.lines += ["", NO_VECTORIZE]
            self.lines += [f"!{node} = distinct !{{!{node}, !0}}" for node in self.scalar_loops]
        return self.lines

    def ops(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        handler = self.handlers.get(type(op))
        if handler is not None:
            handler(op)
        elif isinstance(op, scf.ReduceOp | scf.YieldOp):
            return
        elif isinstance(op, memref.CastOp | memref.CollapseShapeOp):
            self.names[op.results[0]] = self.value(op.operands[0])
        elif not op.results:  # a store into scratch, ...
            raise UnsupportedKernelError(f"{op.name} is not printed yet")
        else:
            self.scalar(op)

    @cached_property
    def handlers(self) -> dict[type[Operation], Callable[[Any], None]]:
        """The printer of each op class that is not one scalar instruction."""
        return {
            scf.ForOp: self.for_loop,
            scf.ParallelOp: self.parallel,
            memref.LoadOp: self.memory,
            memref.StoreOp: self.memory,
            func.ReturnOp: self.ret,
            memref.AllocOp: self.alloc,
            func.CallOp: self.library_call,
            vector.LoadOp: lambda op: vectors.load(self, op),
            vector.StoreOp: lambda op: vectors.store(self, op),
            vector.BroadcastOp: lambda op: vectors.broadcast(self, op),
            vector.FMAOp: lambda op: vectors.fma(self, op),
        }

    def alloc(self, op: memref.AllocOp) -> None:
        """A scratch buffer of static shape (a contraction's value that its epilogue
        reads back, where it is not a result) from `malloc`, freed at the return."""
        buffer = op.memref.type
        size = max(1, prod(buffer.get_shape()) * ELEMENT_BYTES[llvm_type(buffer.element_type)])
        self.declarations.update([MALLOC, FREE])
        name = self.let(f"call ptr @malloc(i64 {size})", "scratch")
        self.names[op.memref] = name
        self.scratch.append(name)

    def ret(self, _: func.ReturnOp) -> None:
        for name in self.scratch:
            self.emit(f"call void @free(ptr {name})")
        self.emit("ret void")

    def library_call(self, op: func.CallOp) -> None:
        """A routine of the library: the float products and the direct convolutions
        (`library.py`); none where the calls are made from Python."""
        if self.calls_made:
            return
        conv = (
            direct_convolution(op) or direct_pool(op) or direct_nchwc(op) or direct_nchwc_pool(op)
        )
        if conv is not None:
            rest = fusable(op, conv)
            if rest is None:
                print_convolution(self, op, conv)
            else:
                self.fused[rest.loop] = (op, conv, rest)
            return
        found = library_routine(op)
        if found is None:
            raise UnsupportedKernelError(f"{op.callee} is not printed yet")
        print_product(self, op, *found)

    def scalar(self, op: Operation) -> None:
        """An `arith` or `math` op on scalars."""
        if isinstance(op, arith.ConstantOp):
            self.names[op.result] = literal(op.value)
            return
        self.names[op.results[0]] = self.let(self.expression(op))

    def expression(self, op: Operation) -> str:
        operands = [self.value(o) for o in op.operands]
        ty = llvm_type(op.operands[0].type) if op.operands else ""
        kind = op.__class__
        if kind in BINARY:
            return f"{BINARY[kind]}{fast_math(op)} {ty} {operands[0]}, {operands[1]}"
        if kind in VECTOR_MATH and (VECTOR_MATH[kind], ty) in vmath.NAMES:
            name = VECTOR_MATH[kind]
            self.declarations.update(vmath.definitions(name, ty))
            return f"call {ty} @{vmath.NAMES[name, ty]}({ty} {operands[0]})"
        if kind in INTRINSICS:
            return self.call(f"{INTRINSICS[kind]}.{suffix(ty)}", ty, operands)
        if kind in LIBM:
            return self.call(LIBM[kind] + ("f" if ty == "float" else ""), ty, operands)
        if kind in CASTS:
            return self.cast(op, ty, operands[0])
        return self.special(op, ty, operands)

    def cast(self, op: Operation, ty: str, value: str) -> str:
        target = llvm_type(op.results[0].type)
        if isinstance(op, arith.TruncFOp) and target in ("half", "bfloat"):
            return self.narrowed(ty, value, target)
        return f"{CASTS[type(op)]} {ty} {value} to {target}"

    def narrowed(self, ty: str, value: str, target: str) -> str:
        """A float rounded to f16 or bf16 without a call into a runtime library that
        the process may lack (LLVM's `__truncdfhf2`, `__truncsfbf2`): f32 to f16 is
        F16C's instruction; f32 to bf16 rounds the bits to nearest even, a NaN kept
        quiet (as `vmath.f32_to_bf16`); from f64 (rounded once, exactly, only by the
        numba target's helpers) the kernel is refused."""
        if ty != "float":
            raise UnsupportedKernelError(f"{ty} to {target} conversions are not printed yet")
        if target == "half":
            return f"fptrunc float {value} to half"
        bits = self.let(f"bitcast float {value} to i32")
        parity = self.let(f"lshr i32 {bits}, 16")
        bias = self.let(f"add i32 {self.let(f'and i32 {parity}, 1')}, 32767")
        high = self.let(f"lshr i32 {self.let(f'add i32 {bits}, {bias}')}, 16")
        quiet = self.let(f"or i32 {parity}, 64")
        nan = self.let(f"fcmp uno float {value}, {value}")
        chosen = self.let(f"select i1 {nan}, i32 {quiet}, i32 {high}")
        return f"bitcast i16 {self.let(f'trunc i32 {chosen} to i16')} to bfloat"

    def call(self, callee: str, ty: str, operands: Sequence[str]) -> str:
        """A call of a function of `ty` operands to `ty`, declared once per module."""
        self.declarations.add(f"declare {ty} @{callee}({', '.join([ty] * len(operands))})")
        return f"call {ty} @{callee}({', '.join(f'{ty} {o}' for o in operands)})"

    def special(self, op: Operation, ty: str, operands: Sequence[str]) -> str:
        """Comparisons, selects, negation, bitcasts, and the ops of a method of their
        own (`own`)."""
        if isinstance(op, arith.CmpfOp | arith.CmpiOp):
            kind = "fcmp" if isinstance(op, arith.CmpfOp) else "icmp"
            return f"{kind} {_predicate(op)} {ty} {operands[0]}, {operands[1]}"
        if isinstance(op, arith.SelectOp):
            chosen = llvm_type(op.results[0].type)
            return f"select i1 {operands[0]}, {chosen} {operands[1]}, {chosen} {operands[2]}"
        if isinstance(op, arith.NegfOp):
            return f"fneg {ty} {operands[0]}"
        if isinstance(op, arith.BitcastOp):
            return f"bitcast {ty} {operands[0]} to {llvm_type(op.results[0].type)}"
        extremum = EXTREMA.get(type(op))
        if extremum is not None and "nsz" in fast_math(op):
            return self.call(f"{extremum}.{suffix(ty)}", ty, operands)
        method = self.own.get(type(op))
        if method is None:
            raise UnsupportedKernelError(f"{op.name} is not printed yet")
        return method(ty, operands)

    @cached_property
    def own(self) -> dict[type[Operation], Callable[[str, Sequence[str]], str]]:
        """The ops printed by a method of their own, taking the operands' type and
        names."""
        return {
            math.RsqrtOp: self.rsqrt,
            arith.DivSIOp: self.signed_division,
            arith.RemUIOp: self.unsigned_remainder,
            arith.MaximumfOp: lambda ty, operands: self.extremum("ogt", ty, operands),
            arith.MinimumfOp: lambda ty, operands: self.extremum("olt", ty, operands),
        }

    def rsqrt(self, ty: str, operands: Sequence[str]) -> str:
        root = self.let(self.call(f"llvm.sqrt.{suffix(ty)}", ty, operands))
        return f"fdiv {ty} 0x3FF0000000000000, {root}"

    def extremum(self, predicate: str, ty: str, operands: Sequence[str]) -> str:
        """NumPy's maximum (`ogt`) or minimum (`olt`): `a` where it compares so with
        `b` or is NaN, else `b`, as the numba target's `_maximum`. LLVM's
        `llvm.maximum` orders -0 below +0 (NumPy keeps `b` of equal zeros) and costs
        x86 a fix-up of zeros and NaNs: the chain benchmark's run took 3% longer than
        numba's with it, as long without."""
        a, b = operands
        mask = f"<{ty[1:].split(' x ', maxsplit=1)[0]} x i1>" if ty.startswith("<") else "i1"
        better = self.let(f"fcmp {predicate} {ty} {a}, {b}")
        nan = self.let(f"fcmp uno {ty} {a}, {a}")
        keep = self.let(f"or {mask} {better}, {nan}")
        return f"select {mask} {keep}, {ty} {a}, {ty} {b}"

    def signed_division(self, ty: str, operands: Sequence[str]) -> str:
        """The division that gives 0 for a 0 divisor (the numba target's
        `_divide_toward_zero`)."""
        zero = self.let(f"icmp eq {ty} {operands[1]}, 0")
        safe = self.let(f"select i1 {zero}, {ty} 1, {ty} {operands[1]}")
        quotient = self.let(f"sdiv {ty} {operands[0]}, {safe}")
        return f"select i1 {zero}, {ty} 0, {ty} {quotient}"

    def unsigned_remainder(self, ty: str, operands: Sequence[str]) -> str:
        """The remainder that gives 0 for a 0 divisor, as numba's `%` under NumPy's
        error model (`urem` by 0 is undefined); an index's by a constant folds to one
        `urem` (a reshape's copy computes its indices so)."""
        zero = self.let(f"icmp eq {ty} {operands[1]}, 0")
        safe = self.let(f"select i1 {zero}, {ty} 1, {ty} {operands[1]}")
        remainder = self.let(f"urem {ty} {operands[0]}, {safe}")
        return f"select i1 {zero}, {ty} 0, {ty} {remainder}"

    def memory(self, op: memref.LoadOp | memref.StoreOp) -> None:
        buffer = op.memref
        assert isinstance(buffer.type, MemRefType)
        element = llvm_type(buffer.type.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        offset = self.offset(tuple(buffer.type.get_shape()), [self.value(i) for i in op.indices])  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        held = "i8" if element == "i1" else element  # a boolean is a byte, 0 or 1
        address = self.fresh("p")
        self.emit(f"{address} = getelementptr {held}, ptr {self.value(buffer)}, i64 {offset}")
        if isinstance(op, memref.LoadOp):
            name = self.fresh()
            self.names[op.res] = name
            if held == element:
                self.emit(f"{name} = load {element}, ptr {address}")
                return
            byte = self.fresh()
            self.emit(f"{byte} = load i8, ptr {address}")
            self.emit(f"{name} = trunc i8 {byte} to i1")
            return
        value = self.value(op.value)
        if held != element:
            byte = self.fresh()
            self.emit(f"{byte} = zext i1 {value} to i8")
            value = byte
        self.emit(f"store {held} {value}, ptr {address}")

    def offset(self, shape: tuple[int, ...], indices: Sequence[str]) -> str:
        """The row-major offset of `indices` in a buffer of `shape`."""
        total = "0"
        for axis, index in enumerate(indices):
            stride = prod(shape[axis + 1 :])
            term = index
            if stride != 1:
                term = self.fresh("o")
                self.emit(f"{term} = mul i64 {index}, {stride}")
            if total == "0":
                total = term
            else:
                summed = self.fresh("o")
                self.emit(f"{summed} = add i64 {total}, {term}")
                total = summed
        return total

    def for_loop(self, op: scf.ForOp) -> None:
        body = op.body.block

        def inner() -> list[str]:
            self.ops(body)
            last = body.last_op
            return [self.value(v) for v in last.operands] if isinstance(last, scf.YieldOp) else []

        carried = Carried(list(body.args[1:]), [self.value(v) for v in op.iter_args])
        bounds = (self.value(op.lb), self.value(op.ub), self.value(op.step))
        for result, name in zip(
            op.results, self.loop(body.args[0], carried, bounds, inner), strict=True
        ):
            self.names[result] = name

    def parallel(self, op: scf.ParallelOp) -> None:
        """Nested loops, or with `parallel` the outer one split over threads
        (`threads.py`)."""
        found = self.fused.pop(op, None)
        if found is not None:
            self.fused_convolution(*found)
        elif self.parallel_loops and threads.splits(op):
            threads.outline(self, op, self.kernel)
        else:
            self.chunk_loop(op, self.outer_bounds(op))

    def outer_bounds(self, op: scf.ParallelOp) -> tuple[str, str, str] | None:
        """The bounds of the outer loop of `op`, a loop of the kernel's body from 0
        by 1, with its trips a size argument (`size_argument`) where more than one:
        kernels that differ only in it (a network's batch norms of different
        channels) print the same and compile once. None: as the op has them."""
        if not isinstance(op.parent_op(), func.FuncOp):
            return None
        lb, ub, step = (self.value(v) for v in (op.lowerBound[0], op.upperBound[0], op.step[0]))
        trips = _trip_count((lb, ub, step))
        if (lb, step) != ("0", "1") or trips is None or trips < 2:
            return None
        return lb, self.size_argument(trips), step

    def fused_convolution(
        self, call: func.CallOp, conv: GeneratedConvolution, rest: Elementwise
    ) -> None:
        """The convolution `call` makes, here where its elementwise rest was, calling
        the rest's function on each piece of its output (`epilogue.py`)."""
        self.chunks.append(self.elementwise_function(rest, conv.rest_inlined))
        conv = replace(conv, fused=self.kernel, buffers=len(rest.buffers))
        print_convolution(self, call, conv, [self.value(b) for b in rest.buffers])

    def elementwise_function(self, rest: Elementwise, inlined: bool) -> list[str]:
        """`@"<kernel>.elementwise"(ptr %e<i>..., i64 %f0, i64 %f1)`: the body of the
        rest's loop on its elements `[f0, f1)`, one run of its innermost loop after the
        other (the outer induction variables rebuilt from the run's first element);
        always inlined, or never (`inlined`, the convolution's `rest_inlined`)."""
        printer = KernelPrinter(
            self.declarations, kernel=self.kernel, trips=None, tail_folded=[], counter=self.counter
        )
        printer.names.update(self.names)
        printer.names.update({b: f"%e{i}" for i, b in enumerate(rest.buffers)})
        parameters = "".join(f"ptr %e{i}, " for i in range(len(rest.buffers)))
        printer.lines.append(
            f'define internal void @"{self.kernel}.elementwise"({parameters}i64 %f0, i64 %f1) '
            f"{'alwaysinline' if inlined else 'noinline'} {{"
        )
        printer.label("entry")
        printer.emit("br label %run")
        printer.label("run")
        phi = len(printer.lines)
        body = rest.loop.body.block
        *outer, inner = body.args
        for axis, induction in enumerate(outer):
            run = printer.let(f"udiv i64 %f, {prod(rest.extents[axis + 1 :])}")
            printer.names[induction] = printer.let(f"urem i64 {run}, {rest.extents[axis]}")
        start = printer.let(f"urem i64 %f, {rest.extents[-1]}")
        room = printer.let(f"sub i64 {rest.extents[-1]}, {start}")
        left = printer.let("sub i64 %f1, %f")
        shorter = printer.let(f"icmp ult i64 {left}, {room}")
        count = printer.let(f"select i1 {shorter}, i64 {left}, i64 {room}")
        end = printer.let(f"add i64 {start}, {count}")

        def each() -> list[str]:
            printer.ops(body)
            return []

        printer.loop(inner, Carried([], []), (start, end, "1"), each)
        following = printer.let(f"add i64 %f, {count}")
        more = printer.let(f"icmp ult i64 {following}, %f1")
        printer.emit(f"br i1 {more}, label %run, label %exit")
        printer.lines.insert(
            phi, f"  %f = phi i64 [ %f0, %entry ], [ {following}, %{printer.block} ]"
        )
        printer.label("exit")
        printer.emit("ret void")
        self.counter = printer.counter  # metadata nodes stay distinct in the unit
        folded = printer.tail_folded or []
        if any(_SCALAR_CALL.search(line) for line in printer.lines):
            # A vectorization asked for and impossible is a warning LLVM prints.
            marks = tuple(f", !llvm.loop !{n}" for n in folded)
            return [*(_unmarked(line, marks) for line in printer.lines), "}"]
        properties = ", ".join(TAIL_FOLDED)
        nodes = [f"!{n} = distinct !{{!{n}, {properties}}}" for n in folded]
        return [*printer.lines, "}", *nodes]

    def chunk_loop(self, op: scf.ParallelOp, outer: tuple[str, str, str] | None) -> None:
        """The loops of `op`, the outer one over `outer`'s bounds where given."""
        bounds = [
            (self.value(lb), self.value(ub), self.value(step))
            for lb, ub, step in zip(op.lowerBound, op.upperBound, op.step, strict=True)
        ]
        if outer is not None:
            bounds[0] = outer
        self.nest(op.body.block, bounds, 0)

    def nest(self, body: Block, bounds: Sequence[tuple[str, str, str]], depth: int) -> None:
        """The loops of an `scf.parallel` from `depth` in, one inside the other."""
        if depth == len(bounds):
            self.ops(body)
            return

        def inner() -> list[str]:
            self.nest(body, bounds, depth + 1)
            return []

        self.loop(body.args[depth], Carried([], []), bounds[depth], inner)

    def loop(
        self,
        induction: SSAValue,
        carried: Carried,
        bounds: tuple[str, str, str],
        inner: Callable[[], list[str]],
    ) -> list[str]:
        """A counted loop: a header of `phi`s and the test, the body (`inner`, which
        returns the values it carries on), the increment and the back edge from
        wherever the body ended; the carried values' names after the loop are the
        header's `phi`s."""
        self.counter += 1
        header, entry, done = (f"loop{self.counter}", f"body{self.counter}", f"done{self.counter}")
        before = self.block
        iv = self.fresh("i")
        phis = [self.fresh("c") for _ in carried.values]
        self.names[induction] = iv
        self.names.update(zip(carried.values, phis, strict=True))
        self.emit(f"br label %{header}")
        self.label(header)
        at = len(self.lines)
        test = self.fresh("t")
        self.emit(f"{test} = icmp slt i64 {iv}, {bounds[1]}")
        self.emit(f"br i1 {test}, label %{entry}, label %{done}")
        self.label(entry)
        enclosing = self.trips
        lower, upper, step = (self.sizes.get(b, b) for b in bounds)
        trips = _trip_count((lower, upper, step))
        self.trips = None if enclosing is None or trips is None else enclosing * trips
        scalar = self.trips is not None and self.trips <= SCALAR_LOOP_MAX_TRIPS
        yielded = inner()
        self.trips = enclosing
        following = self.fresh("i")
        self.emit(f"{following} = add i64 {iv}, {bounds[2]}")
        if self.tail_folded is not None:
            self.tail_folded.append(self.counter)
            self.emit(f"br label %{header}, !llvm.loop !{self.counter}")
        elif scalar:
            self.scalar_loops.append(self.counter)
            self.emit(f"br label %{header}, !llvm.loop !{self.counter}")
        else:
            self.emit(f"br label %{header}")
        latch = self.block
        incoming = [f"{iv} = phi i64 [ {bounds[0]}, %{before} ], [ {following}, %{latch} ]"]
        for name, value, init, next_ in zip(
            phis, carried.values, carried.inits, yielded, strict=True
        ):
            incoming.append(
                f"{name} = phi {llvm_type(value.type)} [ {init}, %{before} ], [ {next_}, %{latch} ]"
            )
        self.lines[at:at] = ["  " + line for line in incoming]
        self.label(done)
        return phis


@dataclass(frozen=True)
class Carried:
    """The values a loop carries (its block's arguments) and their initial names."""

    values: list[SSAValue]
    inits: list[str]


_SCALAR_CALL = re.compile(
    r"call \S+ @(?!dflow\.(exp|log|tanh|erf)\.|llvm\.(fabs|fma|fmuladd|sqrt|floor|ceil|roundeven"
    r"|trunc|copysign|smax|smin|umax|umin|minnum|maxnum|minimum|maximum)\.)"
)
"""A call LLVM does not vectorize: of the C library (`erf` of double), of `llvm.sin` and the
other intrinsics it has no vector code for here; not `vmath.py`'s functions."""


def _unmarked(line: str, marks: tuple[str, ...]) -> str:
    """`line` without the loop properties `marks`."""
    for mark in marks:
        if line.endswith(mark):
            return line.removesuffix(mark)
    return line


def _predicate(op: arith.CmpfOp | arith.CmpiOp) -> str:
    float_names = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                   "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]  # fmt: skip
    int_names = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    names = float_names if isinstance(op, arith.CmpfOp) else int_names
    return names[int(op.predicate.value.data)]


def _trip_count(bounds: tuple[str, str, str]) -> int | None:
    """How many times a loop over `bounds` (lower, upper, step as LLVM writes them)
    runs, where all three are constants."""
    try:
        lower, upper, step = (int(bound) for bound in bounds)
    except ValueError:
        return None
    return max(0, -(-(upper - lower) // step)) if step > 0 else None


def llvm_symbol(name: str) -> str:
    """A function's name as LLVM reads it: quoted unless it is a plain identifier."""
    return name if name.replace("_", "a").isalnum() and not name[0].isdigit() else f'"{name}"'
