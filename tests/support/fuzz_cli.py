"""A mutation fuzzer of the `dflow` command line (issue 12, point 7).

Valid programs (`examples/*.mlir`, the chunks of the lit files under
`tests/filecheck` that parse and verify, and the small programs below) and feed
files made for them with NumPy are mutated: spans deleted, dimensions changed,
uses swapped, the text truncated, garbage and non-UTF-8 bytes inserted, arrays
given the wrong dtype or shape, missing or extra, an `.npz` that is no zip, an
empty file. Each mutant goes to `dflow run` (interpreted or compiled, on one
device or on `cpu:0,cpu:1`), `dflow opt` (with or without passes) or
`dflow plan`, and the outcome must hold the property of `problems`: no
traceback, no internal error, no hang, a short stderr, and a failure's non-zero
exit (a mutant that is still a valid program may succeed, with results).

A case is `(seed, mutator, command)`, all drawn from `random.Random(seed)`, so a
seed reproduces its case exactly. `tests/test_fuzz_cli.py` runs a bounded number
in-process; `bench/fuzz.py` runs as many as asked, one subprocess each.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from test_cli import DENSE

from dflow.driver.errors import DflowError
from dflow.driver.loading import feeds
from dflow.driver.loading.source import make_context, parse_module

ROOT = Path(__file__).resolve().parents[2]
Array = NDArray[Any]
Rng = random.Random

CASE_TIMEOUT_S = 60.0
"""A case that runs longer hangs (compiling a large mutant takes seconds, not this)."""

RECV_TIMEOUT = ("--timeout", "5")
"""Every run's receive timeout: a mutant whose devices wait on each other fails fast."""

MAX_STDERR_LINES = 3
"""One line for an error, and room for harmless warnings (a cache note, a GPU note)."""

OWN_PROGRAMS = {
    "dense": DENSE,
    "integers": """\
func.func @main(%a: tensor<4x8xi32>, %b: tensor<8xi32>) -> (tensor<4x8xi32>, tensor<4x8xi1>) {
  %s = df.add %a, %b : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  %m = df.mul %s, %s : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %c = df.greater %m, %a : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi1>
  func.return %m, %c : tensor<4x8xi32>, tensor<4x8xi1>
}
""",
    "calls": """\
func.func @square(%v: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %y = df.mul %v, %v : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  func.return %y : tensor<4x8xf64>
}
func.func @main(%x: tensor<4x8xf64>) -> (tensor<4x8xf64>, tensor<8x4xf64>) {
  %s = func.call @square(%x) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  %e = df.exp %s : (tensor<4x8xf64>) -> tensor<4x8xf64>
  %t = df.transpose %e {permutation = array<i64: 1, 0>} : (tensor<4x8xf64>) -> tensor<8x4xf64>
  func.return %s, %t : tensor<4x8xf64>, tensor<8x4xf64>
}
""",
    "pinned": """\
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4xf32> {
  %a = df.tanh %x {df.device = "cpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.sigmoid %y {df.device = "cpu:1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = df.sub %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = df.reduce_max %c {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}
""",
}

# ---------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Program:
    """A valid program of the corpus: its text, the function to run, and feeds for
    it (None where its arguments are not all tensors)."""

    name: str
    text: str
    entry: str
    feeds: dict[str, Array] | None


def _chunks(path: Path) -> Iterator[tuple[str, str]]:
    text = path.read_text()
    for index, chunk in enumerate(re.split(r"(?m)^// -----\s*$", text)):
        yield f"{path.relative_to(ROOT)}#{index}", chunk


def _candidates() -> Iterator[tuple[str, str]]:
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        yield str(path.relative_to(ROOT)), path.read_text()
    for path in sorted((ROOT / "tests" / "filecheck").rglob("*.mlir")):
        if "Output" not in path.parts:
            yield from _chunks(path)
    yield from OWN_PROGRAMS.items()


def _program(name: str, text: str) -> Program | None:
    """`text` as a corpus program, or None where it is no valid program with a function."""
    try:
        module = parse_module(text, name, make_context())
    except DflowError:
        return None
    entries = re.findall(r"func\.func (?:private )?@([\w.$-]+)", text)
    if not entries:
        return None
    entry = "main" if "main" in entries else entries[0]
    try:
        function = feeds.find_entry(module, entry)
        arrays = feeds.random_inputs(function, seed=1)
        names = [feeds.argument_name(argument) for argument in function.args]
        return Program(name, text, entry, dict(zip(names, arrays, strict=True)))
    except DflowError:
        return Program(name, text, entry, None)


