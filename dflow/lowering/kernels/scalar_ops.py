"""Each elementwise `df` op on scalars, as `arith` and `math` ops: the body of a kernel.

`lower_scalar(op, operands, emit)` appends to the kernel the ops computing one
element of `op`'s result from one element of each operand (already loaded, of
the operands' element types) and returns the value. The choices follow the
reference semantics (each op's `semantics`, in `dialects/df/`):

- `maximum`/`minimum`/`relu` on floats are `arith.maximumf`/`minimumf`, which
  propagate NaN as NumPy does;
- integer `div` is `arith.divsi` (rounds toward zero, as the reference's cast of
  the true quotient); on ui64, which computes as itself, division, maxima, minima
  and comparisons are the unsigned ones, and on i1 too (`true > false`, as NumPy's
  booleans: a signed i1 true is -1);
- `sigmoid` is the stable form: `z = exp(-|x|)`, `r = 1/(1+z)` for `x >= 0`, else
  `z * r` (one division: a vector division takes as long as the rest of a SiLU);
- `equal` and the other comparisons on floats are ordered (false on NaN);
- `cast` to `i1` is `x != 0`; from `i1` it is zero-extension.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue

from dflow.dialects.df import elementwise as ew
from dflow.dialects.df.traits import Elementwise, has_trait
from dflow.dialects.df.types import (
    MINIFLOATS,
    i2,
    i4,
    is_float,
    is_unsigned,
    static_tensor,
    ui2,
    ui4,
)
from dflow.dialects.upstream import RemFOp

NARROW_FLOATS: frozenset[Attribute] = frozenset({f16, bf16}) | MINIFLOATS
SUB_BYTE_INTEGERS: frozenset[Attribute] = frozenset({i2, i4, ui2, ui4})
"""The floats a kernel only loads, stores and converts (`df-widen` has made every
computation on them f32); the numba target holds them as their 16 bits."""

Emit = Callable[[Operation], SSAValue]
"""Appends an op to the kernel body and returns its (single) result."""

_DEFAULT_PROPERTIES: dict[type[Operation], dict[str, Attribute]] = {}


def same_type(kind: type[Operation], *operands: SSAValue) -> Operation:
    """An op of `kind` whose result has its first operand's type (arith's arithmetic,
    math's functions), built with `create` and the properties its constructor sets
    (learnt from one constructor call per kind). This skips IRDL's argument checks,
    which cost twice the rest of building an op; the lowered module is verified as a
    whole where `DFLOW_VERIFY=1` (the tests). The probe op is erased: left alone, it
    would stay a user of the operands, which a rewrite of the kernel would then visit."""
    if kind not in _DEFAULT_PROPERTIES:
        probe = kind(*operands)  # pyright: ignore[reportCallIssue]
        _DEFAULT_PROPERTIES[kind] = dict(probe.properties)
        probe.erase()
    return kind.create(
        operands=operands,
        result_types=[operands[0].type],
        properties=dict(_DEFAULT_PROPERTIES[kind]),
    )


def constant(value: float, element: Attribute, emit: Emit) -> SSAValue:
    """A scalar constant of a df element type."""
    if is_float(element):
        attribute: Attribute = FloatAttr(value, cast(AnyFloat, element))
    elif is_unsigned(element):  # arith's constants are signless: the same bits, bitcast
        signless = IntegerType(cast(IntegerType, element).bitwidth)
        bits = int(value) % 2**signless.bitwidth
        signed = bits - 2**signless.bitwidth if bits >= 2 ** (signless.bitwidth - 1) else bits
        return emit(arith.BitcastOp(constant(signed, signless, emit), element))
    else:
        attribute = IntegerAttr[IntegerType](int(value), cast(IntegerType, element))
    return emit(arith.ConstantOp.create(properties={"value": attribute}, result_types=[element]))


def _element(value: SSAValue) -> Attribute:
    return value.type


def _neg(x: SSAValue, emit: Emit) -> SSAValue:
    if is_float(_element(x)):
        return emit(same_type(arith.NegfOp, x))
    return emit(same_type(arith.SubiOp, constant(0, _element(x), emit), x))


def _abs(x: SSAValue, emit: Emit) -> SSAValue:
    if is_unsigned(_element(x)):
        return x
    return emit(same_type(math.AbsFOp if is_float(_element(x)) else math.AbsIOp, x))


def _square(x: SSAValue, emit: Emit) -> SSAValue:
    return emit(same_type(arith.MulfOp if is_float(_element(x)) else arith.MuliOp, x, x))


def _relu(x: SSAValue, emit: Emit) -> SSAValue:
    if is_unsigned(_element(x)):
        return x
    zero = constant(0, _element(x), emit)
    return emit(same_type(arith.MaximumfOp if is_float(_element(x)) else arith.MaxSIOp, x, zero))


def _reciprocal(x: SSAValue, emit: Emit) -> SSAValue:
    return emit(same_type(arith.DivfOp, constant(1, _element(x), emit), x))


def _unary(op: Operation, x: SSAValue, emit: Emit) -> SSAValue:
    if isinstance(op, ew.IdentityOp):
        return x
    if type(op) in _MATH_UNARY:
        return emit(same_type(_MATH_UNARY[type(op)], x))
    return _COMPOSITE_UNARY[type(op)](x, emit)


_MATH_UNARY: dict[type[Operation], type[Operation]] = {
    ew.ExpOp: math.ExpOp,
    ew.LogOp: math.LogOp,
    ew.SqrtOp: math.SqrtOp,
    ew.RsqrtOp: math.RsqrtOp,
    ew.TanhOp: math.TanhOp,
    ew.ErfOp: math.ErfOp,
    ew.FloorOp: math.FloorOp,
    ew.CeilOp: math.CeilOp,
    ew.RoundOp: math.RoundEvenOp,
    ew.SinOp: math.SinOp,
    ew.CosOp: math.CosOp,
}


def _sigmoid(x: SSAValue, emit: Emit) -> SSAValue:
    element = _element(x)
    one = constant(1, element, emit)
    z = emit(same_type(math.ExpOp, emit(same_type(arith.NegfOp, emit(same_type(math.AbsFOp, x))))))
    denominator = emit(same_type(arith.AddfOp, one, z))
    positive = emit(same_type(arith.DivfOp, one, denominator))
    negative = emit(same_type(arith.MulfOp, z, positive))
    non_negative = emit(arith.CmpfOp(x, constant(0, element, emit), "oge"))
    return emit(arith.SelectOp(non_negative, positive, negative))


_COMPOSITE_UNARY: dict[type[Operation], Callable[[SSAValue, Emit], SSAValue]] = {
    ew.NegOp: _neg,
    ew.AbsOp: _abs,
    ew.SquareOp: _square,
    ew.ReluOp: _relu,
    ew.ReciprocalOp: _reciprocal,
    ew.SigmoidOp: _sigmoid,
}


_FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    ew.AddOp: arith.AddfOp,
    ew.SubOp: arith.SubfOp,
    ew.MulOp: arith.MulfOp,
    ew.DivOp: arith.DivfOp,
    ew.MaximumOp: arith.MaximumfOp,
    ew.MinimumOp: arith.MinimumfOp,
    ew.PowOp: math.PowFOp,
    ew.RemOp: RemFOp,
}
_INT_BINARY: dict[type[Operation], type[Operation]] = {
    ew.AddOp: arith.AddiOp,
    ew.SubOp: arith.SubiOp,
    ew.MulOp: arith.MuliOp,
    ew.DivOp: arith.DivSIOp,
    ew.MaximumOp: arith.MaxSIOp,
    ew.MinimumOp: arith.MinSIOp,
    ew.PowOp: math.IPowIOp,
    ew.RemOp: arith.RemSIOp,
}
_UINT_BINARY: dict[type[Operation], type[Operation]] = {
    **_INT_BINARY,
    ew.DivOp: arith.DivUIOp,
    ew.MaximumOp: arith.MaxUIOp,
    ew.MinimumOp: arith.MinUIOp,
    ew.RemOp: arith.RemUIOp,
}
"""ui64's (the one unsigned type that computes as itself: `df-widen`)."""
_PREDICATES: dict[type[Operation], tuple[str, str, str]] = {
    ew.GreaterOp: ("ogt", "sgt", "ugt"),
    ew.GreaterEqualOp: ("oge", "sge", "uge"),
    ew.LessOp: ("olt", "slt", "ult"),
    ew.LessEqualOp: ("ole", "sle", "ule"),
    ew.EqualOp: ("oeq", "eq", "eq"),
}
"""Each comparison's predicate on floats (ordered), signed and unsigned integers."""


