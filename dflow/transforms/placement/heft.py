"""HEFT (Topcuoglu et al.'s heterogeneous earliest finish time): placement units put
on devices and timed there, as a `Timeline` (each op's device, start and finish) and
its makespan. Not `df-schedule`'s order of the ops (`transforms/schedule.py`): this
is the time the ops take on the devices, under the cost model.

A `Unit` is a set of ops placed together: a colocation group, or the groups of
one cycle of the group graph. Some of its ops may be fixed already (pinned
groups); the others share one device, chosen among the unit's `candidates`.

`heft_timeline` follows HEFT at unit granularity:
1. the priority of a unit is its upward rank: its mean time over its candidate
   devices plus the largest (mean transfer + rank) over its successors, where a
   transfer's mean is its cost times the chance (p-1)/p that two of p devices differ;
2. ready units are taken by decreasing rank (ties: function order); with
   `strategy="cost"` each goes to the candidate where it finishes earliest (ties:
   the earlier listed device), simulating its ops in order on their devices, each
   op starting when its device is free and its inputs have arrived; with
   `strategy="single"` to the first candidate. HEFT's non-insertion variant: an op
   never fills an earlier gap.

Function arguments, and values made by ops that are not `df` ops, live on the
host device at time 0; results of `df` ops used by other ops (`func.return`)
are fetched back to the host, and their arrival counts towards the unit's finish
and the makespan. Links are not contended: each transfer costs latency plus
size over bandwidth, once per value and receiving device.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from dflow.analysis.cost_model import CostModel, Work, value_bytes, work_of
from dflow.dialects.devices import kind_of


@dataclass(frozen=True)
class Unit:
    """Ops placed together, in function order: `fixed` ones on their given device,
    the others all on one device of `candidates` (listed order)."""

    ops: tuple[Operation, ...]
    fixed: Mapping[Operation, str]
    candidates: tuple[str, ...]

    def assignment(self, device: str | None) -> dict[Operation, str]:
        """Each op's device when the free ops go to `device` (None when there are none)."""
        return {op: self.fixed.get(op, device or "") for op in self.ops}

    def choices(self) -> tuple[str | None, ...]:
        """The devices the free ops may take (None alone when every op is fixed)."""
        if all(op in self.fixed for op in self.ops):
            return (None,)
        return self.candidates


@dataclass(frozen=True)
class DeviceLoad:
    """What one device does in a timeline."""

    ops: int = 0
    busy_s: float = 0.0
    bytes_sent: int = 0
    bytes_received: int = 0


@dataclass
class Timeline:
    """Where and when every timed op runs, and when each device is free."""

    model: CostModel
    host: str
    works: Mapping[Operation, Work]
    device: dict[Operation, str] = field(default_factory=dict[Operation, str])
    start: dict[Operation, float] = field(default_factory=dict[Operation, float])
    finish: dict[Operation, float] = field(default_factory=dict[Operation, float])
    available: dict[str, float] = field(default_factory=dict[str, float])

    def source(self, value: SSAValue) -> tuple[str, float]:
        """The device holding `value` and when it is ready there."""
        owner = value.owner
        if isinstance(owner, Operation) and owner in self.device:
            return self.device[owner], self.finish[owner]
        return self.host, 0.0

    def arrival(self, value: SSAValue, device: str) -> float:
        """When `value` can be used on `device`."""
        source, ready = self.source(value)
        if source == device:
            return ready
        return ready + self.model.transfer_time(value_bytes(value))

    def run(self, op: Operation, device: str) -> None:
        """Run `op` on `device` as early as its inputs and the device allow."""
        ready = max((self.arrival(v, device) for v in op.operands), default=0.0)
        start = max(self.available.get(device, 0.0), ready)
        self.device[op] = device
        self.start[op] = start
        self.finish[op] = start + self.model.compute_time(self.works[op], kind_of(device))
        self.available[device] = self.finish[op]

    def trial(self) -> Timeline:
        """A copy to try a choice on (op maps are shared: `run` only adds to them,
        and `rollback` removes what a trial added)."""
        return Timeline(
            self.model,
            self.host,
            self.works,
            self.device,
            self.start,
            self.finish,
            dict(self.available),
        )

    def rollback(self, ops: Sequence[Operation]) -> None:
        for op in ops:
            self.device.pop(op, None)
            self.start.pop(op, None)
            self.finish.pop(op, None)


@dataclass
class Dataflow:
    """The `df` ops of one function and who uses their results."""

    ops: Sequence[Operation]
    position: dict[Operation, int] = field(init=False)
    works: dict[Operation, Work] = field(init=False)

    def __post_init__(self) -> None:
        self.position = {op: index for index, op in enumerate(self.ops)}
        self.works = {op: work_of(op) for op in self.ops}

    @property
    def members(self) -> Mapping[Operation, int]:
        return self.position

    def fetched(self, op: Operation) -> list[SSAValue]:
        """Results of `op` used by ops that are not `df` ops of the function."""
        return [
            result
            for result in op.results
            if any(use.operation not in self.members for use in result.uses)
        ]

    def producer(self, value: SSAValue) -> Operation | None:
        owner = value.owner
        return owner if isinstance(owner, Operation) and owner in self.members else None


