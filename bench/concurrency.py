"""Callers in several threads: a lock around each run against the context pool.

    python bench/concurrency.py [--threads 4] [--calls 50] [--rounds 3]

A loaded program keeps its arenas between runs, so concurrent runs must not share
one. Two ways: one lock (runs one at a time, one arena per device) or a pool (each
concurrent run takes its own set of arenas; `runtime/program.py`). Both are timed in
interleaved rounds, best of the rounds, on two programs: three 512x512 matrix
products (NumPy's OpenBLAS) and a chain of elementwise ops on 1M floats (dflow's own
kernels), on one device and on two. The pool wins where kernels run at once (they
release the GIL) and costs an arena per concurrent call; OpenBLAS's own threads
compete with the callers' threads, so the figures depend on `OPENBLAS_NUM_THREADS`,
printed as the environment has it.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dflow.dialects.devices import DeviceList
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.frontend import Graph
from dflow.runtime import LoadedProgram, load_program

SIZE = 512
ELEMENTS = 1 << 20


def products() -> tuple[Graph, list[Any]]:
    g = Graph("main")
    x, w = g.input("x", (SIZE, SIZE)), g.input("w", (SIZE, SIZE))
    g.output((((x @ w).relu() @ w).tanh() @ w) + 1.0)
    rng = np.random.default_rng(0)
    return g, [rng.standard_normal((SIZE, SIZE), dtype=np.float32) / 8 for _ in range(2)]


def elementwise() -> tuple[Graph, list[Any]]:
    g = Graph("main")
    y = x = g.input("x", (ELEMENTS,))
    for _ in range(4):
        y = (y * 1.0001 + 0.5).relu() - 0.25
    g.output(y + x)
    return g, [np.random.default_rng(0).standard_normal(ELEMENTS, dtype=np.float32)]


def timed(run: Callable[[], object], threads: int, calls: int) -> float:
    def caller() -> None:
        for _ in range(calls):
            run()

    workers = [threading.Thread(target=caller) for _ in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return time.perf_counter() - start


def compare(program: LoadedProgram, feed: list[Any], args: argparse.Namespace) -> dict[str, float]:
    """The best time of each way, in interleaved rounds."""
    lock = threading.Lock()

    def locked() -> object:
        with lock:
            return program.run("main", feed)

    def pooled() -> object:
        return program.run("main", feed)

    best = {"lock": float("inf"), "pool": float("inf")}
    for _ in range(args.rounds):
        best["lock"] = min(best["lock"], timed(locked, args.threads, args.calls))
        best["pool"] = min(best["pool"], timed(pooled, args.threads, args.calls))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, "
        f"{os.cpu_count()} cores, {args.threads} threads x {args.calls} calls"
    )
    for name, make in (("3 products", products), ("elementwise", elementwise)):
        for devices in (None, "cpu:0,cpu:1"):
            graph, feed = make()
            with tempfile.TemporaryDirectory() as folder:
                listed = None if devices is None else DeviceList.parse(devices)
                write_modules(compile_module(graph.module(), listed), Path(folder))
                program = load_program(folder)
                program.run("main", feed)
                best = compare(program, feed, args)
            print(
                f"{name:12} {devices or 'cpu:0':12} lock {best['lock']:.3f} s  "
                f"pool {best['pool']:.3f} s  pool/lock {best['pool'] / best['lock']:.2f}"
            )


if __name__ == "__main__":
    main()
