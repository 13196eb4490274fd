"""Fuzz the `dflow` command line: `python bench/fuzz.py --count N --seed S [--onnx]`.

Runs the cases of seeds S .. S+N-1 of `tests/support/fuzz_cli.py` (mutated programs and
feed files into `dflow run`, `opt` and `plan`), or with `--onnx` of
`tests/support/fuzz_onnx.py` (mutated ONNX models into `dflow run`, `plan` and `import`),
and checks the property of
`fuzz_cli.problems`: no traceback, no internal error, no hang, a short stderr, a
non-zero exit for every failure. Each case is its own process, killed past the
time limit: a child forked from this one after it has imported dflow (a fresh
`python -m dflow` spends a second importing), whose standard output and error are
files and whose exit status is `dflow.driver.frontdoors.cli.main`'s. Each failing case's folder
(its program, feed file, `command.sh` and stderr) is kept under `--failures`;
the last line is `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

import fuzz_cli  # noqa: E402 (the harness lives with the tests)
import fuzz_onnx  # noqa: E402

from dflow.driver.frontdoors.cli import main as dflow_main  # noqa: E402


@dataclass
class Running:
    """A case's child process."""

    case: fuzz_cli.Case | fuzz_onnx.Case
    argv: list[str]
    folder: Path
    started: float


def start(seed: int, work: Path, onnx: bool) -> tuple[int, Running]:
    """Write the case of `seed` into its folder and fork a child that runs it."""
    folder = work / f"case-{seed}"
    folder.mkdir(parents=True)
    case: fuzz_cli.Case | fuzz_onnx.Case
    if onnx:
        case = fuzz_onnx.make_case(seed)
        argv = fuzz_onnx.write_case(case, folder)
    else:
        case = fuzz_cli.make_case(seed)
        argv = fuzz_cli.write_case(case, folder)
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        _child(argv, folder)
    return pid, Running(case, argv, folder, time.perf_counter())


def _child(argv: list[str], folder: Path) -> None:
    """Run `dflow argv` with stdout and stderr going to files; never returns."""
    status = 1
    try:
        os.setpgid(0, 0)
        for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
            os.dup2(os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 (the process's own stream)
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        status = dflow_main(argv)
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # as the interpreter would end: the traceback, status 1
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def finish(running: Running, status: int | None) -> list[str]:
    """The case's problems (a passing case's folder is removed)."""
    outcome = fuzz_cli.Outcome(
        status,
        _read(running.folder / "stdout.txt"),
        _read(running.folder / "stderr.txt"),
        time.perf_counter() - running.started,
    )
    found = fuzz_cli.problems(running.argv, outcome)
    if not found:
        shutil.rmtree(running.folder)
        return found
    command = shlex.join([sys.executable, "-m", "dflow", *running.argv])
    (running.folder / "command.sh").write_text(f"# {running.case.label}\ncd {ROOT}\n{command}\n")
    print(f"FAIL {running.case.label}: {'; '.join(found)}", flush=True)
    print("  " + fuzz_cli.describe(running.argv, outcome).replace("\n", "\n  "), flush=True)
    return found


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def run_all(seeds: range, work: Path, jobs: int, timeout: float, onnx: bool) -> int:
    """Run every case, `jobs` at a time; the number that failed."""
    pending: Iterator[int] = iter(seeds)
    running: dict[int, Running] = {}
    failed = 0
    while True:
        while len(running) < jobs and (seed := next(pending, None)) is not None:
            pid, case = start(seed, work, onnx)
            running[pid] = case
        if not running:
            return failed
        for pid, status in _reap(running, timeout):
            failed += bool(finish(running.pop(pid), status))


def _reap(running: dict[int, Running], timeout: float) -> list[tuple[int, int | None]]:
    """Children that ended (with their exit status) or ran out of time (None, killed)."""
    time.sleep(0.01)
    ended: list[tuple[int, int | None]] = []
    for pid, case in running.items():
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            ended.append((pid, os.waitstatus_to_exitcode(wait_status)))
        elif time.perf_counter() - case.started > timeout:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            ended.append((pid, None))
    return ended


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="how many cases")
    parser.add_argument("--seed", type=int, default=0, help="the first case's seed")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--onnx", action="store_true", help="mutated ONNX models")
    parser.add_argument(
        "--timeout", type=float, default=fuzz_cli.CASE_TIMEOUT_S, help="seconds per case"
    )
    parser.add_argument(
        "--failures",
        type=Path,
        default=Path(tempfile.gettempdir()) / "dflow-fuzz",
        help="where failing cases are kept",
    )
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    args.failures.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"seed{args.seed}-", dir=args.failures))
    os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    os.environ["DFLOW_CACHE_DIR"] = str(work / "dflow-cache")
    (fuzz_onnx if args.onnx else fuzz_cli).corpus()  # built once, before the first fork
    seeds = range(args.seed, args.seed + args.count)
    failed = run_all(seeds, work, args.jobs, args.timeout, args.onnx)
    shutil.rmtree(work / "dflow-cache", ignore_errors=True)
    if failed:
        print(f"failing cases kept in {work}")
    else:
        shutil.rmtree(work)
    print(f"{args.count - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
