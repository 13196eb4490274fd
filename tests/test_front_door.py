"""What users write and what dflow's own tests did not (issue 12): programs from a
pipe, unused values, pins without `--devices`, uses before definitions, recursive
calls, bad pass pipelines, inputs too large, bad output paths, a private cache.

Each case reproduces the report as written and checks the right result (computed
here with NumPy) or the one clean line: `FILE[:LINE:COL]: error: ...`, no
traceback, a non-zero exit.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import ROOT, run_dflow
from numpy.typing import NDArray

from dflow.dialects.devices import DeviceList
from dflow.driver.compilation.compiler import compile_module
from dflow.driver.compilation.devices import split_for_devices
from dflow.driver.frontdoors.cli import main
from dflow.driver.loading.source import parse_module

Array = NDArray[Any]

UNARY = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.OP %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""

UNUSED = """\
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = df.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.neg %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.softmax %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = df.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""

PINNED = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.relu %x {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
  %z = df.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""

GPU_PINNED = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.relu %x {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""

CONFLICT = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.relu %x {df.device = "cpu:0", df.colocate = "g"} : (tensor<4xf32>) -> tensor<4xf32>
  %z = df.neg %y {df.device = "cpu:1", df.colocate = "g"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""

USE_BEFORE_DEF = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = df.add %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""

RECURSIVE = """\
func.func @f(%v: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @g(%v) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @g(%v: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @f(%v) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
"""

TWO_RESULTS = """\
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %y = df.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = df.reduce_sum %y : (tensor<4xf32>) -> tensor<f32>
  func.return %y, %s : tensor<4xf32>, tensor<f32>
}
"""

RECV_BEFORE_SEND = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.recv {key = "k", from = "cpu:1", to = "cpu:0"} : () -> tensor<4xf32>
  %y = df.add %x, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  df.send %x {key = "k", from = "cpu:1", to = "cpu:0"} : (tensor<4xf32>) -> ()
  func.return %y : tensor<4xf32>
}
"""

WRONG_RESULT_TYPE = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.relu %x : (tensor<4xf32>) -> tensor<5xf32>
  func.return %y : tensor<4xf32>
}
"""

WRONG_CONSTANT = """\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = df.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>
  %y = df.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
"""

HUGE_ARGUMENT = """\
func.func @main(%x: tensor<100000x100000xf32>) -> tensor<100000x100000xf32> {
  func.return %x : tensor<100000x100000xf32>
}
"""

HUGE_CONSTANT = """\
func.func @main() -> tensor<100000x100000xf32> {
  %c = df.constant dense<1.0> : tensor<100000x100000xf32>
  func.return %c : tensor<100000x100000xf32>
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(cache))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    return cache


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def fails(capsys: pytest.CaptureFixture[str], *argv: str | Path, code: int = 1) -> str:
    """Run `dflow ARGV` in process; it must fail with `code` and one stderr line."""
    assert main([str(a) for a in argv]) == code
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return err.strip()


def feeds(tmp_path: Path, **arrays: Array) -> Path:
    path = tmp_path / "inputs.npz"
    np.savez(path, **arrays)  # pyright: ignore[reportArgumentType]
    return path


def results(path: Path) -> list[Array]:
    with np.load(path) as archive:
        return [archive[f"out{i}"] for i in range(len(archive.files))]


X4 = np.array([-1.5, 0.0, 2.0, 3.25], dtype=np.float32)


def test_programs_from_a_pipe_are_never_mistaken_for_each_other(tmp_path: Path) -> None:
    inputs = feeds(tmp_path, x=X4)
    expected = {"relu": np.maximum(X4, 0), "neg": -X4}
    for path in ("-", "/dev/stdin"):
        for op, want in expected.items():
            out = tmp_path / f"{op}.npz"
            done = run_dflow(
                "run", path, "--inputs", inputs, "--output", out, stdin=UNARY.replace("OP", op)
            )
            assert done.returncode == 0, done.stderr
            np.testing.assert_array_equal(results(out)[0], want)


def test_unused_values_run_compiled(tmp_path: Path) -> None:
    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
    out = tmp_path / "out.npz"
    args = ["run", write(tmp_path, "u.mlir", UNUSED), "--inputs", feeds(tmp_path, x=x)]
    assert main([*map(str, args), "--output", str(out)]) == 0
    np.testing.assert_array_equal(results(out)[0], np.maximum(x, 0))


def test_pins_name_the_devices_without_devices_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = write(tmp_path, "pin.mlir", PINNED)
    out = tmp_path / "out.npz"
    for mode in ([], ["--interpret"]):
        assert (
            main(
                [
                    "run",
                    str(program),
                    "--inputs",
                    str(feeds(tmp_path, x=X4)),
                    "--output",
                    str(out),
                    *mode,
                ]
            )
            == 0
        )
        np.testing.assert_array_equal(results(out)[0], -np.maximum(X4, 0))
    assert main(["plan", str(program), "--json"]) == 0
    assert '"cpu:1"' in capsys.readouterr().out


UNUSED_ACROSS_DEVICES = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.neg %a {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %y = df.relu %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


def test_unused_values_are_dropped_before_partitioning() -> None:
    """%b is unused, so %a is too: nothing is sent from cpu:1 to cpu:0."""
    module = split_for_devices(
        parse_module(UNUSED_ACROSS_DEVICES, "u.mlir"), DeviceList.parse("cpu:0,cpu:1")
    )
    names = [op.name for op in module.walk()]
    assert "df.send" not in names and "df.recv" not in names
    assert "df.exp" not in names and "df.neg" not in names
    assert names.count("df.relu") == 1


def test_compiling_from_python_follows_the_pins() -> None:
    sources = compile_module(parse_module(PINNED, "pin.mlir"))
    assert sorted(name for name in sources if name.endswith(".py")) == ["cpu_1.py"]


@pytest.mark.parametrize(
    ("program", "devices", "message"),
    [
        (PINNED, "cpu:0", r"pinned to cpu:1, which is not in the device list cpu:0"),
        (GPU_PINNED, "cpu:0", r"pinned to gpu:0, which is not in the device list cpu:0"),
        (CONFLICT, "cpu:0,cpu:1", r"conflicting devices in one colocation group"),
        (CONFLICT, None, r"conflicting devices in one colocation group"),
    ],
)
def test_pins_are_checked_even_when_every_op_is_pinned(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    program: str,
    devices: str | None,
    message: str,
) -> None:
    path = write(tmp_path, "p.mlir", program)
    option = [] if devices is None else ["--devices", devices]
    for mode in ([], ["--interpret"]):
        err = fails(capsys, "run", path, *option, *mode)
        assert err.startswith(f"{path}: error: df-place-devices: ")
        assert re.search(message, err), err


def test_use_before_definition_is_one_line_at_the_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "ubd.mlir", USE_BEFORE_DEF)
    for mode in ([], ["--interpret"]):
        err = fails(capsys, "run", path, *mode)
        assert (
            err
            == f"{path}:2:3: error: df.add uses a value before its definition (df.neg on line 3)"
        )


def test_recursive_calls_are_one_line_at_the_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "rec.mlir", RECURSIVE)
    for command in (["run", path], ["run", path, "--interpret"], ["opt", path, "-p", "df-inline"]):
        err = fails(capsys, *command)
        assert err.startswith(f"{path}:6:3: error: recursive call (@f -> @g -> @f)")


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("df-fusee", "unknown pass 'df-fusee' (did you mean df-fuse"),
        ("df-recompute{mode=foo}", "df-recompute: mode=foo is not one of hints, heuristic, budget"),
        ("df-optimize{stats=maybe}", "df-optimize: stats=maybe is not true or false"),
        ("df-optimize{max_iterations=x}", "df-optimize: max-iterations=x is not an integer"),
        (
            "df-optimize{max-iters=3}",
            "df-optimize has no option 'max-iters' (options: max-iterations",
        ),
        ("df-optimize{max-bytes=-1}", "df-optimize: max-bytes must be 0 or more, got -1"),
        ("df-fold-constants{max-bytes=-1}", "df-fold-constants: max-bytes must be 0 or more"),
        ("df-autodiff{wrt=7}", "df-autodiff:"),
        ("df-autodiff{wrt=a}", "df-autodiff: wrt=a is not a comma-separated list, each an integer"),
        ("df-fuse{max-ops=0}", "df-fuse: max-ops must be at least 1, got 0"),
        ("df-prune{fetches=0,2}", "df-prune: fetch 2 is out of range: @main has 2 results"),
        ("cse,,dce", "in pipeline 'cse,,dce': column 5: Expected pass name here"),
    ],
)
def test_pipeline_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pipeline: str, message: str
) -> None:
    path = write(tmp_path, "two.mlir", TWO_RESULTS)
    err = fails(capsys, "opt", path, "-p", pipeline)
    assert err.startswith(f"{path}: error: {message}"), err


def test_an_infeasible_recompute_budget_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loss = UNARY.replace("OP", "tanh").replace("-> tensor<4xf32> {", "-> tensor<f32> {")
    loss = loss.replace(
        "  func.return %y : tensor<4xf32>",
        "  %s = df.reduce_sum %y : (tensor<4xf32>) -> tensor<f32>\n  func.return %s : tensor<f32>",
    )
    path = write(tmp_path, "loss.mlir", loss)
    err = fails(capsys, "opt", path, "-p", "df-autodiff,df-recompute{mode=budget budget=1}")
    assert err.startswith(f"{path}: error: df-recompute: "), err


def test_run_applies_passes_first_and_keys_the_cache_on_them(tmp_path: Path) -> None:
    path = write(tmp_path, "two.mlir", TWO_RESULTS)
    inputs = feeds(tmp_path, x=X4)
    out = tmp_path / "o.npz"
    for passes, expected in (
        ("", [np.maximum(X4, 0), np.maximum(X4, 0).sum()]),
        ("df-prune{fetches=1}", [np.maximum(X4, 0).sum()]),
        ("df-prune{fetches=0}", [np.maximum(X4, 0)]),
    ):
        argv = ["run", str(path), "--inputs", str(inputs), "--output", str(out), "-p", passes]
        assert main(argv) == 0
        got = results(out)
        assert len(got) == len(expected)
        for value, want in zip(got, expected, strict=True):
            np.testing.assert_allclose(value, want, rtol=1e-6)


@pytest.mark.parametrize(
    "pipeline",
    [
        "df-fuse{stats=true}",
        "df-optimize{max-iterations=2 fastmath=false}",
        "df-place-devices{cpu-gflops=2 link-gbps=1.5}",
        "df-prune{fetches=0,1}",
        'df-place-devices{devices="cpu:0,cpu:1"}',
        "df-place-devices{devices=cpu:0,cpu:1}",
    ],
)
def test_good_pass_options_are_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pipeline: str
) -> None:
    path = write(tmp_path, "two.mlir", TWO_RESULTS)
    assert main(["opt", str(path), "-p", pipeline]) == 0, capsys.readouterr().err
    assert "func.func @main" in capsys.readouterr().out


def test_a_string_option_needs_no_quotes(tmp_path: Path) -> None:
    report = tmp_path / "place.json"
    path = write(tmp_path, "two.mlir", TWO_RESULTS)
    assert main(["opt", str(path), "-p", f"df-place-devices{{report={report}}}"]) == 0
    assert '"devices": ["cpu:0"]' in report.read_text().replace("\n", "").replace("  ", "")


def test_numba_target_before_the_lowering_says_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    err = fails(capsys, "opt", path, "-t", "numba")
    assert "it prints lowered modules: run -p df-inline," in err
    lowering = "df-inline,df-prune,df-fuse,df-bufferize,df-plan-buffers,df-lower-host"
    assert main(["opt", str(path), "-p", lowering, "-t", "numba"]) == 0
    assert "@_kernel(" in capsys.readouterr().out


def test_opt_splits_input_and_prints_diagnostics_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = UNARY.replace("OP", "relu") + "// -----\n" + USE_BEFORE_DEF
    path = write(tmp_path, "split.mlir", text)
    assert main(["opt", str(path), "--split-input-file", "--verify-diagnostics"]) == 0
    out = capsys.readouterr().out
    first, second = out.split("// -----\n")
    assert "df.relu" in first
    assert (
        second.strip()
        == f"{path}:7:3: error: df.add uses a value before its definition (df.neg on line 8)"
    )
    err = fails(capsys, "opt", path, "--split-input-file")
    assert err.startswith(f"{path}:7:3: error:")


def test_opt_round_trips_and_writes_output(tmp_path: Path) -> None:
    path = write(tmp_path, "two.mlir", TWO_RESULTS)
    out = tmp_path / "out.mlir"
    assert main(["opt", str(path), "-p", "df-optimize", "-o", str(out)]) == 0
    again = tmp_path / "again.mlir"
    assert main(["opt", str(out), "-o", str(again)]) == 0
    assert again.read_text() == out.read_text()
    assert "df.reduce_sum" in out.read_text()


def test_opt_process_reads_stdin_and_never_prints_a_traceback() -> None:
    done = run_dflow("opt", "-", "-p", "df-recompute{mode=foo}", stdin=TWO_RESULTS)
    assert done.returncode == 1
    assert (
        done.stderr
        == "<stdin>: error: df-recompute: mode=foo is not one of hints, heuristic, budget\n"
    )
    done = run_dflow("opt", "-", stdin="func.func @main( {\n")
    assert done.returncode == 1
    assert done.stderr.startswith("<stdin>:1:") and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("program", [HUGE_ARGUMENT, HUGE_CONSTANT])
def test_programs_too_large_for_memory_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], program: str
) -> None:
    path = write(tmp_path, "big.mlir", program)
    err = fails(capsys, "run", path)
    assert "memory" in err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--seed", "-1", "argument --seed: -1 is negative: a seed is 0 or more"),
        ("--seed", "abc", "argument --seed: 'abc' is not a whole number"),
        ("--timeout", "0", "argument --timeout: 0 is not a positive number of seconds"),
        ("--timeout", "nan", "argument --timeout: nan is not a positive number of seconds"),
        ("--timeout", "soon", "argument --timeout: 'soon' is not a number of seconds"),
    ],
)
def test_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(path), option, value])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"dflow run: error: {message} (see dflow run --help)\n"


def test_output_paths_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    inputs = feeds(tmp_path, x=X4)
    assert (
        main(["run", str(path), "--inputs", str(inputs), "--output", str(tmp_path / "r.txt")]) == 0
    )
    np.testing.assert_array_equal(results(tmp_path / "r.txt")[0], np.maximum(X4, 0))
    assert not (tmp_path / "r.txt.npz").exists()
    folder = tmp_path / "folder"
    folder.mkdir()
    assert fails(capsys, "run", path, "--output", folder).endswith(
        f"cannot write outputs to {folder}: it is a folder"
    )
    assert not (tmp_path / "folder.npz").exists()
    assert fails(capsys, "compile", path, "-o", path).endswith(
        f"cannot write modules into {path}: it is a file"
    )
    missing = tmp_path / "missing" / "g.dot"
    assert fails(capsys, "viz", path, "-o", missing).endswith(
        f"there is no folder {missing.parent}"
    )


def test_viz_of_a_lowered_module_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    lowered = tmp_path / "low.mlir"
    spec = "df-inline,df-fuse,df-bufferize,df-plan-buffers,df-lower-host"
    assert main(["opt", str(path), "-p", spec, "-o", str(lowered)]) == 0
    err = fails(capsys, "viz", lowered, "-o", tmp_path / "g.dot")
    assert "viz draws df graphs; this module is lowered past them" in err


def test_unusable_cache_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(path / "cache"))
    err = fails(capsys, "run", path)
    assert f"cannot use the cache folder {path / 'cache'}" in err
    assert "set DFLOW_CACHE_DIR to a folder you can write" in err


ORPHAN_RECV = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.recv {key = "k", from = "cpu:1", to = "cpu:0"} : () -> tensor<4xf32>
  %y = df.add %x, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""

CALLS_A_DECLARATION = """\
func.func private @ext(tensor<4xf32>) -> tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @ext(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (
            ORPHAN_RECV,
            "{path}:2:3: error: df.recv of key 'k' from cpu:1 to cpu:0 has no df.send of that "
            "key between those devices: it would wait for ever",
        ),
        (
            CALLS_A_DECLARATION,
            "{path}:3:3: error: func.call of @ext, a declaration without a body: nothing to run",
        ),
    ],
)
def test_programs_that_cannot_run_are_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], program: str, expected: str
) -> None:
    path = write(tmp_path, "p.mlir", program)
    for command in (["run", path], ["run", path, "--interpret"], ["plan", path]):
        start = time.monotonic()
        assert fails(capsys, *command) == expected.format(path=path)
        assert time.monotonic() - start < 10
    assert main(["opt", str(path)]) == 0  # still a valid module to transform


