"""The `dflow run` command line: examples, feeds and fetches, entries, seeds, and errors.

A few cases run `python -m dflow` as a subprocess (the real process: exit status,
streams, no traceback); the rest call `dflow.driver.frontdoors.cli.main(argv)` and
read its streams with capsys. Expected results are computed here with NumPy from the
inputs, never taken from dflow's output. Every error must be one line on stderr,
`FILE:LINE:COL: error: ...` or `FILE: error: ...`, with exit status 1.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from dflow.driver.frontdoors.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# relu(x @ w + b) and its total: matmul, a broadcasting add, relu, a full reduction.
DENSE = """\
func.func @main(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %b: tensor<5xf32>)
    -> (tensor<3x5xf32>, tensor<f32>) {
  %m = df.matmul %x, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %h = df.add %m, %b : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %r = df.relu %h : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %s = df.reduce_sum %r : (tensor<3x5xf32>) -> tensor<f32>
  func.return %r, %s : tensor<3x5xf32>, tensor<f32>
}
"""

# Two functions; @main calls @square with func.call.
CALLS = """\
func.func @square(%v: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.mul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = func.call @square(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = df.add %s, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""

SYNTAX_ERROR = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y tensor<4xf32>
}
"""

UNKNOWN_OP = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.frobnicate %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""

NO_BROADCAST = """\
func.func @main(%x: tensor<4xf32>, %z: tensor<3xf32>) -> tensor<4xf32> {
  %a = df.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %y = df.add %a, %z : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""

Array = NDArray[Any]


def dense_feeds(seed: int = 1) -> dict[str, Array]:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((3, 4)).astype(np.float32),
        "w": rng.standard_normal((4, 5)).astype(np.float32),
        "b": rng.standard_normal(5).astype(np.float32),
    }


def dense_expected(feeds: dict[str, Array]) -> list[Array]:
    x, w, b = (feeds[k].astype(np.float64) for k in ("x", "w", "b"))
    relu = np.maximum(x @ w + b, 0.0)
    return [relu, relu.sum()]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def save(directory: Path, name: str, **arrays: Array) -> Path:
    path = directory / name
    np.savez(path, **arrays)  # pyright: ignore[reportArgumentType]
    return path


def load(path: Path) -> dict[str, Array]:
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


def assert_outputs(saved: dict[str, Array], expected: list[Array]) -> None:
    assert sorted(saved) == [f"out{i}" for i in range(len(expected))]
    for i, want in enumerate(expected):
        got = saved[f"out{i}"]
        assert got.dtype == np.float32
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def run_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "dflow", "run", *map(str, args)]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def run_main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["run", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, file: Path, line: int | None, *words: str) -> None:
    """Exit status 1; one line on stderr at `file[:line:col]` holding every word."""
    assert code == 1
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    where = re.escape(str(file)) + (rf":{line}:\d+" if line is not None else "")
    assert re.match(rf"{where}: error: \S", lines[0]), lines[0]
    for word in words:
        assert word.lower() in lines[0].lower(), (word, lines[0])


# --- subprocess: the real process ---------------------------------------------------------


@pytest.mark.parametrize(
    ("example", "heads"),
    [
        ("mlp.mlir", ["out0: shape scalar float32 value ", "out1: shape 8x10 float32 "]),
        ("convnet.mlir", ["out0: shape 2x10 float32 "]),
    ],
)
def test_example_prints_one_summary_line_per_output(example: str, heads: list[str]) -> None:
    result = run_process(EXAMPLES / example)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == len(heads)
    for line, head in zip(lines, heads, strict=True):
        assert line.startswith(head), line


def test_mlp_summary_describes_a_softmax() -> None:
    """Each softmax row sums to 1 over 10 classes: the mean is 0.1, values in [0, 1]."""
    result = run_process(EXAMPLES / "mlp.mlir", "--seed", "3")
    assert result.returncode == 0, result.stderr
    summary = result.stdout.splitlines()[1]
    found = re.search(r"min (\S+) mean (\S+) max (\S+)$", summary)
    assert found, summary
    low, mean, high = map(float, found.groups())
    assert 0.0 <= low <= mean <= high <= 1.0
    assert mean == pytest.approx(0.1, rel=1e-5)


