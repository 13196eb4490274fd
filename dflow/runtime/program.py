"""Loading the emitted modules of a program and running an entry on its devices.

`load_program(directory)` imports every device module `dflow compile` wrote
(`cpu_0.py`, `gpu_0.py`, ...) under a name unique to the directory and
registered in `sys.modules`, which numba's on-disk cache needs to find the
kernels again in a later process. `LoadedProgram.run(entry, arguments)` checks the
feeds against the entry's signature, gives each device its arguments, runs
each device's host function in its own thread (one device runs in the caller's
thread), and gathers the results in the entry's order. While more than one CPU
device runs in the process, BLAS gets each its share of the cores
(`runtime/blas_threads.py`).

A run takes a set of device contexts (one arena per device) that no other run is
using: callers in several threads each get their own, made on first need, and up
to `CONTEXT_SETS_KEPT` idle sets are kept for later runs, so arenas are reused
from one call to the next without two calls ever sharing one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from dflow.runtime.blas_threads import SHARE
from dflow.runtime.channels import ChannelAbandonedError, Channels, ChannelTimeoutError
from dflow.runtime.context import CpuContext, context_for
from dflow.runtime.dtypes import dtype_named
from dflow.runtime.trace import Trace, TracedContext, Tracer, traced_host

DEFAULT_TIMEOUT_S = 60.0

CONTEXT_SETS_KEPT = 4
"""Idle context sets (an arena per device each) a program keeps for later runs; a
run beyond them makes its own and drops it after."""


class ProgramError(RuntimeError):
    """A run failed: bad feeds, a device's error, or a receive that timed out."""


class AbandonedRunError(ProgramError):
    """A run whose devices only stopped because a device elsewhere failed (another
    process's, under MPI)."""


DEVICE_MODULE = re.compile(r"(cpu|gpu)_\d+(_r\d+)?\.py")
"""The file name of a device's module: `cpu_0.py`, `gpu_1.py`, `cpu_0_r1.py` (rank 1's
cpu:0)."""


@dataclass
class DevicePart:
    """One device's module and its part of each entry."""

    device: str
    module: ModuleType

    def entry(self, name: str) -> dict[str, Any] | None:
        entries: dict[str, dict[str, Any]] = self.module.ENTRIES
        return entries.get(name)


def _import(path: Path, name: str) -> ModuleType:
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def uses_numba(module: ModuleType) -> bool:
    """Whether a CPU device's module calls numba kernels or library routines (the
    llvm target's need not, and its start then skips importing numba)."""
    return bool(getattr(module, "KERNEL_ARGUMENTS", None) or getattr(module, "LIBRARY_CALLS", None))


def load_program(directory: str | Path, *, warm_start: bool = True) -> LoadedProgram:
    """The program whose device modules `directory` holds. With `warm_start`, the
    CPU kernels numba has cached are loaded now, without numba's compiler
    registries (`runtime/warm_start.py`); the others load or compile lazily."""
    directory = Path(directory).resolve()
    tag = hashlib.sha1(str(directory).encode()).hexdigest()[:12]
    parts: list[DevicePart] = []
    names = sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []
    for path in [directory / name for name in names if DEVICE_MODULE.fullmatch(name)]:
        module = _import(path, f"dflow_program_{tag}_{path.stem}")
        parts.append(DevicePart(module.DEVICE, module))
    if not parts:
        raise ProgramError(f"{directory}: no device modules (cpu_0.py, ...) to load")
    numba_parts = [p for p in parts if uses_numba(p.module)]
    if warm_start and numba_parts:  # an llvm target's module of LLVM kernels alone: none
        from dflow.runtime.warm_start import preload_kernels  # noqa: PLC0415 (imports numba)

        for part in numba_parts:
            preload_kernels(part.module)
    return LoadedProgram(parts)


def _check_feeds(entry: str, signature: Sequence[Any], arguments: Sequence[Any]) -> list[Any]:
    if len(arguments) != len(signature):
        raise ProgramError(f"@{entry} takes {len(signature)} arguments, {len(arguments)} given")
    checked: list[Any] = []
    for position, (argument, (shape, dtype)) in enumerate(zip(arguments, signature, strict=True)):
        array, expected = np.asarray(argument), dtype_named(dtype)
        if array.shape != tuple(shape) or array.dtype != expected:
            raise ProgramError(
                f"@{entry} argument {position}: expected {tuple(shape)} {expected}, "
                f"got {tuple(array.shape)} {array.dtype}"
            )
        if not array.flags.c_contiguous:  # ascontiguousarray would make a 0-d array 1-d
            array = np.require(array, requirements="C")
        checked.append(array)
    return checked


Contexts = dict[str, CpuContext]
"""One context per device, for one run at a time."""


