"""Narrow element types (f16, bf16, i8, i16, ui8, ui16, ui32) and ui64, from the
dialect to the kernels.

The oracle is NumPy's own (and ml_dtypes' for bfloat16), not the interpreter alone:
`astype` for every cast, bit for bit (all 65,536 half and bfloat16 values widened;
random float32 and float64 bit patterns, halfway cases, subnormals, overflow and
NaN narrowed); NumPy's float16 and int8 ufuncs for arithmetic, which compute in
float32 (int) and round (wrap) the result as `df-widen` does. Compiled programs
are compared with the interpreter over every op family; feeds and results cross
`dflow run` as `.npz` files (bfloat16 comes back from NumPy's archive as `V2` and
is read as bfloat16).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from compiled_support import (
    DTYPES,
    NARROW,
    check,
    compile_to,
    kernels_typed_as_declared,  # noqa: F401  # pyright: ignore[reportUnusedImport]
    normal,
)

import dflow
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function

pytestmark = pytest.mark.usefixtures("module_cache")

ALL = ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "i1")
HALVES = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}


def _casts_program(source: str, shape: tuple[int, ...], targets: tuple[str, ...]) -> Graph:
    graph = Graph("main")
    x = graph.input("x", shape, source)
    graph.output(*(dflow.cast(x, target) for target in targets))
    return graph


def _defined_values(source: str, n: int, rng: np.random.Generator) -> Any:
    """Values of `source` whose cast to every type is defined (NumPy leaves floats out
    of an integer's range, NaN, and negative values to unsigned types undefined):
    small non-negative values, halves and ties included."""
    if source == "i1":
        return rng.random(n) < 0.5
    values = rng.integers(0, 120, n).astype(np.float64)
    if source in HALVES or source.startswith("f"):
        values = values / 4  # quarters: ties of integer rounding
    return values.astype(DTYPES[source])


@pytest.mark.parametrize("source", ALL)
def test_cast_to_every_type_is_numpys_astype(source: str, tmp_path: Path) -> None:
    """`df.cast` from `source` to each of the 13 element types, compiled, equals
    NumPy's `astype` (a cast to i1 is `!= 0`, as NumPy's to bool)."""
    values = _defined_values(source, 64, np.random.default_rng(len(source)))
    targets = tuple(t for t in ALL if t != source)
    program = compile_to(_casts_program(source, values.shape, targets).module(), tmp_path)
    for target, got in zip(targets, program.run("main", [values]), strict=True):
        want = values.astype(DTYPES[target])
        assert got.dtype == want.dtype, target
        np.testing.assert_array_equal(got, want, err_msg=f"{source} -> {target}")


def _compiled(source: str, target: str, values: Any, directory: Path) -> Any:
    program = compile_to(_casts_program(source, values.shape, (target,)).module(), directory)
    return program.run("main", [values])[0]


@pytest.mark.parametrize("half", HALVES)
def test_every_half_value_widens_exactly(half: str, tmp_path: Path) -> None:
    """All 65,536 bit patterns of f16 (bf16) to f32: NumPy's values, NaN for NaN."""
    values = np.arange(2**16, dtype=np.uint16).view(HALVES[half])
    got = _compiled(half, "f32", values, tmp_path)
    want = values.astype(np.float32)
    number = ~np.isnan(want)
    np.testing.assert_array_equal(got.view(np.uint32)[number], want.view(np.uint32)[number])
    np.testing.assert_array_equal(np.isnan(got), ~number)


def _narrowing_inputs(source: str, rng: np.random.Generator) -> Any:
    """Random bit patterns of `source` (every exponent), values scaled through the
    half formats' range, and the edges: the largest half, the ties either side of
    it and of infinity, the smallest subnormals and their halves, signed zeros."""
    unsigned = np.uint32 if source == "f32" else np.uint64
    bits = rng.integers(0, np.iinfo(unsigned).max, 20000, dtype=unsigned, endpoint=True)
    scaled = rng.standard_normal(20000) * 2.0 ** rng.integers(-30, 20, 20000)
    edges = [65504, 65519, 65520, 65536, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-149]
    edges += [3.3895314e38, 3.39e38, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, -0.0, 0.0]
    edges += [np.inf, -np.inf, np.nan]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN bit patterns among the random ones
        return np.concatenate([bits.view(DTYPES[source]), scaled, edges]).astype(DTYPES[source])


