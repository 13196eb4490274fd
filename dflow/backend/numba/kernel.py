"""Kernel bodies as Python: what the CPU and the CUDA kernel printers share.

A kernel is a `func.func` over memrefs whose body is `scf` loops of `memref`
loads and stores, `arith` and `math` (`lowering/kernels/builder.py`). Each op prints as one
statement: scalars keep their element type (`numba.float32(...)` around constants),
integer arithmetic wraps as the reference's does, NaN propagates through maximum and
minimum as in NumPy (`_maximum`, a helper every module defines), integer division
rounds toward zero, and a library routine is a call of `lib.<routine>`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation, SSAValue

from dflow.backend.numba.names import NUMBA_SCALARS, literal
from dflow.backend.numba.printer import PythonPrinter, dispatch_on_op
from dflow.dialects.upstream import RemFOp
from dflow.lowering.kernels.names import LIBRARY_PREFIX

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
    arith.MaxUIOp: "max",  # on ui64 values, which numba compares unsigned
    arith.MinUIOp: "min",
    math.AbsFOp: "abs",
    math.AbsIOp: "abs",
    RemFOp: "math.fmod",
    math.ExpOp: "math.exp",
    math.LogOp: "math.log",
    math.SqrtOp: "math.sqrt",
    math.TanhOp: "math.tanh",
    math.ErfOp: "math.erf",
    math.FloorOp: "math.floor",
    math.CeilOp: "math.ceil",
    math.SinOp: "math.sin",
    math.CosOp: "math.cos",
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
    "ult": "<",
    "ule": "<=",
    "ugt": ">",
    "uge": ">=",
}
_CONVERSIONS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.ExtSIOp,
    arith.TruncIOp,
    arith.ExtUIOp,
    arith.BitcastOp,
)
_BITS_FORMATS = {
    "f16": "5, 10, 15, 0",
    "bf16": "8, 7, 127, 0",
    "f8E5M2": "5, 2, 15, 0",
    "f8E4M3FN": "4, 3, 7, 1",
    "f8E4M3FNUZ": "4, 3, 8, 2",
    "f8E5M2FNUZ": "5, 2, 16, 2",
    "f4E2M1FN": "2, 1, 1, 3",
}
"""The float types held as their bits, as the helpers' (exponent bits, mantissa bits,
exponent bias, kind): kind 0 is IEEE (infinities, NaNs at the top exponent), 1 has
no infinities and one NaN magnitude (all ones: FN), 2 no infinities, no -0 and the
NaN where -0 would be (FNUZ), 3 neither infinities nor NaNs (saturating)."""
_SUB_BYTE = {"i2": (2, True), "i4": (4, True), "ui2": (2, False), "ui4": (4, False)}
"""The 2- and 4-bit integers, held in a byte each (sign-extended when signed), as
(bits, signed)."""

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


def _round_half_even(s):
    f = math.floor(s)
    d = s - f
    return f + 1 if d > 0.5 or (d == 0.5 and f % 2 == 1) else f


def _bits_to_float(h, exponent, mantissa, bias, kind):
    h = int(h)
    top = (1 << exponent) - 1
    e = (h >> mantissa) & top
    m = h & ((1 << mantissa) - 1)
    if kind == 2 and h == 1 << (exponent + mantissa):
        return numba.float32(math.nan)
    if (kind == 0 and e == top) or (kind == 1 and e == top and m == (1 << mantissa) - 1):
        value = math.inf if kind == 0 and m == 0 else math.nan
    elif e == 0:
        value = math.ldexp(float(m), 1 - bias - mantissa)
    else:
        value = math.ldexp(float(m + (1 << mantissa)), e - bias - mantissa)
    return numba.float32(-value if h >> (exponent + mantissa) else value)


def _float_to_bits(x, exponent, mantissa, bias, kind):
    width = exponent + mantissa
    top = (1 << exponent) - 1
    sign = 1 << width if math.copysign(1.0, x) < 0 else 0
    a = abs(numba.float64(x))
    if a != a:
        return _nan_bits(sign, exponent, mantissa, kind)
    if _overflows(a, exponent, mantissa, bias, kind):
        if kind == 3:
            return sign | (top << mantissa) | ((1 << mantissa) - 1)
        return sign | (top << mantissa) if kind == 0 else _nan_bits(sign, exponent, mantissa, kind)
    if a < math.ldexp(1.0, 1 - bias):
        bits = int(_round_half_even(math.ldexp(a, bias - 1 + mantissa)))
    else:
        f, e = math.frexp(a)
        q = int(_round_half_even(math.ldexp(f, mantissa + 1)))
        bits = ((e - 1 + bias) << mantissa) + q - (1 << mantissa)
    return 0 if kind == 2 and bits == 0 else sign | bits


def _nan_bits(sign, exponent, mantissa, kind):
    if kind == 0:
        return sign | (((1 << exponent) - 1) << mantissa) | (1 << (mantissa - 1))
    if kind == 1:
        return sign | ((1 << (exponent + mantissa)) - 1)
    return (1 << (exponent + mantissa)) ^ sign if kind == 3 else 1 << (exponent + mantissa)


def _overflows(a, exponent, mantissa, bias, kind):
    top_normal = (1 << exponent) - (2 if kind == 0 else 1)
    largest = (1 << mantissa) - (2 if kind == 1 else 1)
    limit = math.ldexp(float(2 * ((1 << mantissa) + largest) + 1), top_normal - bias - mantissa - 1)
    return a > limit or (a == limit and largest % 2 == 1)
"""
"""Scalar helpers every module defines, compiled for its device (`_maximum`
propagates NaN as `np.maximum`). `_bits_to_float` and `_float_to_bits` convert
between float32 and a float format held as its bits (`_BITS_FORMATS`), rounding
half to even once from the source value (f32 or f64), subnormals included, past the
largest finite value to infinity, NaN or that value as the format has them, bit
for bit as NumPy's and `ml_dtypes`' `astype`; arithmetic only (`frexp`, `ldexp`),
so it compiles for CUDA too."""


