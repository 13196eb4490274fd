"""Liveness and in-place sharing over a schedule: the buffers an arena must hold.

The first half of buffer planning (NNVM's PlanMemory, XLA's buffer assignment),
kept free of xDSL so that any schedule can be analysed: `function_schedule`
turns a `df` function into a `Schedule`, `packing` places the buffers found here,
and `memory_plan` puts the two together.

The model:

- A `Schedule` is a list of `Step`s run in order. Step `i` reads some values and
  writes others; a `Value` is a tensor of `size` bytes.
- Values with `in_arena=False` are not planned: function arguments (the caller
  owns them and they are never overwritten) and constants (static data emitted
  beside the code). Reading them does not matter here.
- A value in the arena is live from the step that writes it to the last step
  that reads it, both included; a value nobody reads is live at its own step. A
  function's return is its last step and reads its results, so they live to the
  end and nothing reuses their memory.
- In place: a step offers `(output, input)` candidates (elementwise ops: the
  output has exactly the input's bytes, element for element). The output shares
  the input's buffer when the input is in the arena, dies at this step (this is
  its last reader) and has exactly the output's size, and no other output of the
  step took that buffer already. Values sharing storage form one `Buffer` whose
  interval runs from its first value's birth to its last value's death; "dies"
  means the whole buffer dies: no value sharing it is read later.
- Views: a step may declare `(output, input)` aliases (a reshape: the same bytes
  seen with another shape). The output joins the input's buffer whatever their
  lifetimes, so the buffer lives until both are dead; it costs no bytes of its own.
- Slices: a step may declare its output made of `parts`, `(input, byte offset)`
  pairs (a concatenation whose operands were written in place into it: it writes
  nothing itself). Each part is then written, by its own step, at its offset in
  the output; slices chain and overlap (`slices.py`), and each class of values
  placed inside one another is one buffer from its first write to its last read,
  each value at its offset in it (`Buffer.within`). A part never writes over its
  input in place: its place is taken.

The most aligned bytes live at any one step (`peak_live_bytes`) bound every
packing's arena from below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from dflow.analysis.memory.slices import Slices

ALIGNMENT = 64
"""Every offset is a multiple of this many bytes, and every block size too."""


class PlanError(ValueError):
    """What cannot be planned: a schedule (a value written twice, read before written)
    or a function (`function_schedule.py`: a call, an op of another dialect). The
    message names no pass: the pass that asked for the plan heads it with its name."""


def align(size: int, alignment: int = ALIGNMENT) -> int:
    """`size` rounded up to a multiple of `alignment`."""
    return -(-size // alignment) * alignment


@dataclass(frozen=True)
class Value:
    """A tensor of `size` bytes; `in_arena=False` for arguments and constants."""

    size: int
    in_arena: bool = True
    name: str = ""


@dataclass(frozen=True)
class Step:
    """One unit of the schedule (an op, later a fused kernel), by value indices."""

    reads: tuple[int, ...] = ()
    writes: tuple[int, ...] = ()
    inplace: tuple[tuple[int, int], ...] = ()
    """`(output, input)` pairs, in order of preference: `output` may be written over
    `input`'s storage (the step computes each output element from the input element
    at the same byte position)."""
    alias: tuple[tuple[int, int], ...] = ()
    """`(output, input)` pairs: `output` is `input`'s storage itself (a view), for as
    long as either lives."""
    parts: tuple[tuple[int, int], ...] = ()
    """`(input, byte offset)` pairs: the step's one output is these inputs, each
    written in place at its offset, and the step writes no byte itself."""


@dataclass(frozen=True)
class Schedule:
    values: tuple[Value, ...]
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Buffer:
    """A block of the arena: one value, or a chain of values sharing it in place."""

    values: tuple[int, ...]
    size: int
    """Bytes, rounded up to `ALIGNMENT`."""
    start: int
    end: int
    """The first and last steps at which the block holds live data (inclusive)."""
    within: tuple[int, ...]
    """Each value's byte offset in the block, in the order of `values`."""


def live_intervals(schedule: Schedule) -> dict[int, tuple[int, int]]:
    """Each arena value's `(first step, last step)`; a PlanError for a value written
    twice, read before it is written, or never written."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    arena = [value.in_arena for value in schedule.values]
    for index, step in enumerate(schedule.steps):
        for value in (v for v in step.reads if arena[v]):
            if value not in first:
                raise PlanError(f"{_name(schedule, value)} is read at step {index} before written")
            last[value] = index
        for value in (v for v in step.writes if arena[v]):
            if value in first:
                raise PlanError(f"{_name(schedule, value)} is written twice")
            first[value] = last[value] = index
    missing = [v for v, in_arena in enumerate(arena) if in_arena and v not in first]
    if missing:
        raise PlanError(f"{_name(schedule, missing[0])} is never written")
    return {value: (first[value], last[value]) for value in first}


def _name(schedule: Schedule, value: int) -> str:
    """`%name` as the IR spells it, or the value's index where it has no name."""
    name = schedule.values[value].name
    return f"%{name}" if name else f"value {value}"


