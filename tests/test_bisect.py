"""`dflow bisect`: a deliberately wrong pass, registered by a plugin package through
the `xdsl.universe` entry point (as any third party's would be), is named; a correct
pipeline agrees; tolerances are respected; bad input is one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_support import run_dflow
from plugin_support import install_plugin

from dflow.driver.tools.bisect import Tolerance, difference

PROGRAM = """func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %one = df.constant dense<1.0> : tensor<4x8xf32>
  %a = df.mul %x, %one : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.add %a, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = df.exp %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %e : tensor<4x8xf32>
}
"""


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    """An environment in which the `flipplug` package and its entry point are installed
    (a package and its `.dist-info` on the path, as pip leaves them)."""
    return install_plugin(tmp_path / "site")


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.mlir"
    path.write_text(PROGRAM)
    return path


def test_the_wrong_pass_is_named_and_its_ir_written(
    program: Path, plugin_env: dict[str, str]
) -> None:
    done = run_dflow(
        "bisect", program, "-p", "df-simplify-arith,test-flip-add,df-prune", env=plugin_env
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "df-simplify-arith: ok"
    assert lines[1].startswith("test-flip-add: DIFFERS: result 0: ")
    assert "elements differ, the most by" in lines[1]
    assert lines[2] == "first difference: test-flip-add"
    before, after = program.with_suffix(".before.mlir"), program.with_suffix(".after.mlir")
    assert lines[3] == f"wrote {before}, {after}"
    for written in (before, after):  # IR that parses again
        assert run_dflow("opt", written, env=plugin_env).returncode == 0
    assert "df.add" in before.read_text() and "df.add" not in after.read_text()
    assert "df.sub" in after.read_text()
    assert "df-prune" not in done.stdout  # it stops at the culprit
    assert done.stderr == ""


def test_a_correct_pipeline_agrees_compiled_too(program: Path, plugin_env: dict[str, str]) -> None:
    done = run_dflow("bisect", program, "-p", "df-optimize,df-prune", env=plugin_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "df-optimize: ok",
        "df-prune: ok",
        "compiled: ok",
        "every stage agrees with the reference",
    ]
    assert not program.with_suffix(".after.mlir").exists()


def test_tolerances_are_respected(program: Path, plugin_env: dict[str, str]) -> None:
    """exp(x + y) against exp(x - y), on inputs in [-1, 1): differences below 8."""
    loose = run_dflow(
        "bisect", program, "-p", "test-flip-add", "--atol", "100", "--rtol", "0", env=plugin_env
    )
    assert loose.returncode == 0, loose.stdout + loose.stderr
    tight = run_dflow("bisect", program, "-p", "test-flip-add", "--atol", "0.001", env=plugin_env)
    assert tight.returncode == 1


def test_a_failing_pass_is_named(program: Path, plugin_env: dict[str, str]) -> None:
    done = run_dflow("bisect", program, "-p", "df-prune,test-fail", env=plugin_env)
    assert done.returncode == 1
    assert "test-fail: DIFFERS: the pass fails: test-fail: it always fails" in done.stdout
    crashed = run_dflow("bisect", program, "-p", "test-crash", env=plugin_env)
    assert crashed.returncode == 1
    crash = "pass test-crash from package dflow-test-plugins raised ValueError: a bug in the plugin"
    assert f"test-crash: DIFFERS: {crash}" in crashed.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-p", "no-such-pass"], "{program}: error: unknown pass 'no-such-pass'"),
        (["-p", "df-prune", "--entry", "nope"], "{program}: error: no function @nope"),
    ],
)
def test_bad_input_is_one_line(program: Path, arguments: list[str], message: str) -> None:
    done = run_dflow("bisect", program, *arguments)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(message.format(program=program))


def test_differences() -> None:
    tolerance = Tolerance(rtol=0.0, atol=0.5)
    floats = np.array([1.0, np.nan, 3.0])
    assert difference([floats], [floats.copy()], tolerance) is None  # NaN stays NaN
    assert difference([floats + 0.4], [floats], tolerance) is None
    found = difference([floats + np.array([0, 0, 2])], [floats], tolerance)
    expected = "1 of 3 elements differ, the most by 2 at (2,) (got 5.0, the reference 3.0)"
    assert found == f"result 0: {expected}"
    assert difference([np.array([1, 2])], [np.array([1, 3])], Tolerance(atol=10)) is not None
    assert difference([floats], [floats, floats], tolerance) == "1 results, the reference has 2"
    shaped = difference([floats[:2]], [floats], tolerance)
    assert shaped == "result 0: float64[2], the reference float64[3]"
