"""Traces of a run: what each device did, and when, as Chrome trace events.

A traced run (`LoadedProgram.trace`) gives each device's host function a copy of its
module's names in which every kernel the host calls (`KERNELS`), every library
routine (`lib.*`) and the runtime context `rt` are timed wrappers; the module
itself is untouched, so an untraced run pays nothing. On a GPU each kernel's slice
ends after `synchronize`, so it covers the kernel, not its launch alone.

Slices by category: `host` (a device's host function, the whole of its part),
`kernel` (a kernel the host calls, with the `df` ops it computes and the cost
model's flops and bytes: `df.source`, `df.work`), `library` (a routine inside a
kernel, with the bytes of its arrays), `send` and `recv` (a transfer; a receive's
slice is its wait), `copy` (host to GPU and back; on a CPU, a result `fetch`ed out
of the arena), `wait` (a device waiting for its sends to complete before it returns).

`Trace.chrome()` is the JSON object Perfetto and `chrome://tracing` open: one
process per MPI rank (`pid`), one thread (track) per device (`tid`), complete
(`"ph": "X"`) events in microseconds from the start of the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import numpy as np

CATEGORIES = ("host", "kernel", "library", "send", "recv", "copy", "wait")
"""Every slice's category, as the module docstring describes them."""


@dataclass(frozen=True)
class Slice:
    """One timed call on one device."""

    name: str
    category: str
    device: str
    start_ns: int
    end_ns: int
    args: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


def _nbytes(values: Sequence[Any]) -> int:
    return sum(int(v.nbytes) for v in values if hasattr(v, "nbytes") and not np.isscalar(v))


