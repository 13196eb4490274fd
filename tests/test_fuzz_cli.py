"""The command-line fuzzer of `tests/support/fuzz_cli.py` run in CI, and what it found.

A bounded number of seeded cases run in-process (`dflow.driver.frontdoors.cli.main` with its
streams captured) and a handful as real `python -m dflow` processes; each must
hold `fuzz_cli.problems`' property. The regression tests replay the exact
mutated inputs that found a bug. `python bench/fuzz.py --count N` runs more.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import fuzz_cli
import numpy as np
import pytest
from fuzz_cli import Outcome, problems, run_cases, run_in_process

ROOT = Path(__file__).resolve().parents[1]
CI_CASES = 600
CHUNK = 50
SUBPROCESS_SEEDS = range(100_000, 100_006)


@pytest.fixture(autouse=True)
def private_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """numba's kernels shared between tests (and runs); dflow's cache private to a test."""
    monkeypatch.setenv(
        "NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    )
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path / "dflow-cache"))


@pytest.mark.parametrize("first", range(0, CI_CASES, CHUNK))
def test_fuzz_cases_in_process(first: int, tmp_path: Path) -> None:
    seeds = range(first, first + CHUNK)
    failures = run_cases(seeds, tmp_path, fuzz_cli.make_case, fuzz_cli.write_case)
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("seed", SUBPROCESS_SEEDS)
def test_fuzz_case_as_a_process(seed: int, tmp_path: Path) -> None:
    """The real process: its exit status and streams as a shell sees them."""
    case = fuzz_cli.make_case(seed, compiled=False)
    argv = fuzz_cli.write_case(case, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "dflow", *argv],
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
        cwd=ROOT,
        timeout=fuzz_cli.CASE_TIMEOUT_S,
    )
    outcome = Outcome(done.returncode, done.stdout, done.stderr, 0.0)
    assert not problems(argv, outcome), fuzz_cli.describe(argv, outcome)


def test_cases_are_reproducible(tmp_path: Path) -> None:
    """A seed gives the same case and the same bytes every time."""
    for seed in range(40):
        first, second = tmp_path / f"a{seed}", tmp_path / f"b{seed}"
        first.mkdir()
        second.mkdir()
        argv = fuzz_cli.write_case(fuzz_cli.make_case(seed), first)
        again = fuzz_cli.write_case(fuzz_cli.make_case(seed), second)
        assert [a.replace(str(first), "") for a in argv] == [
            a.replace(str(second), "") for a in again
        ]
        for path in first.iterdir():
            assert path.read_bytes() == (second / path.name).read_bytes()


def test_corpus_and_mutators_cover_the_issue() -> None:
    corpus = fuzz_cli.corpus()
    assert len(corpus) >= 100
    assert sum(program.feeds is not None for program in corpus) >= 80
    assert {"change_dim", "swap_uses", "truncate", "insert_bytes", "empty"} <= set(
        fuzz_cli.PROGRAM_MUTATORS
    )
    assert {"wrong_dtype", "missing_array", "extra_array", "not_a_zip", "empty_file"} <= set(
        fuzz_cli.FEED_MUTATORS
    )


@pytest.mark.parametrize(
    ("outcome", "flaw"),
    [
        (Outcome(None, "", "", 60.0), "hang"),
        (
            Outcome(1, "", "Traceback (most recent call last):\n  x\nE: e: error: x", 0.1),
            "traceback",
        ),
        (Outcome(2, "", "f: internal error: KeyError: 'x' (a bug in dflow)", 0.1), "internal"),
        (Outcome(1, "", "a: error: x\nb\nc\nd", 0.1), "lines of stderr"),
        (Outcome(1, "", "", 0.1), "without an error line"),
        (Outcome(0, "", "f: error: x", 0.1), "exit status 0"),
        (Outcome(0, "", "", 0.1), "nothing on stdout"),
        (Outcome(-11, "", "f: error: x", 0.1), "exit status -11"),
    ],
)
def test_property_catches(outcome: Outcome, flaw: str) -> None:
    argv = ["run", "p.mlir"] if flaw == "exit status 0" else ["opt", "p.mlir"]
    assert any(flaw in problem for problem in problems(argv, outcome))


def test_property_accepts_a_clean_error_and_a_clean_result() -> None:
    assert not problems(["opt", "p.mlir"], Outcome(1, "", "p.mlir:3:5: error: bad\n", 0.1))
    assert not problems(["run", "p.mlir"], Outcome(0, "out0: shape 4 float32 ...\n", "", 0.1))


# ----------------------------------------------- what the fuzzer found, replayed


def _one_error_line(argv: list[str], pattern: str) -> None:
    outcome = run_in_process(argv)
    assert outcome.status == 1, outcome.stderr
    assert not problems(argv, outcome), fuzz_cli.describe(argv, outcome)
    [line] = outcome.stderr.splitlines()
    assert pattern in line, line


def test_attribute_of_the_wrong_kind_while_parsing(tmp_path: Path) -> None:
    """A lit chunk (invalid_constant.mlir): xDSL raises VerifyException from inside its
    parser for an attribute of the wrong kind; it was an internal error, exit 2."""
    path = tmp_path / "vector.mlir"
    path.write_text(
        "\n// CHECK: {{^}}vector<2xf32> should be of base attribute tensor{{$}}\n"
        "func.func @vector() {\n"
        "  %0 = df.constant dense<1.0> : vector<2xf32>\n"
        "  func.return\n"
        "}\n"
    )
    _one_error_line(["opt", str(path)], f"{path}:4:3: error: vector<2xf32> should be of base")


def test_entry_that_is_a_declaration(tmp_path: Path) -> None:
    """`dflow run --entry` of a body-less function was an AssertionError from xDSL."""
    path = tmp_path / "declaration.mlir"
    path.write_text("func.func private @ext(tensor<4xf32>) -> tensor<4xf32>\n")
    for mode in ([], ["--interpret"], ["--devices", "cpu:0,cpu:1"]):
        _one_error_line(["run", str(path), "--entry", "ext", *mode], "@ext is a declaration")


NUL_BYTE_MUTANT = (
    b"\n// Results live to the end and arguments are never written: %r is returned, so %n\n"
    b"// cannot take its block; %s reads only the argument, so it gets a block of its own.\n"
    b"\x00\n// CHECK-LABEL: func.func @keep\n"
    b"// CHECK-SAME:      attributes {df.arena_bytes = 192 : i64}\n"
    b"// CHECK-NEXT:    %r = df.exp %x {df.offset = array<i64: 0>}\n"
    b"// CHECK-NEXT:    %n = df.neg %r {df.offset = array<i64: 64>}\n"
    b"// CHECK-NEXT:    %s = df.sqrt %x {df.offset = array<i64: 128>}\n"
    b"// CHECK-NEXT:    func.return %r, %n, %s\n"
    b"func.func @keep(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {\n"
    b"  %r = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>\n"
    b"  %n = df.neg %r : (tensor<16xf32>) -> tensor<16xf32>\n"
    b"  %s = df.sqrt %x : (tensor<16xf32>) -> tensor<16xf32>\n"
    b"  func.return %r, %n, %s : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>\n"
    b"}\n\n"
)
"""insert_bytes of plan_buffers.mlir#2: a NUL as the file's first token."""


