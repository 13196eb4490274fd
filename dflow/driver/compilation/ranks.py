"""A partitioned program across MPI ranks, the driver's side: which device runs on
which rank, and each rank's part of the compile and of the run
(`mpirun -n N dflow run FILE --devices LIST --mpi`, `dflow.compile(..., mpi=True)`).

Device `i` of the list runs on rank `i mod N` unless it names its rank (`cpu:0@1`).
Before placement every device's rank is made explicit (`cpu:1` becomes `cpu:1@1`,
and a pin on `cpu:1` follows it), so the placed and partitioned program, the device
modules (`cpu_1_r1.py`) and the placement report all say where each device is. A
module partitioned already keeps its device names; those without `@` go by their
order. Every rank reads, places and partitions the whole program alike (the same
input gives the same placement), then compiles, or loads from the cache, or
interprets, only its own devices' parts: `runtime/mpi.py` carries the transfers and
the feeds and results between ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

from dflow.dialects.devices import DeviceList, rank_of
from dflow.dialects.df import annotations
from dflow.dialects.df.communication import RecvOp, SendOp
from dflow.dialects.df.symbols import device_modules
from dflow.driver.compilation.compiler import compiled_program
from dflow.driver.compilation.devices import DEFAULT, check_gpus, devices_for, split_for_devices
from dflow.driver.compilation.interpreted import PartitionedRun
from dflow.driver.errors import DflowError, QuietFailureError, first_line
from dflow.driver.loading import feeds
from dflow.driver.loading.partitioned import is_partitioned, part_indices
from dflow.runtime import ProgramError
from dflow.runtime.channels import Channels
from dflow.runtime.mpi import (
    ROOT,
    EntryTypes,
    MpiProgram,
    MpiUnavailableError,
    RankFailedError,
    World,
    agree,
)
from dflow.runtime.program import AbandonedRunError
from dflow.runtime.trace import Trace, Tracer

Array = Any


def start_world() -> World:
    """MPI started, as one `DflowError` line where it cannot be."""
    try:
        return World.start()
    except MpiUnavailableError as error:
        raise DflowError(str(error)) from None


def assign_ranks(devices: Sequence[str], size: int) -> dict[str, int]:
    """The rank of each device of the list: the one it names, else its position
    modulo `size`; a named rank the run does not have is an error."""
    ranks: dict[str, int] = {}
    for index, device in enumerate(devices):
        rank = rank_of(device)
        if rank is not None and rank >= size:
            plural = "rank" if size == 1 else "ranks"
            raise DflowError(
                f"{device} is on rank {rank}, but this run has {size} {plural}: "
                f"start it with mpirun -n {rank + 1} (or more)"
            )
        ranks[device] = index % size if rank is None else rank
    return ranks


def explicit_names(devices: Sequence[str], size: int) -> dict[str, str]:
    """Each device of the list named with its rank (`cpu:1` -> `cpu:1@1`)."""
    names: dict[str, str] = {}
    for device, rank in assign_ranks(devices, size).items():
        name = device if rank_of(device) is not None else f"{device}@{rank}"
        if name in names.values():
            raise DflowError(
                f"--devices names {name} twice (device i without @ is on rank i mod N)"
            )
        names[device] = name
    return names


def rename_pins(module: ModuleOp, names: dict[str, str]) -> None:
    """Every `df.device` pin on a device of `names` moved to its new name."""
    for op in module.walk():
        pin = op.attributes.get(annotations.DEVICE)
        if isinstance(pin, StringAttr) and pin.data in names:
            op.attributes[annotations.DEVICE] = StringAttr(names[pin.data])


def partition_for_ranks(
    module: ModuleOp, devices: DeviceList | None, size: int
) -> tuple[ModuleOp, dict[str, int]]:
    """`module` placed and partitioned for `devices` (checked as given; by default those
    the program's pins name, as in one process) on `size` ranks, and the rank of each
    device."""
    listed = devices_for(module, devices)
    if is_partitioned(module):
        return module, assign_ranks([d for d, _ in device_modules(module)], size)
    names = explicit_names((listed or DEFAULT).names, size)
    rename_pins(module, names)
    explicit = DeviceList(tuple(names.values()))
    return split_for_devices(module, explicit), assign_ranks(list(names.values()), size)


def entry_types(function: FuncOp) -> EntryTypes:
    """The whole entry's argument types and result count, as every rank needs them."""
    arguments = [(p.shape, p.dtype) for p in feeds.signature(function).parameters]
    return EntryTypes(arguments, len(function.function_type.outputs.data))


@dataclass
class InterpretedParts:
    """A rank's device modules, run by the reference interpreter (`--interpret`)."""

    parts: list[tuple[str, ModuleOp]]

    def run_parts(
        self,
        entry: str,
        feeds: Sequence[Any],
        channels: Channels,
        tracer: Tracer | None = None,
    ) -> dict[int, Any]:
        """The parts interpreted: a trace is of compiled code (`tracer` must be None)."""
        assert tracer is None, "an interpreted run is not traced"
        run = PartitionedRun(entry, feeds, channels)
        try:
            return run.run(self.parts)
        except DflowError as error:
            failure = AbandonedRunError if run.abandoned else ProgramError
            raise failure(error.message) from None

    def taken(self, entry: str) -> list[int]:
        found: set[int] = set()
        for _, part in self.parts:
            for function in part.ops:
                if isinstance(function, FuncOp) and function.sym_name.data == entry:
                    found.update(part_indices(function, annotations.ARGUMENTS))
        return sorted(found)


def _transfers(parts: Sequence[tuple[str, ModuleOp]]) -> list[tuple[str, str, str]]:
    return sorted(
        {
            (op.key.data, op.source.data, op.destination.data)
            for _, part in parts
            for op in part.walk()
            if isinstance(op, SendOp | RecvOp)
        }
    )


@dataclass(frozen=True)
class RankOptions:
    """How a rank builds its part: the program text (the cache key), whether it
    interprets, the pipeline run first and `parallel` kernels."""

    text: str
    interpret: bool = False
    passes: str = ""
    parallel: bool = False
    target: str | None = None


def rank_program(
    world: World, module: ModuleOp, devices: DeviceList | None, options: RankOptions
) -> MpiProgram:
    """This rank's part of `module` (partitioned here), compiled or interpreted."""
    split, ranks = partition_for_ranks(module, devices, world.size)
    own = [d for d, rank in ranks.items() if rank == world.rank]
    if options.interpret:
        parts = [(d, part) for d, part in device_modules(split) if d in own]
        return MpiProgram(world, InterpretedParts(parts), ranks, _transfers(parts))
    if own:
        check_gpus(split, DeviceList(tuple(own)))  # this rank's: another host may have more
    listed = DeviceList(tuple(d for d, _ in device_modules(split)))
    program = compiled_program(
        options.text,
        split,
        listed,
        options.parallel,
        passes=options.passes,
        only=own,
        target=options.target,
    )
    return MpiProgram(world, program, ranks, program.transfers)


def ready(world: World, build: Callable[[], MpiProgram], timeout: float) -> MpiProgram:
    """`build()` on every rank, then every rank's word that it is ready: rank 0 raises
    its own error as it is, or one line naming the first other rank that failed (a
    crash of dflow too: `rank 1: internal error: ...`); the others fail quietly."""
    program: MpiProgram | None = None
    own: Exception | None = None
    try:
        program = build()
    except Exception as failure:  # any failure is told, or the others wait for this rank
        own = failure
    try:
        agree(world, None if own is None else _said(own), timeout)
    except ProgramError as failure:
        raise own or DflowError(str(failure)) from None
    except RankFailedError:
        raise QuietFailureError("another rank failed") from None
    assert program is not None
    return program


def _said(failure: Exception) -> str:
    """What the other ranks hear of this rank's failure."""
    if isinstance(failure, DflowError):
        return failure.message
    return f"internal error: {type(failure).__name__}: {first_line(failure)}"


def run_on_ranks(
    program: MpiProgram,
    entry: str,
    types: EntryTypes,
    inputs: Sequence[Array] | None,
    timeout: float,
) -> list[Array] | None:
    """`MpiProgram.run` with its failures as the driver's: rank 0's one line, the
    others' quiet exit."""
    with _failures_as_the_drivers():
        return program.run(entry, types, inputs if program.world.rank == ROOT else None, timeout)


def trace_on_ranks(
    program: MpiProgram,
    entry: str,
    types: EntryTypes,
    inputs: Sequence[Array] | None,
    timeout: float,
) -> Trace | None:
    """`MpiProgram.trace`, as `run_on_ranks`: rank 0 gets every rank's trace."""
    with _failures_as_the_drivers():
        return program.trace(entry, types, inputs if program.world.rank == ROOT else None, timeout)


@contextmanager
def _failures_as_the_drivers() -> Generator[None]:
    """A failed collective run as the driver reports it: rank 0's one line, the
    others' quiet exit."""
    try:
        yield
    except ProgramError as failure:
        raise DflowError(str(failure)) from None
    except RankFailedError:
        raise QuietFailureError("another rank failed") from None