def test_process_inputs_by_name_and_output(tmp_path: Path) -> None:
    program = write(tmp_path, "dense.mlir", DENSE)
    feeds = dense_feeds()
    inputs = save(tmp_path, "in.npz", **feeds)
    output = tmp_path / "out.npz"
    result = run_process(program, "--inputs", inputs, "--output", output)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")
    assert_outputs(load(output), dense_expected(feeds))


def test_process_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    program = write(tmp_path, "bad.mlir", NO_BROADCAST)
    result = run_process(program)
    assert result.stdout == ""
    assert_one_line_error(result.returncode, result.stderr, program, 3, "df.add", "broadcast")


# --- in process: feeds, fetches, entries, seeds ------------------------------------------


@pytest.mark.parametrize("keys", ["names", "positions", "mixed"])
def test_inputs_by_name_or_position_match_numpy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: str
) -> None:
    program = write(tmp_path, "dense.mlir", DENSE)
    feeds = dense_feeds()
    rename = {
        "names": {"x": "x", "w": "w", "b": "b"},
        "positions": {"x": "arg0", "w": "arg1", "b": "arg2"},
        "mixed": {"x": "arg0", "w": "w", "b": "arg2"},
    }[keys]
    inputs = save(tmp_path, "in.npz", **{rename[k]: v for k, v in feeds.items()})
    output = tmp_path / "out.npz"
    code, out, err = run_main(capsys, program, "--inputs", inputs, "--output", output)
    assert (code, out, err) == (0, "", "")
    assert_outputs(load(output), dense_expected(feeds))


def test_inputs_without_output_print_a_summary_of_the_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = write(tmp_path, "dense.mlir", DENSE)
    feeds = dense_feeds()
    relu, total = dense_expected(feeds)
    code, out, err = run_main(capsys, program, "--inputs", save(tmp_path, "in.npz", **feeds))
    assert (code, err) == (0, "")
    first, second = out.splitlines()
    assert first.startswith("out0: shape 3x5 float32 min ")
    low, mean, high = map(float, re.findall(r"(?:min|mean|max) (\S+)", first))
    np.testing.assert_allclose([low, mean, high], [relu.min(), relu.mean(), relu.max()], rtol=1e-5)
    assert second.startswith("out1: shape scalar float32 value ")
    assert float(second.rsplit(" ", 1)[1]) == pytest.approx(total, rel=1e-5)


@pytest.mark.parametrize(
    ("entry", "feed", "expect"),
    [
        ("square", "v", lambda v: v * v),
        ("main", "x", lambda x: x * x + x),
    ],
)
def test_entry_selects_the_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, feed: str, expect: Any
) -> None:
    program = write(tmp_path, "calls.mlir", CALLS)
    value = np.array([-2.0, -0.5, 1.5, 3.0], np.float32)
    inputs = save(tmp_path, "in.npz", **{feed: value})
    output = tmp_path / "out.npz"
    code, _, err = run_main(
        capsys, program, "--entry", entry, "--inputs", inputs, "--output", output
    )
    assert (code, err) == (0, "")
    assert_outputs(load(output), [expect(value.astype(np.float64))])


def test_default_entry_is_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = write(tmp_path, "calls.mlir", CALLS)
    value = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    output = tmp_path / "out.npz"
    code, _, _ = run_main(
        capsys, program, "--inputs", save(tmp_path, "in.npz", x=value), "--output", output
    )
    assert code == 0
    assert_outputs(load(output), [value.astype(np.float64) ** 2 + value])


def random_run(
    program: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> tuple[dict[str, Array], str]:
    """Outputs and printed summary of a run on seeded random inputs."""
    output = tmp_path / f"seed{seed}-{len(list(tmp_path.iterdir()))}.npz"
    code, out, err = run_main(capsys, program, "--seed", str(seed), "--output", output)
    assert (code, err) == (0, "")
    return load(output), out


def test_same_seed_same_outputs_other_seed_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = write(tmp_path, "dense.mlir", DENSE)
    first, first_summary = random_run(program, tmp_path, capsys, 7)
    again, again_summary = random_run(program, tmp_path, capsys, 7)
    other, other_summary = random_run(program, tmp_path, capsys, 8)
    assert len(first_summary.splitlines()) == 2
    assert first_summary == again_summary
    assert first_summary != other_summary
    for key in ("out0", "out1"):
        np.testing.assert_array_equal(first[key], again[key])
    assert not np.array_equal(first["out0"], other["out0"])


# --- in process: errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (SYNTAX_ERROR, 3, ["expected ':'"]),
        (UNKNOWN_OP, 2, ["df.frobnicate", "not registered"]),
        (NO_BROADCAST, 3, ["df.add", "4", "3", "do not broadcast"]),
    ],
    ids=["syntax", "unknown-op", "verifier"],
)
def test_bad_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, words: list[str]
) -> None:
    program = write(tmp_path, "bad.mlir", text)
    code, out, err = run_main(capsys, program)
    assert out == ""
    assert_one_line_error(code, err, program, line, *words)