@dataclass
class LoadedProgram:
    """Device modules, and the idle context sets of earlier runs."""

    parts: list[DevicePart]
    idle: list[Contexts] = field(default_factory=list[Contexts])
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def devices(self) -> list[str]:
        return [p.device for p in self.parts]

    @cached_property
    def cpu_devices(self) -> int:
        """How many of its devices are CPUs (the threads that share BLAS's cores)."""
        return sum(part.device.startswith("cpu") for part in self.parts)

    def signature(self, entry: str) -> dict[str, Any]:
        for part in self.parts:
            found = part.entry(entry)
            if found is not None:
                return found
        raise ProgramError(f"no entry @{entry} in the program")

    def run(
        self, entry: str, arguments: Sequence[Any], timeout: float = DEFAULT_TIMEOUT_S
    ) -> list[Any]:
        signature = self.signature(entry)
        feeds = _check_feeds(entry, signature["entry_arguments"], arguments)
        results = self.run_parts(entry, feeds, self.channels(timeout))
        return [results[index] for index in range(len(signature["entry_results"]))]

    def channels(self, timeout: float) -> Channels:
        """A run's channels: new ones, unless no device sends anything (then one set,
        never used, serves every run: a condition variable less to make per call)."""
        if self.transfers:
            return Channels(timeout)
        return self.unused_channels

    @cached_property
    def unused_channels(self) -> Channels:
        return Channels(DEFAULT_TIMEOUT_S)

    def trace(
        self, entry: str, arguments: Sequence[Any], timeout: float = DEFAULT_TIMEOUT_S
    ) -> Trace:
        """`run`, timing each kernel, library call, transfer and copy of every device
        (`runtime/trace.py`): the trace holds the results."""
        signature = self.signature(entry)
        feeds = _check_feeds(entry, signature["entry_arguments"], arguments)
        tracer = Tracer()
        start = time.perf_counter_ns()
        results = self.run_parts(entry, feeds, Channels(timeout), tracer)
        trace = Trace(tracer.slices, start, time.perf_counter_ns() - start)
        trace.results = [results[index] for index in range(len(signature["entry_results"]))]
        return trace

    def run_parts(
        self,
        entry: str,
        feeds: Sequence[Any],
        channels: Channels,
        tracer: Tracer | None = None,
    ) -> dict[int, Any]:
        """Run each device's part of `entry` on `feeds` (checked; a part reads only
        the arguments it takes), its transfers over `channels`, traced by `tracer` if
        given: the results the parts give, by index in the entry's results. A failure
        raises the first real one (not a receive abandoned because of it)."""
        results: dict[int, Any] = {}
        contexts = self.borrow(channels)
        runs = [
            _DeviceRun(part, contexts[part.device], entry, feeds, results, channels, tracer)
            for part in self.parts
        ]
        cpus = self.cpu_devices
        SHARE.enter(cpus)
        try:
            _run_all(runs)
        finally:
            SHARE.leave(cpus)
            self.give_back(contexts)
        failures = [r.error for r in runs if r.error is not None]
        real = [f for f in failures if not isinstance(f, ChannelAbandonedError)]
        if real:
            raise ProgramError(str(real[0]))
        if failures:
            raise AbandonedRunError(str(failures[0]))
        return results

    def taken(self, entry: str) -> list[int]:
        """The arguments of `entry` the devices take, by index."""
        found = {i for part in self.parts for i in (part.entry(entry) or {}).get("arguments", ())}
        return sorted(found)

    @cached_property
    def transfers(self) -> list[tuple[str, str, str]]:
        """Every transfer the devices make, as `(key, source, destination)`."""
        found = {tuple(t) for part in self.parts for t in getattr(part.module, "CHANNELS", ())}
        return sorted(found)  # pyright: ignore[reportReturnType] (triples, as emitted)

    def borrow(self, channels: Channels) -> Contexts:
        """A context per device that no other run uses, talking over `channels`."""
        with self.lock:
            contexts = self.idle.pop() if self.idle else None
        if contexts is None:
            contexts = {p.device: context_for(p.device, channels) for p in self.parts}
        for context in contexts.values():
            context.channels = channels
        return contexts

    def give_back(self, contexts: Contexts) -> None:
        with self.lock:
            if len(self.idle) < CONTEXT_SETS_KEPT:
                self.idle.append(contexts)


def _run_all(runs: Sequence[_DeviceRun]) -> None:
    """Each device's part of the run, in its own thread (one device in this one)."""
    if len(runs) == 1:
        runs[0].run()
        return
    threads = [threading.Thread(target=r.run, name=r.part.device) for r in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@dataclass
class _DeviceRun:
    part: DevicePart
    context: CpuContext
    entry: str
    feeds: Sequence[Any]
    results: dict[int, Any]
    channels: Channels
    tracer: Tracer | None = None
    error: BaseException | None = None

    def run(self) -> None:
        try:
            signature = self.part.entry(self.entry)
            if signature is None:
                return
            host, rt, finish = self._calls(signature["function"])
            outputs = host(rt, *(self.feeds[i] for i in signature["arguments"]))
            finish(self.part.device)
            self.results.update(zip(signature["results"], outputs, strict=True))
        except Exception as error:  # every failure is reported; the others stop
            self.error = (
                error if isinstance(error, ChannelAbandonedError) else _located(self.part, error)
            )
            self.channels.abandon()

    def _calls(self, function: str) -> tuple[Any, Any, Any]:
        """The host function, its `rt` and the wait for its sends; traced ones when
        the run is traced."""
        module, device, tracer = self.part.module, self.part.device, self.tracer
        if tracer is None:
            return getattr(module, function), self.context, self.channels.finish
        host = traced_host(module, function, device, tracer, self.context.synchronize)
        finish = tracer.fixed(self.channels.finish, "finish sends", "wait", device)
        return host, TracedContext(self.context, tracer), finish


def _located(part: DevicePart, error: Exception) -> Exception:
    if isinstance(error, ProgramError | ChannelAbandonedError | ChannelTimeoutError):
        return error
    return ProgramError(f"on {part.device}: {type(error).__name__}: {error}")