def test_bad_first_token(tmp_path: Path) -> None:
    """xDSL's parser lexes its first token as it is made, outside dflow's handler:
    an internal error, with a raw NUL in the message."""
    path = tmp_path / "nul.mlir"
    path.write_bytes(NUL_BYTE_MUTANT)
    _one_error_line(
        ["run", "--interpret", str(path), "--entry", "keep"],
        f"{path}:4:1: error: Unexpected character: \\x00",
    )


OPEN_STRING_MUTANT = (
    b"\n// A receive writes a view too.\n"
    b"// CHECK: {{^}}df-lower-host: df.recv has no df.offset: run df-plan-buffers first{{$}}\n"
    b"builtin.module {\n"
    b'  builtin.module attributes {df.device = "or<4xf32> attributes {df.arena_bytes = 64 : i64}'
    b" {\n"
    b'      %r = df.recv {df.device = "cpu:1", key = "main.k0", from = "cpu:0", to = "cpu:1"}'
    b" : () -> tensor<4xf32>\n"
    b"      func.return %r : tensor<4xf32>\n"
    b"    }\n"
    b"  }\n"
    b"}\n\n"
)
"""delete_span of invalid_lower_host.mlir#2 (seed 1582 then): a string left open."""


def test_string_left_open_does_not_hang(tmp_path: Path) -> None:
    """xDSL's string-literal pattern backtracks exponentially over an unclosed
    string: `dflow plan` of this 390-byte file ran past 60 s."""
    path = tmp_path / "open_string.mlir"
    path.write_bytes(OPEN_STRING_MUTANT)
    argv = ["plan", "--devices", "cpu:0,cpu:1", str(path)]
    outcome = run_in_process(argv, timeout=10)
    assert outcome.status == 1, fuzz_cli.describe(argv, outcome)
    assert outcome.seconds < 5
    assert f"{path}:5:42: error: " in outcome.stderr


