"""`dflow compile --time`: how long each step of the compiler took, in the spirit
of MLIR's `-mlir-timing`, and a progress line for numba's compiles that run long."""

from __future__ import annotations

import sys
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Timings:
    """Wall-clock seconds of named steps, in the order they ran."""

    rows: list[tuple[str, float]] = field(default_factory=list[tuple[str, float]])

    @contextmanager
    def measure(self, what: str) -> Generator[None, None, None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.rows.append((what, time.perf_counter() - started))

    def report(self) -> str:
        """A table of the steps: seconds, share of the total, name; the total last."""
        total = sum(seconds for _, seconds in self.rows)
        lines = ["  seconds   share  step"]
        for what, seconds in self.rows:
            share = seconds / total if total else 0.0
            lines.append(f"{seconds:9.4f}  {share:6.1%}  {what}")
        lines.append(f"{total:9.4f}  {1:6.1%}  total")
        return "\n".join(lines)


@contextmanager
def maybe(timings: Timings | None, what: str) -> Generator[None, None, None]:
    """`timings.measure(what)`, or nothing when no one is timing."""
    if timings is None:
        yield
        return
    with timings.measure(what):
        yield


@dataclass
class Progress:
    """`[3/40] compiling fused_add_2`, rewritten in place on `stream`, once a task
    has run longer than `delay` seconds (a quick one shows nothing)."""

    total: int
    what: str
    delay: float = 1.0
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    started: float = field(default_factory=time.perf_counter)
    shown: bool = False

    def step(self, done: int, item: str) -> None:
        elapsed = time.perf_counter() - self.started
        if elapsed < self.delay:
            return
        self.shown = True
        self.stream.write(
            f"\r[{done}/{self.total}] {self.what} {item} ({elapsed:.1f} s)".ljust(78)[:78]
        )
        self.stream.flush()

    def before(self, index: int, item: str) -> None:
        """`step` for a task about to start on item `index` (counted from 0)."""
        self.step(index + 1, item)

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