def unit_end(timeline: Timeline, dataflow: Dataflow, unit: Unit) -> float:
    """When the unit's last op finishes, or its last fetched value reaches the host."""
    end = 0.0
    for op in unit.ops:
        end = max(end, timeline.finish[op])
        for value in dataflow.fetched(op):
            end = max(end, timeline.arrival(value, timeline.host))
    return end


def try_unit(timeline: Timeline, dataflow: Dataflow, unit: Unit, device: str | None) -> float:
    """The unit's end if its free ops went to `device`; changes nothing."""
    trial = timeline.trial()
    assignment = unit.assignment(device)
    for op in unit.ops:
        trial.run(op, assignment[op])
    end = unit_end(trial, dataflow, unit)
    timeline.rollback(unit.ops)
    return end


def choose(timeline: Timeline, dataflow: Dataflow, unit: Unit, strategy: str) -> str | None:
    """The device for the unit's free ops: the earliest finish, or the first listed."""
    choices = unit.choices()
    if strategy != "cost" or len(choices) == 1:
        return choices[0]
    ends = [try_unit(timeline, dataflow, unit, device) for device in choices]
    return choices[ends.index(min(ends))]


def unit_edges(units: Sequence[Unit], dataflow: Dataflow) -> list[dict[int, int]]:
    """For each unit, its successor units with the bytes sent to each."""
    unit_of = {op: index for index, unit in enumerate(units) for op in unit.ops}
    successors: list[dict[int, int]] = [{} for _ in units]
    for index, unit in enumerate(units):
        for op in unit.ops:
            for value in set(op.operands):
                producer = dataflow.producer(value)
                if producer is None or unit_of[producer] == index:
                    continue
                edges = successors[unit_of[producer]]
                edges[index] = edges.get(index, 0) + value_bytes(value)
    return successors


def mean_time(unit: Unit, model: CostModel, works: Mapping[Operation, Work]) -> float:
    """The unit's compute time averaged over its choices."""
    choices = unit.choices()
    total = 0.0
    for device in choices:
        for op, placed in unit.assignment(device).items():
            total += model.compute_time(works[op], kind_of(placed))
    return total / len(choices)


def upward_ranks(
    units: Sequence[Unit],
    successors: Sequence[Mapping[int, int]],
    model: CostModel,
    works: Mapping[Operation, Work],
    devices: int,
) -> list[float]:
    """HEFT's upward rank of every unit (units in a topological order)."""
    differ = (devices - 1) / devices
    ranks = [0.0] * len(units)
    for index in reversed(range(len(units))):
        tail = max(
            (
                differ * model.transfer_time(nbytes) + ranks[successor]
                for successor, nbytes in successors[index].items()
            ),
            default=0.0,
        )
        ranks[index] = mean_time(units[index], model, works) + tail
    return ranks


def heft_timeline(
    units: Sequence[Unit],
    dataflow: Dataflow,
    model: CostModel,
    devices: Sequence[str],
    host: str,
    strategy: str,
) -> Timeline:
    """Place and time every unit (given in a topological order of the unit graph)."""
    successors = unit_edges(units, dataflow)
    ranks = upward_ranks(units, successors, model, dataflow.works, len(devices))
    waiting = [0] * len(units)
    for edges in successors:
        for successor in edges:
            waiting[successor] += 1
    first = [min(dataflow.position[op] for op in unit.ops) for unit in units]
    ready = [(-ranks[i], first[i], i) for i in range(len(units)) if not waiting[i]]
    heapq.heapify(ready)
    timeline = Timeline(model, host, dataflow.works)
    while ready:
        *_, index = heapq.heappop(ready)
        unit = units[index]
        assignment = unit.assignment(choose(timeline, dataflow, unit, strategy))
        for op in unit.ops:
            timeline.run(op, assignment[op])
        for successor in successors[index]:
            waiting[successor] -= 1
            if not waiting[successor]:
                heapq.heappush(ready, (-ranks[successor], first[successor], successor))
    return timeline


def makespan(timeline: Timeline, dataflow: Dataflow) -> float:
    """When the last op finishes or the last fetched value reaches the host."""
    return unit_end(timeline, dataflow, Unit(tuple(dataflow.ops), {}, ()))


def _transfers(timeline: Timeline, dataflow: Dataflow) -> dict[tuple[SSAValue, str], str]:
    """Every value that crosses devices: (value, receiving device) → sending device."""
    moves: dict[tuple[SSAValue, str], str] = {}
    for op in dataflow.ops:
        destination = timeline.device[op]
        for value in op.operands:
            moves[(value, destination)] = timeline.source(value)[0]
        for value in dataflow.fetched(op):
            moves[(value, timeline.host)] = destination
    return {key: source for key, source in moves.items() if source != key[1]}


def loads(timeline: Timeline, dataflow: Dataflow, devices: Sequence[str]) -> dict[str, DeviceLoad]:
    """Per device: ops, busy seconds, bytes sent and received."""
    ops = dict.fromkeys(devices, 0)
    busy = dict.fromkeys(devices, 0.0)
    sent = dict.fromkeys(devices, 0)
    received = dict.fromkeys(devices, 0)
    for op in dataflow.ops:
        device = timeline.device[op]
        ops[device] += 1
        busy[device] += timeline.finish[op] - timeline.start[op]
    for (value, destination), source in _transfers(timeline, dataflow).items():
        sent[source] += value_bytes(value)
        received[destination] += value_bytes(value)
    return {d: DeviceLoad(ops[d], busy[d], sent[d], received[d]) for d in devices}
