"""`dflow reduce`: a 40-op program on which a plugin's pass crashes (at a df.tanh of a
df.matmul) shrinks to a few ops that still crash it; every candidate a test sees
verifies; each kind of change (`Shrink`) does what it says; bad input is one line."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import run_dflow
from plugin_support import install_plugin
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp

from dflow.driver.loading.source import parse_module
from dflow.driver.tools.reduce import reduce

CRASHES = "python -m dflow opt {} -p test-crash-on-pattern 2>&1 | grep -q 'tanh of matmul'"
"""The test: the candidate still makes the pass crash with its message."""

T = "tensor<8x16xf32>"


def program_with_a_crash(seed: int, ops: int = 40) -> str:
    """`ops` ops of `@main` (elementwise ones on earlier values, chosen at random:
    some used by nothing; a non-splat constant), with one df.matmul feeding a
    df.tanh in the middle; a second function nothing calls; a repeated result."""
    rng = random.Random(seed)
    values: list[str] = ["%x", "%y"]  # those of type T
    lines: list[str] = []

    def add(text: str) -> None:
        lines.append(f"  %v{len(lines)} = {text}")
        if text.endswith(f"-> {T}"):
            values.append(f"%v{len(lines) - 1}")

    add(f"df.constant dense<{[float(i) for i in range(16)]}> : tensor<16xf32>")
    add(f"df.add {rng.choice(values)}, %v0 : ({T}, tensor<16xf32>) -> {T}")
    while len(lines) < ops - 2:
        if len(lines) == ops // 2:
            add(f"df.matmul {rng.choice(values)}, %w : ({T}, tensor<16x16xf32>) -> {T}")
            add(f"df.tanh {values[-1]} : ({T}) -> {T}")
        elif rng.random() < 0.5:
            a, b = rng.choice(values), rng.choice(values)
            add(f"df.{rng.choice(['add', 'mul', 'sub', 'maximum'])} {a}, {b} : ({T}, {T}) -> {T}")
        else:
            name = rng.choice(["exp", "neg", "relu", "tanh", "sigmoid"])
            add(f"df.{name} {rng.choice(values)} : ({T}) -> {T}")
    add(f"df.neg {values[-1]} : ({T}) -> {T}")
    add(f"df.exp {values[-1]} : ({T}) -> {T}")
    body = "\n".join(lines)
    return (
        f"func.func @main(%x: {T}, %y: {T}, %w: tensor<16x16xf32>) -> ({T}, {T}, {T}) {{\n"
        f"{body}\n  func.return {values[-1]}, {values[-4]}, {values[-1]} : {T}, {T}, {T}\n}}\n"
        f"func.func @helper(%a: {T}) -> {T} {{\n"
        f"  %b = df.relu %a : ({T}) -> {T}\n  func.return %b : {T}\n}}\n"
    )


def ops_in(module: ModuleOp) -> int:
    """The ops inside functions, returns aside (counted here, not by dflow)."""
    return sum(
        1
        for function in module.walk()
        if isinstance(function, FuncOp)
        for op in function.body.walk()
        if not isinstance(op, ReturnOp)
    )


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    return install_plugin(tmp_path / "site")


@pytest.mark.parametrize("seed", [0, 1])
def test_a_crash_reduces_to_a_few_ops(
    tmp_path: Path, plugin_env: dict[str, str], seed: int
) -> None:
    path = tmp_path / "prog.mlir"
    path.write_text(program_with_a_crash(seed))
    assert ops_in(parse_module(path.read_text(), "prog")) == 41  # @main's 40 and @helper's
    crash = run_dflow("opt", path, "-p", "test-crash-on-pattern", env=plugin_env)
    assert crash.returncode == 1  # a plugin's crash: one line naming the pass and its package
    assert "pass test-crash-on-pattern from package dflow-test-plugins raised" in crash.stderr
    done = run_dflow("reduce", path, "--test", CRASHES, env=plugin_env, timeout=300)
    assert done.returncode == 0, done.stderr
    reduced = path.with_suffix(".reduced.mlir")
    lines = done.stdout.splitlines()
    assert re.fullmatch(rf"reduced: 41 ops to \d in \d+ tests, [\d.]+ s: {reduced}", lines[0])
    assert lines[1].startswith("kept: drop-functions 1 of ")
    text = reduced.read_text()
    assert text.startswith(f"// dflow reduce {path}: 41 ops to ")
    module = parse_module(text, "reduced")  # it verifies
    assert ops_in(module) <= 5
    assert f"to {ops_in(module)} in" in lines[0]
    assert {"df.matmul", "df.tanh"} <= {op.name for op in module.walk()}
    crashed = run_dflow("opt", reduced, "-p", "test-crash-on-pattern", env=plugin_env)
    assert "tanh of matmul is not handled" in crashed.stderr  # still interesting
    assert run_dflow("opt", reduced, env=plugin_env).returncode == 0


def _module(text: str) -> ModuleOp:
    return parse_module(text, "test")


def _checked(condition: str, seen: list[str]) -> Callable[[str], bool]:
    """A test holding while `condition` is in the text; it records every candidate,
    after checking that it parses and verifies."""

    def test(text: str) -> bool:
        parse_module(text, "candidate")
        seen.append(text)
        return condition in text

    return test


def test_every_candidate_verifies_and_the_result_is_minimal() -> None:
    seen: list[str] = []
    module = _module(program_with_a_crash(2))
    reducer = reduce(module, _checked("df.tanh", seen), 60)
    assert len(seen) == reducer.tests > 0
    assert ops_in(reducer.module) == 1  # one df.tanh, on an argument
    functions = [f for f in reducer.module.walk() if isinstance(f, FuncOp)]
    assert [op.name for f in functions for op in f.body.walk()] == ["df.tanh", "func.return"]
    assert set(re.findall(r"tensor<([\dx]+)x", str(reducer.module))) == {"1x1"}


def test_sizes_shrink_together_where_the_shape_rules_let_them() -> None:
    """A matmul's inner size may shrink only with both operands'."""
    text = (
        "func.func @main(%a: tensor<6x4xf32>, %b: tensor<4x10xf32>) -> tensor<6x10xf32> {\n"
        "  %m = df.matmul %a, %b : (tensor<6x4xf32>, tensor<4x10xf32>) -> tensor<6x10xf32>\n"
        "  func.return %m : tensor<6x10xf32>\n}\n"
    )
    seen: list[str] = []
    reducer = reduce(_module(text), _checked("df.matmul", seen), 60)
    assert "tensor<1x1xf32>" in str(reducer.module)
    assert not re.search(r"tensor<(\d+x)*([2-9]|\d\d)", str(reducer.module))


def test_constants_become_splats_and_results_go() -> None:
    text = (
        "func.func @main(%x: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {\n"
        "  %c = df.constant dense<[4, 5, 6]> : tensor<3xi32>\n"
        "  %s = df.add %x, %c : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
        "  func.return %s, %x : tensor<3xi32>, tensor<3xi32>\n}\n"
    )
    seen: list[str] = []
    reducer = reduce(_module(text), _checked("df.constant", seen), 60)
    result = str(reducer.module)
    assert "dense<4> : tensor<1xi32>" in result
    assert ops_in(reducer.module) == 1
    assert "func.return\n" in result  # both results dropped


def test_arguments_and_results_keep_their_attributes_in_step() -> None:
    """Arguments and results with attributes: adding and dropping them keeps the
    attribute lists as long as the lists they describe."""
    text = (
        "func.func @main(%x: tensor<4xf32> {df.note = 1 : i64}) -> "
        "(tensor<4xf32> {df.note = 2 : i64}, tensor<4xf32>) {\n"
        '  %a = df.exp %x {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>\n'
        "  %b = df.tanh %a : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  %c = df.neg %b : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %c, %a : tensor<4xf32>, tensor<4xf32>\n}\n"
    )

    def test(text: str) -> bool:
        return all(part in text for part in ("df.tanh", "df.note = 1", "df.note = 2"))

    reducer = reduce(_module(text), test, 60)
    assert ops_in(reducer.module) == 1
    assert (
        "func.func @main(%x: tensor<1xf32> {df.note = 1 : i64}, %a: tensor<1xf32>, "
        "%c: tensor<1xf32>) -> (tensor<1xf32> {df.note = 2 : i64})"
    ) in str(reducer.module)  # the second result dropped with its (empty) attributes


def test_nothing_interesting_but_the_input_leaves_it_whole() -> None:
    module = _module(program_with_a_crash(3, ops=10))
    before = str(module)
    reducer = reduce(module, lambda text: text == before, 60)
    assert str(reducer.module) == before
    assert reducer.tests > 0 and sum(reducer.kept.values()) == 0


def test_the_input_must_be_interesting(tmp_path: Path) -> None:
    path = tmp_path / "prog.mlir"
    path.write_text(program_with_a_crash(0, ops=10))
    done = run_dflow("reduce", path, "--test", "false")
    assert done.returncode == 1
    assert done.stderr == f"{path}: error: the input is not interesting: the test exits 1\n"
    slow = run_dflow("reduce", path, "--test", "sleep 30; true", "--test-timeout", "0.3")
    assert slow.returncode == 1
    assert slow.stderr.endswith("the input is not interesting: the test timed out after 0.3 s\n")


def test_the_time_limit_stops_with_the_input(tmp_path: Path) -> None:
    path = tmp_path / "prog.mlir"
    path.write_text(program_with_a_crash(0, ops=10))
    out = tmp_path / "small.mlir"
    done = run_dflow("reduce", path, "--test", "true", "--time-limit", "0", "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stopped at the time limit: 11 ops to 11 in 0 tests, ")
    assert done.stdout.splitlines()[0].endswith(f": {out}")
    assert ops_in(parse_module(out.read_text(), "out")) == 11


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        (["--test"], 2, "dflow reduce: error: argument --test: expected one argument"),
        (
            ["--test", "true", "--time-limit", "soon"],
            2,
            "dflow reduce: error: argument --time-limit: 'soon' is not a number of seconds",
        ),
        (
            ["--test", "true", "-o", "/nonexistent/x.mlir"],
            1,
            "{path}: error: cannot write /nonexistent/x.mlir: there is no folder /nonexistent",
        ),
    ],
)
def test_bad_arguments_are_one_line(
    tmp_path: Path, arguments: list[str], status: int, message: str
) -> None:
    path = tmp_path / "prog.mlir"
    path.write_text(program_with_a_crash(0, ops=4))
    done = run_dflow("reduce", path, *arguments)
    assert done.returncode == status
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(message.format(path=path))