KEEP = """\
func.func @keep(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %r = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %n = df.neg %r : (tensor<16xf32>) -> tensor<16xf32>
  %s = df.sqrt %x : (tensor<16xf32>) -> tensor<16xf32>
  func.return %r, %n, %s : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
"""

CORRUPTED_NPZ = base64.b64decode(
    "UEsDBC0AAAAAAAAAIQC97ZB0//////////8FABQAeC5ucHkBABAAwAAAAAAAAADAAAAAAAAAAJNOVU1QWQEAdgB7"
    "J2Rlc2NyJzogJzxmNCcsICdmb3J0cmFuX29yZGVyrDogRmFsc2UsICdzaGFwZSc6ICgxNiwpLCB9ICAgICCiICAg"
    "ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAKtlPdP5DXtr8kjYM/pOfw"
    "P7jgmT08ndU+tfrov9wT4z/ijek+CJ0Mvx1ugD/fjPW+IaBxvpzdUr9IvQs/YN33PlBLAQItAy0AAACjAAAAIQC9"
    "7ZB0wAAAAMAAAAAFAAAAAAAAAAAAAACAAQAAAAB4Lm5weVBLBQYAAAAAAQABADMAAAD3AAAAAAA="
)
"""bench/fuzz.py seed 10614: corrupted_npz of plan_buffers.mlir#2's feeds (a flipped
compression method: zipfile's NotImplementedError was an internal error)."""


def test_corrupted_npz_found_by_the_bench(tmp_path: Path) -> None:
    (tmp_path / "keep.mlir").write_text(KEEP)
    (tmp_path / "inputs.npz").write_bytes(CORRUPTED_NPZ)
    argv = ["run", "--interpret", "--devices", "cpu:0,cpu:1", str(tmp_path / "keep.mlir")]
    argv += ["--entry", "keep", "--inputs", str(tmp_path / "inputs.npz")]
    _one_error_line(argv, f"error: cannot read inputs from {tmp_path / 'inputs.npz'}: ")


FOUR_ZEROS_NPZ = base64.b64decode(
    "UEsDBC0AAAAAAAAAIQCMY8gy//////////8FABQAeC5ucHkBABAAkAAAAAAAAACQAAAAAAAAAJNOVU1QWQEAdgB7"
    "J2Rlc2NyJzogJzxmNCcsICdmb3J0cmFuX29yZGVyJzogRmFsc2UsICdzaGFwZSc6ICg0LCksIH0gICAgICAgICAg"
    "ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAKAAAAAAAAAAAAAAAAAAAA"
    "AFBLAQItAy0AAAAAAAAAIQCMY8gykAAAAJAAAAAFAAAAAAAAAAAAAACAAQAAAAB4Lm5weVBLBQYAAAAAAQABADMA"
    "AADHAAAAAAA="
)
"""`np.savez(f, x=np.zeros(4, np.float32))`; the patches below damage it."""