class KernelPrinter(PythonPrinter):
    """Prints the ops of a kernel body as Python statements: what the CPU and CUDA
    kernels share (`arith`, `math`, loads and stores, loops, library calls)."""

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        if type(op) in _BINARY_SYMBOLS:
            a, b = (self.value(o) for o in op.operands)
            self.assign(op, _wrapping(op, a, _BINARY_SYMBOLS[type(op)], b))
        elif type(op) in _HELPER_CALLS or type(op) in _BUILTIN_CALLS:
            callee = _HELPER_CALLS.get(type(op)) or _BUILTIN_CALLS[type(op)]
            self.assign(op, f"{callee}({', '.join(self.value(o) for o in op.operands)})")
        elif isinstance(op, _CONVERSIONS):
            self.assign(op, _conversion(op, self.value(op.operands[0])))
        else:
            super().print_op(op)

    @print_op.register
    def _(self, op: arith.ConstantOp) -> None:
        self.names.alias(op.result, literal(op.value))

    @print_op.register
    def _(self, op: arith.NegfOp) -> None:
        self.assign(op, f"-{self.value(op.operand)}")

    @print_op.register
    def _(self, op: math.RsqrtOp) -> None:
        one = literal(FloatAttr(1.0, op.result.type))  # type: ignore[arg-type]
        self.assign(op, f"{one} / math.sqrt({self.value(op.operand)})")

    @print_op.register
    def _(self, op: math.RoundEvenOp) -> None:
        """Round half to even from `math.floor` (a float on CUDA; numba.cuda has no
        `rint`, and the simulator's libdevice returns None): `f = floor(x)`, then
        `f + 1` where `x - f` is above one half, or is one half and `f` odd. `x - f` is
        exact (Sterbenz) except for `x` in (-0.5, 0), where it rounds to at least one
        half and `f = -1` is odd, so the result is 0 all the same; `copysign` gives
        `-0.0` for `x` in [-0.5, 0) as `np.rint` does, and ±inf and NaN pass through
        (`x - f` is NaN). The CPU printer uses `np.rint` instead."""
        x = self.value(op.operand)
        f = self.names.namespace.unique(None, "floor")
        half = literal(FloatAttr(0.5, op.result.type))  # type: ignore[arg-type]
        one = literal(FloatAttr(1.0, op.result.type))  # type: ignore[arg-type]
        self.out(f"{f} = math.floor({x})")
        odd = f"math.floor({f} * {half}) != {f} * {half}"
        up = f"{x} - {f} > {half} or ({x} - {f} == {half} and {odd})"
        self.assign(op, f"math.copysign({f} + {one} if {up} else {f}, {x})")

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
            with self.out.indented(depth):
                self.out(
                    f"for {name} in {loop}({self.value(lb)}, {self.value(ub)}, {self.value(step)}):"
                )
        with self.out.indented(len(body.args)):
            self.block(body)

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


def _conversion(op: Operation, value: str) -> str:
    """`numba.<target>(value)`; from or to a float held as bits, a helper's call; to
    a 2- or 4-bit integer, the value wrapped to its bits."""
    source, target = str(op.operands[0].type), str(op.results[0].type)
    held = f"numba.{NUMBA_SCALARS[target]}"
    if source in _BITS_FORMATS:
        return f"_bits_to_float({value}, {_BITS_FORMATS[source]})"
    if target in _BITS_FORMATS:
        return f"{held}(_float_to_bits({value}, {_BITS_FORMATS[target]}))"
    if target in _SUB_BYTE:
        bits, signed = _SUB_BYTE[target]
        if signed:
            half = 1 << (bits - 1)
            return f"{held}(((numba.int64({value}) + {half}) & {(1 << bits) - 1}) - {half})"
        return f"{held}(numba.int64({value}) & {(1 << bits) - 1})"
    return f"{held}({value})"


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


def trips(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int:
    """The trip count of a loop with constant bounds."""
    first, last, stride = (int(constant_value(v)) for v in (lb, ub, step))
    return max(0, -(-(last - first) // stride))


def static_values(ops: Iterator[SSAValue]) -> list[int]:
    return [int(constant_value(v)) for v in ops]


def constant_value(value: SSAValue) -> int:
    owner = value.owner
    assert isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr)
    return owner.value.value.data
