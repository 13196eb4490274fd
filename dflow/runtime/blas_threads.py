"""The cores' share of BLAS threads while several CPU devices run at once.

A CPU device's matrix products call NumPy's OpenBLAS, which runs each call on as many
threads as the process may use cores. One device alone should have them all; but when
two CPU devices run in one process (`--devices cpu:0,cpu:1`), or several threads call
programs at once, each call's threads contend with the others' for the same cores:
`examples/towers.mlir` on two devices took 3.8 ms a run on two cores, 0.77 ms with one
BLAS thread each (`bench/blas_threads.py`). So while more than one CPU device thread
runs anywhere in the process, BLAS gets `cores // running` threads (at least 1), and
its own setting comes back when the last of them ends.

OpenBLAS's thread count is one setting for the whole process, so the share follows the
total of CPU device threads running in every run of every program at once, counted
here under a lock: a second concurrent run lowers it, never raises it under a run that
is going on, and the first setting is restored when none is left. The library is found
through `threadpoolctl` (once, on the first run that needs a share: 7 ms), then set
through its `set_num_threads` (about 2 us). A run of one device, alone, touches nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Generator
from contextlib import contextmanager
from functools import cache
from typing import Any


def usable_cores() -> int:
    """The cores this process may run on (its affinity: `taskset -c 0` gives 1)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@cache
def _blas_libraries() -> tuple[Any, ...]:
    """threadpoolctl's controllers of the BLAS libraries loaded in this process (NumPy's
    OpenBLAS, which the CPU kernels link too); none without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController  # noqa: PLC0415 (7 ms: when needed)
    except ImportError:
        return ()
    controller: Any = ThreadpoolController()
    controllers: list[Any] = controller.lib_controllers
    return tuple(c for c in controllers if c.user_api == "blas")


class BlasShare:
    """The CPU device threads running in this process, and BLAS's threads set to
    their share of the cores while there are more than one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.enabled = True
        """False leaves BLAS's threads alone (`bench/blas_threads.py` measures both)."""
        self.saved: list[tuple[Any, int]] = []

    @contextmanager
    def sharing(self, threads: int) -> Generator[None, None, None]:
        """Count `threads` CPU device threads as running inside the block; BLAS runs on
        `usable_cores() // running` threads while `running` is above one."""
        self.enter(threads)
        try:
            yield
        finally:
            self.leave(threads)

    def enter(self, threads: int) -> None:
        """`sharing`'s start, for a caller that pays for no generator (every run)."""
        with self.lock:
            self.running += threads
            if self.running <= 1 or not self.enabled:
                return
            libraries = _blas_libraries()
            if not self.saved:
                self.saved = [(library, library.get_num_threads()) for library in libraries]
            share = max(1, usable_cores() // self.running)
            for library, _ in self.saved:
                if library.get_num_threads() > share:
                    library.set_num_threads(share)

    def leave(self, threads: int) -> None:
        """`sharing`'s end."""
        with self.lock:
            self.running -= threads
            if self.running == 0:
                for library, count in self.saved:
                    library.set_num_threads(count)
                self.saved = []


SHARE = BlasShare()
"""The process's one count: BLAS's thread setting is the process's."""
