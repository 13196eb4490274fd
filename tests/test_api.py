"""`dflow.compile`: every kind of program in, a callable `Program` out, checked
against NumPy; feeds by position and name, and the mistakes `dflow run` names."""

from __future__ import annotations

import json
import os
import re
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from cli_support import ROOT, run_dflow
from xdsl.dialects.builtin import ModuleOp

import dflow
from dflow.driver.loading.source import parse_module

TWO_ENTRIES = """
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<f32>) {
  %y = df.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = df.relu %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = df.reduce_sum %x : (tensor<2x3xf32>) -> tensor<f32>
  func.return %r, %s : tensor<2x4xf32>, tensor<f32>
}
func.func @scale(%v: tensor<4xi32>, %k: tensor<i32>) -> tensor<4xi32> {
  %p = df.mul %v, %k : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  func.return %p : tensor<4xi32>
}
"""

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3)).astype(np.float32)
W = RNG.standard_normal((3, 4)).astype(np.float32)


def expected(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.float32]:
    return np.maximum(x @ w, 0), np.float32(x.sum())


def graph() -> dflow.Graph:
    g = dflow.Graph("main")
    x, w = g.input("x", (2, 3)), g.input("w", (3, 4))
    g.output(dflow.relu(x @ w), dflow.reduce_sum(x))
    return g


@pytest.fixture(scope="module")
def program() -> dflow.Program:
    return dflow.compile(TWO_ENTRIES)


