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

import dflow
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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index", range(0, len(CASES), 6))
def test_max_pool_indices_and_their_gradient_equal_the_reference(index: int, dtype: type) -> None:
    """`max_pool2d_indices` and `max_pool2d_grad_indices` on the same cases; the
    maxima read at the indices are `max_pool2d`'s, and the gradient routed through
    them is `max_pool2d_grad`'s wherever a window holds something above -inf
    (otherwise the indices pick the first element inside the input, where
    `max_pool2d_grad` routes the gradient to the padding when a window starts there)."""
    rng = np.random.default_rng(index)
    for case in CASES[index : index + 6]:
        x, dy = _input(rng, case["x"], dtype), rng.standard_normal(case["dy"]).astype(dtype)
        (kh, kw), (sh, sw), pads = case["k"], case["s"], case["p"]
        window = (case["k"], case["s"], pads)
        indices = np.full(case["dy"], -7, np.int64)
        cpu.max_pool2d_indices_f32(x, indices, kh, kw, sh, sw, *pads)
        expected = reference.max_pool2d_indices(x, *window, case["dy"][2:])
        np.testing.assert_array_equal(indices, expected, err_msg=str(case))
        n, c, height, width = case["x"]
        windows = indices.reshape(n, c, case["dy"][2] * case["dy"][3])
        maxima = np.take_along_axis(x.reshape(n, c, height * width), windows, 2)
        pooled = reference.max_pool2d(x, *window, case["dy"][2:])
        np.testing.assert_array_equal(maxima.reshape(pooled.shape), pooled, err_msg=str(case))
        grad = np.full(case["x"], 7.0, dtype)
        cpu.max_pool2d_grad_indices_f32(dy, indices, grad, kh, kw, sh, sw, *pads)
        tolerance = 1e-5 if dtype is np.float32 else 1e-12  # overlapping windows: sums' order
        expected = reference.max_pool2d_grad_indices(dy, indices, case["x"])
        np.testing.assert_allclose(grad, expected, rtol=tolerance, atol=tolerance)
        finite = np.where(pooled == -np.inf, 0, dy).astype(dtype)
        np.testing.assert_allclose(
            reference.max_pool2d_grad_indices(finite, indices, case["x"]),
            reference.max_pool2d_grad(x, finite, *window),
            rtol=tolerance,
            atol=tolerance,
            err_msg=str(case),
        )


def test_max_pool_indices_are_pytorchs() -> None:
    """PyTorch's `max_pool2d(return_indices=True)` gives the same indices on inputs
    with ties and -inf (not NaN: PyTorch's last NaN wins a window, NumPy's first)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(SEED)
    symmetric = [  # PyTorch pads both sides alike, by at most half the kernel
        c
        for c in CASES
        if c["p"][:2] == c["p"][2:] and 2 * c["p"][0] <= c["k"][0] and 2 * c["p"][1] <= c["k"][1]
    ]
    assert len(symmetric) >= 5
    for case in symmetric:
        x = rng.integers(-3, 4, case["x"]).astype(np.float32)
        x[rng.random(case["x"]) < 0.05] = -np.inf
        (kh, kw), (sh, sw), pads = case["k"], case["s"], case["p"]
        _, expected = torch.nn.functional.max_pool2d(
            torch.from_numpy(x), case["k"], case["s"], pads[:2], return_indices=True
        )
        indices = np.full(case["dy"], -7, np.int64)
        cpu.max_pool2d_indices_f32(x, indices, kh, kw, sh, sw, *pads)
        np.testing.assert_array_equal(indices, expected.numpy(), err_msg=str(case))


def test_an_index_outside_the_plane_is_an_index_error() -> None:
    indices = np.array([[[[0, 9]]]], np.int64)
    dy, grad = np.ones((1, 1, 1, 2), np.float32), np.zeros((1, 1, 3, 3), np.float32)
    message = "df.max_pool2d_grad_indices: index 9 is out of range for a 3x3 plane"
    with pytest.raises(IndexError, match=message):
        reference.max_pool2d_grad_indices(dy, indices, grad.shape)
    with pytest.raises(IndexError, match=message):
        cpu.max_pool2d_grad_indices_f32(dy, indices, grad, 1, 2, 1, 1, 0, 0, 0, 0)


@pytest.mark.parametrize(
    "window",
    [
        {"kernel": (2, 2), "strides": (2, 2)},
        {"kernel": (3, 3), "strides": (2, 2), "pads": (1,) * 4},
    ],
    ids=["2x2", "3x3-padded"],
)
def test_compiled_max_pool_gradient_is_pytorchs(window: dict[str, Any]) -> None:
    """`dflow.grad` of a max pool, compiled (the forward pass keeping the indices),
    equals PyTorch's autograd on inputs full of ties, where finite differences say
    nothing: both give a window's gradient to its first maximum."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(SEED)
    x = rng.integers(-2, 3, (2, 3, 9, 9)).astype(np.float32)
    weights = rng.standard_normal((2, 3, 5, 5) if "pads" in window else (2, 3, 4, 4))
    weights = weights.astype(np.float32)

    def loss(x: Any) -> Any:
        return dflow.reduce_sum(dflow.max_pool2d(x, **window) * weights)

    got = dflow.jit(dflow.grad(loss))(x)
    tensor = torch.from_numpy(x).requires_grad_()
    pads = window.get("pads", (0, 0, 0, 0))[:2]
    pooled = torch.nn.functional.max_pool2d(tensor, window["kernel"], window["strides"], pads)
    (pooled * torch.from_numpy(weights)).sum().backward()
    np.testing.assert_allclose(got, tensor.grad.numpy(), rtol=1e-6, atol=1e-6)