@cache
def corpus() -> tuple[Program, ...]:
    """Every valid program the fuzzer starts from, in a fixed order."""
    programs = (_program(name, text) for name, text in _candidates())
    return tuple(program for program in programs if program is not None)


# ---------------------------------------------------------- program mutators

TextMutator = Callable[[str, Rng], bytes]

_DIMS = re.compile(r"(?<=[<x])\d+(?=x)")
_SHAPE = re.compile(r"(?<=<)\d+(?:x\d+)*(?=x[a-z])")
_VALUE = re.compile(r"%[\w.$-]+")
_OP = re.compile(r"\bdf\.[a-z_0-9]+\b")
_ELEMENT = re.compile(r"\b(f16|f32|f64|i1|i8|i32|i64|index)\b")
_NUMBER = re.compile(r"(?<![\w%.])-?\d+(?![\w.])")


def _pick(matches: Sequence[re.Match[str]], rng: Rng) -> re.Match[str] | None:
    return rng.choice(matches) if matches else None


def _replace(text: str, match: re.Match[str] | None, new: str) -> str:
    if match is None:
        return text
    return text[: match.start()] + new + text[match.end() :]


def _new_dim(old: int, rng: Rng) -> str:
    return str(rng.choice([0, 1, old + 1, max(old - 1, 0), 2 * old, 3, 1 << 20]))


def delete_span(text: str, rng: Rng) -> bytes:
    start = rng.randrange(len(text) + 1)
    return (text[:start] + text[start + rng.randint(1, 40) :]).encode()


def delete_line(text: str, rng: Rng) -> bytes:
    lines = text.splitlines(keepends=True)
    del lines[rng.randrange(len(lines))]
    return "".join(lines).encode()


def duplicate_line(text: str, rng: Rng) -> bytes:
    lines = text.splitlines(keepends=True)
    index = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[index])
    return "".join(lines).encode()


def swap_lines(text: str, rng: Rng) -> bytes:
    """Two lines exchanged: often a use before its definition."""
    lines = text.splitlines(keepends=True)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines).encode()


def change_dim(text: str, rng: Rng) -> bytes:
    """One dimension of one type changed (`4x8` -> `4x9`, `0x8`)."""
    match = _pick(list(_DIMS.finditer(text)), rng)
    old = int(match.group()) if match else 1
    return _replace(text, match, _new_dim(old, rng)).encode()


def change_shape_everywhere(text: str, rng: Rng) -> bytes:
    """Every occurrence of one shape changed alike: often a program still valid."""
    shapes = sorted({m.group() for m in _SHAPE.finditer(text)})
    if not shapes:
        return text.encode()
    old = rng.choice(shapes)
    dims = old.split("x")
    position = rng.randrange(len(dims))
    dims[position] = _new_dim(int(dims[position]), rng)
    return re.sub(rf"(?<=<){old}(?=x[a-z])", "x".join(dims), text).encode()


def swap_uses(text: str, rng: Rng) -> bytes:
    """One use of a value replaced by another value (`%a` -> `%b`), or two swapped."""
    matches = list(_VALUE.finditer(text))
    names = sorted({m.group() for m in matches})
    if len(names) < 2:
        return text.encode()
    first = rng.choice(matches)
    other = rng.choice([name for name in names if name != first.group()])
    if rng.random() < 0.5:
        return _replace(text, first, other).encode()
    swapped = re.sub(
        rf"{re.escape(first.group())}\b|{re.escape(other)}\b",
        lambda m: other if m.group() == first.group() else first.group(),
        text,
    )
    return swapped.encode()


def change_op(text: str, rng: Rng) -> bytes:
    ops = sorted({m.group() for p in corpus() for m in _OP.finditer(p.text)})
    return _replace(text, _pick(list(_OP.finditer(text)), rng), rng.choice(ops)).encode()