PARTITIONED = """\
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {df.arguments = array<i64: ARG>,
        df.results = array<i64: 0>, df.function_type = WHOLE} {
      %y = df.relu %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main() attributes {df.arguments = array<i64>, df.results = array<i64>,
        df.function_type = OTHER} {
      func.return
    }
  }
}
"""


F32 = "(tensor<4xf32>) -> tensor<4xf32>"
F64 = "(tensor<4xf64>) -> tensor<4xf32>"


@pytest.mark.parametrize(
    ("arg", "whole", "other", "message"),
    [
        ("99", F32, F32, "df.arguments holds 99, but the whole function has 1 arguments"),
        ("0, 0", F32, F32, "df.arguments gives 2 indices for 1 arguments of this part"),
        ("0", F64, F64, "maps a tensor<4xf32> argument to the whole's argument 0, of type"),
        ("0", F32, F64, f"records {F64} as the whole function's type, another part {F32}"),
    ],
)
def test_partitioned_parts_must_agree_with_their_whole(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    arg: str,
    whole: str,
    other: str,
    message: str,
) -> None:
    """Found by the fuzzer (df.arguments = array<i64: 99>): an IndexError traceback."""
    text = PARTITIONED.replace("ARG", arg).replace("WHOLE", whole).replace("OTHER", other)
    path = write(tmp_path, "parts.mlir", text)
    for command in (["run", path], ["run", path, "--interpret"], ["plan", path]):
        err = fails(capsys, *command)
        assert message in err, err


