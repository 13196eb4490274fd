"""Compiling a module's new CPU kernels in parallel processes.

numba compiles in Python, under one lock: a process compiles one kernel at a time.
Where this process may run on several cores, `compile_in_parallel` forks workers
that each compile a share of the kernels the kernel store lacks
(`runtime/kernel_cache.py`) into the store, compiles its own share meanwhile,
waits for them, and loads what they compiled from the store
(`warm_start.preload_kernels`). Fork, not spawn: a worker starts with the modules
imported and the program loaded, where a fresh interpreter would pay half a second
of imports first.

It does nothing where fork is unsafe (another thread is running, or the platform
has no `os.fork`), where there is one core, fewer than two kernels to compile, or
no store to pass code through; a kernel a worker failed to compile is left to
numba's compile at its first call, which reports the error.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from numba.core.registry import CPUDispatcher

from dflow.runtime.blas_threads import usable_cores
from dflow.runtime.warm_start import KernelArguments, compile_named, preload_kernels


def compile_in_parallel(module: ModuleType, workers: int | None = None) -> int:
    """Compile `module`'s CPU kernels the store lacks in `workers` processes (by
    default one per usable core), this one among them; how many processes ran."""
    workers = usable_cores() if workers is None else workers
    missing = _missing(module)
    workers = min(workers, len(missing))
    if workers < 2 or threading.active_count() > 1 or not hasattr(os, "fork"):
        return 1
    children = [_fork(module, missing[i::workers]) for i in range(1, workers)]
    compile_named(module, missing[::workers])
    for child in children:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(child, 0)
    preload_kernels(module)
    return workers


def _missing(module: ModuleType) -> list[str]:
    """The kernels of `module` with no code for their arguments yet and a store
    folder to compile into."""
    arguments: KernelArguments = getattr(module, "KERNEL_ARGUMENTS", {})
    found: list[str] = []
    for name in arguments:
        dispatcher: Any = getattr(module, name, None)
        in_store = getattr(getattr(dispatcher, "_cache", None), "folder", None) is not None
        if isinstance(dispatcher, CPUDispatcher) and in_store and not dispatcher.overloads:
            found.append(name)
    return found


def _fork(module: ModuleType, names: Sequence[str]) -> int:
    """A child process that compiles `names` into the store and exits at once
    (`os._exit`: no exit handlers, no flushing of the parent's buffers twice)."""
    child = os.fork()
    if child == 0:
        status = 0
        try:
            compile_named(module, names)
        except BaseException:  # the parent compiles what is missing at first call
            status = 1
        finally:
            os._exit(status)
    return child
