"""CPU devices in one process and BLAS's threads: towers on two devices against one.

    python bench/blas_threads.py [--runs 200] [--rounds 7] [--batches 64 256]

`examples/towers.mlir` (two matmul-relu-matmul towers over one input, summed; the cost
placement puts one tower on each device) compiled for `cpu:0,cpu:1` and for `cpu:0`
alone, each run `--runs` times a round, interleaved round by round, in three ways:

- `two devices, shared`: dflow as it runs by default: while both device threads run,
  BLAS gets half the cores each (`dflow/runtime/blas_threads.py`);
- `two devices, as before`: the share switched off (`SHARE.enabled = False`), as dflow
  ran before it: each device's OpenBLAS call starts a thread per core;
- `one device`: the whole program on `cpu:0`, BLAS with every core.

Printed: the best and the median round's microseconds per run of each, each against
`one device`'s. This bench is about cores contended for, so it runs on
all of the machine's cores (not under `taskset -c 0`); OPENBLAS_NUM_THREADS is left
unset, as a user's would be.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORK = Path(tempfile.mkdtemp(prefix="dflow-bench-blas-"))
os.environ["DFLOW_CACHE_DIR"] = str(WORK / "cache")  # set before numba is imported
os.environ["NUMBA_CACHE_DIR"] = str(WORK / "numba")
os.environ.pop("OPENBLAS_NUM_THREADS", None)

import numpy as np  # noqa: E402

import dflow  # noqa: E402
from dflow.runtime.blas_threads import SHARE, usable_cores  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def towers(batch: int) -> str:
    """The towers example at `batch` rows."""
    text = (ROOT / "examples" / "towers.mlir").read_text()
    return text.replace("64x256", f"{batch}x256").replace("64x64", f"{batch}x64")


def timed(call: Callable[[], Any], runs: int) -> float:
    """Microseconds per call over `runs` calls."""
    start = time.perf_counter()
    for _ in range(runs):
        call()
    return (time.perf_counter() - start) / runs * 1e6


def measure(batch: int, runs: int, rounds: int) -> dict[str, list[float]]:
    """Each way's microseconds per run, one figure per round, interleaved."""
    text = towers(batch)
    two, one = dflow.compile(text, devices="cpu:0,cpu:1"), dflow.compile(text)
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(a.shape).astype(a.dtype) for a in one.signature().arguments]
    np.testing.assert_allclose(two(*feeds), one(*feeds), rtol=1e-4, atol=1e-3)

    def unshared() -> Any:
        SHARE.enabled = False
        try:
            return two(*feeds)
        finally:
            SHARE.enabled = True

    ways: dict[str, Callable[[], Any]] = {
        "two devices, shared": lambda: two(*feeds),
        "two devices, as before": unshared,
        "one device": lambda: one(*feeds),
    }
    for call in ways.values():  # warm: compiled, arenas made
        timed(call, 10)
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, call in ways.items():
            times[name].append(timed(call, runs))
    return times


def report(batch: int, times: dict[str, list[float]]) -> None:
    """Each way's best and median round, and both against one device's: contention
    shows in the median (a round with the threads well placed can still be quick)."""
    base = times["one device"]
    best_base, median_base = min(base), statistics.median(base)
    print(f"towers, batch {batch}: us per run, best and median of {len(base)} rounds")
    for name, figures in times.items():
        best, median = min(figures), statistics.median(figures)
        print(
            f"  {name:<24} best {best:8.1f} ({best / best_base:5.2f}x one device)  "
            f"median {median:8.1f} ({median / median_base:5.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs per round")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--batches", type=int, nargs="+", default=[64, 256])
    args = parser.parse_args()
    print(f"{usable_cores()} usable cores; numpy {np.__version__}")
    for batch in args.batches:
        report(batch, measure(batch, args.runs, args.rounds))


if __name__ == "__main__":
    main()