@dataclass
class _Sharing:
    """In-place decisions, made step by step: which values share which group, and
    where in it."""

    schedule: Schedule
    intervals: dict[int, tuple[int, int]]
    group_of: dict[int, int] = field(default_factory=dict[int, int])
    groups: list[list[int]] = field(default_factory=list[list[int]])
    pairs: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    within: dict[int, int] = field(default_factory=dict[int, int])
    """Each value's byte offset in its group."""

    ends: list[int] = field(default_factory=list[int])
    """The last step at which each group holds a live value."""

    placed: dict[int, int] = field(default_factory=dict[int, int])
    """Each value of a class of slices: its offset from the class's first byte."""
    class_of: dict[int, int] = field(default_factory=dict[int, int])
    class_end: dict[int, int] = field(default_factory=dict[int, int])
    """Of each class of slices, by root: the last step at which a value of it is read."""
    class_group: dict[int, int] = field(default_factory=dict[int, int])

    def run(self) -> None:
        self._classes()
        for index, step in enumerate(self.schedule.steps):
            taken: set[int] = set()
            for output in step.writes:
                if output not in self.intervals:
                    continue
                group = self._group(step, index, output, taken)
                self.within.setdefault(output, 0)
                taken.add(group)
                self.groups[group].append(output)
                self.group_of[output] = group
                self.ends[group] = max(self.ends[group], self.intervals[output][1])

    def _classes(self) -> None:
        """The classes of slices the steps' `parts` make; a PlanError where they
        contradict each other, or place a value outside the arena or off the
        alignment."""
        slices = Slices([value.size for value in self.schedule.values])
        for step in self.schedule.steps:
            if step.parts and not slices.place(step.writes[0], step.parts):
                whole = _name(self.schedule, step.writes[0])
                raise PlanError(f"the parts of {whole} overlap or contradict their other places")
        self.placed = slices.within()
        for root, values in slices.members.items():
            for value in values:
                self._check_slice(value)
                self.class_of[value] = root
            self.class_end[root] = max(self.intervals[v][1] for v in values)

    def _check_slice(self, value: int) -> None:
        """A PlanError unless the slice `value` is in the arena, on the alignment."""
        where = (
            "but not in the arena"
            if value not in self.intervals
            else "off the alignment"
            if self.placed[value] % ALIGNMENT
            else None
        )
        if where is not None:
            raise PlanError(f"{_name(self.schedule, value)} is a slice {where}")

    def _group(self, step: Step, index: int, output: int, taken: set[int]) -> int:
        """The group `output` joins: its source's (a view), its class's (a slice), an
        input's it overwrites, or a new one."""
        group = self._viewed(step, output)
        if group is None:
            group = self._sliced(output)
        if group is None:
            group = self._reusable(step, index, output, taken)
        if group is None:
            group = self._new(index)
        return group

    def _new(self, end: int) -> int:
        """A new group, holding live data until step `end` so far."""
        self.groups.append([])
        self.ends.append(end)
        return len(self.groups) - 1

    def _viewed(self, step: Step, output: int) -> int | None:
        """The group of the value `output` is a view of, if any."""
        for out, input in step.alias:
            if out == output and input in self.group_of:
                self.within[output] = self.within[input]
                return self.group_of[input]
        return None

    def _sliced(self, output: int) -> int | None:
        """The group of `output`'s class of slices, made when its first value is
        written and held until the class's last read, if `output` is a slice."""
        root = self.class_of.get(output)
        if root is None:
            return None
        if root not in self.class_group:
            self.class_group[root] = self._new(self.class_end[root])
        self.within[output] = self.placed[output]
        return self.class_group[root]

    def _reusable(self, step: Step, index: int, output: int, taken: set[int]) -> int | None:
        """The group of the first candidate input `output` may overwrite, if any."""
        size = self.schedule.values[output].size
        for out, input in step.inplace:
            if out != output or input not in self.intervals:
                continue
            group = self.group_of[input]
            dies_here = self.ends[group] == index
            same_size = self.schedule.values[input].size == size
            if dies_here and same_size and group not in taken:
                self.pairs.append((input, output))
                self.within[output] = self.within[input]
                return group
        return None

    def buffers(self) -> list[Buffer]:
        values = self.schedule.values
        return [
            Buffer(
                tuple(group),
                align(max(self.within[v] + values[v].size for v in group)),
                self.intervals[group[0]][0],
                end,
                tuple(self.within[v] for v in group),
            )
            for group, end in zip(self.groups, self.ends, strict=True)
        ]


def share_in_place(
    schedule: Schedule, intervals: dict[int, tuple[int, int]]
) -> tuple[list[Buffer], list[tuple[int, int]]]:
    """The buffers after in-place sharing, in order of birth, and the `(input, output)`
    pairs that share."""
    sharing = _Sharing(schedule, intervals)
    sharing.run()
    return sharing.buffers(), sharing.pairs


def live_bytes(buffers: Sequence[Buffer]) -> list[int]:
    """The bytes of the buffers live at each step, from step 0 to the last."""
    if not buffers:
        return []
    delta = [0] * (max(b.end for b in buffers) + 2)
    for buffer in buffers:
        delta[buffer.start] += buffer.size
        delta[buffer.end + 1] -= buffer.size
    live = list(accumulate(delta))
    return live[:-1]


def peak_live_bytes(buffers: Sequence[Buffer]) -> int:
    """The most bytes live at any one step: a lower bound on any packing's arena."""
    return max(live_bytes(buffers), default=0)


def lower_bound_bytes(schedule: Schedule) -> int:
    """The plan's lower bound alone (liveness and in-place sharing, no packing): the
    cheap measure for searches that try many schedules."""
    buffers, _ = share_in_place(schedule, live_intervals(schedule))
    return peak_live_bytes(buffers)
