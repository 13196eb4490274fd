"""The CPU library's convolutions (`dflow.runtime.library.cpu`) against the reference
semantics of the `df` ops (`dflow.dialects.df.reference`, NumPy einsum per tap), over
generated geometries: every path of the library is reached — pointwise (1x1, unit
strides, no padding: the image is its own column matrix), "same" (unit strides, the
output as wide as the input: one shifted copy per column row), and the general
strided/dilated path — with asymmetric padding, empty batches and channels, float32
and float64; and the filter gradient's product over runs of images, with a batch
that needs one run, exactly two, and two and a bit. Grouped convolutions (2 and 4
groups, depthwise with one and two filters per channel) on each path, with and
without bias, against the reference's per-group semantics.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dflow.dialects.df import reference
from dflow.runtime.library import cpu

SEED, COUNT = 20261124, 240


def _geometry(rng: np.random.Generator, index: int) -> dict[str, Any] | None:
    kernel = tuple(int(k) for k in rng.integers(1, 4, 2))
    strides = (1, 1) if index % 3 == 0 else tuple(int(s) for s in rng.integers(1, 4, 2))
    pads = tuple(int(p) for p in rng.integers(0, 4, 4))
    dilations = tuple(int(d) for d in rng.integers(1, 3, 2))
    if index % 5 == 0:
        kernel, strides, pads = (1, 1), (1, 1), (0, 0, 0, 0)
    x_shape = (int(rng.integers(0, 4)), int(rng.integers(0, 4)), *map(int, rng.integers(1, 9, 2)))
    out_hw = tuple(
        (x_shape[2 + a] + pads[a] + pads[a + 2] - dilations[a] * (kernel[a] - 1) - 1) // strides[a]
        + 1
        for a in range(2)
    )
    if min(out_hw) < 1:
        return None
    filters = int(rng.integers(1, 4))
    return {
        "x": x_shape,
        "w": (filters, x_shape[1], *kernel),
        "dy": (x_shape[0], filters, *out_hw),
        "strides": strides,
        "pads": pads,
        "dilations": dilations,
    }


def _cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    found = [_geometry(rng, index) for index in range(COUNT)]
    return [case for case in found if case is not None]


CASES = _cases()


def _paths(case: dict[str, Any]) -> str:
    if case["w"][2:] == (1, 1) and case["strides"] == (1, 1) and not any(case["pads"]):
        return "pointwise"
    if case["strides"] == (1, 1) and case["dy"][3] == case["x"][3]:
        return "same"
    return "general"


def test_the_cases_reach_every_path() -> None:
    paths = {_paths(case) for case in CASES}
    assert paths == {"pointwise", "same", "general"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index", range(0, len(CASES), 4))
def test_convolution_routines_equal_the_reference(index: int, dtype: type) -> None:
    """Four consecutive cases per test: forward, input and filter gradients."""
    rng = np.random.default_rng(index)
    for case in CASES[index : index + 4]:
        x, w, dy = (rng.standard_normal(case[k]).astype(dtype) for k in ("x", "w", "dy"))
        strides, pads, dilations = case["strides"], case["pads"], case["dilations"]
        geometry = (*strides, *pads, *dilations, 1)
        tolerance = 1e-4 if dtype is np.float32 else 1e-10
        out = np.full(case["dy"], np.nan, dtype)
        cpu.conv2d_f32(x, w, out, *geometry)
        expected = reference.conv2d(x, w, None, strides, pads, dilations, case["dy"][2:])
        np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance, err_msg=str(case))
        grad_input = np.full(case["x"], np.nan, dtype)
        cpu.conv2d_grad_input_f32(dy, w, grad_input, *geometry)
        expected = reference.conv2d_grad_input(dy, w, case["x"], strides, pads, dilations)
        np.testing.assert_allclose(
            grad_input, expected, rtol=tolerance, atol=tolerance, err_msg=str(case)
        )
        grad_filter = np.full(case["w"], np.nan, dtype)
        cpu.conv2d_grad_filter_f32(x, dy, grad_filter, *geometry)
        expected = reference.conv2d_grad_filter(x, dy, case["w"], strides, pads, dilations)
        np.testing.assert_allclose(
            grad_filter, expected, rtol=tolerance, atol=tolerance, err_msg=str(case)
        )


@pytest.mark.parametrize("extra", [0, 9])
def test_filter_gradient_over_several_runs_of_images(extra: int) -> None:
    """A 3x3 filter over 3x32x32 images takes 27 * 1024 column elements per image: a
    run holds `FILTER_GRADIENT_COLUMNS // 27648` images, and these batches need two
    runs exactly, and two and a partial third."""
    per_run = cpu.FILTER_GRADIENT_COLUMNS // (27 * 1024)
    batch = 2 * per_run + extra
    rng = np.random.default_rng(7)
    x = rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)
    dy = rng.standard_normal((batch, 4, 32, 32)).astype(np.float32)
    got = np.full((4, 3, 3, 3), np.nan, np.float32)
    cpu.conv2d_grad_filter_f32(x, dy, got, 1, 1, 1, 1, 1, 1, 1, 1, 1)
    expected = reference.conv2d_grad_filter(
        x.astype(np.float64), dy.astype(np.float64), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)
    )
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4 * np.abs(expected).max())


GROUPED = {
    "2 groups": (8, 6, 2),
    "4 groups": (8, 8, 4),
    "depthwise": (8, 8, 8),
    "depthwise x2": (4, 8, 4),
}
"""Input channels, output channels and groups of the grouped cases."""

GROUPED_WINDOWS = {
    "pointwise": ((1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),
    "same": ((3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    "general": ((3, 2), (2, 1), (1, 0, 2, 1), (1, 2)),
}
"""Kernel, strides, pads and dilations reaching each path of the library."""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("window", list(GROUPED_WINDOWS))
@pytest.mark.parametrize("grouping", list(GROUPED))
def test_grouped_convolution_routines_equal_the_reference(
    grouping: str, window: str, dtype: type
) -> None:
    """Forward (with and without bias), input and filter gradients of a grouped
    convolution against the reference, which computes each group on its own."""
    channels, filters, groups = GROUPED[grouping]
    kernel, strides, pads, dilations = GROUPED_WINDOWS[window]
    rng = np.random.default_rng(groups)
    x = rng.standard_normal((2, channels, 7, 6)).astype(dtype)
    w = rng.standard_normal((filters, channels // groups, *kernel)).astype(dtype)
    bias = rng.standard_normal(filters).astype(dtype)
    out_hw = tuple(
        (x.shape[2 + a] + pads[a] + pads[a + 2] - dilations[a] * (kernel[a] - 1) - 1) // strides[a]
        + 1
        for a in range(2)
    )
    dy = rng.standard_normal((2, filters, *out_hw)).astype(dtype)
    geometry = (*strides, *pads, *dilations, groups)
    tolerance = 1e-4 if dtype is np.float32 else 1e-10
    suffix = "f32" if dtype is np.float32 else "f64"
    routines = {
        name: getattr(cpu, f"{name}_{suffix}")
        for name in ("conv2d", "conv2d_bias", "conv2d_grad_input", "conv2d_grad_filter")
    }
    out = np.full(dy.shape, np.nan, dtype)
    routines["conv2d_bias"](x, w, bias, out, *geometry)
    expected = reference.conv2d(x, w, bias, strides, pads, dilations, out_hw, groups)
    np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance)
    routines["conv2d"](x, w, out, *geometry)
    expected = reference.conv2d(x, w, None, strides, pads, dilations, out_hw, groups)
    np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance)
    grad_input = np.full(x.shape, np.nan, dtype)
    routines["conv2d_grad_input"](dy, w, grad_input, *geometry)
    expected = reference.conv2d_grad_input(dy, w, x.shape, strides, pads, dilations, groups)
    np.testing.assert_allclose(grad_input, expected, rtol=tolerance, atol=tolerance)
    grad_filter = np.full(w.shape, np.nan, dtype)
    routines["conv2d_grad_filter"](x, dy, grad_filter, *geometry)
    expected = reference.conv2d_grad_filter(x, dy, w.shape, strides, pads, dilations, groups)
    np.testing.assert_allclose(grad_filter, expected, rtol=tolerance, atol=tolerance)


def test_grouped_filter_gradient_over_several_runs_of_images() -> None:
    """A 3x3 filter in 2 groups of 2 channels over 32x32 images (18 * 1024 column
    elements per image and group): two runs and a partial third, per group."""
    per_run = cpu.FILTER_GRADIENT_COLUMNS // (18 * 1024)
    batch = 2 * per_run + 5
    rng = np.random.default_rng(8)
    x = rng.standard_normal((batch, 4, 32, 32)).astype(np.float32)
    dy = rng.standard_normal((batch, 6, 32, 32)).astype(np.float32)
    got = np.full((6, 2, 3, 3), np.nan, np.float32)
    cpu.conv2d_grad_filter_f32(x, dy, got, 1, 1, 1, 1, 1, 1, 1, 1, 2)
    expected = reference.conv2d_grad_filter(
        x.astype(np.float64), dy.astype(np.float64), (6, 2, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2
    )
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4 * np.abs(expected).max())