@dataclass
class Tracer:
    """Collects the slices of one run from every device's thread (a list's append
    is atomic)."""

    slices: list[Slice] = field(default_factory=list[Slice])

    def timed(
        self,
        function: Callable[..., Any],
        slice_of: Callable[[int, int, tuple[Any, ...]], Slice],
        after: Callable[[], None] | None = None,
    ) -> Callable[..., Any]:
        """`function`, recording `slice_of(start, end, arguments)` for each call;
        `after` runs before the clock stops (a GPU's synchronize)."""

        def traced(*arguments: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return function(*arguments)
            finally:
                if after is not None:
                    after()
                self.slices.append(slice_of(start, time.perf_counter_ns(), arguments))

        return traced

    def fixed(
        self, function: Callable[..., Any], name: str, category: str, device: str, **args: Any
    ) -> Callable[..., Any]:
        """`timed`, every call's slice named and described alike."""
        return self.timed(function, lambda s, e, _: Slice(name, category, device, s, e, args))


def _rebound(function: FunctionType, names: dict[str, Any]) -> FunctionType:
    """`function` reading its globals from `names`."""
    return FunctionType(
        function.__code__, names, function.__name__, function.__defaults__, function.__closure__
    )


class _TracedLibrary:
    """A module's `lib`, every routine timed with the bytes of its arrays."""

    def __init__(self, library: ModuleType, tracer: Tracer, device: str):
        self._library, self._tracer, self._device = library, tracer, device

    def __getattr__(self, routine: str) -> Callable[..., Any]:
        name, device = f"lib.{routine}", self._device

        def slice_of(start: int, end: int, arguments: tuple[Any, ...]) -> Slice:
            return Slice(name, "library", device, start, end, {"bytes": _nbytes(arguments)})

        traced = self._tracer.timed(getattr(self._library, routine), slice_of)
        setattr(self, routine, traced)  # looked up once
        return traced


def _kernel_slice(
    name: str, device: str, facts: dict[str, Any]
) -> Callable[[int, int, tuple[Any, ...]], Slice]:
    return lambda start, end, _: Slice(name, "kernel", device, start, end, facts)


def traced_host(
    module: ModuleType,
    function: str,
    device: str,
    tracer: Tracer,
    synchronize: Callable[[], None] | None = None,
) -> Callable[..., Any]:
    """Host function `function` of `module`, with its kernels and library calls
    timed (`synchronize` after each kernel on a GPU)."""
    names = dict(vars(module))
    if isinstance(names.get("lib"), ModuleType):
        names["lib"] = _TracedLibrary(names["lib"], tracer, device)
    kernels: dict[str, dict[str, Any]] = getattr(module, "KERNELS", {})
    for name, facts in kernels.items():
        kernel = names[name]
        if isinstance(kernel, FunctionType):  # a Python kernel: its calls are traced too
            kernel = _rebound(kernel, names)
        names[name] = tracer.timed(kernel, _kernel_slice(name, device, facts), synchronize)
    host = _rebound(getattr(module, function), names)
    return tracer.fixed(host, function, "host", device)


class TracedContext:
    """A device's runtime context `rt` with its transfers and copies timed."""

    def __init__(self, context: Any, tracer: Tracer):
        self._context, self._tracer = context, tracer
        device = context.device
        self.device = device
        self.arena, self.view, self.output = context.arena, context.view, context.output

        def transfer(kind: str, peer: str) -> Callable[[int, int, tuple[Any, ...]], Slice]:
            def slice_of(start: int, end: int, arguments: tuple[Any, ...]) -> Slice:
                key, other, buffer = arguments
                args = {peer: other, "bytes": _nbytes([buffer])}
                return Slice(f"{kind} {key}", kind, device, start, end, args)

            return slice_of

        def copy(name: str) -> Callable[[int, int, tuple[Any, ...]], Slice]:
            def slice_of(start: int, end: int, arguments: tuple[Any, ...]) -> Slice:
                return Slice(name, "copy", device, start, end, {"bytes": _nbytes(arguments)})

            return slice_of

        self.send = tracer.timed(context.send, transfer("send", "to"))
        self.recv = tracer.timed(context.recv, transfer("recv", "from"))
        self.to_device = tracer.timed(context.to_device, copy("to_device"))
        self.fetch = tracer.timed(context.fetch, copy("fetch"))


def rank_of(device: str) -> int:
    """The MPI rank a device name says (`cpu:0@2` -> 2; 0 without one)."""
    return int(device.partition("@")[2] or 0)


@dataclass
class Trace:
    """The slices of one traced run, its results and its wall time."""

    slices: list[Slice]
    start_ns: int
    wall_ns: int
    results: list[Any] = field(default_factory=list[Any])

    @property
    def devices(self) -> list[str]:
        return sorted({s.device for s in self.slices}, key=lambda d: (rank_of(d), d))

    def chrome(self) -> dict[str, Any]:
        """The trace as Chrome trace-event JSON (`json.dump` it)."""
        tracks = {device: index for index, device in enumerate(self.devices)}
        events: list[dict[str, Any]] = []
        for rank in sorted({rank_of(d) for d in tracks}):
            events.append(_metadata("process_name", rank, None, f"rank {rank}"))
        for device, index in tracks.items():
            events.append(_metadata("thread_name", rank_of(device), index, device))
            events.append(_metadata("thread_sort_index", rank_of(device), index, index))
        for piece in sorted(self.slices, key=lambda s: (s.start_ns, -s.end_ns)):
            events.append(
                {
                    "name": piece.name,
                    "cat": piece.category,
                    "ph": "X",
                    "ts": (piece.start_ns - self.start_ns) / 1000,
                    "dur": piece.duration_ns / 1000,
                    "pid": rank_of(piece.device),
                    "tid": tracks[piece.device],
                    "args": piece.args,
                }
            )
        other = {"wall_us": self.wall_ns / 1000, "devices": list(tracks)}
        return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}

    def write(self, path: str | Path) -> None:
        """Write `chrome()` to `path` (Perfetto: ui.perfetto.dev, Open trace file)."""
        Path(path).write_text(json.dumps(self.chrome()))


def _metadata(name: str, pid: int, tid: int | None, value: object) -> dict[str, Any]:
    key = "sort_index" if name.endswith("sort_index") else "name"
    event: dict[str, Any] = {"name": name, "ph": "M", "pid": pid, "args": {key: value}}
    if tid is not None:
        event["tid"] = tid
    return event