def edited(values: dict[str, Array], **changes: Array | None) -> dict[str, Array]:
    """`values` with some keys replaced (or removed, for None)."""
    merged = {**values, **changes}
    return {k: v for k, v in merged.items() if v is not None}


FEED = dense_feeds()

BAD_FEEDS = [
    ("missing", edited(FEED, b=None), 2, ["no input", "argument 2", "'b'", "@main"]),
    ("extra", edited(FEED, bias=FEED["b"]), 2, ["'bias'", "matches no argument", "@main"]),
    ("extra-position", edited(FEED, arg3=FEED["b"]), 2, ["'arg3'", "matches no argument"]),
    (
        "shape",
        edited(FEED, x=np.zeros((4, 3), np.float32)),
        2,
        ["'x'", "shape 4x3", "tensor<3x4xf32>"],
    ),
    (
        "dtype",
        edited(FEED, w=FEED["w"].astype(np.float64)),
        2,
        ["'w'", "float64", "tensor<4x5xf32>"],
    ),
    ("twice", edited(FEED, arg0=FEED["x"]), None, ["'x'", "given twice", "'arg0'"]),
]


@pytest.mark.parametrize(
    ("feeds", "line", "words"),
    [case[1:] for case in BAD_FEEDS],
    ids=[case[0] for case in BAD_FEEDS],
)
def test_bad_inputs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    feeds: dict[str, Array],
    line: int | None,
    words: list[str],
) -> None:
    """Input errors point at the entry's `func.func`, on line 2 after a comment."""
    program = write(tmp_path, "dense.mlir", "// a comment line\n" + DENSE)
    inputs = save(tmp_path, "in.npz", **feeds)
    code, out, err = run_main(capsys, program, "--inputs", inputs)
    assert out == ""
    assert_one_line_error(code, err, program, line, *words)


def test_unknown_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = write(tmp_path, "calls.mlir", CALLS)
    code, _, err = run_main(capsys, program, "--entry", "cube")
    assert_one_line_error(code, err, program, None, "@cube", "@square", "@main")


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "absent.mlir"
    code, _, err = run_main(capsys, program)
    assert_one_line_error(code, err, program, None, "cannot read", "no such file")


@pytest.mark.parametrize(
    "content", [b"not an archive\n", b"PK\x03\x04 truncated zip"], ids=["text", "broken-zip"]
)
def test_inputs_that_are_not_an_npz(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    program = write(tmp_path, "dense.mlir", DENSE)
    inputs = tmp_path / "in.npz"
    inputs.write_bytes(content)
    code, out, err = run_main(capsys, program, "--inputs", inputs)
    assert out == ""
    assert_one_line_error(code, err, program, None, "cannot read inputs", str(inputs))


def test_missing_inputs_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = write(tmp_path, "dense.mlir", DENSE)
    inputs = tmp_path / "absent.npz"
    code, _, err = run_main(capsys, program, "--inputs", inputs)
    assert_one_line_error(code, err, program, None, "cannot read inputs", str(inputs))


def test_standard_input_that_is_not_utf8_is_one_line() -> None:
    """Bytes that are no UTF-8 from a pipe: one line, exit 1 (it was an internal error:
    the stream's decoder let them through as surrogates)."""
    done = subprocess.run(
        [sys.executable, "-m", "dflow", "run", "-"],
        input=b"\xff\xfe func.func @main() {}",
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    assert (
        done.stderr.decode() == "<stdin>: error: cannot read standard input: it is not UTF-8 text\n"
    )