def test_a_partitioned_program_runs_as_given(tmp_path: Path) -> None:
    text = PARTITIONED.replace("ARG", "0").replace("WHOLE", F32).replace("OTHER", F32)
    path = write(tmp_path, "parts.mlir", text)
    out = tmp_path / "o.npz"
    for mode in ([], ["--interpret"]):
        argv = ["run", str(path), "--inputs", str(feeds(tmp_path, x=X4)), "--output", str(out)]
        assert main([*argv, *mode]) == 0
        np.testing.assert_array_equal(results(out)[0], np.maximum(X4, 0))


@pytest.mark.parametrize("devices", ["cpu:0,,cpu:1", "cpu:0,", ",cpu:0"])
def test_an_empty_device_entry_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], devices: str
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    assert fails(capsys, "run", path, "--devices", devices).endswith(
        f"--devices {devices!r} has an empty entry between commas"
    )


@pytest.mark.parametrize("devices", ["", ",", " "])
def test_empty_device_list_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], devices: str
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    assert fails(capsys, "run", path, "--devices", devices).endswith(
        "--devices is empty: name at least one device, e.g. --devices cpu:0"
    )


def test_gpu_without_a_gpu_says_what_to_do(tmp_path: Path) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    probe = "from numba import cuda; print(cuda.is_available())"
    has_gpu = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False
    )
    if has_gpu.stdout.strip() == "True":
        pytest.skip("this machine has a GPU")
    done = run_dflow("run", path, "--devices", "gpu:0", env=env)
    assert done.returncode == 1
    assert done.stderr == (
        f"{path}: error: gpu:0 is asked for but no CUDA GPU was found: run on the CPU "
        "(--devices cpu:0), or simulate the GPU with NUMBA_ENABLE_CUDASIM=1\n"
    )


