"""Tensor types the `df` dialect accepts, and the element-type classes ops ask for."""

from __future__ import annotations

from math import prod
from typing import cast

from xdsl.dialects.builtin import (
    AnyFloat,
    BoolAttr,
    DenseArrayBase,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df.shapes import Shape

ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)
ui32 = IntegerType(32, Signedness.UNSIGNED)
ui64 = IntegerType(64, Signedness.UNSIGNED)
i2 = IntegerType(2)
i4 = IntegerType(4)
ui2 = IntegerType(2, Signedness.UNSIGNED)
ui4 = IntegerType(4, Signedness.UNSIGNED)
f8e4m3fn = Float8E4M3FNType()
f8e4m3fnuz = Float8E4M3FNUZType()
f8e5m2 = Float8E5M2Type()
f8e5m2fnuz = Float8E5M2FNUZType()
f4e2m1fn = Float4E2M1FNType()

MINIFLOATS: frozenset[Attribute] = frozenset({f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f4e2m1fn})
"""The 8- and 4-bit floats (MLIR's names: E exponent bits, M mantissa bits, FN no
infinities, UZ no negative zero, the NaN where -0 would be); ONNX's FLOAT8* and
FLOAT4E2M1 types and `ml_dtypes`' float8_*/float4_e2m1fn."""
FLOATS: frozenset[Attribute] = frozenset({f16, bf16, f32, f64}) | MINIFLOATS
"""Element types of ops defined on real numbers only (exp, div, conv2d, ...)."""
UNSIGNED: frozenset[Attribute] = frozenset({ui2, ui4, ui8, ui16, ui32, ui64})
"""The unsigned integer element types (the others are signed: `i8` is -128..127)."""
INTEGERS: frozenset[Attribute] = frozenset({i2, i4, i8, i16, i32, i64}) | UNSIGNED
NUMBERS: frozenset[Attribute] = FLOATS | INTEGERS
"""Element types that support arithmetic."""
ALL_ELEMENTS: frozenset[Attribute] = NUMBERS | {i1}
"""Every element type a `df` tensor may hold."""

COMPUTE_TYPES: dict[Attribute, Attribute] = {
    f16: f32,
    bf16: f32,
    **dict.fromkeys(MINIFLOATS, f32),
    i2: i32,
    i4: i32,
    ui2: i32,
    ui4: i32,
    i8: i32,
    i16: i32,
    ui8: i32,
    ui16: i32,
    ui32: i64,
}
"""The type each narrow element type computes in: an op on f16 values computes in
f32 and rounds its result to f16 (as NumPy's float16 ufuncs and ONNX Runtime's
CPU kernels do), one on i8 values computes in i32 and wraps its result to 8 bits
(the same bits as arithmetic modulo 2^8). Storage stays narrow; the reference
semantics (`semantics.evaluate`) and the lowering (`df-widen`) both compute so,
except in the ops that are `NarrowAsIs` (a cast, a constant, a reshape)."""

_ELEMENT_CLASS_NAMES = {
    FLOATS: "a floating-point",
    NUMBERS: "a numeric",
    ALL_ELEMENTS: "a numeric or i1",
}

ELEMENT_NAMES = (
    "f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f4E2M1FN, f16, bf16, f32, f64, "
    "i2, i4, i8, i16, i32, i64, ui2, ui4, ui8, ui16, ui32, ui64 or i1"
)
"""The element types a df tensor may hold, as an error message lists them."""


def element_class_name(elements: frozenset[Attribute]) -> str:
    return _ELEMENT_CLASS_NAMES[elements]


def is_float(element: Attribute) -> bool:
    return isinstance(element, AnyFloat)


def is_unsigned(element: Attribute) -> bool:
    return element in UNSIGNED


_PLAIN_ELEMENT_CLASSES = frozenset(
    e.__class__ for e in ALL_ELEMENTS if not cast(ParametrizedAttribute, e).parameters
)
"""The classes of the element types without parameters (`f32`, ...): an instance of one
is an element type without hashing it (xDSL hashes an attribute field by field)."""


_CHECKED: dict[int, tuple[TensorType[Attribute], Shape]] = {}
"""The types `static_tensor` accepted and their shapes, by identity (each type held,
so its id stays its own); emptied when it reaches `_CHECKED_MOST`."""

_CHECKED_MOST = 1 << 16


def static_tensor(type: Attribute) -> TensorType[Attribute]:
    """The type as a statically shaped df tensor, or a VerifyException saying why not.
    (Called for every operand and result of every op verified, and about ten times
    per op by the lowering: 2 us, where `isa(type, TensorType[...])`, `get_shape()`
    and a set lookup took 5; a type seen before, by identity, 0.1 us.)"""
    return _known(type)[0]


def _known(type: Attribute) -> tuple[TensorType[Attribute], Shape]:
    """`type` checked by `static_tensor`, and its shape (xDSL builds the tuple anew
    each time: 2 us)."""
    known = _CHECKED.get(id(type))
    if known is not None and known[0] is type:
        return known
    checked = _checked_tensor(type)
    if len(_CHECKED) >= _CHECKED_MOST:
        _CHECKED.clear()
    known = _CHECKED[id(type)] = (checked, checked.get_shape())
    return known


def _checked_tensor(type: Attribute) -> TensorType[Attribute]:
    if not isinstance(type, TensorType):  # as isa(type, TensorType[Attribute]), but fast
        raise VerifyException(f"expected a ranked tensor type, got {type}")
    type = cast(TensorType[Attribute], type)
    if any(d.data < 0 for d in type.shape.data):
        raise VerifyException(f"expected a static shape, got {type}")
    element = type.element_type
    if element.__class__ not in _PLAIN_ELEMENT_CLASSES and element not in ALL_ELEMENTS:
        raise VerifyException(f"element type {element} is not one of {ELEMENT_NAMES}")
    return type


def shape_of(type: Attribute) -> Shape:
    return _known(type)[1]


def element_of(type: Attribute) -> Attribute:
    return static_tensor(type).element_type


ELEMENT_BYTES: dict[Attribute, int] = {
    **dict.fromkeys(MINIFLOATS, 1),
    i2: 1,
    i4: 1,
    ui2: 1,
    ui4: 1,
    f16: 2,
    bf16: 2,
    f32: 4,
    f64: 8,
    i8: 1,
    i16: 2,
    i32: 4,
    i64: 8,
    ui8: 1,
    ui16: 2,
    ui32: 4,
    ui64: 8,
    i1: 1,
}
"""Bytes of one element of each df element type in memory (an `i1`, an `i4` and an
`f4E2M1FN` take a byte each, as in `ml_dtypes` and xDSL's dense attributes)."""


def element_bytes(type: Attribute) -> int:
    """Bytes of one element of a df tensor type."""
    return ELEMENT_BYTES[element_of(type)]


def tensor_bytes(type: Attribute) -> int:
    """Bytes of a statically shaped df tensor: elements times their width."""
    tensor, shape = _known(type)
    return prod(shape) * ELEMENT_BYTES[tensor.element_type]


def bool_attr(value: bool) -> BoolAttr:
    return BoolAttr.from_bool(value)


def i64_array(values: tuple[int, ...] | list[int]) -> DenseArrayBase[IntegerType]:
    return DenseArrayBase.from_list(i64, values)


def i64_attr(value: int) -> IntegerAttr[IntegerType]:
    return IntegerAttr(value, i64)


def flag(attr: BoolAttr) -> bool:
    return bool(attr.value.data)
