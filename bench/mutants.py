"""Mutation run: does the test suite notice when the compiler's source is wrong?

    python bench/mutants.py [--only dflow/dialects|dflow/transforms|...|PATH] [--limit N]
                            [--seed S] [--timeout SECONDS] [--list]

Each mutant is one small, targeted change to a module of `dflow/dialects/`,
`interpreters/`, `analysis/`, `passes/`, `transforms/` or `lowering/`: a comparison swapped
(`<` and `<=`, `==` and `!=`), `and` and `or` swapped, `True` and `False` swapped,
`not` dropped, `+` and `-` swapped, a `+ 1` or `- 1` dropped, a function swapped
for its twin (`maximum` for `fmax`, `max` for `min`, `all` for `any`, ...), or a
`raise` deleted. The mutants are applied one at a
time to a copy of the committed tree (`git archive HEAD` in a temporary folder: the
checkout itself is never touched), and the fast tests mapped to the mutated module
(`TESTS`: pytest files and lit files) run there, stopping at the first failure and
bounded by `--timeout`. A mutant is killed when they fail (or time out) and
survives when they pass; a survivor's diff is printed. The last line is the summary
`N killed, M survived`.

Before the first mutant of a module, its tests run once unmutated: a module whose
tests fail as they are is reported and its mutants skipped (a mutant could not be
judged there). Mutants that do not compile are never run. `--limit` takes a seeded
random sample (`--seed`) of the mutants; `--list` prints them without running any.
Tests run one at a time (the suite shares the machine): a full run takes hours, a
sample of 40 about 15 minutes.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (
    "dflow/dialects",
    "dflow/interpreters",
    "dflow/analysis",
    "dflow/passes",
    "dflow/transforms",
    "dflow/lowering",
)

_LIT_DF = "tests/filecheck/dialects/df"
_VERIFIERS = ("tests/test_shapes.py", "tests/test_semantics.py", _LIT_DF)
_LOWERED = (
    "tests/filecheck/lowering",
    "tests/test_compiled_ops.py -k unary_ops or binary_ops or reductions",
)

TESTS: dict[str, tuple[str, ...]] = {
    "dflow/dialects/df/shapes.py": ("tests/test_shapes.py", _LIT_DF),
    "dflow/dialects/df/base.py": _VERIFIERS,
    "dflow/dialects/df/types.py": _VERIFIERS,
    "dflow/dialects/df/elementwise.py": _VERIFIERS,
    "dflow/dialects/df/nn.py": _VERIFIERS,
    "dflow/dialects/df/shape_ops.py": _VERIFIERS,
    "dflow/dialects/df/constant.py": _VERIFIERS,
    "dflow/dialects/df/semantics.py": ("tests/test_semantics.py", "tests/test_folding.py"),
    "dflow/dialects/df/arrays.py": ("tests/test_semantics.py", "tests/test_folding.py"),
    "dflow/dialects/df/reference.py": ("tests/test_semantics.py",),
    "dflow/dialects/df/traits.py": ("tests/test_memory_plan.py", "tests/test_fuse.py"),
    "dflow/dialects/df/folding.py": ("tests/test_folding.py", "tests/filecheck/transforms"),
    "dflow/dialects/df/fusion.py": ("tests/test_fuse.py", _LIT_DF),
    "dflow/dialects/df/communication.py": (_LIT_DF, "tests/test_partition.py"),
    "dflow/dialects/df/annotations.py": (_LIT_DF,),
    "dflow/dialects/devices.py": ("tests/test_placement.py", _LIT_DF),
    "dflow/dialects/dfrt.py": ("tests/test_dfrt.py", "tests/filecheck/dialects/dfrt"),
    "dflow/interpreters": ("tests/test_semantics.py", "tests/test_partition.py"),
    "dflow/analysis/cost_model.py": ("tests/test_placement.py",),
    "dflow/analysis": ("tests/test_memory_plan.py",),
    "dflow/analysis/memory/function_schedule.py": (
        "tests/test_memory_plan.py",
        "tests/filecheck/lowering",
    ),
    "dflow/passes": ("tests/filecheck/transforms",),
    "dflow/transforms/canonicalization_patterns": (
        "tests/filecheck/transforms/canonicalize.mlir",
        "tests/test_transform_differential.py",
    ),
    "dflow/transforms/autodiff": ("tests/test_autodiff.py", "tests/filecheck/transforms"),
    "dflow/transforms/placement": ("tests/test_placement.py", "tests/filecheck/transforms"),
    "dflow/transforms/recompute": ("tests/test_recompute.py", "tests/filecheck/transforms"),
    "dflow/transforms/fold_constants.py": (
        "tests/test_folding.py",
        "tests/filecheck/transforms",
    ),
    "dflow/transforms": ("tests/filecheck/transforms", "tests/test_transform_differential.py"),
    "dflow/lowering/plan_buffers.py": ("tests/test_memory_plan.py", "tests/filecheck/lowering"),
    "dflow/lowering/partition.py": ("tests/test_partition.py", "tests/filecheck/lowering"),
    "dflow/lowering/fuse.py": ("tests/test_fuse.py", "tests/filecheck/lowering"),
    "dflow/lowering/inline.py": ("tests/filecheck/lowering",),
    "dflow/lowering": _LOWERED,
}
"""Source path prefix -> the tests that judge it (the longest prefix wins): pytest
files (`FILE -k EXPRESSION` for a selection), lit files or folders."""

COMPARISONS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
NAMES = {
    "and": "or",
    "or": "and",
    "True": "False",
    "False": "True",
    "maximum": "fmax",
    "minimum": "fmin",
    "max": "min",
    "min": "max",
    "all": "any",
    "any": "all",
    "MaximumfOp": "MinimumfOp",
    "MaxSIOp": "MinSIOp",
}
SIGNS: dict[type[ast.operator], tuple[str, str]] = {ast.Add: ("+", "-"), ast.Sub: ("-", "+")}


@dataclass(frozen=True)
class Mutant:
    """Replace `text[start:end]` of `path` by `new`; `line` is where it starts."""

    path: str
    line: int
    start: int
    end: int
    new: str
    what: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.new + text[self.end :]

    def diff(self, text: str) -> str:
        lines = difflib.unified_diff(
            text.splitlines(keepends=True),
            self.apply(text).splitlines(keepends=True),
            f"a/{self.path}",
            f"b/{self.path}",
            n=0,
        )
        return "".join(lines)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


# ----------------------------------------------------------------------------- mutants


class Offsets:
    """Absolute character offsets of (line, column) positions of one text."""

    def __init__(self, text: str):
        self.starts = [0]
        for line in text.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def __call__(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column


def token_mutants(path: str, text: str, at: Offsets) -> Iterator[Mutant]:
    """Comparison swaps, swapped names, and `not` dropped."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        (line, column), (end_line, end_column) = token.start, token.end
        start, end = at(line, column), at(end_line, end_column)
        old = token.string
        if token.type == tokenize.OP and old in COMPARISONS:
            yield Mutant(path, line, start, end, COMPARISONS[old], f"{old} -> {COMPARISONS[old]}")
        elif token.type == tokenize.NAME and old in NAMES and not _is_strict(text, start):
            yield Mutant(path, line, start, end, NAMES[old], f"{old} -> {NAMES[old]}")
        elif token.type == tokenize.NAME and old == "not" and text[end : end + 1] == " ":
            yield Mutant(path, line, start, end + 1, "", "not dropped")


