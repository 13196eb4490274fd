"""NumPy dtypes by name, `ml_dtypes`' included (bfloat16, the 8- and 4-bit floats,
the 2- and 4-bit integers): they are registered with NumPy only once `ml_dtypes` is
imported (a twentieth of a second, so only where such a tensor is seen, never on the
way to a cached run of other dtypes)."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

ML_FLOATS = frozenset(
    {
        "bfloat16",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float4_e2m1fn",
    }
)
"""The float dtypes `ml_dtypes` defines that df has."""
SUB_BYTE_BITS = {"int2": 2, "int4": 4, "uint2": 2, "uint4": 4}
"""`ml_dtypes`' integers narrower than a byte, by their bits."""
ML_DTYPES = ML_FLOATS | set(SUB_BYTE_BITS)
"""Every dtype of `ml_dtypes` that df has, by name."""


@cache
def dtype_named(name: str) -> np.dtype[Any]:
    """The dtype `np.dtype(name)` is, `ml_dtypes`' included (cached: every run's feeds
    are checked against it)."""
    if name in ML_DTYPES:
        import ml_dtypes  # noqa: PLC0415 (a twentieth of a second: only when needed)

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def dtype_name(dtype: np.dtype[Any]) -> str:
    """A name `dtype_named` reads back: `<f4`, or `bfloat16` (whose `str` is `<V2`)."""
    return dtype.name if dtype.name in ML_DTYPES else dtype.str


def is_floating(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` holds real numbers (float16 to float64, bfloat16, float8...)."""
    return dtype.kind == "f" or dtype.name in ML_FLOATS


def as_dtype(value: Any, dtype: np.dtype[Any]) -> Any:
    """`value` seen as `dtype` when that is one of `ml_dtypes`' and `value` holds raw
    data of its width (`np.save` writes them as `V2` or `V1`, and ONNX's tools hold
    bfloat16 as uint16); `value` unchanged otherwise."""
    array = np.asarray(value)
    raw = array.dtype.kind in "uV" and array.dtype.itemsize == dtype.itemsize
    if dtype.name in ML_DTYPES and raw:
        return array.view(dtype)
    return value