def _binary(op: Operation, a: SSAValue, b: SSAValue, emit: Emit) -> SSAValue:
    element = _element(a)
    kind = 0 if is_float(element) else 2 if is_unsigned(element) or element == i1 else 1
    if type(op) in _PREDICATES:
        predicate = _PREDICATES[type(op)][kind]
        if kind == 0:
            return emit(arith.CmpfOp(a, b, predicate))
        return emit(arith.CmpiOp(a, b, predicate))
    table = (_FLOAT_BINARY, _INT_BINARY, _UINT_BINARY)[kind]
    return emit(same_type(table[type(op)], a, b))


def _add(a: SSAValue, b: SSAValue, emit: Emit) -> SSAValue:
    return emit(same_type(arith.AddfOp if is_float(_element(a)) else arith.AddiOp, a, b))


def _cast(x: SSAValue, target: Attribute, emit: Emit) -> SSAValue:
    """`x` converted to `target` as NumPy's and `ml_dtypes`' `astype`: f16, bf16 and
    the 8- and 4-bit floats through f32 (exact one way; rounded once, from the
    source's own value, the other), unsigned integers zero-extended and converted as
    unsigned, narrower integers wrapped; a float to a 2- or 4-bit integer truncated
    to i32, then wrapped."""
    source = _element(x)
    if source == target:
        return x
    step = _step(source, target)
    if step is not None:
        return _cast(_cast(x, step, emit), target, emit)
    if target == i1:
        zero = constant(0, source, emit)
        if is_float(source):
            return emit(arith.CmpfOp(x, zero, "une"))
        return emit(arith.CmpiOp(x, zero, "ne"))
    return emit(_conversion(source, target)(x, target))