def _is_strict(text: str, start: int) -> bool:
    """Whether a name is the value of `strict=`: `zip(..., strict=False)` computes the
    same as `strict=True` wherever the lengths agree, so the mutant is equivalent."""
    return text[max(start - 7, 0) : start] == "strict="


def _operator_offset(text: str, node: ast.BinOp, at: Offsets, symbol: str) -> int:
    """Where the operator of `node` sits: the first `symbol` after its left operand."""
    assert node.left.end_lineno is not None and node.left.end_col_offset is not None
    return text.index(symbol, at(node.left.end_lineno, node.left.end_col_offset))


def arithmetic_mutants(path: str, text: str, at: Offsets, tree: ast.AST) -> Iterator[Mutant]:
    """`+` and `-` swapped, and `x + 1` / `x - 1` reduced to `x`."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.BinOp) or type(node.op) not in SIGNS:
            continue
        old, new = SIGNS[type(node.op)]
        offset = _operator_offset(text, node, at, old)
        yield Mutant(path, node.lineno, offset, offset + 1, new, f"{old} -> {new}")
        if isinstance(node.right, ast.Constant) and node.right.value == 1:
            left = ast.get_source_segment(text, node.left)
            assert left is not None and node.end_lineno is not None
            assert node.end_col_offset is not None
            start, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            yield Mutant(path, node.lineno, start, end, left, f"{old} 1 dropped")


def raise_mutants(path: str, at: Offsets, tree: ast.AST) -> Iterator[Mutant]:
    """Each `raise` replaced by `pass` (an error check that no longer fires)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            assert node.end_lineno is not None and node.end_col_offset is not None
            start, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            yield Mutant(path, node.lineno, start, end, "pass", "raise deleted")


def _compiles(text: str) -> bool:
    try:
        compile(text, "<mutant>", "exec")
    except SyntaxError:
        return False
    return True


def mutants_of(path: str, text: str) -> list[Mutant]:
    """Every mutant of one module that still compiles, in source order."""
    at, tree = Offsets(text), ast.parse(text)
    found = [
        *token_mutants(path, text, at),
        *arithmetic_mutants(path, text, at, tree),
        *raise_mutants(path, at, tree),
    ]
    return sorted((m for m in found if _compiles(m.apply(text))), key=lambda m: m.start)


def sources(only: str | None) -> list[str]:
    """The modules to mutate: every `.py` under SOURCES, or those under `only`."""
    paths = sorted(
        str(p.relative_to(ROOT)) for root in SOURCES for p in (ROOT / root).rglob("*.py")
    )
    return [p for p in paths if only is None or p.startswith(only)]


