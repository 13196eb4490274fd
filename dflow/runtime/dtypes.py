"""NumPy dtypes by name, bfloat16 included: its dtype is `ml_dtypes.bfloat16`,
registered with NumPy only once `ml_dtypes` is imported (a twentieth of a second,
so only where a bfloat16 tensor is seen, never on the way to a cached run of other
dtypes)."""

from __future__ import annotations

from typing import Any

import numpy as np

BFLOAT16 = "bfloat16"


def dtype_named(name: str) -> np.dtype[Any]:
    """The dtype `np.dtype(name)` is, bfloat16 included."""
    if name == BFLOAT16:
        import ml_dtypes  # noqa: PLC0415 (a twentieth of a second: only when needed)

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def dtype_name(dtype: np.dtype[Any]) -> str:
    """A name `dtype_named` reads back: `<f4`, or `bfloat16` (whose `str` is `<V2`)."""
    return BFLOAT16 if dtype.name == BFLOAT16 else dtype.str


def is_floating(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` holds real numbers (float16 to float64, and bfloat16)."""
    return dtype.kind == "f" or dtype.name == BFLOAT16


def as_dtype(value: Any, dtype: np.dtype[Any]) -> Any:
    """`value` seen as bfloat16 when that is `dtype` and `value` holds 16-bit raw
    data (`np.save` writes bfloat16 as `V2`, and ONNX's tools hold it as uint16);
    `value` unchanged otherwise."""
    array = np.asarray(value)
    if dtype.name == BFLOAT16 and array.dtype.kind in "uV" and array.dtype.itemsize == 2:
        return array.view(dtype)
    return value