@pytest.mark.parametrize("source", ["f32", "f64"])
@pytest.mark.parametrize("half", HALVES)
def test_narrowing_rounds_half_to_even_as_numpy(source: str, half: str, tmp_path: Path) -> None:
    """f32 and f64 to f16 (bf16), bit for bit as NumPy's (ml_dtypes') `astype`:
    rounded once, from the source value, to nearest even; overflow to infinity."""
    values = _narrowing_inputs(source, np.random.default_rng(7))
    got = _compiled(source, half, values, tmp_path).view(np.uint16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns on overflow to inf
        want = values.astype(HALVES[half])
    number = ~np.isnan(want)
    np.testing.assert_array_equal(got[number], want.view(np.uint16)[number])
    np.testing.assert_array_equal(np.isnan(got.view(HALVES[half])), ~number)


def _arithmetic(graph: Graph, a: Tensor, b: Tensor) -> dict[str, Tensor]:
    return {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "maximum": dflow.maximum(a, b),
        "less": a < b,
        "select": dflow.where(a < b, a, b),
        "sum": dflow.reduce_sum(a, axes=(1,)),
        "max": dflow.reduce_max(b, axes=(0,)),
        "transpose": dflow.transpose(a, (1, 0)),
        "concat": dflow.concat([a, b], axis=0),
        "matmul": dflow.matmul(a, dflow.transpose(b, (1, 0))),
    }


def _float_functions(graph: Graph, a: Tensor, b: Tensor) -> dict[str, Tensor]:
    return {
        "div": a / b,
        "exp": dflow.exp(a),
        "tanh": dflow.tanh(b),
        "softmax": dflow.softmax(a, axis=-1),
        "neg": -a,
    }


@pytest.mark.parametrize("element", NARROW)
def test_ops_on_narrow_values_compile_as_they_interpret(element: str, tmp_path: Path) -> None:
    """Every family of ops on `element` values, compiled, equals the interpreter."""
    rng = np.random.default_rng(NARROW.index(element))
    a, b = normal(rng, (6, 5), element), normal(rng, (6, 5), element)
    if element in HALVES:
        body = lambda g, x, y: {**_arithmetic(g, x, y), **_float_functions(g, x, y)}  # noqa: E731
    else:
        body = _arithmetic
    check(tmp_path, [a, b], body)


@pytest.mark.parametrize("element", ["f16", "i8", "ui8", "i16"])
def test_one_op_is_numpys_ufunc_in_the_narrow_type(element: str) -> None:
    """NumPy's float16 ufuncs compute in float32 and round, its int8 ones wrap: the
    interpreter's widened `add`, `mul` and `sub` are exactly theirs (overflow in)."""
    rng = np.random.default_rng(3)
    dtype = DTYPES[element]
    if element == "f16":
        a, b = (
            (rng.standard_normal(200) * 300).astype(dtype),
            rng.standard_normal(200).astype(dtype),
        )
    else:
        info = np.iinfo(dtype)
        a, b = (rng.integers(info.min, info.max, 200, endpoint=True).astype(dtype) for _ in "ab")
    graph = Graph("main")
    x, y = graph.input("a", a.shape, element), graph.input("b", b.shape, element)
    graph.output(x + y, x * y, x - y)
    got = run_function(graph.module(), "main", [a, b])
    with np.errstate(all="ignore"):
        for result, want in zip(got, (a + b, a * b, a - b), strict=True):
            assert result.dtype == want.dtype
            np.testing.assert_array_equal(result, want)


def test_unsigned_64_bit_values_above_the_signed_range(tmp_path: Path) -> None:
    """ui64 computes in ui64 (no wider type): values of 2^63 and more add, multiply
    (wrapping), compare, take maxima and convert to floats as unsigned, compiled as
    NumPy does."""
    a = np.array([2**64 - 1, 2**63, 5, 0, 2**63 + 7], np.uint64)
    b = np.array([3, 2**63 + 1, 2**64 - 2, 9, 2], np.uint64)
    program = compile_to(_unsigned_program(a.shape).module(), tmp_path)
    got = program.run("main", [a, b])
    with np.errstate(all="ignore"):
        wants = (a + b, a * b, np.maximum(a, b), a < b, a.astype(np.float64))
    for result, want in zip(got, wants, strict=True):
        assert result.dtype == want.dtype
        np.testing.assert_array_equal(result, want)


def _unsigned_program(shape: tuple[int, ...]) -> Graph:
    graph = Graph("main")
    x, y = graph.input("a", shape, "ui64"), graph.input("b", shape, "ui64")
    graph.output(x + y, x * y, dflow.maximum(x, y), x < y, dflow.cast(x, "f64"))
    return graph


def test_dflow_run_reads_and_writes_narrow_npz(tmp_path: Path) -> None:
    """`dflow run --inputs` takes f16, bf16 (NumPy's archive makes it `V2`) and ui8
    arrays; `--output` saves the results in their dtypes."""
    program = tmp_path / "narrow.mlir"
    program.write_text(
        "func.func @main(%h: tensor<3xf16>, %b: tensor<3xbf16>, %u: tensor<3xui8>)\n"
        "    -> (tensor<3xf16>, tensor<3xbf16>, tensor<3xui8>) {\n"
        "  %0 = df.mul %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>\n"
        "  %1 = df.add %b, %b : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>\n"
        "  %2 = df.add %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>\n"
        "  func.return %0, %1, %2 : tensor<3xf16>, tensor<3xbf16>, tensor<3xui8>\n"
        "}\n"
    )
    h = np.array([1.5, 300.0, -2.0], np.float16)
    b = np.array([0.1, 3.0, -1e30], ml_dtypes.bfloat16)
    u = np.array([1, 200, 255], np.uint8)
    np.savez(tmp_path / "in.npz", h=h, b=b, u=u)
    out = tmp_path / "out.npz"
    run = [sys.executable, "-m", "dflow", "run", str(program), "--inputs", str(tmp_path / "in.npz")]
    result = subprocess.run(
        [*run, "--output", str(out)], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    with np.load(out) as saved, np.errstate(over="ignore"):  # 300² is inf in float16
        np.testing.assert_array_equal(saved["out0"], h * h)
        np.testing.assert_array_equal(saved["out1"].view(ml_dtypes.bfloat16), b + b)
        np.testing.assert_array_equal(saved["out2"], u + u)