@pytest.mark.parametrize(
    ("patches", "reason"),
    [
        ({209: 59}, "compression method is not supported"),  # NotImplementedError
        ({29: 230, 235: 117}, "the file ends too early"),  # EOFError with no message
        ({145: 179, 207: 19}, "is encrypted"),  # RuntimeError
        ({66: 125, 222: 224, 225: 206}, "EOF in multi-line statement"),  # tokenize.TokenError
    ],
)
def test_damaged_npz(patches: dict[int, int], reason: str, tmp_path: Path) -> None:
    """corrupted_npz mutants: each of NumPy's and zipfile's errors for a damaged
    archive (found fuzzing `feeds.load_npz`) is one line, not an internal error."""
    damaged = bytearray(FOUR_ZEROS_NPZ)
    for offset, byte in patches.items():
        damaged[offset] = byte
    (tmp_path / "p.mlir").write_text(
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %y = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %y : tensor<4xf32>\n}\n"
    )
    (tmp_path / "x.npz").write_bytes(bytes(damaged))
    argv = ["run", "--interpret", str(tmp_path / "p.mlir"), "--inputs", str(tmp_path / "x.npz")]
    _one_error_line(argv, reason)


SELF_FED_FUSED = """\
func.func @mlp(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = df.fused(%0 = %x, %1 = %1, %2 = %bias) {kind = "contraction", name = "fused_matmul_0"} : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    %m = df.matmul %0, %1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %a = df.add %m, %2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %r_1 = df.relu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
    df.yield %r_1 : tensor<4x8xf32>
  }
  func.return %r : tensor<4x8xf32>
}
"""  # noqa: E501 (the mutant as the fuzzer wrote it)
"""bench/fuzz.py seed 20413: swap_uses of bufferize.mlir#1 (%w -> %1; its CHECK
comments left out). xDSL's parser leaves the operand unresolved, silently."""


def test_operand_named_only_inside_its_region(tmp_path: Path) -> None:
    """Was a ValueError ('Forward declared values do not have an owner') from the verifier."""
    path = tmp_path / "fused.mlir"
    path.write_text(SELF_FED_FUSED)
    for argv in (
        ["plan", "--devices", "cpu:0,cpu:1", str(path), "--entry", "mlp"],
        ["opt", str(path)],
    ):
        _one_error_line(argv, f"{path}:2:3: error: operand 1 of df.fused is defined nowhere")


@pytest.mark.parametrize("symbol", ["pass", "class", '"a.b"', '"x y"', "f$1"])
def test_functions_named_as_no_python_name_compile(tmp_path: Path, symbol: str) -> None:
    """A function named by a Python keyword, as in lit lower_host.mlir#1 (found by
    change_element_type of it, seed 360), or by characters Python names cannot hold:
    compiled, `def pass(rt, x):` was a SyntaxError. The result is checked by hand."""
    path = tmp_path / "keyword.mlir"
    path.write_text(
        f"func.func @{symbol}(%x: tensor<2xf32>) -> tensor<2xf32> {{\n"
        "  %n = df.neg %x : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %n : tensor<2xf32>\n}\n"
    )
    inputs, output = tmp_path / "in.npz", tmp_path / "out.npz"
    x = np.array([1.5, -2.0], dtype=np.float32)
    np.savez(inputs, x=x)
    entry = symbol.strip('"')
    argv = ["run", str(path), "--entry", entry, "--inputs", str(inputs), "--output", str(output)]
    outcome = run_in_process(argv)
    assert outcome.status == 0, fuzz_cli.describe(argv, outcome)
    with np.load(output) as results:
        np.testing.assert_array_equal(results["out0"], -x)
