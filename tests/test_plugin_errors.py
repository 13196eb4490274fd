"""A pass that crashes is reported as the bug of whoever wrote it: a plugin's pass
(registered through an `xdsl.universe` entry point, as `plugin_support` installs one)
and one of xDSL's are one line naming the pass and its distribution, exit 1, on every
command that runs passes; one of dflow's own stays dflow's internal error, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import run_dflow
from plugin_support import install_plugin
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from dflow.driver.frontdoors.cli import main
from dflow.driver.loading.pipeline import pass_package
from dflow.transforms.prune import PrunePass

PROGRAM = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
"""

PLUGIN_CRASH = (
    "pass test-crash from package dflow-test-plugins raised ValueError: a bug in the plugin"
)
"""The one line for `tests/support/plugin_support.py`'s `test-crash` (its module is
`dflowtestplug`, its distribution `dflow-test-plugins`)."""


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return install_plugin(tmp_path_factory.mktemp("plugin") / "site")


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.mlir"
    path.write_text(PROGRAM)
    return path


@pytest.mark.parametrize(
    "command",
    [["opt"], ["run"], ["compile", "-o", "{out}"], ["plan"]],
    ids=["opt", "run", "compile", "plan"],
)
def test_a_plugin_pass_that_crashes_is_named_with_its_package(
    command: list[str], program: Path, plugin_env: dict[str, str], tmp_path: Path
) -> None:
    arguments = [a.format(out=tmp_path / "out") for a in command]
    done = run_dflow(*arguments, program, "-p", "df-prune,test-crash", env=plugin_env)
    assert (done.returncode, done.stderr) == (1, f"{program}: error: {PLUGIN_CRASH}\n")
    assert done.stdout == ""


def test_a_crash_on_one_pattern_under_verify_diagnostics(
    tmp_path: Path, plugin_env: dict[str, str]
) -> None:
    """`--verify-diagnostics --split-input-file` prints the line in the chunk's place:
    the chunk without a tanh of a matmul passes through, the other reports the crash."""
    path = tmp_path / "split.mlir"
    matmul = """func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = df.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %t = df.tanh %m : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %t : tensor<2x2xf32>
}
"""
    path.write_text(f"{PROGRAM}// -----\n{matmul}")
    done = run_dflow(
        "opt",
        path,
        "--split-input-file",
        "--verify-diagnostics",
        "-p",
        "test-crash-on-pattern",
        env=plugin_env,
    )
    assert done.returncode == 0, done.stderr
    crash = (
        "pass test-crash-on-pattern from package dflow-test-plugins raised RuntimeError: "
        "tanh of matmul is not handled"
    )
    assert done.stdout.split("// -----\n")[1] == f"{path}: error: {crash}\n"


def test_bisect_names_the_crashing_pass_as_the_command_line_does(
    program: Path, plugin_env: dict[str, str]
) -> None:
    done = run_dflow("bisect", program, "-p", "df-prune,test-crash", env=plugin_env)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "df-prune: ok",
        f"test-crash: DIFFERS: {PLUGIN_CRASH}",
        "first difference: test-crash",
    ]


def test_the_traceback_of_a_plugins_crash_on_request(
    program: Path, plugin_env: dict[str, str]
) -> None:
    done = run_dflow("opt", program, "-p", "test-crash", env={**plugin_env, "DFLOW_TRACEBACK": "1"})
    assert done.returncode == 1
    assert 'raise ValueError("a bug in the plugin")' in done.stderr  # the plugin's own line
    assert done.stderr.splitlines()[-1] == f"{program}: error: {PLUGIN_CRASH}"


def test_an_xdsl_pass_that_crashes_is_named_with_xdsl(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """xDSL's `apply-pdl-interp` asserts that the module holds a PDL matcher."""
    code = main(["opt", str(program), "-p", "apply-pdl-interp"])
    line = (
        f"{program}: error: pass apply-pdl-interp from package xdsl raised AssertionError: "
        "matcher function not found\n"
    )
    assert (code, capsys.readouterr().err) == (1, line)


def _crash(self: ModulePass, ctx: Context, op: ModuleOp) -> None:
    raise KeyError("df.offset")


def test_a_crash_of_dflows_own_pass_stays_an_internal_error(
    program: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PrunePass, "apply", _crash)
    code = main(["opt", str(program), "-p", "df-prune"])
    line = (
        f"{program}: internal error: KeyError: 'df.offset' "
        "(a bug in dflow; DFLOW_TRACEBACK=1 shows where)\n"
    )
    assert (code, capsys.readouterr().err) == (2, line)
    code = main(["bisect", str(program), "-p", "df-prune"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0] == (
        "df-prune: DIFFERS: pass df-prune from package dflow raised KeyError: 'df.offset' "
        "(a bug in dflow)"
    )


class _Unregistered(ModulePass):
    name = "unregistered"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise AssertionError("not run")


def test_the_package_of_a_pass() -> None:
    assert pass_package(PrunePass()) == "dflow"
    assert pass_package(CommonSubexpressionElimination()) == "xdsl"
    assert pass_package(_Unregistered()) == "test_plugin_errors"  # no entry point: its module