def test_interpreting_a_gpu_says_it_runs_on_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    out = tmp_path / "o.npz"
    assert (
        main(
            [
                "run",
                str(path),
                "--devices",
                "gpu:0",
                "--interpret",
                "--inputs",
                str(feeds(tmp_path, x=X4)),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    assert (
        capsys.readouterr().err
        == "dflow: note: --interpret runs gpu:0 in the interpreter, on the host\n"
    )
    np.testing.assert_array_equal(results(out)[0], np.maximum(X4, 0))


def test_timeout_holds_for_one_interpreted_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "orphan.mlir", RECV_BEFORE_SEND)
    start = time.monotonic()
    err = fails(capsys, "run", path, "--interpret", "--timeout", "0.3")
    assert time.monotonic() - start < 10
    assert "'k'" in err and "0.3 s" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "{path}: error: the program is empty: expected func.func or builtin.module"),
        ("\n  \n", "{path}: error: the program is empty: expected func.func or builtin.module"),
        (
            "func.func @main() {\n  func.return\n}\n}\n",
            "{path}:4:1: error: expected an operation (such as func.func) here",
        ),
        (
            WRONG_RESULT_TYPE,
            "{path}:2:3: error: %y is defined here as tensor<5xf32> but used as tensor<4xf32> "
            "at {path}:3:15: one of the two types is wrong",
        ),
        (WRONG_CONSTANT, "{path}:2:3: error: Shape mismatch in dense literal"),
        (
            "func.func @main() -> tensor<2xi32> {\n"
            "  %c = df.constant dense<9223372036854775808> : tensor<2xi32>\n"
            "  func.return %c : tensor<2xi32>\n}\n",
            "{path}:2:3: error: Integer value 9223372036854775808 is out of range for type i32",
        ),
    ],
)
def test_parse_errors_point_at_the_mistake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = write(tmp_path, "bad.mlir", text)
    assert fails(capsys, "run", path).startswith(expected.format(path=path))


