"""`dflow compile` and the compiled `dflow run` on the command line, against the
reference interpreter.

`dflow compile` writes a module that `runtime.load_program` imports and that equals
the interpreter (`compiled_support.assert_same`); the compiled `dflow run` prints the
summary `--interpret` prints (numbers within rtol 1e-4), on one device and on
cpu:0,cpu:1, caches its modules, saves its outputs, and reports bad inputs without a
traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from cli_support import ROOT, run_dflow
from compiled_support import assert_same

from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.source import parse_module
from dflow.interpreters.df import run_function
from dflow.runtime import load_program

# ----------------------------------------------------------------------------- command line


def summary_values(text: str) -> list[tuple[str, list[float]]]:
    """Each summary line's head (name, shape, dtype) and its numbers."""
    parsed: list[tuple[str, list[float]]] = []
    for line in text.strip().splitlines():
        head, _, numbers = (
            line.partition(" value ") if " value " in line else line.partition(" min ")
        )
        parsed.append((head, [float(n) for n in re.findall(r"-?[\d.]+(?:e[-+]?\d+)?", numbers)]))
    return parsed


def assert_same_summary(compiled: str, interpreted: str) -> None:
    got, want = summary_values(compiled), summary_values(interpreted)
    assert [head for head, _ in got] == [head for head, _ in want], compiled
    for (_, a), (_, b) in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4)


def test_cli_compile_writes_an_importable_module(tmp_path: Path) -> None:
    result = run_dflow("compile", "examples/mlp.mlir", "-o", tmp_path / "out", "--target", "numba")
    assert result.returncode == 0, result.stderr
    source = (tmp_path / "out" / "cpu_0.py").read_text()
    assert "def main(rt, x, w1, b1, w2, b2, labels):" in source
    assert re.search(r"^@_kernel\(\"[0-9a-f]{24}\"\)$", source, re.MULTILINE)
    program = load_program(tmp_path / "out")
    module = parse_module((ROOT / "examples" / "mlp.mlir").read_text(), "mlp.mlir")
    inputs = random_inputs(next(iter(module.ops)), 0)  # type: ignore[arg-type]
    assert_same(program.run("main", inputs), run_function(module, "main", inputs), ["loss", "p"])


def test_cli_run_compiled_matches_interpret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path / "cache"))
    interpreted = run_dflow("run", "examples/mlp.mlir", "--interpret")
    compiled = run_dflow("run", "examples/mlp.mlir")
    assert interpreted.returncode == 0, interpreted.stderr
    assert compiled.returncode == 0, compiled.stderr
    assert_same_summary(compiled.stdout, interpreted.stdout)
    assert any((tmp_path / "cache").rglob("cpu_0.py"))
    two = run_dflow("run", "examples/mlp.mlir", "--devices", "cpu:0,cpu:1")
    assert two.returncode == 0, two.stderr
    assert_same_summary(two.stdout, interpreted.stdout)


def test_cli_run_compiled_on_two_devices_saves_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path / "cache"))
    module = parse_module((ROOT / "examples" / "towers.mlir").read_text(), "towers.mlir")
    inputs = random_inputs(next(iter(module.ops)), 5)  # type: ignore[arg-type]
    names = ["x", "a1", "a2", "b1", "b2"]
    feeds = dict(zip(names, inputs, strict=True))
    np.savez(tmp_path / "in.npz", **feeds)  # pyright: ignore[reportArgumentType] (numpy's stub)
    result = run_dflow(
        "run",
        "examples/towers.mlir",
        "--devices",
        "cpu:0,cpu:1",
        "--inputs",
        tmp_path / "in.npz",
        "--output",
        tmp_path / "out.npz",
    )
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "out.npz") as saved:
        # the towers' sums (terms near 1000) cancel, and OpenBLAS's last bits depend on
        # its thread count (two CPU devices take half the cores each): an absolute atol
        assert_same([saved["out0"]], run_function(module, "main", inputs), ["y"], 1e-3)
    assert len(list((tmp_path / "cache").rglob("cpu_*.py"))) == 2


def test_cli_run_compiled_reports_bad_inputs(tmp_path: Path) -> None:
    np.savez(tmp_path / "in.npz", x=np.zeros((8, 16), np.float64))
    result = run_dflow("run", "examples/mlp.mlir", "--inputs", tmp_path / "in.npz")
    assert result.returncode == 1
    assert "input 'x' has dtype float64" in result.stderr
    assert "Traceback" not in result.stderr