def _step(source: Attribute, target: Attribute) -> Attribute | None:
    """The type a cast from `source` to `target` goes through; None for none."""
    if source in NARROW_FLOATS and target != f32:
        return f32
    if target in NARROW_FLOATS and source not in (f32, f64):
        return f64
    if is_float(source) and target in SUB_BYTE_INTEGERS:
        return i32
    return None


Conversion = Callable[[SSAValue, Attribute], Operation]


def _conversion(source: Attribute, target: Attribute) -> Conversion:
    """The `arith` conversion from `source` to `target`, neither of them f16 or bf16."""
    if is_float(source) and is_float(target):
        return cast(Conversion, arith.ExtFOp if _width(target) > _width(source) else arith.TruncFOp)
    if is_float(target):
        unsigned = source == i1 or is_unsigned(source)
        return cast(Conversion, arith.UIToFPOp if unsigned else arith.SIToFPOp)
    if is_float(source):
        return cast(Conversion, arith.FPToUIOp if is_unsigned(target) else arith.FPToSIOp)
    if _width(target) == _width(source):
        return cast(Conversion, arith.BitcastOp)  # i32 <-> ui32: the same bits
    if _width(target) < _width(source):
        return cast(Conversion, arith.TruncIOp)
    unsigned = source == i1 or is_unsigned(source)
    return cast(Conversion, arith.ExtUIOp if unsigned else arith.ExtSIOp)


def _width(element: Attribute) -> int:
    return cast(IntegerType | Float32Type, element).bitwidth


def lower_scalar(op: Operation, operands: Sequence[SSAValue], emit: Emit) -> SSAValue:
    """One element of `op`'s result, from one element of each operand."""
    match op:
        case ew.UnaryElementwiseOp():
            return _unary(op, operands[0], emit)
        case ew.BinaryElementwiseOp() | ew.CompareOp():
            return _binary(op, operands[0], operands[1], emit)
        case ew.SelectOp():
            return emit(arith.SelectOp(*operands))
        case ew.CastOp():
            return _cast(operands[0], static_tensor(op.result.type).element_type, emit)
        case ew.AddNOp():
            total = operands[0]
            for term in operands[1:]:
                total = _add(total, term, emit)
            return total
        case _:
            raise ValueError(f"{op.name} is not elementwise")


def is_scalar_lowerable(op: Operation) -> bool:
    """Whether `lower_scalar` handles `op`: every `Elementwise` op."""
    return has_trait(op, Elementwise)
