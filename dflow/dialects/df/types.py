"""Tensor types the `df` dialect accepts, and the element-type classes ops ask for."""

from __future__ import annotations

from math import prod
from typing import cast

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df.shapes import Shape

FLOATS: frozenset[Attribute] = frozenset({f32, f64})
"""Element types of ops defined on real numbers only (exp, div, conv2d, ...)."""
NUMBERS: frozenset[Attribute] = FLOATS | {i32, i64}
"""Element types that support arithmetic."""
ALL_ELEMENTS: frozenset[Attribute] = NUMBERS | {i1}
"""Every element type a `df` tensor may hold."""

_ELEMENT_CLASS_NAMES = {
    FLOATS: "a floating-point",
    NUMBERS: "a numeric",
    ALL_ELEMENTS: "an f32, f64, i32, i64 or i1",
}


def element_class_name(elements: frozenset[Attribute]) -> str:
    return _ELEMENT_CLASS_NAMES[elements]


def is_float(element: Attribute) -> bool:
    return isinstance(element, Float32Type | Float64Type)


def static_tensor(type: Attribute) -> TensorType[Attribute]:
    """The type as a statically shaped df tensor, or a VerifyException saying why not."""
    if not isinstance(type, TensorType):  # as isa(type, TensorType[Attribute]), but fast
        raise VerifyException(f"expected a ranked tensor type, got {type}")
    type = cast(TensorType[Attribute], type)
    if any(d < 0 for d in type.get_shape()):
        raise VerifyException(f"expected a static shape, got {type}")
    if type.element_type not in ALL_ELEMENTS:
        raise VerifyException(
            f"element type {type.element_type} is not one of f32, f64, i32, i64, i1"
        )
    return type


def shape_of(type: Attribute) -> Shape:
    return static_tensor(type).get_shape()


def element_of(type: Attribute) -> Attribute:
    return static_tensor(type).element_type


ELEMENT_BYTES: dict[Attribute, int] = {f32: 4, f64: 8, i32: 4, i64: 8, i1: 1}
"""Bytes of one element of each df element type in memory (an `i1` takes a byte)."""


def element_bytes(type: Attribute) -> int:
    """Bytes of one element of a df tensor type."""
    return ELEMENT_BYTES[element_of(type)]


def tensor_bytes(type: Attribute) -> int:
    """Bytes of a statically shaped df tensor: elements times their width."""
    tensor = static_tensor(type)
    return prod(tensor.get_shape()) * ELEMENT_BYTES[tensor.element_type]


def bool_attr(value: bool) -> BoolAttr:
    return BoolAttr.from_bool(value)


def i64_array(values: tuple[int, ...] | list[int]) -> DenseArrayBase[IntegerType]:
    return DenseArrayBase.from_list(i64, values)


def i64_attr(value: int) -> IntegerAttr[IntegerType]:
    return IntegerAttr(value, i64)


def flag(attr: BoolAttr) -> bool:
    return bool(attr.value.data)
