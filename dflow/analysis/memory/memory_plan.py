"""The memory plan of a schedule: liveness, in-place sharing and the best packing.

`plan(schedule)` runs `liveness` (live intervals, in-place sharing, the lower
bound) and then the packers of `packing` until one reaches the bound. Three
figures judge a plan: `arena_bytes` (the chosen packing), the lower bound
`lower_bound_bytes` (the most aligned bytes live at any one step, after in-place
sharing: no packing of these buffers can do better), and `naive_bytes` (every
arena value but a view in its own block, no reuse at all).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dflow.analysis.memory.liveness import (
    Buffer,
    Schedule,
    align,
    live_bytes,
    live_intervals,
    peak_live_bytes,
    share_in_place,
)
from dflow.analysis.memory.packing import arena_size, pack_until


@dataclass(frozen=True)
class Placement:
    """One value in the arena: its bytes `[offset, offset + size)` hold it from step
    `start` to step `end` (inclusive)."""

    name: str
    offset: int
    size: int
    start: int
    end: int


@dataclass(frozen=True)
class MemoryPlan:
    """Where every arena value lives, and how good that is."""

    buffers: tuple[Buffer, ...]
    offsets: tuple[int, ...]
    """Of each buffer, in bytes from the arena's start (the chosen packing)."""
    packer: str
    """The packer whose arena was smallest."""
    arenas: dict[str, int]
    """The arena size of each packer that ran, by packer name."""
    intervals: dict[int, tuple[int, int]]
    """Each arena value's live interval `(first step, last step)`."""
    lower_bound_bytes: int
    naive_bytes: int
    inplace_pairs: tuple[tuple[int, int], ...] = field(default=())
    """`(input, output)` values that share storage because the step wrote in place."""

    @property
    def arena_bytes(self) -> int:
        return self.arenas[self.packer]

    def live_bytes(self) -> list[int]:
        """The bytes live at each step (after in-place sharing): the curve whose
        peak is the lower bound."""
        return live_bytes(self.buffers)

    def placements(self, schedule: Schedule) -> list[Placement]:
        """Every arena value of `schedule` (the one planned) at its offset, over its
        own live interval: what `dflow plan --plot` draws."""
        offsets = self.value_offsets()
        return [
            Placement(
                schedule.values[v].name or f"v{v}",
                offsets[v],
                schedule.values[v].size,
                *self.intervals[v],
            )
            for v in sorted(self.intervals)
        ]

    def value_offsets(self) -> dict[int, int]:
        """The offset of every arena value (values sharing a buffer share it)."""
        return {
            value: offset + within
            for buffer, offset in zip(self.buffers, self.offsets, strict=True)
            for value, within in zip(buffer.values, buffer.within, strict=True)
        }


def plan(schedule: Schedule, every_packer: bool = False) -> MemoryPlan:
    """Liveness, in-place sharing and the best packing, for one schedule: the packers
    run until one reaches the lower bound (all of them with `every_packer`, to compare
    them)."""
    intervals = live_intervals(schedule)
    buffers, pairs = share_in_place(schedule, intervals)
    bound = peak_live_bytes(buffers)
    packings = pack_until(buffers, bound, every_packer)
    arenas = {name: arena_size(buffers, offsets) for name, offsets in packings.items()}
    best = min(arenas, key=lambda name: arenas[name])
    views = {output for step in schedule.steps for output, _ in step.alias}
    views.update(step.writes[0] for step in schedule.steps if step.parts)
    naive = sum(align(schedule.values[v].size) for v in intervals if v not in views)
    return MemoryPlan(
        tuple(buffers),
        tuple(packings[best]),
        best,
        arenas,
        intervals,
        bound,
        naive,
        tuple(pairs),
    )