def tests_for(path: str) -> tuple[str, ...]:
    """The tests of the longest `TESTS` prefix of `path`; empty when none."""
    prefixes = [p for p in TESTS if path.startswith(p)]
    return TESTS[max(prefixes, key=len)] if prefixes else ()


# ----------------------------------------------------------------------------- running


def commands(tests: Sequence[str]) -> list[list[str]]:
    """One pytest command for the whole files, one per selection, one lit command;
    pytest stops at the first failure."""
    pytest = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    files = [t for t in tests if t.endswith(".py")]
    selections = [t.split(" -k ", 1) for t in tests if " -k " in t]
    lit = [t for t in tests if not t.endswith(".py") and " -k " not in t]
    runs = [[*pytest, *files]] if files else []
    runs += [[*pytest, file, "-k", expression] for file, expression in selections]
    if lit:
        runs.append([str(Path(sys.executable).parent / "lit"), "-q", "--max-failures=1", *lit])
    return runs


def run_tests(tree: Path, tests: Sequence[str], timeout: float) -> str:
    """ "passed", "failed" or "timeout" for `tests` run in `tree`."""
    env = os.environ | {
        "PYTHONPATH": str(tree),
        "PYTHONDONTWRITEBYTECODE": "1",  # a mutant of the same size must not reuse a .pyc
        "NUMBA_CACHE_DIR": str(tree / ".numba_cache"),
    }
    deadline = time.monotonic() + timeout
    for command in commands(tests):
        process = subprocess.Popen(
            command,
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return "timeout"
        if code != 0:
            return "failed"
    return "passed"


def copy_tree() -> Path:
    """The committed tree (HEAD) in a new temporary folder."""
    tree = Path(tempfile.mkdtemp(prefix="dflow-mutants-"))
    archive = subprocess.run(
        ["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


@dataclass
class Tally:
    killed: int = 0
    survived: int = 0
    timeouts: int = 0
    skipped: int = 0


class Runner:
    """Applies mutants in a copy of the tree and judges each with its module's tests."""

    def __init__(self, tree: Path, timeout: float):
        self.tree, self.timeout = tree, timeout
        self.baseline: dict[tuple[str, ...], bool] = {}
        self.tally = Tally()
        self.survivors: list[Mutant] = []

    def healthy(self, tests: tuple[str, ...]) -> bool:
        """Whether `tests` pass on the unmutated tree (run once per set of tests)."""
        if tests not in self.baseline:
            self.baseline[tests] = run_tests(self.tree, tests, self.timeout) == "passed"
            if not self.baseline[tests]:
                print(f"SKIP: {' '.join(tests)} fail without a mutant", flush=True)
        return self.baseline[tests]

    def judge(self, mutant: Mutant) -> None:
        tests = tests_for(mutant.path)
        if not tests or not self.healthy(tests):
            self.tally.skipped += 1
            return
        file = self.tree / mutant.path
        original = file.read_text()
        file.write_text(mutant.apply(original))
        began = time.monotonic()
        try:
            outcome = run_tests(self.tree, tests, self.timeout)
        finally:
            file.write_text(original)
        self.record(mutant, outcome, time.monotonic() - began, original)

    def record(self, mutant: Mutant, outcome: str, seconds: float, original: str) -> None:
        if outcome == "passed":
            self.tally.survived += 1
            self.survivors.append(mutant)
            print(f"SURVIVED {mutant} ({seconds:.0f} s)\n{mutant.diff(original)}", flush=True)
            return
        self.tally.killed += 1
        self.tally.timeouts += outcome == "timeout"
        print(f"killed   {mutant} ({outcome}, {seconds:.0f} s)", flush=True)


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Mutation run over dialects/, transforms/, lowering/."
    )
    parser.add_argument(
        "--only", help="a path under dflow/ (dflow/dialects, dflow/lowering/fuse.py)"
    )
    parser.add_argument("--limit", type=int, help="run a random sample of this many mutants")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per mutant")
    parser.add_argument("--list", action="store_true", help="print the mutants, run none")
    return parser.parse_args(argv)


def select(only: str | None, limit: int | None, seed: int) -> list[Mutant]:
    everything = [m for p in sources(only) for m in mutants_of(p, (ROOT / p).read_text())]
    if limit is not None and limit < len(everything):
        everything = sorted(random.Random(seed).sample(everything, limit), key=str)
    return everything


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    chosen = select(arguments.only, arguments.limit, arguments.seed)
    if arguments.list:
        print("\n".join(str(m) for m in chosen))
        return 0
    tree = copy_tree()
    print(f"{len(chosen)} mutants, tests run in {tree}", flush=True)
    runner = Runner(tree, arguments.timeout)
    try:
        for mutant in chosen:
            runner.judge(mutant)
    finally:
        shutil.rmtree(tree)
    tally = runner.tally
    if runner.survivors:
        print("\nsurvivors:", *runner.survivors, sep="\n")
    print(
        f"{tally.killed} killed, {tally.survived} survived "
        f"({tally.timeouts} of the killed by timeout, {tally.skipped} skipped)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
