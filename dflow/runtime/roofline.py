"""This machine's roofline, the yardstick of `dflow run --profile`.

A kernel doing F flops over B bytes cannot go faster than `min(P, F / B * W)`
flop/s, where P is the machine's peak flop/s and W its memory bandwidth (Williams,
Waterman and Patterson's roofline). Both are measured here, not looked up: P as
NumPy's float32 matrix product of 1024 x 1024 matrices (BLAS, on every core it
uses), W as a copy of 64 MB (read and write), each the best of five. The figures
are kept in the cache folder (`roofline.json`, `0600` like the rest of the cache),
keyed by the machine, so only the first profile on a machine pays the second or so
they take; `dflow cache clear` removes them with the rest (a figure measured on a
busy machine is not kept for ever).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from dflow.runtime.cache_root import ROOFLINE, cache_root

FILE = ROOFLINE
"""The measured figures, in the cache folder."""

MATRIX = 1024
COPY_BYTES = 64 << 20


@dataclass(frozen=True)
class Roofline:
    """Peak flop/s and memory bandwidth (byte/s), and how they were measured."""

    flops_per_s: float
    bytes_per_s: float
    how: str

    def attainable(self, flops: int, nbytes: int) -> float:
        """The flop/s a kernel of `flops` over `nbytes` can reach at most."""
        if nbytes == 0:
            return self.flops_per_s
        return min(self.flops_per_s, flops / nbytes * self.bytes_per_s)

    def fraction(self, flops: int, nbytes: int, seconds: float) -> float | None:
        """How near its roof a kernel ran (1: on it); by bandwidth for a kernel
        without flops; None when it took no time or moved nothing."""
        if seconds <= 0 or (flops == 0 and nbytes == 0):
            return None
        if flops == 0:
            return nbytes / seconds / self.bytes_per_s
        return flops / seconds / self.attainable(flops, nbytes)


def _best(run: Callable[[], object], times: int = 5) -> float:
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def measure() -> Roofline:
    """Measure this machine's roofline now (about a second)."""
    rng = np.random.default_rng(0)
    a = rng.random((MATRIX, MATRIX), dtype=np.float32)
    product = np.empty_like(a)
    flops = 2 * MATRIX**3 / _best(lambda: np.matmul(a, a, out=product))
    source = np.ones(COPY_BYTES // 4, np.float32)
    target = np.empty_like(source)
    bandwidth = 2 * COPY_BYTES / _best(lambda: np.copyto(target, source))
    how = (
        f"float32 matmul {MATRIX}x{MATRIX} (NumPy's BLAS, {os.cpu_count()} cores), "
        f"copy of {COPY_BYTES >> 20} MB"
    )
    return Roofline(flops, bandwidth, how)


def _machine() -> str:
    return f"{platform.node()} {platform.machine()} {platform.processor()} {os.cpu_count()}"


def machine_roofline(root: Path | None = None) -> Roofline:
    """This machine's roofline: as measured before (in `root`, default the cache
    folder), else measured now and kept."""
    path = (root or cache_root()) / FILE
    try:
        stored = json.loads(path.read_text())
        if stored.get("machine") == _machine():
            return Roofline(stored["flops_per_s"], stored["bytes_per_s"], stored["how"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none yet, or unreadable: measure again
    roofline = measure()
    with contextlib.suppress(OSError):  # a read-only cache: measured again next time
        _write_private(path, json.dumps({"machine": _machine(), **asdict(roofline)}))
    return roofline


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` as the cache writes its files: its folder made `0700`
    where missing, the file `0600` from its creation (whatever the umask), written
    beside it and renamed onto it, so a profile in another process never reads half
    a file."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # 0600
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
        Path(name).replace(path)
    finally:
        Path(name).unlink(missing_ok=True)
