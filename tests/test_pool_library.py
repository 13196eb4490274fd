"""The CPU library's max pool and its gradient (`dflow.runtime.library.cpu`) against
the reference semantics of the `df` ops (`dflow.dialects.df.reference`), over
generated geometries that reach both paths of each routine: every window inside the
input (the row-at-a-time loops; padding at the bottom or right that no window
reaches included) and windows over padding (the general window loop). The
inputs hold ties (small integers: the gradient goes to the first maximum in tap
order, as `np.argmax` picks it), NaN (it wins the window, the first NaN takes the
gradient) and -inf, in float32 and float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dflow.dialects.df import reference
from dflow.runtime.library import cpu

SEED, COUNT = 20261125, 120


def _geometry(rng: np.random.Generator, index: int) -> dict[str, Any] | None:
    kernel = tuple(int(k) for k in rng.integers(1, 4, 2))
    strides = tuple(int(s) for s in rng.integers(1, 4, 2))
    pads = tuple(int(rng.integers(0, kernel[a % 2])) for a in range(4))
    if index % 2 == 0:
        pads = (0, 0, *pads[2:]) if index % 4 == 0 else (0, 0, 0, 0)
    x_shape = (int(rng.integers(0, 3)), int(rng.integers(1, 4)), *map(int, rng.integers(1, 10, 2)))
    out_hw = tuple(
        (x_shape[2 + a] + pads[a] + pads[a + 2] - kernel[a]) // strides[a] + 1 for a in range(2)
    )
    if min(out_hw) < 1:
        return None
    return {"x": x_shape, "dy": (*x_shape[:2], *out_hw), "k": kernel, "s": strides, "p": pads}


CASES = [c for c in (_geometry(np.random.default_rng(SEED + i), i) for i in range(COUNT)) if c]


def _input(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> Any:
    """Small integers (ties in most windows), with a few NaN and -inf."""
    x = rng.integers(-3, 4, shape).astype(dtype)
    x[rng.random(shape) < 0.03] = np.nan
    x[rng.random(shape) < 0.05] = -np.inf
    return x


def _inside(case: dict[str, Any]) -> bool:
    (kh, kw), (sh, sw), (rows, columns) = case["k"], case["s"], case["dy"][2:]
    fits = (rows - 1) * sh + kh <= case["x"][2] and (columns - 1) * sw + kw <= case["x"][3]
    return case["p"][:2] == (0, 0) and fits


def test_the_cases_reach_both_paths() -> None:
    inside = [c for c in CASES if _inside(c)]
    assert 0 < len(inside) < len(CASES)
    assert any(c["p"][2:] != (0, 0) for c in inside)  # padding that no window reaches
    assert any(c["p"][:2] == (0, 0) and not _inside(c) for c in CASES)  # padding one does


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index", range(0, len(CASES), 6))
def test_max_pool_and_its_gradient_equal_the_reference(index: int, dtype: type) -> None:
    rng = np.random.default_rng(index)
    for case in CASES[index : index + 6]:
        x, dy = _input(rng, case["x"], dtype), rng.standard_normal(case["dy"]).astype(dtype)
        (kh, kw), (sh, sw), pads = case["k"], case["s"], case["p"]
        out = np.full(case["dy"], 7.0, dtype)
        cpu.max_pool2d_f32(x, out, kh, kw, sh, sw, *pads)
        expected = reference.max_pool2d(x, case["k"], case["s"], pads, case["dy"][2:])
        np.testing.assert_array_equal(out, expected, err_msg=str(case))
        grad = np.full(case["x"], 7.0, dtype)
        cpu.max_pool2d_grad_f32(x, dy, grad, kh, kw, sh, sw, *pads)
        expected = reference.max_pool2d_grad(x, dy, case["k"], case["s"], pads)
        tolerance = 1e-5 if dtype is np.float32 else 1e-12  # overlapping windows: sums' order
        np.testing.assert_allclose(
            grad, expected, rtol=tolerance, atol=tolerance, err_msg=str(case)
        )
