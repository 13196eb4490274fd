"""A partitioned program across MPI ranks: `df.send`/`df.recv` carried by mpi4py.

Every rank runs the same command (`mpirun -n N dflow run FILE --devices LIST --mpi`)
and holds the modules of its own devices only. `MpiChannels` routes each transfer:
between two devices of one rank it stays in memory (the threads' `Channels`);
to another rank it goes by buffer, never pickled: a nonblocking `Isend` straight
out of the sender's arena (the plan keeps a sent buffer to the end of its function,
`df-plan-buffers{hold-sends=true}`, and the device waits for its sends before it
returns) and an `Irecv` straight into the receiver's. Messages between two ranks are
told apart by their tag, the position of their `(key, source, destination)` among
all the transfers between those two ranks, sorted: both ranks list the same ones
(each holds one end of every one of them), so both number them alike, and no two
concurrent transfers share a tag.

`MpiProgram.run` is collective. Rank 0 holds the feeds: it sends each rank the
arguments its devices take, and after the run every rank reports to rank 0 (its
status, then its results by buffer) and rank 0 says to all whether the run
succeeded. A failing rank tells every other one at once (an abort message on its
own communicator, which every wait polls), so no rank waits out its timeout for a
rank that is gone; a wait past the timeout fails naming what it waited for.
Rank 0 raises `ProgramError` with one line naming the failing rank and device;
the others raise `RankFailedError`, which callers turn into a silent non-zero exit.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from dflow.runtime.blas_threads import SHARE
from dflow.runtime.channels import (
    ChannelAbandonedError,
    ChannelError,
    Channels,
    ChannelTimeoutError,
)
from dflow.runtime.program import AbandonedRunError, ProgramError
from dflow.runtime.trace import Slice, Trace, Tracer

ROOT = 0
"""The rank that holds the feeds, gathers the results and reports failures."""

SPINS = 2000
"""Polls of a request before a wait starts to sleep between them (a fast transfer
is waited for at full speed; a long one costs no core)."""

NAP_S = 50e-6
"""The sleep between polls of a long wait."""

READY_WAIT_S = 300.0
"""The least time a ready rank waits for the others to be ready (`agree`)."""

STATUS, DECISION, ABORT = 1, 2, 16
"""Tags of the control communicator: a rank's report; rank 0's word; from `ABORT` on,
a rank failed (`ABORT + ` the run's number)."""


class RankFailedError(RuntimeError):
    """This rank stops because the run failed (rank 0 reports why)."""


class MpiUnavailableError(RuntimeError):
    """mpi4py or the MPI library cannot start."""


def start_mpi() -> Any:
    """mpi4py's `MPI` module, MPI started (once per process, threads allowed)."""
    try:
        from mpi4py import MPI  # noqa: PLC0415 (only --mpi runs load MPI)
    except ImportError as error:
        raise MpiUnavailableError(
            f"--mpi needs mpi4py and an MPI library ({error}): pip install 'dflow[mpi]'"
        ) from None
    except RuntimeError as error:  # the MPI library itself failed to load or start
        raise MpiUnavailableError(f"the MPI library cannot start: {error}") from None
    if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        raise MpiUnavailableError(
            "the MPI library does not allow calls from several threads (MPI_THREAD_MULTIPLE)"
        )
    return MPI


@dataclass
class World:
    """The ranks of one run and the communicators dflow uses among them: transfers
    (`data`), feeds and results (`arrays`) and reports (`control`), each a duplicate
    of `COMM_WORLD` so that no message of one kind matches a receive of another.
    `runs` counts the collective runs so far (every rank counts alike): a failure is
    announced under a tag of its run, so that a late announcement never stops a
    later run."""

    mpi: Any
    data: Any
    arrays: Any
    control: Any
    rank: int
    size: int
    runs: int = 0
    host: frozenset[int] = frozenset()
    """The ranks that run on this rank's host (this one included): they share its
    cores, as the devices of one process do (`runtime/blas_threads.py`)."""
    _announcements: list[Any] = field(default_factory=list[Any])

    @staticmethod
    def start() -> World:
        mpi = start_mpi()
        world = mpi.COMM_WORLD
        node = world.Split_type(mpi.COMM_TYPE_SHARED)
        host = frozenset(node.allgather(world.Get_rank()))
        node.Free()
        rank, size = world.Get_rank(), world.Get_size()
        return World(mpi, world.Dup(), world.Dup(), world.Dup(), rank, size, host=host)

    def wait(
        self, request: Any, deadline: float, on_timeout: Callable[[], str], *, abort: bool = True
    ) -> None:
        """Until `request` (a buffer transfer) completes; `ChannelTimeoutError` past
        `deadline` (a receive is cancelled), `ChannelAbandonedError` when another
        rank announces a failure meanwhile (with `abort`)."""
        self._poll(lambda: bool(request.Test()), request, deadline, on_timeout, abort)

    def wait_object(self, request: Any, deadline: float, what: str, *, abort: bool = True) -> Any:
        """The object a pickled receive (`irecv`) brings: a report, a word."""
        received: list[Any] = []

        def done() -> bool:
            complete, value = request.test()
            if complete:
                received.append(value)
            return bool(complete)

        self._poll(done, request, deadline, lambda: f"waited for {what} past the timeout", abort)
        return received[0]

    def _poll(
        self,
        done: Callable[[], bool],
        request: Any,
        deadline: float,
        on_timeout: Callable[[], str],
        abort: bool,
    ) -> None:
        polls = 0
        while not done():
            polls += 1
            if polls > SPINS:
                time.sleep(NAP_S)
            if polls % 64:  # the clock and the other ranks, every 64th poll
                continue
            if abort and self.aborted():
                _cancel(request)
                raise ChannelAbandonedError("stopped: another rank failed")
            if time.monotonic() > deadline:
                _cancel(request)
                raise ChannelTimeoutError(on_timeout())

    def aborted(self) -> bool:
        """Whether some rank announced a failure of this run."""
        return bool(self.control.Iprobe(source=self.mpi.ANY_SOURCE, tag=ABORT + self.runs))

    def announce_failure(self) -> None:
        """Tell every other rank that this run failed here (their waits stop)."""
        for rank in range(self.size):
            if rank != self.rank:
                request = self.control.isend(None, dest=rank, tag=ABORT + self.runs)
                self._announcements.append(request)


def _cancel(request: Any) -> None:
    """Cancel a receive that will not be waited for (MPI cannot cancel a send: the
    process is ending then)."""
    with contextlib.suppress(Exception):  # a send, or a request complete meanwhile
        request.Cancel()


def message_tags(
    transfers: Iterable[tuple[str, str, str]], ranks: Mapping[str, int], rank: int
) -> dict[tuple[str, str, str], int]:
    """The tag of each transfer between `rank` and another: its position (from 1)
    among the transfers between the same two ranks, sorted."""
    between: dict[frozenset[int], list[tuple[str, str, str]]] = {}
    for transfer in sorted(set(transfers)):
        _, source, destination = transfer
        ends = (ranks[source], ranks[destination])
        if ends[0] != ends[1] and rank in ends:
            between.setdefault(frozenset(ends), []).append(transfer)
    return {t: tag for group in between.values() for tag, t in enumerate(group, start=1)}


def where(device: str, ranks: Mapping[str, int]) -> str:
    """`cpu:1 (rank 1)`."""
    return f"{device} (rank {ranks[device]})"


@dataclass
class _Send:
    request: Any
    array: Any
    key: str
    destination: str


class MpiChannels(Channels):
    """`Channels` whose transfers between ranks go over MPI (the module docstring)."""

    def __init__(
        self,
        world: World,
        ranks: Mapping[str, int],
        transfers: Iterable[tuple[str, str, str]],
        timeout: float,
    ):
        super().__init__(timeout)
        self.world = world
        self.ranks = dict(ranks)
        self.tags = message_tags(transfers, ranks, world.rank)
        self._sends: dict[str, list[_Send]] = {}
        self._sends_lock = threading.Lock()

    def _tag(self, key: str, source: str, destination: str) -> int:
        tag = self.tags.get((key, source, destination))
        if tag is None:
            raise ChannelError(
                f"transfer {key!r} from {where(source, self.ranks)} to "
                f"{where(destination, self.ranks)} is not among the program's transfers"
            )
        return tag

    def send(
        self, key: str, source: str, destination: str, array: Any, *, owned: bool = False
    ) -> None:
        rank = self.ranks[destination]
        if rank == self.world.rank:
            super().send(key, source, destination, array, owned=owned)
            return
        buffer = array if array.flags.c_contiguous else np.ascontiguousarray(array)
        request = self.world.data.Isend(buffer, rank, self._tag(key, source, destination))
        with self._sends_lock:
            self._sends.setdefault(source, []).append(_Send(request, buffer, key, destination))

    def receive(self, key: str, source: str, destination: str, into: Any) -> None:
        rank = self.ranks[source]
        if rank == self.world.rank:
            super().receive(key, source, destination, into)
            return
        if self._abandoned:
            raise ChannelAbandonedError(f"df.recv of key {key!r} on {destination}: a device failed")
        request = self.world.data.Irecv(into, rank, self._tag(key, source, destination))
        self._wait(
            request,
            lambda: (
                f"df.recv of key {key!r} from {where(source, self.ranks)} on "
                f"{where(destination, self.ranks)} waited {self.timeout:g} s and no send arrived"
            ),
        )

    def finish(self, device: str) -> None:
        with self._sends_lock:
            sends = self._sends.pop(device, [])
        for send in sends:
            self._wait(
                send.request,
                lambda s=send: (
                    f"df.send of key {s.key!r} from {where(device, self.ranks)} to "
                    f"{where(s.destination, self.ranks)} was not received within {self.timeout:g} s"
                ),
            )

    def _wait(self, request: Any, on_timeout: Callable[[], str]) -> None:
        if request.Test():  # done already: the common case of a small transfer
            return
        try:
            self.world.wait(request, time.monotonic() + self.timeout, on_timeout)
        except ChannelAbandonedError:
            super().abandon()  # wake this rank's other devices too
            raise

    def abandon(self) -> None:
        """A device of this rank failed: stop its other devices and tell the others."""
        if not self._abandoned:
            self.world.announce_failure()
        super().abandon()


@dataclass(frozen=True)
class Report:
    """What a rank tells rank 0 after its part of a run: its results' indices, shapes
    and dtypes (their data follows by buffer), or why it failed."""

    results: tuple[tuple[int, tuple[int, ...], str], ...] = ()
    error: str | None = None
    abandoned: bool = False
    """It stopped only because another rank failed."""
    slices: Sequence[Slice] = ()
    """A traced run's slices on this rank's devices."""
    clock: tuple[str, int] = ("", 0)
    """This rank's host, and its wall clock less its monotonic clock (ns): rank 0
    moves the slices of a rank on another host onto its own clock by these."""


def _clock() -> tuple[str, int]:
    return socket.gethostname(), time.time_ns() - time.perf_counter_ns()


def _on_clock(report: Report, own: tuple[str, int]) -> list[Slice]:
    """`report`'s slices on the clock `own` of rank 0 (ranks on one host share one
    monotonic clock; across hosts, the wall clocks are taken to agree)."""
    host, offset = report.clock
    if host == own[0]:
        return list(report.slices)
    shift = offset - own[1]
    return [replace(s, start_ns=s.start_ns + shift, end_ns=s.end_ns + shift) for s in report.slices]


def _described(results: Mapping[int, Any]) -> tuple[tuple[int, tuple[int, ...], str], ...]:
    return tuple(
        (i, tuple(np.shape(v)), np.asarray(v).dtype.str) for i, v in sorted(results.items())
    )


def _failure(reports: Mapping[int, Report]) -> str | None:
    """The line rank 0 reports: the first real failure by rank (else the first)."""
    failed = [(rank, r) for rank, r in sorted(reports.items()) if r.error is not None]
    real = [(rank, r) for rank, r in failed if not r.abandoned]
    if not (real or failed):
        return None
    rank, report = (real or failed)[0]
    return f"rank {rank}: {report.error}"


class Parts(Protocol):
    """A rank's devices of a program: compiled (`runtime.LoadedProgram`) or interpreted."""

    def run_parts(
        self,
        entry: str,
        feeds: Sequence[Any],
        channels: Channels,
        tracer: Tracer | None = None,
    ) -> dict[int, Any]:
        """Run every device's part of `entry` (traced by `tracer`, where the parts can
        be): the results they give, by index."""
        ...

    def taken(self, entry: str) -> list[int]:
        """The arguments of `entry` the devices take, by index."""
        ...


@dataclass(frozen=True)
class EntryTypes:
    """The whole entry's arguments as `(shape, dtype)` pairs, and how many results it
    has: every rank knows them, whichever devices it holds."""

    arguments: Sequence[tuple[tuple[int, ...], Any]]
    results: int


@dataclass
class MpiProgram:
    """This rank's devices of a program run across `world` (the module docstring):
    `parts` runs them, `ranks` says where every device of the program is,
    `transfers` lists the transfers of this rank's devices."""

    world: World
    parts: Parts
    ranks: Mapping[str, int]
    transfers: Sequence[tuple[str, str, str]]

    def run(
        self, entry: str, types: EntryTypes, arguments: Sequence[Any] | None, timeout: float
    ) -> list[Any] | None:
        """Run `entry` on every rank (collective): rank 0 passes the checked feeds and
        gets the results; the others pass None and get None."""
        gathered = self._run(entry, types, arguments, timeout, None)
        return None if gathered is None else gathered[0]

    def trace(
        self, entry: str, types: EntryTypes, arguments: Sequence[Any] | None, timeout: float
    ) -> Trace | None:
        """`run`, traced on every rank (`runtime/trace.py`): rank 0 gets the trace of
        all of them, with the results; the others None."""
        start = time.perf_counter_ns()
        gathered = self._run(entry, types, arguments, timeout, Tracer())
        if gathered is None:
            return None
        results, slices = gathered
        return Trace(slices, start, time.perf_counter_ns() - start, results)

    def _run(
        self,
        entry: str,
        types: EntryTypes,
        arguments: Sequence[Any] | None,
        timeout: float,
        tracer: Tracer | None,
    ) -> tuple[list[Any], list[Slice]] | None:
        channels = MpiChannels(self.world, self.ranks, self.transfers, timeout)
        results: dict[int, Any] = {}
        try:
            feeds = self._feeds(entry, types, arguments, timeout)
            with SHARE.sharing(self._neighbours()):
                results = self.parts.run_parts(entry, feeds, channels, tracer)
            slices = () if tracer is None else tracer.slices
            report = Report(_described(results), slices=slices, clock=_clock())
        except (ProgramError, ChannelTimeoutError, ChannelAbandonedError) as error:
            channels.abandon()
            abandoned = isinstance(error, AbandonedRunError | ChannelAbandonedError)
            report = Report(error=str(error), abandoned=abandoned)
        try:
            if self.world.rank != ROOT:
                self._report(report, results, timeout)
                return None
            return self._gather(types, report, results, timeout)
        finally:
            self.world.runs += 1

    def _neighbours(self) -> int:
        """The CPU devices of the other ranks on this host: while they run, this rank's
        BLAS calls take their share of the host's cores, as they would beside them in
        one process (same threads, so the same bits as a one-process run)."""
        others = self.world.host - {self.world.rank}
        return sum(
            rank in others and device.startswith("cpu") for device, rank in self.ranks.items()
        )

    def _feeds(
        self, entry: str, types: EntryTypes, arguments: Sequence[Any] | None, timeout: float
    ) -> list[Any]:
        """Every rank's feeds: each other rank asks rank 0 for the arguments its
        devices take and gets them by buffer (None where it takes none)."""
        world = self.world
        deadline = time.monotonic() + timeout
        if world.rank == ROOT:
            assert arguments is not None
            for rank in range(1, world.size):
                asked = world.control.irecv(source=rank, tag=STATUS)
                taken: list[int] = world.wait_object(asked, deadline, f"rank {rank}'s request")
                for index in taken:
                    array = np.require(arguments[index], requirements="C")
                    world.arrays.Send(array, dest=rank, tag=index)
            return list(arguments)
        taken = self.parts.taken(entry)
        world.control.send(taken, dest=ROOT, tag=STATUS)
        feeds: list[Any] = [None] * len(types.arguments)
        for index in taken:
            shape, dtype = types.arguments[index]
            feeds[index] = np.empty(shape, dtype)
            request = world.arrays.Irecv(feeds[index], source=ROOT, tag=index)
            world.wait(request, deadline, lambda i=index: f"argument {i} never came from rank 0")
        return feeds

    def _report(self, report: Report, results: Mapping[int, Any], timeout: float) -> None:
        """Send rank 0 this rank's report and results; wait for its word."""
        world = self.world
        world.control.send(report, dest=ROOT, tag=STATUS)
        if report.error is None:
            for index, value in sorted(results.items()):
                world.arrays.Send(np.require(value, requirements="C"), dest=ROOT, tag=index)
        decision = world.control.irecv(source=ROOT, tag=DECISION)
        deadline = time.monotonic() + timeout
        try:
            succeeded = world.wait_object(decision, deadline, "rank 0's word", abort=False)
        except ChannelTimeoutError:
            succeeded = False
        if not succeeded or report.error is not None:
            raise RankFailedError(report.error or "the run failed on another rank")

    def _gather(
        self, types: EntryTypes, own: Report, results: dict[int, Any], timeout: float
    ) -> tuple[list[Any], list[Slice]]:
        """Rank 0: every rank's report and results, then the word to all; the results
        and every rank's slices (a traced run's)."""
        world = self.world
        reports = {ROOT: own}
        deadline = time.monotonic() + timeout
        for rank in range(1, world.size):
            reports[rank] = self._receive_report(rank, deadline, results)
        failure = _failure(reports)
        for rank in range(1, world.size):
            world.control.send(failure is None, dest=rank, tag=DECISION)
        if failure is not None:
            raise ProgramError(failure)
        slices = [s for r in reports.values() for s in _on_clock(r, own.clock)]
        return [results[index] for index in range(types.results)], slices

    def _receive_report(self, rank: int, deadline: float, results: dict[int, Any]) -> Report:
        """Rank `rank`'s report, and its results into `results`."""
        world = self.world
        try:
            request = world.control.irecv(source=rank, tag=STATUS)
            report: Report = world.wait_object(
                request, deadline, f"rank {rank}'s report", abort=False
            )
            for index, shape, dtype in report.results:
                results[index] = np.empty(shape, dtype)
                request = world.arrays.Irecv(results[index], source=rank, tag=index)
                world.wait(request, deadline, lambda i=index: f"result {i}", abort=False)
        except ChannelTimeoutError:
            return Report(error="did not report within the timeout (it may have crashed or hung)")
        return report


def agree(world: World, error: str | None, timeout: float) -> None:
    """Every rank's word that it is ready (collective; `error`: why this one is not):
    rank 0 raises `ProgramError` naming the first rank that failed, the others
    `RankFailedError`. Each waits, once ready itself, up to `timeout` and at least
    `READY_WAIT_S` (compiling takes longer than any transfer should), so a rank that
    hangs ends the run."""
    timeout = max(timeout, READY_WAIT_S)
    deadline = time.monotonic() + timeout
    if world.rank != ROOT:
        world.control.send(error, dest=ROOT, tag=STATUS)
        answer = world.control.irecv(source=ROOT, tag=DECISION)
        try:
            succeeded = world.wait_object(answer, deadline, "rank 0", abort=False)
        except ChannelTimeoutError:
            succeeded = False
        if error is not None or not succeeded:
            raise RankFailedError(error or "another rank failed")
        return
    reports = {ROOT: Report(error=error)}
    for rank in range(1, world.size):
        request = world.control.irecv(source=rank, tag=STATUS)
        try:
            said = world.wait_object(request, deadline, f"rank {rank}", abort=False)
        except ChannelTimeoutError:
            said = f"not ready within {timeout:g} s of rank 0 (still compiling, or hung)"
        reports[rank] = Report(error=said)
    failure = _failure(reports)
    for rank in range(1, world.size):
        world.control.send(failure is None, dest=rank, tag=DECISION)
    if failure is not None:
        raise ProgramError(failure)