def test_cache_is_private(tmp_path: Path, private_cache: Path) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    assert main(["run", str(path)]) == 0
    entries = _programs(private_cache)
    assert len(entries) == 1
    assert stat.S_IMODE(private_cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(entries[0].stat().st_mode) == 0o700
    modules = list(entries[0].glob("*.py"))
    assert modules and all(stat.S_IMODE(m.stat().st_mode) == 0o600 for m in modules)


def _programs(cache: Path) -> list[Path]:
    """The programs' entries in `cache` (beside them, the kernel store `kernels/`)."""
    return [p for p in cache.iterdir() if p.is_dir() and p.name != "kernels"]


def _tamper(entry: Path) -> Path:
    """Replace the entry's module by one that would print a marker if imported."""
    module = next(entry.glob("cpu_0.py"))
    module.write_text(module.read_text() + "\nprint('TAMPERED')\n")
    return module


@pytest.mark.parametrize("how", ["group-writable", "other owner"])
def test_a_cache_entry_others_could_write_is_never_imported(
    tmp_path: Path, private_cache: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    inputs = feeds(tmp_path, x=X4)
    out = tmp_path / "o.npz"
    argv = ["run", str(path), "--inputs", str(inputs), "--output", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    (entry,) = _programs(private_cache)
    module = _tamper(entry)
    if how == "group-writable":
        entry.chmod(0o770)
    else:
        if os.getuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(module, 65534, 65534)
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "TAMPERED" not in captured.out
    foreign = entry if how == "group-writable" else module
    assert captured.err.startswith(
        f"dflow: warning: {foreign} could have been written by another user"
    )
    np.testing.assert_array_equal(results(out)[0], np.maximum(X4, 0))
    assert "TAMPERED" not in (entry / "cpu_0.py").read_text()


def test_the_cache_is_reused_under_a_group_writable_umask(
    tmp_path: Path, private_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """numba writes its own cache files with the umask's modes (0664 under umask 002):
    inside the 0700 entry that is harmless, and the entry is reused without a warning."""
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    old = os.umask(0o002)
    try:
        assert main(["run", str(path)]) == 0
        (entry,) = _programs(private_cache)
        stamp = (entry / "cpu_0.py").stat().st_mtime_ns
        (entry / "__pycache__").mkdir(exist_ok=True)
        (entry / "__pycache__" / "numba-made.nbi").write_bytes(b"")
        assert main(["run", str(path)]) == 0
    finally:
        os.umask(old)
    assert "warning" not in capsys.readouterr().err
    assert (entry / "cpu_0.py").stat().st_mtime_ns == stamp


def test_an_old_open_cache_root_is_closed(tmp_path: Path, private_cache: Path) -> None:
    private_cache.mkdir(mode=0o755)
    private_cache.chmod(0o755)
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    assert main(["run", str(path)]) == 0
    assert stat.S_IMODE(private_cache.stat().st_mode) == 0o700


def test_compile_leaves_the_users_own_files(tmp_path: Path) -> None:
    path = write(tmp_path, "relu.mlir", UNARY.replace("OP", "relu"))
    out = tmp_path / "project"
    out.mkdir()
    (out / "train_2024.py").write_text("print('mine')\n")
    (out / "gpu_7.py").write_text("# not dflow's\n")
    assert main(["compile", str(path), "-o", str(out)]) == 0
    written = sorted(p.name for p in out.iterdir() if p.suffix != ".ll")  # the llvm target's
    assert written == ["cpu_0.py", "gpu_7.py", "train_2024.py"]


def test_a_deep_call_chain_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1,500 nested calls: the front door's recursion check walks them without
    recursing; the inliner does recurse, and its limit is one line."""
    functions = [
        f"func.func @f{i}(%v: tensor<4xf32>) -> tensor<4xf32> {{\n"
        f"  %y = func.call @f{i + 1}(%v) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %y : tensor<4xf32>\n}\n"
        for i in range(1500)
    ]
    last = (
        "func.func @f1500(%v: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  func.return %v : tensor<4xf32>\n}\n"
    )
    path = write(tmp_path, "deep.mlir", "".join(functions) + last)
    assert main(["opt", str(path)]) == 0
    capsys.readouterr()
    err = fails(capsys, "run", path, "--entry", "f0")
    assert err == (
        f"{path}: error: the program nests too deeply for dflow (calls or regions past "
        "Python's recursion limit)"
    )


DYNAMIC_ARGUMENT = """\
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  func.return %x : tensor<?xf32>
}
"""


@pytest.mark.parametrize("interpret", [[], ["--interpret"]])
def test_a_dynamic_argument_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], interpret: list[str]
) -> None:
    """Random feeds for a `tensor<?xf32>` argument were NumPy's 'negative dimensions'
    error, reported as a bug in dflow (the fuzzer's corpus found it in a lit file)."""
    path = write(tmp_path, "dynamic.mlir", DYNAMIC_ARGUMENT)
    assert fails(capsys, "run", path, *interpret) == (
        f"{path}:1:1: error: argument 0 of @main has type tensor<?xf32>; "
        "only static shapes can be fed"
    )
