"""Tensor values as NumPy arrays: the dtype of each df element type, and dense
attributes to and from arrays, bit for bit (`i1` as one byte each, true as -1).
`bf16`, the 8- and 4-bit floats and the 2- and 4-bit integers are `ml_dtypes`'
types, the dtypes ONNX and JAX hold them in (NumPy has none)."""

from __future__ import annotations

from typing import Any, cast

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    AnyDenseElement,
    BytesAttr,
    DenseIntOrFPElementsAttr,
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
from xdsl.ir import Attribute

from dflow.dialects.df.reference import Array
from dflow.dialects.df.types import (
    f4e2m1fn,
    f8e4m3fn,
    f8e4m3fnuz,
    f8e5m2,
    f8e5m2fnuz,
    i2,
    i4,
    static_tensor,
    ui2,
    ui4,
    ui8,
    ui16,
    ui32,
    ui64,
)

_DTYPES: dict[Attribute, np.dtype[Any]] = {
    f8e4m3fn: np.dtype(ml_dtypes.float8_e4m3fn),
    f8e4m3fnuz: np.dtype(ml_dtypes.float8_e4m3fnuz),
    f8e5m2: np.dtype(ml_dtypes.float8_e5m2),
    f8e5m2fnuz: np.dtype(ml_dtypes.float8_e5m2fnuz),
    f4e2m1fn: np.dtype(ml_dtypes.float4_e2m1fn),
    i2: np.dtype(ml_dtypes.int2),
    i4: np.dtype(ml_dtypes.int4),
    ui2: np.dtype(ml_dtypes.uint2),
    ui4: np.dtype(ml_dtypes.uint4),
    f16: np.dtype(np.float16),
    bf16: np.dtype(ml_dtypes.bfloat16),
    f32: np.dtype(np.float32),
    f64: np.dtype(np.float64),
    i8: np.dtype(np.int8),
    i16: np.dtype(np.int16),
    i32: np.dtype(np.int32),
    i64: np.dtype(np.int64),
    ui8: np.dtype(np.uint8),
    ui16: np.dtype(np.uint16),
    ui32: np.dtype(np.uint32),
    ui64: np.dtype(np.uint64),
    i1: np.dtype(np.bool_),
}


_SUB_BYTE_INTEGERS: dict[Attribute, type[np.integer[Any]]] = {
    i2: np.int8,
    i4: np.int8,
    ui2: np.uint8,
    ui4: np.uint8,
}
"""The byte xDSL holds each 2- and 4-bit integer in (`ml_dtypes` keeps only the low
bits of its byte, so an int4 -1 is 0x0F there and 0xFF here)."""


def numpy_dtype(element: Attribute) -> np.dtype[Any]:
    """The NumPy dtype holding a df element type."""
    return _DTYPES[element]


def element_type_of(dtype: np.dtype[Any]) -> Attribute:
    """The df element type of a NumPy dtype; KeyError when there is none."""
    return next(element for element, d in _DTYPES.items() if d == dtype)


def to_array(value: DenseIntOrFPElementsAttr) -> Array:
    """The elements of a dense attribute as a new NumPy array of its shape."""
    type = static_tensor(value.type)
    if type.element_type == i1:
        flat = np.frombuffer(value.data.data, dtype=np.int8) != 0
    else:
        flat = np.frombuffer(
            value.data.data, dtype=numpy_dtype(type.element_type).newbyteorder("<")
        )
    return flat.reshape(type.get_shape()).astype(numpy_dtype(type.element_type))


def from_array(array: Array, type: TensorType[Attribute]) -> DenseIntOrFPElementsAttr:
    """A dense attribute of `type` holding `array` (cast to the element type)."""
    values = np.asarray(array, dtype=numpy_dtype(type.element_type))
    if type.element_type == i1:  # xDSL stores i1 as one byte each, true as -1
        values = np.where(values, -1, 0).astype(np.int8)
    elif type.element_type in _SUB_BYTE_INTEGERS:  # a byte each, sign-extended
        values = values.astype(_SUB_BYTE_INTEGERS[type.element_type])
    data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes()
    # A cast, not `isa(type, TensorType[AnyDenseElement])`: xDSL builds that generic
    # constraint anew at each call (0.9 ms: a second of DenseNet-201's ONNX import);
    # the attribute's own verifier checks the element type.
    return DenseIntOrFPElementsAttr(cast(TensorType[AnyDenseElement], type), BytesAttr(data))