def change_element_type(text: str, rng: Rng) -> bytes:
    new = rng.choice(["f16", "f32", "f64", "i1", "i8", "i32", "i64", "index", "bf16"])
    return _replace(text, _pick(list(_ELEMENT.finditer(text)), rng), new).encode()


def change_number(text: str, rng: Rng) -> bytes:
    new = rng.choice(["-1", "0", "1", "7", "99", "-100", "4294967296", str(1 << 63), "1.5"])
    return _replace(text, _pick(list(_NUMBER.finditer(text)), rng), new).encode()


def truncate(text: str, rng: Rng) -> bytes:
    return text[: rng.randrange(len(text) + 1)].encode()


def insert_garbage(text: str, rng: Rng) -> bytes:
    garbage = "".join(rng.choice("{}()<>[]%@:,=\"'#^!x-0123456789 \n\t") for _ in range(8))
    start = rng.randrange(len(text) + 1)
    return (text[:start] + garbage[: rng.randint(1, 8)] + text[start:]).encode()


def insert_bytes(text: str, rng: Rng) -> bytes:
    """Bytes that are not UTF-8 text, or a NUL, somewhere in the file."""
    data = text.encode()
    start = rng.randrange(len(data) + 1)
    junk = rng.choice([b"\xff", b"\xfe\xff", b"\xc3", b"\x00", b"\x80\x81", bytes(range(256))])
    return data[:start] + junk + data[start:]


def splice_line(text: str, rng: Rng) -> bytes:
    """A line of another corpus program inserted: foreign names and types."""
    donor = rng.choice(corpus()).text.splitlines(keepends=True)
    lines = text.splitlines(keepends=True)
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(donor))
    return "".join(lines).encode()


def empty(text: str, rng: Rng) -> bytes:
    return rng.choice([b"", b"\n", b"   \n\t", b"// only a comment\n"])


PROGRAM_MUTATORS: dict[str, TextMutator] = {
    f.__name__: f
    for f in (
        delete_span,
        delete_line,
        duplicate_line,
        swap_lines,
        change_dim,
        change_shape_everywhere,
        swap_uses,
        change_op,
        change_element_type,
        change_number,
        truncate,
        insert_garbage,
        insert_bytes,
        splice_line,
        empty,
    )
}

# ------------------------------------------------------------- feed mutators

Feeds = dict[str, Array]
FeedMutator = Callable[[Feeds, Rng], bytes | Feeds]
"""A feed mutator returns the arrays to save, or the file's bytes themselves."""

_DTYPES = ["float64", "float32", "float16", "int32", "int64", "int8", "bool", "complex64", ">f4"]


def _key(arrays: Feeds, rng: Rng) -> str | None:
    return rng.choice(sorted(arrays)) if arrays else None


def _npz_bytes(arrays: Feeds) -> bytes:
    stream = io.BytesIO()
    np.savez(stream, **arrays)  # pyright: ignore[reportArgumentType]
    return stream.getvalue()


def wrong_dtype(arrays: Feeds, rng: Rng) -> Feeds:
    key = _key(arrays, rng)
    if key is not None:
        arrays[key] = arrays[key].astype(rng.choice(_DTYPES))
    return arrays


def string_array(arrays: Feeds, rng: Rng) -> Feeds:
    key = _key(arrays, rng) or "x"
    arrays[key] = np.array(["a", "bc"])
    return arrays


def wrong_shape(arrays: Feeds, rng: Rng) -> Feeds:
    key = _key(arrays, rng)
    if key is not None:
        value = arrays[key]
        arrays[key] = rng.choice(
            [value.T, value[..., None], value.reshape(-1), np.zeros((0,), value.dtype), value[None]]
        )
    return arrays


def fortran_order(arrays: Feeds, rng: Rng) -> Feeds:
    """Valid arrays saved in Fortran order: loaded as non-C-contiguous arrays."""
    return {name: np.asfortranarray(value) for name, value in arrays.items()}


def missing_array(arrays: Feeds, rng: Rng) -> Feeds:
    key = _key(arrays, rng)
    if key is not None:
        del arrays[key]
    return arrays


def extra_array(arrays: Feeds, rng: Rng) -> Feeds:
    arrays[rng.choice(["extra", "arg99", "x", "arg0", "out0"])] = np.zeros(3, np.float32)
    return arrays


