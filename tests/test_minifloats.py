"""The 8- and 4-bit floats (f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f4E2M1FN) and
the 2- and 4-bit integers (i2, i4, ui2, ui4), from the dialect to the kernels.

The oracle is `ml_dtypes`' `astype` (the dtypes ONNX, JAX and PyTorch's exporters
hold these types in), not the interpreter alone: every bit pattern of each float
widened to f32; random float32 and float64 bit patterns, values scaled through the
format's range, and its edges (the largest finite value, the ties either side of
it, subnormals, infinities, NaN) narrowed, bit for bit; integers wrapped to 2 and 4
bits from i32, i64 and floats. Compiled programs are compared with the interpreter
over the op families (`df-widen` computes each in f32 or i32), and results come
back in `ml_dtypes`' own bytes (an int4 -1 is 0x0F).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from compiled_support import (
    DTYPES,
    check,
    compile_to,
    kernels_typed_as_declared,  # noqa: F401  # pyright: ignore[reportUnusedImport]
    normal,
)

import dflow
from dflow.frontend import Graph, Tensor

pytestmark = pytest.mark.usefixtures("module_cache")

MINIFLOATS = ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f4E2M1FN")
SUB_BYTE = ("i2", "i4", "ui2", "ui4")


def _compiled(source: str, targets: tuple[str, ...], values: Any, directory: Path) -> list[Any]:
    graph = Graph("main")
    x = graph.input("x", values.shape, source)
    graph.output(*(dflow.cast(x, target) for target in targets))
    return list(compile_to(graph.module(), directory).run("main", [values]))


def _same_bits_or_both_nan(got: Any, want: Any, what: str) -> None:
    assert got.dtype == want.dtype, what
    number = ~np.isnan(want.astype(np.float32))
    bits = {1: np.uint8, 4: np.uint32, 8: np.uint64}[want.itemsize]
    np.testing.assert_array_equal(got.view(bits)[number], want.view(bits)[number], err_msg=what)
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), ~number, err_msg=what)


@pytest.mark.parametrize("element", MINIFLOATS)
def test_every_value_widens_exactly(element: str, tmp_path: Path) -> None:
    """All 256 (16) bit patterns to f32 and f64: `ml_dtypes`' values, NaN for NaN."""
    dtype = DTYPES[element]
    count = 16 if element == "f4E2M1FN" else 256
    values = np.arange(count, dtype=np.uint8).view(dtype)
    widened = _compiled(element, ("f32", "f64"), values, tmp_path)
    for target, got in zip(("f32", "f64"), widened, strict=True):
        _same_bits_or_both_nan(got, values.astype(DTYPES[target]), f"{element} -> {target}")


def _edges(dtype: np.dtype[Any]) -> list[float]:
    """The largest finite value and the ties around it, the smallest subnormal and
    its half, signed zeros, infinities, NaN."""
    info = ml_dtypes.finfo(dtype)
    largest, tiny = float(info.max), float(info.smallest_subnormal)
    below = float((np.array([info.max], dtype).view(np.uint8) - 1).view(dtype)[0])
    step = largest - below
    edges = [largest, largest + step / 2, largest + step / 2 * 1.0001, largest + step, 2 * largest]
    edges += [tiny, tiny / 2, tiny * 1.5, tiny * 0.5001, -0.0, 0.0, np.inf, -np.inf, np.nan]
    return edges + [-e for e in edges]


def _narrowing_inputs(source: str, element: str, rng: np.random.Generator) -> Any:
    unsigned = np.uint32 if source == "f32" else np.uint64
    bits = rng.integers(0, np.iinfo(unsigned).max, 5000, dtype=unsigned, endpoint=True)
    scaled = rng.standard_normal(20000) * 2.0 ** rng.integers(-20, 18, 20000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN bit patterns among the random ones
        values = [bits.view(DTYPES[source]), scaled, _edges(DTYPES[element])]
        return np.concatenate(values).astype(DTYPES[source])


@pytest.mark.parametrize("source", ["f32", "f64"])
@pytest.mark.parametrize("element", MINIFLOATS)
def test_narrowing_is_ml_dtypes_astype(source: str, element: str, tmp_path: Path) -> None:
    """f32 and f64 to each format, bit for bit as `ml_dtypes`: rounded once, from the
    source value, half to even; past the largest value to infinity (E5M2), NaN (the
    FN and FNUZ formats) or the largest value (E2M1); -0 to 0 where there is no -0."""
    values = _narrowing_inputs(source, element, np.random.default_rng(11))
    [got] = _compiled(source, (element,), values, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow to inf
        want = values.astype(DTYPES[element])
    _same_bits_or_both_nan(got, want, f"{source} -> {element}")


@pytest.mark.parametrize("element", SUB_BYTE)
def test_integers_wrap_to_their_bits(element: str, tmp_path: Path) -> None:
    """i32, i64 and f32 values to a 2- or 4-bit integer: wrapped (floats truncated
    first), as `ml_dtypes`' `astype`; back to i32 and f32 exactly, and the results
    in `ml_dtypes`' bytes (only the low bits set)."""
    rng = np.random.default_rng(len(element))
    for source in ("i32", "i64", "f32"):
        values = rng.integers(-40, 40, 200).astype(DTYPES[source])
        if source == "f32":
            values = values + rng.choice([0.0, 0.25, 0.5, 0.75], 200).astype(np.float32)
        [got] = _compiled(source, (element,), values, tmp_path / source)
        want = values.astype(DTYPES[element])
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=source)
    every = np.arange(2 ** int(element.lstrip("ui")), dtype=np.uint8).view(DTYPES[element])
    widened = _compiled(element, ("i32", "f32", "i8"), every, tmp_path / "back")
    for got, target in zip(widened, ("i32", "f32", "i8"), strict=True):
        np.testing.assert_array_equal(got, every.astype(DTYPES[target]), err_msg=target)


def _ops(graph: Graph, a: Tensor, b: Tensor) -> dict[str, Tensor]:
    return {
        "add": a + b,
        "mul": a * b,
        "maximum": dflow.maximum(a, b),
        "less": a < b,
        "select": dflow.where(a < b, a, b),
        "sum": dflow.reduce_sum(a, axes=(1,)),
        "transpose": dflow.transpose(a, (1, 0)),
        "concat": dflow.concat([a, b], axis=0),
        "matmul": dflow.matmul(a, dflow.transpose(b, (1, 0))),
    }


@pytest.mark.parametrize("element", [*MINIFLOATS, *SUB_BYTE])
def test_ops_compile_as_they_interpret(element: str, tmp_path: Path) -> None:
    """Each op family on `element` values computes in f32 (i32) and rounds (wraps)
    its result, compiled as interpreted. The values are small: their sums and
    products are exact in f32, so any order of summing gives the same bits."""
    rng = np.random.default_rng(len(element))
    if element in SUB_BYTE:
        a, b = (rng.integers(-2, 2, (6, 5)).astype(DTYPES[element]) for _ in range(2))
    else:
        a, b = normal(rng, (6, 5), element, 1.0), normal(rng, (6, 5), element, 1.0)
    check(tmp_path, [a, b], _ops)
