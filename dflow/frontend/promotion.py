"""Type promotion of the front end: NumPy 2's rules, with Python scalars weak (NEP 50).

The `df` ops are strictly typed (both operands of `df.add` share an element type);
the builder's operators and dflow's functions convert operands with `df.cast` first,
to the type NumPy 2 computes in, so that `x * 2.5` or `a + b` in a traced function
give NumPy's dtype and values. NumPy is dflow's reference semantics; where JAX
differs (it takes `int32 * 2.5` to float32, NumPy to float64) dflow follows NumPy.

- Tensors are *strong*: their dtypes promote as `np.promote_types` does
  (`f32 + f64 → f64`, `i32 + f32 → f64`, `i1 + i32 → i32`).
- Python scalars (`2`, `2.5`, `True`, and a `dflow.jit` argument that is one) are
  *weak*: one of a kind no higher than the tensor's (bool < int < float) takes the
  tensor's type (`i32 * 2 → i32`, `f32 * 2.5 → f32`); a higher kind promotes the
  tensor's type with the kind's default (`i32 * 2.5 → f64`, `i1 + 2 → i64`).
- An op's result type is NumPy's ufunc's: true division of integers or bools is
  float64; bool `+ * maximum minimum` give bool (or, and), computed in i32; bool `-`
  and integer `**` are refused (NumPy refuses the first; `df.pow` is float-only).

The rule is worked out here from dtypes alone (not by NumPy's value inspection), so
it holds under NumPy 1 as under NumPy 2; `tests/test_promotion.py` checks it against
NumPy's own results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import i1, i32
from xdsl.ir import Attribute

from dflow.dialects import df
from dflow.dialects.df.arrays import element_type_of, numpy_dtype
from dflow.dialects.df.types import ELEMENT_NAMES, is_float, is_unsigned
from dflow.frontend.errors import trace_error

Scalar = bool | int | float
"""A Python scalar: a weak value of its kind."""

Operand = np.dtype[Any] | type[Scalar]
"""An operand as promotion sees it: a tensor's dtype (strong), or the Python type of a
weak value (`float` for `2.5`)."""

_DEFAULTS: dict[type[Scalar], np.dtype[Any]] = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
}
"""The dtype NumPy gives a weak value of each kind that meets no tensor of its kind."""

_KINDS = {"b": 0, "i": 1, "u": 1, "f": 2}
"""The order of dtype kinds: bool < integer < float."""

_WEAK_KINDS: dict[str, type[Scalar]] = {"b": bool, "i": int, "u": int, "f": float}


def weak_kind(element: Attribute) -> type[Scalar]:
    """The Python type of a weak tensor of `element` (a Python scalar's stand-in)."""
    return _WEAK_KINDS[_kind_letter(numpy_dtype(element))]


def _kind_letter(dtype: np.dtype[Any]) -> str:
    """NumPy's kind of `dtype`: `ml_dtypes`' types (bfloat16, float8, int4, ...),
    which NumPy calls `V`, by what they hold."""
    if dtype.kind != "V":
        return dtype.kind
    element = element_type_of(dtype)
    return "f" if is_float(element) else "u" if is_unsigned(element) else "i"


def scalar_kind(value: Scalar) -> type[Scalar]:
    """`bool`, `int` or `float`: the kind of a Python scalar (`True` is a bool)."""
    if isinstance(value, bool):
        return bool
    return int if isinstance(value, int) else float


def _kind(dtype: np.dtype[Any]) -> int:
    return _KINDS[_kind_letter(dtype)]


def common_dtype(operands: Sequence[Operand]) -> np.dtype[Any]:
    """The dtype NumPy 2 converts `operands` to (`np.result_type` under NEP 50): the
    strong dtypes promoted; a weak kind above theirs promotes with its default."""
    strong = [o for o in operands if isinstance(o, np.dtype)]
    weak = [_DEFAULTS[o] for o in operands if not isinstance(o, np.dtype)]
    if not strong:
        return np.result_type(*weak)
    common = np.result_type(*strong)
    widest = max(weak, key=_kind, default=None)
    if widest is None or _kind(widest) <= _kind(common):
        return common
    return np.promote_types(common, widest)


def element_of_dtype(name: str, dtype: np.dtype[Any]) -> Attribute:
    """The df element type of `dtype`, or a TraceError: NumPy's result is one that df
    has no type for."""
    try:
        return element_type_of(dtype)
    except StopIteration:
        raise trace_error(
            f"dflow.{name}: NumPy's result is {dtype}, which df has no element type for "
            f"({ELEMENT_NAMES}): cast the operands first"
        ) from None


def _ufunc_result(name: str, ufunc: Callable[..., Any], dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype NumPy's `ufunc` gives on two operands of `dtype`; a TraceError with
    NumPy's reason where it refuses them (bool subtraction)."""
    sample = np.ones(1, dtype)
    try:
        with np.errstate(all="ignore"):
            return np.asarray(ufunc(sample, sample)).dtype
    except TypeError as error:
        raise trace_error(f"dflow.{name}: {error}") from None


def binary_types(
    op_type: type[df.BinaryElementwiseOp], operands: Sequence[Operand]
) -> tuple[Attribute, Attribute]:
    """The element type `op_type`'s two operands are converted to, and the element
    type of NumPy's result (after a `df.cast` where the op's own result differs: bool
    arithmetic, computed in i32)."""
    name = op_type.name.removeprefix("df.")
    common = common_dtype(operands)
    result = element_of_dtype(name, _ufunc_result(name, op_type.NUMPY, common))
    computed = element_type_of(common)
    operand = computed if op_type.result_element(computed) == result else result
    if operand in op_type.ELEMENTS:
        return operand, result
    if operand == result == i1:
        return i32, result  # bool or/and/max/min: 0 and 1 in integers, then `!= 0`
    raise trace_error(
        f"dflow.{name}: NumPy computes it in {operand}, which {op_type.name} does not "
        "support: cast the operands to a float type first"
    )


def scalar_array(name: str, value: Scalar, element: Attribute) -> np.ndarray[Any, Any]:
    """A Python scalar as a rank-0 array of `element`, as NumPy converts it; a
    TraceError where it does not fit (NumPy 2's OverflowError)."""
    dtype = numpy_dtype(element)
    if dtype.kind == "i" and not isinstance(value, bool) and isinstance(value, int):
        bounds = np.iinfo(dtype)
        if not bounds.min <= value <= bounds.max:
            raise trace_error(f"dflow.{name}: Python integer {value} out of bounds for {dtype}")
    try:
        return np.asarray(value, dtype=dtype)
    except OverflowError as error:
        raise trace_error(f"dflow.{name}: {error}") from None