def positional_names(arrays: Feeds, rng: Rng) -> Feeds:
    """Arrays named by position (`arg0`); sometimes one both by name and position."""
    renamed = {f"arg{i}": value for i, value in enumerate(arrays.values())}
    if arrays and rng.random() < 0.5:
        renamed.update(dict([next(iter(arrays.items()))]))
    return renamed


def special_values(arrays: Feeds, rng: Rng) -> Feeds:
    """NaN, infinities and extremes where the dtype has them: valid, must run."""
    for value in arrays.values():
        if value.size and value.dtype.kind == "f":
            value.reshape(-1)[0] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
        elif value.size and value.dtype.kind == "i":
            value.reshape(-1)[0] = np.iinfo(value.dtype).min
    return arrays


def not_a_zip(arrays: Feeds, rng: Rng) -> bytes:
    return rng.choice([b"not an npz\n", b"\x93NUMPY\x01\x00garbage", b"PK\x03\x04junk"])


def empty_file(arrays: Feeds, rng: Rng) -> bytes:
    return b""


def truncated_npz(arrays: Feeds, rng: Rng) -> bytes:
    data = _npz_bytes(arrays)
    return data[: rng.randrange(len(data) + 1)]


def corrupted_npz(arrays: Feeds, rng: Rng) -> bytes:
    data = bytearray(_npz_bytes(arrays))
    for _ in range(rng.randint(1, 4)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


FEED_MUTATORS: dict[str, FeedMutator] = {
    f.__name__: f
    for f in (
        wrong_dtype,
        string_array,
        wrong_shape,
        fortran_order,
        missing_array,
        extra_array,
        positional_names,
        special_values,
        not_a_zip,
        empty_file,
        truncated_npz,
        corrupted_npz,
    )
}

# ------------------------------------------------------------------ commands

TWO_CPUS = ("--devices", "cpu:0,cpu:1")
PASSES = [
    "df-optimize",
    "df-fuse",
    "canonicalize",
    "df-autodiff",
    "cse,df-prune",
    "dce",
    "df-recompute",
    "df-place-devices{devices=cpu:0,cpu:1},df-partition",
    "df-inline,df-prune,df-fuse,df-bufferize,df-plan-buffers,df-lower-host",
]

COMMANDS: dict[str, tuple[str, ...]] = {
    "run-interpret": ("run", "--interpret"),
    "run-interpret-2cpu": ("run", "--interpret", *TWO_CPUS),
    "run-compiled": ("run",),
    "run-compiled-2cpu": ("run", *TWO_CPUS),
    "run-optimized": ("run", "--interpret", "-p", "df-optimize"),
    "opt": ("opt",),
    "opt-passes": ("opt", "-p"),
    "plan": ("plan",),
    "plan-2cpu": ("plan", *TWO_CPUS),
}
"""Each command's arguments before the file (`opt-passes` takes a pass from PASSES)."""

COMPILED = ("run-compiled", "run-compiled-2cpu")
COMMAND_WEIGHTS = {"run-compiled": 1, "run-compiled-2cpu": 1}
"""Compiled runs are drawn less often (a valid mutant compiles for a second or two)."""


@dataclass(frozen=True)
class Case:
    """One fuzz case: a seed, the program, what mutates it, the command."""

    seed: int
    program: Program
    mutator: str
    command: str

    @property
    def label(self) -> str:
        return f"seed {self.seed}: {self.mutator} of {self.program.name} into {self.command}"


def make_case(seed: int, compiled: bool = True) -> Case:
    """The case of `seed`, drawn deterministically (`compiled=False`: no compiled run)."""
    rng = Rng(seed)
    program = rng.choice(corpus())
    commands = [c for c in COMMANDS if compiled or c not in COMPILED]
    weights = [COMMAND_WEIGHTS.get(c, 3) for c in commands]
    command = rng.choices(commands, weights)[0]
    runs = command.startswith("run")
    if runs and program.feeds is not None and rng.random() < 0.4:
        mutator = rng.choice(sorted(FEED_MUTATORS))
    else:
        mutator = rng.choice(sorted(PROGRAM_MUTATORS))
    return Case(seed, program, mutator, command)


def write_case(case: Case, folder: Path) -> list[str]:
    """Write the case's input files into `folder`; return the `dflow` argv."""
    rng = Rng(case.seed * 7919 + 1)
    program_path = folder / "program.mlir"
    text = case.program.text
    if case.mutator in PROGRAM_MUTATORS:
        program_path.write_bytes(PROGRAM_MUTATORS[case.mutator](text, rng))
    else:
        program_path.write_text(text)
    argv = [*COMMANDS[case.command]]
    if case.command == "opt-passes":
        argv.append(rng.choice(PASSES))
    argv.append(str(program_path))
    if case.command.startswith(("run", "plan")) and case.program.entry != "main":
        argv += ["--entry", case.program.entry]
    if case.command.startswith("run"):
        argv += [*RECV_TIMEOUT, *_feed_arguments(case, folder, rng)]
    return argv


def _feed_arguments(case: Case, folder: Path, rng: Rng) -> list[str]:
    """`--inputs` (and sometimes `--output`) for a run, with the feed file written."""
    arguments: list[str] = []
    data = _feed_file(case, rng)
    if data is not None:
        (folder / "inputs.npz").write_bytes(data)
        arguments += ["--inputs", str(folder / "inputs.npz")]
    if rng.random() < 0.2:
        arguments += ["--output", str(folder / "outputs.npz")]
    return arguments


def _feed_file(case: Case, rng: Rng) -> bytes | None:
    """The bytes of the case's `--inputs` file; None to run on random inputs."""
    mutator = FEED_MUTATORS.get(case.mutator)
    if case.program.feeds is None or (mutator is None and rng.random() < 0.5):
        return None
    arrays = {name: value.copy() for name, value in case.program.feeds.items()}
    mutated = arrays if mutator is None else mutator(arrays, rng)
    return mutated if isinstance(mutated, bytes) else _npz_bytes(mutated)


# ------------------------------------------------------------- the property


@dataclass(frozen=True)
class Outcome:
    """What one run of `dflow` did."""

    status: int | None  # None: it did not finish in time
    stdout: str
    stderr: str
    seconds: float


def problems(argv: Sequence[str], outcome: Outcome) -> list[str]:
    """What is wrong with `outcome`; empty when the property holds."""
    found: list[str] = []
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    if outcome.status is None:
        found.append(f"hang: no exit within {CASE_TIMEOUT_S:g} s")
    if "Traceback (most recent call last)" in outcome.stderr:
        found.append("a Python traceback in stderr")
    if "internal error" in outcome.stderr:
        found.append("an internal error")
    if len(lines) > MAX_STDERR_LINES:
        found.append(f"{len(lines)} lines of stderr")
    if outcome.status not in (None, 0, 1):
        found.append(f"exit status {outcome.status}")
    if outcome.status == 1 and not any(": error: " in line for line in lines):
        found.append("exit 1 without an error line")
    if outcome.status == 0:
        found += _success_problems(argv, outcome, lines)
    return found


def _success_problems(argv: Sequence[str], outcome: Outcome, lines: list[str]) -> list[str]:
    found: list[str] = []
    if any(" error" in line for line in lines):
        found.append("an error line with exit status 0")
    output = "--output" in argv
    if argv[0] != "run" and not outcome.stdout.strip():
        found.append("exit status 0 and nothing on stdout")
    if argv[0] == "run" and not output and not re.match(r"(?s)(out0: .*)?$", outcome.stdout):
        found.append("exit status 0 and no results on stdout")
    return found


def describe(argv: Sequence[str], outcome: Outcome) -> str:
    """A failing case's evidence: the command, its exit and the start of stderr."""
    tail = outcome.stderr.strip()[-1500:]
    return f"dflow {' '.join(argv)} -> exit {outcome.status}\n{tail}"


# ------------------------------------------------------- running in-process


class CaseTimeout(BaseException):
    """Raised in the main thread by the case's alarm; a BaseException so that
    `dflow.driver.frontdoors.cli.main`'s own `except Exception` does not take it for a bug."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise CaseTimeout


def run_in_process(argv: Sequence[str], timeout: float = CASE_TIMEOUT_S) -> Outcome:
    """`dflow.driver.frontdoors.cli.main(argv)` with its streams captured and a time limit (SIGALRM,
    so only from the main thread)."""
    from dflow.driver.frontdoors.cli import main  # noqa: PLC0415 (the fuzzer's corpus needs no command line)

    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    status: int | None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = _exit_status(main, list(argv))
    except CaseTimeout:
        status = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(status, out.getvalue(), err.getvalue(), time.perf_counter() - start)


class FuzzCase(Protocol):
    """What a fuzzer's case shows of itself: `fuzz_cli.Case`, `fuzz_onnx.Case`."""

    @property
    def label(self) -> str: ...


def run_cases(
    seeds: range,
    folder: Path,
    make_case: Callable[[int], Any],
    write_case: Callable[[Any, Path], list[str]],
) -> list[str]:
    """Run the cases of `seeds` in-process (each written into its own folder under
    `folder`); the evidence of each case that breaks the property."""
    failures: list[str] = []
    for seed in seeds:
        case: FuzzCase = make_case(seed)
        case_folder = folder / f"case-{seed}"
        case_folder.mkdir()
        argv = write_case(case, case_folder)
        outcome = run_in_process(argv)
        found = problems(argv, outcome)
        if found:
            failures.append(f"{case.label}: {'; '.join(found)}\n{describe(argv, outcome)}")
    return failures


def _exit_status(main: Callable[[list[str]], int], argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    except Exception:  # a traceback main let out: report it as the process would show it
        print(traceback.format_exc(), file=sys.stderr)
        return 1


# ---------------------------------------------------------- option mutations

OPTION_MUTATIONS: dict[str, tuple[str, ...]] = {
    "none": (),
    "devices-empty": ("--devices", ""),
    "devices-comma": ("--devices", ","),
    "devices-trailing-comma": ("--devices", "cpu:0,"),
    "devices-spaces": ("--devices", " cpu:0 , cpu:1 "),
    "devices-one": ("--devices", "cpu:0"),
    "devices-second": ("--devices", "cpu:1"),
    "devices-two": TWO_CPUS,
    "devices-reversed": ("--devices", "cpu:1,cpu:0"),
    "devices-twice": ("--devices", "cpu:0,cpu:0"),
    "devices-bad": ("--devices", "tpu:0"),
    "devices-rank": ("--devices", "cpu:0@1"),
    "devices-gpu": ("--devices", "gpu:0"),
    "entry-missing": ("--entry", "nowhere"),
    "entry-main": ("--entry", "main"),
    "seed": ("--seed", "7"),
    "shape": ("--shape", "x=4,8"),
    "shape-twice": ("--shape", "x=1", "--shape", "x=2"),
    "passes": ("-p", "df-optimize"),
    "passes-upstream": ("-p", "canonicalize,cse"),
    "passes-unknown": ("-p", "df-nothing"),
    "passes-bad-option": ("-p", "df-recompute{mode=fastest}"),
    "passes-place": ("-p", "df-place-devices{devices=cpu:0,cpu:1}"),
    "trace": ("--trace", "{folder}/run.json"),
    "trace-nowhere": ("--trace", "{folder}/no/such/run.json"),
    "trace-interpret": ("--interpret", "--trace", "{folder}/run.json"),
    "inputs-missing": ("--inputs", "{folder}/none.npz"),
    "output": ("--output", "{folder}/out.npz"),
    "output-nowhere": ("--output", "{folder}/no/such/out.npz"),
    "print": ("--print",),
    "parallel": ("--parallel",),
    "timeout-zero": ("--timeout", "0"),
    "interpret": ("--interpret",),
}
"""Options a `dflow run` may be given, right or wrong, appended to a program's own
(`tests/test_run_paths.py` runs each from the cache and the whole way); `{folder}` is
the case's folder."""


def option_case(seed: int, programs: Sequence[str]) -> tuple[str, str, tuple[str, ...]]:
    """The program (one of `programs`), the mutation's name and up to two mutations'
    options of `seed`, drawn deterministically."""
    rng = Rng(seed)
    program = rng.choice(sorted(programs))
    names = rng.sample(sorted(OPTION_MUTATIONS), rng.choice((1, 1, 2)))
    options = tuple(option for name in names for option in OPTION_MUTATIONS[name])
    return program, "+".join(names), options
