"""Types and constants of the LLVM IR the llvm target prints.

`llvm_type` names a kernel's scalar and 1-D vector types as LLVM does (index is
i64, f16 and bf16 LLVM's `half` and `bfloat`); `literal` prints a constant as an
operand (a float as the hex of its double, rounded to its type first, as LLVM
requires); `suffix` is an intrinsic's type suffix. What the target cannot print yet
raises `UnsupportedKernelError`, which leaves the kernel to the numba target.
"""

from __future__ import annotations

import functools
import struct
from typing import cast

from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute

FLOAT_TYPES = {"f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double"}
"""LLVM's type of each float df kernels compute or store in."""


class UnsupportedKernelError(NotImplementedError):
    """A kernel holds an op or a type this printer does not handle yet."""


@functools.cache
def llvm_type(type: Attribute) -> str:
    """LLVM's name of a scalar or 1-D vector type of a kernel (index is i64); cached,
    as kernels print a few types thousands of times."""
    if isinstance(type, VectorType):
        shape = cast(VectorType[Attribute], type).get_shape()
        if len(shape) != 1:
            raise UnsupportedKernelError(f"{type}: only 1-D vectors are printed")
        return f"<{shape[0]} x {llvm_type(cast(VectorType[Attribute], type).element_type)}>"
    if isinstance(type, IndexType):
        return "i64"
    if isinstance(type, IntegerType):
        width = cast(IntegerType, type).bitwidth
        if width < 8 and width != 1:
            raise UnsupportedKernelError(
                f"{type} values (2- and 4-bit integers) are not printed yet"
            )
        return f"i{width}"
    name = FLOAT_TYPES.get(str(type))
    if name is None:
        raise UnsupportedKernelError(f"{type} values are not printed yet")
    return name


def suffix(type: str) -> str:
    """An intrinsic's type suffix: `f32` for float, `i64` for i64, `v16f32` for a
    vector of 16 floats."""
    if type.startswith("<"):
        count, _, element = type.strip("<>").partition(" x ")
        return f"v{count}{suffix(element)}"
    return {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64"}.get(type, type)


def literal(attribute: Attribute) -> str:
    """A constant as an LLVM operand: floats as the hex of their double (exact), as
    LLVM requires; integers in decimal; booleans as `true`/`false`; a splat vector
    as LLVM's `splat`."""
    if isinstance(attribute, DenseIntOrFPElementsAttr):
        return _splat(cast(DenseIntOrFPElementsAttr[AnyDenseElement], attribute))
    if isinstance(attribute, FloatAttr):
        value = _rounded(float(attribute.value.data), str(attribute.type))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        return "0x" + struct.pack(">d", value).hex().upper()
    assert isinstance(attribute, IntegerAttr)
    value = int(attribute.value.data)
    if llvm_type(attribute.type) == "i1":  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        return "true" if value else "false"
    return str(value)


def _rounded(value: float, type: str) -> float:
    """`value` rounded to `type`'s precision (LLVM refuses a constant its type cannot
    hold exactly): f32 and f16 by `struct`, bf16 by `ml_dtypes`."""
    if type == "f32":
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    if type == "f16":
        return float(struct.unpack("<e", struct.pack("<e", value))[0])
    if type == "bf16":
        import ml_dtypes  # noqa: PLC0415 (bf16 constants only)
        import numpy as np  # noqa: PLC0415

        return float(np.array(value, ml_dtypes.bfloat16))
    return value


def _splat(attribute: DenseIntOrFPElementsAttr[AnyDenseElement]) -> str:
    """A dense constant of one value as LLVM's `splat (T value)`; others are refused."""
    llvm_type(attribute.type)  # refuses a vector of more than one dimension
    values = cast(list[float], attribute.get_values())
    if not values or any(v != values[0] for v in values):
        raise UnsupportedKernelError("a vector constant of several values is not printed yet")
    element = attribute.get_element_type()
    ty = llvm_type(element)
    if ty in ("half", "bfloat", "float", "double"):
        return f"splat ({ty} {literal(FloatAttr(float(values[0]), cast(AnyFloat, element)))})"
    return f"splat ({ty} {literal(IntegerAttr(int(values[0]), cast(IntegerType, element)))})"