def _check(result: object) -> None:
    assert isinstance(result, tuple) and len(result) == 2
    relu, total = result
    np.testing.assert_allclose(relu, expected(X, W)[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(total, expected(X, W)[1], rtol=1e-5)


def test_every_kind_of_program(tmp_path: Path) -> None:
    path = tmp_path / "two.mlir"
    path.write_text(TWO_ENTRIES)
    module = parse_module(TWO_ENTRIES, "two.mlir")
    for program in (TWO_ENTRIES, str(path), path, module, graph()):
        _check(dflow.compile(program)(X, W))
    assert isinstance(module, ModuleOp) and "df.relu" in str(module)  # left as it was


def test_graph_compile_is_the_shortcut() -> None:
    _check(graph().compile()(X, w=W))


def test_feeds_by_position_name_and_arg_index(program: dflow.Program) -> None:
    _check(program(X, W))
    _check(program(w=W, x=X))
    _check(program(X, w=W))
    _check(program(arg1=W, arg0=X))


def test_entries_signatures_and_other_entries(program: dflow.Program) -> None:
    assert program.entries == ("main", "scale")
    signature = program.signature()
    assert [(a.name, a.shape, a.dtype) for a in signature.arguments] == [
        ("x", (2, 3), np.dtype(np.float32)),
        ("w", (3, 4), np.dtype(np.float32)),
    ]
    assert [(r.name, r.shape) for r in signature.results] == [("out0", (2, 4)), ("out1", ())]
    assert str(program.signature("scale")) == "@scale(v: int32[4], k: int32[]) -> (out0: int32[4])"
    scaled = program["scale"](np.array([1, -2, 3, 4], np.int32), 3)  # a number takes the dtype
    assert scaled.dtype == np.int32 and scaled.tolist() == [3, -6, 9, 12]
    with pytest.raises(KeyError, match=r"no function @nope \(functions: @main, @scale\)"):
        program["nope"]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((X,), {}, "@main is missing argument 'w' (of x, w)"),
        ((X, W, W), {}, "@main takes 2 arguments, 3 given"),
        ((X, W), {"y": 1}, "@main has no argument 'y' (arguments: x, w)"),
        ((X,), {"x": X, "w": W}, "argument 'x' of @main is given twice"),
        (
            (X, W.astype(np.float64)),
            {},
            "input 'w' has dtype float64 but argument 1 of @main is tensor<3x4xf32> (float32)",
        ),
        (
            (X.T, W),
            {},
            "input 'x' has shape 3x2 but argument 0 of @main is tensor<2x3xf32>",
        ),
        ((X, "w"), {}, "argument 'w' of @main: cannot make a float32 array of str"),
    ],
)
def test_bad_feeds_raise_feed_error(
    program: dflow.Program, args: tuple[object, ...], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(dflow.FeedError) as error:
        program(*args, **kwargs)
    assert str(error.value).startswith(message), str(error.value)


def test_a_feed_error_says_what_dflow_run_says(tmp_path: Path, program: dflow.Program) -> None:
    path = tmp_path / "two.mlir"
    path.write_text(TWO_ENTRIES)
    np.savez(tmp_path / "in.npz", x=X.T, w=W)
    run = run_dflow("run", path, "--inputs", tmp_path / "in.npz")
    assert run.returncode == 1
    with pytest.raises(dflow.FeedError) as error:
        program(X.T, W)
    assert run.stderr.strip().endswith(f"error: {error.value}")


def test_source_memory_and_interpret(program: dflow.Program, tmp_path: Path) -> None:
    assert [name for name in program.source if name.endswith(".py")] == ["cpu_0.py"]
    assert "def main(rt, x, w):" in program.source["cpu_0.py"]
    path = tmp_path / "two.mlir"
    path.write_text(TWO_ENTRIES)
    planned = json.loads(run_dflow("plan", path, "--json").stdout)["devices"]
    assert program.memory == planned
    _check(program.interpret(X, W))
    np.testing.assert_array_equal(program.interpret(X, W)[1], program(X, W)[1])


def test_devices_and_passes() -> None:
    program = dflow.compile(ROOT / "examples" / "towers.mlir", devices="cpu:0,cpu:1")
    assert sorted(n for n in program.source if n.endswith(".py")) == ["cpu_0.py", "cpu_1.py"]
    feeds = [
        RNG.standard_normal(spec.shape).astype(spec.dtype) for spec in program.signature().arguments
    ]
    np.testing.assert_allclose(program(*feeds), program.interpret(*feeds), rtol=1e-4, atol=1e-4)
    optimized = dflow.compile(TWO_ENTRIES, passes="df-optimize")
    _check(optimized(X, W))


def test_shares_the_cache_with_dflow_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(cache))
    path = tmp_path / "two.mlir"
    path.write_text(TWO_ENTRIES)
    dflow.compile(path)

    def programs() -> list[str]:  # beside them, the kernel store
        return sorted(p.name for p in cache.iterdir() if re.fullmatch("[0-9a-f]{24}", p.name))

    entries = programs()
    assert len(entries) == 1
    run = run_dflow("run", path, env={**os.environ, "DFLOW_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr
    assert programs() == entries


def test_programs_dflow_cannot_compile_raise_dflow_error(tmp_path: Path) -> None:
    with pytest.raises(dflow.DflowError, match=r"^<text>:2:\d+: error: Expected ':'$"):
        dflow.compile("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %y = df.relu %x\n}")
    with pytest.raises(dflow.DflowError, match=r"cannot read .*missing.mlir: No such file"):
        dflow.compile(tmp_path / "missing.mlir")
    missing = r"^model.onnx: error: cannot read model.onnx: No such"
    with pytest.raises(dflow.DflowError, match=missing):
        dflow.compile("model.onnx")
    with pytest.raises(
        dflow.DflowError, match=r"no function @train to run \(functions: @main, @scale\)"
    ):
        dflow.compile(TWO_ENTRIES, entry="train")


def test_the_public_api_is_documented() -> None:
    """Everything `dflow` exports says what it does, for `help()`."""
    undocumented = [
        name
        for name in dflow.__all__
        if name != "__version__" and len((getattr(dflow, name).__doc__ or "").strip()) < 10
    ]
    assert not undocumented
    assert dflow.__version__ == metadata.version("dflow")


@pytest.mark.parametrize("case", ["folder", "missing", "latin-1", "empty", "onnx text"])
def test_the_api_and_the_command_line_say_the_same(tmp_path: Path, case: str) -> None:
    """One front door (`loading.checked.load`): a path the API cannot compile fails
    with the very line `dflow run` prints for it."""
    paths = {
        "folder": tmp_path / "folder.mlir",
        "missing": tmp_path / "missing.mlir",
        "latin-1": tmp_path / "latin.mlir",
        "empty": tmp_path / "empty.mlir",
        "onnx text": tmp_path / "model.onnx",
    }
    paths["folder"].mkdir()
    paths["latin-1"].write_bytes("// caf\u00e9\n".encode("latin-1"))
    paths["empty"].write_text("\n")
    paths["onnx text"].write_text("func.func @main() {\n}\n")
    path = paths[case]
    with pytest.raises(dflow.DflowError) as error:
        dflow.compile(path)
    run = run_dflow("run", path)
    assert run.returncode == 1
    assert run.stderr == f"{error.value}\n"
