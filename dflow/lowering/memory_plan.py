"""Buffer planning over a schedule: liveness, in-place reuse, and packing into one arena.

The algorithms of `df-plan-buffers` (NNVM's PlanMemory, XLA's buffer assignment),
kept free of xDSL so that any schedule can be planned: graph ops today, fused
kernels later. `lowering/plan_buffers.py` turns a function into a `Schedule`.

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
- Packing: every buffer gets an offset in one arena, a multiple of `ALIGNMENT`
  (64 bytes: a cache line, and enough for any SIMD load), its size rounded up to
  it; two buffers whose intervals share a step must not share a byte. Packers run
  in turn until one reaches the lower bound (no packing can do better; `every_packer`
  runs them all, to compare them) and the smallest arena wins (ties: the first in
  `PACKERS`):
  decreasing size, each at the lowest free offset (`size-lowest`) or in the
  tightest free gap (`size-gap`); decreasing size * lifetime (`area-lowest`);
  TFLite's greedy by breadth, the busiest steps first (`breadth-lowest`,
  `breadth-gap`); NNVM's allocator in schedule order with a coalescing free list
  (`free-list`); and decreasing size under seeded random jitter (`jitter`), which
  breaks the near-ties that mislead the plain size order.

Three figures judge a plan: `arena_bytes` (the chosen packing), the lower bound
`lower_bound_bytes` (the most aligned bytes live at any one step, after in-place
sharing: no packing of these buffers can do better), and `naive_bytes` (every
arena value but a view in its own block, no reuse at all).

Each packer is quadratic in the number of buffers, fine for graphs of thousands
of ops.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

ALIGNMENT = 64
"""Every offset is a multiple of this many bytes, and every block size too."""


class PlanError(ValueError):
    """A schedule that cannot be planned (a value written twice, read before written)."""


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

    def meets(self, other: Buffer) -> bool:
        """Whether both are live at some step (then they must not share a byte)."""
        return self.start <= other.end and other.start <= self.end


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

    def value_offsets(self) -> dict[int, int]:
        """The offset of every arena value (values sharing a buffer share it)."""
        return {
            value: offset
            for buffer, offset in zip(self.buffers, self.offsets, strict=True)
            for value in buffer.values
        }


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
    return schedule.values[value].name or f"value {value}"


@dataclass
class _Sharing:
    """In-place decisions, made step by step: which values share which group."""

    schedule: Schedule
    intervals: dict[int, tuple[int, int]]
    group_of: dict[int, int] = field(default_factory=dict[int, int])
    groups: list[list[int]] = field(default_factory=list[list[int]])
    pairs: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])

    ends: list[int] = field(default_factory=list[int])
    """The last step at which each group holds a live value."""

    def run(self) -> None:
        for index, step in enumerate(self.schedule.steps):
            taken: set[int] = set()
            for output in step.writes:
                if output not in self.intervals:
                    continue
                group = self._viewed(step, output)
                if group is None:
                    group = self._reusable(step, index, output, taken)
                if group is None:
                    group = len(self.groups)
                    self.groups.append([])
                    self.ends.append(index)
                taken.add(group)
                self.groups[group].append(output)
                self.group_of[output] = group
                self.ends[group] = max(self.ends[group], self.intervals[output][1])

    def _viewed(self, step: Step, output: int) -> int | None:
        """The group of the value `output` is a view of, if any."""
        for out, input in step.alias:
            if out == output and input in self.group_of:
                return self.group_of[input]
        return None

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
                return group
        return None

    def buffers(self) -> list[Buffer]:
        values = self.schedule.values
        return [
            Buffer(
                tuple(group),
                align(max(values[v].size for v in group)),
                self.intervals[group[0]][0],
                end,
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


def peak_live_bytes(buffers: Sequence[Buffer]) -> int:
    """The most bytes live at any one step: a lower bound on any packing's arena."""
    if not buffers:
        return 0
    steps = max(b.end for b in buffers) + 2
    delta = [0] * steps
    for buffer in buffers:
        delta[buffer.start] += buffer.size
        delta[buffer.end + 1] -= buffer.size
    peak = live = 0
    for change in delta:
        live += change
        peak = max(peak, live)
    return peak


def arena_size(buffers: Sequence[Buffer], offsets: Sequence[int]) -> int:
    """The end of the highest block."""
    return max((o + b.size for b, o in zip(buffers, offsets, strict=True)), default=0)


# Packers: each maps buffers to offsets, in the buffers' order.

Blocks = list[tuple[int, int]]
"""`(start, end)` byte ranges already taken."""


def lowest_fit(size: int, taken: Blocks) -> int:
    """The lowest aligned offset where `size` bytes miss every taken range."""
    offset = 0
    for start, end in sorted(taken):
        if start - offset >= size:
            break
        offset = max(offset, end)
    return offset


def best_gap(size: int, taken: Blocks) -> int:
    """The start of the smallest gap between taken ranges that holds `size` bytes, else
    the top (keeps large gaps for large buffers)."""
    best: tuple[int, int] | None = None
    offset = 0
    for start, end in sorted(taken):
        gap = start - offset
        if gap >= size and (best is None or gap < best[0]):
            best = (gap, offset)
        offset = max(offset, end)
    return offset if best is None else best[1]


def pack_in_order(
    buffers: Sequence[Buffer], order: Sequence[int], fit: Callable[[int, Blocks], int]
) -> list[int]:
    """Place the buffers one by one in `order`, each where `fit` says among the blocks
    of already placed buffers live at the same time."""
    offsets = [0] * len(buffers)
    placed: list[int] = []
    for index in order:
        buffer = buffers[index]
        taken = [
            (offsets[j], offsets[j] + buffers[j].size) for j in placed if buffers[j].meets(buffer)
        ]
        offsets[index] = fit(buffer.size, taken)
        placed.append(index)
    return offsets


def by_size(buffers: Sequence[Buffer]) -> list[int]:
    """Largest first; then earliest born."""
    return sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, buffers[i].start, i))


def by_area(buffers: Sequence[Buffer]) -> list[int]:
    """Largest size * duration first (long-lived large buffers settle at the bottom)."""

    def area(i: int) -> int:
        return buffers[i].size * (buffers[i].end - buffers[i].start + 1)

    return sorted(range(len(buffers)), key=lambda i: (-area(i), -buffers[i].size, i))


def by_breadth(buffers: Sequence[Buffer]) -> list[int]:
    """Steps by decreasing live bytes; at each, its buffers not yet ordered, largest
    first (TFLite's greedy by breadth: the tightest steps decide the layout)."""
    if not buffers:
        return []
    live: dict[int, list[int]] = defaultdict(list)
    for index in by_size(buffers):
        for step in range(buffers[index].start, buffers[index].end + 1):
            live[step].append(index)
    load = {step: sum(buffers[i].size for i in members) for step, members in live.items()}
    order: dict[int, None] = {}
    for step in sorted(live, key=lambda s: (-load[s], s)):
        order.update(dict.fromkeys(live[step]))
    return list(order)


def pack_size_lowest(buffers: Sequence[Buffer]) -> list[int]:
    """Decreasing size, each at the lowest offset free over its live interval."""
    return pack_in_order(buffers, by_size(buffers), lowest_fit)


def pack_size_best_gap(buffers: Sequence[Buffer]) -> list[int]:
    """Decreasing size, each in the tightest gap free over its live interval."""
    return pack_in_order(buffers, by_size(buffers), best_gap)


def pack_area_lowest(buffers: Sequence[Buffer]) -> list[int]:
    """Decreasing size * duration, each at the lowest free offset."""
    return pack_in_order(buffers, by_area(buffers), lowest_fit)


def pack_breadth_lowest(buffers: Sequence[Buffer]) -> list[int]:
    """Greedy by breadth, each at the lowest free offset."""
    return pack_in_order(buffers, by_breadth(buffers), lowest_fit)


def pack_breadth_best_gap(buffers: Sequence[Buffer]) -> list[int]:
    """Greedy by breadth, each in the tightest free gap."""
    return pack_in_order(buffers, by_breadth(buffers), best_gap)


JITTER_TRIES = 32
"""At most this many random orders in `pack_jitter`."""
JITTER_BUDGET = 4_000_000
"""... and at most this many buffer pairs compared over all its tries."""


def pack_jitter(buffers: Sequence[Buffer]) -> list[int]:
    """Decreasing size, each size scaled by a random factor in [0.5, 1.5), with both
    fits; the best of a few tries (seeded: plans are reproducible), stopping at the
    lower bound. Breaks the ties and near-ties that mislead the plain size order."""
    bound = peak_live_bytes(buffers)
    tries = min(JITTER_TRIES, JITTER_BUDGET // max(len(buffers) ** 2, 1))
    rng = random.Random(0)
    best = pack_size_lowest(buffers)
    for _ in range(tries):
        if arena_size(buffers, best) <= bound:
            break
        scale = [rng.uniform(0.5, 1.5) for _ in buffers]
        order = sorted(range(len(buffers)), key=lambda i: -buffers[i].size * scale[i])
        for fit in (lowest_fit, best_gap):
            offsets = pack_in_order(buffers, order, fit)
            if arena_size(buffers, offsets) < arena_size(buffers, best):
                best = offsets
    return best


@dataclass
class FreeList:
    """Free ranges of a growing arena, sorted by offset and coalesced (NNVM's storage
    pool: best fit, grow the top when nothing fits)."""

    blocks: list[list[int]] = field(default_factory=list[list[int]])
    """`[offset, size]` of each free range."""
    top: int = 0

    def allocate(self, size: int) -> int:
        fitting = [b for b in self.blocks if b[1] >= size]
        if fitting:
            block = min(fitting, key=lambda b: (b[1], b[0]))
            offset = block[0]
            block[0] += size
            block[1] -= size
            if not block[1]:
                self.blocks.remove(block)
            return offset
        if self.blocks and sum(self.blocks[-1]) == self.top:
            offset = self.blocks.pop()[0]
        else:
            offset = self.top
        self.top = offset + size
        return offset

    def free(self, offset: int, size: int) -> None:
        self.blocks.append([offset, size])
        self.blocks.sort()
        merged: list[list[int]] = []
        for block in self.blocks:
            if merged and sum(merged[-1]) == block[0]:
                merged[-1][1] += block[1]
            else:
                merged.append(block)
        self.blocks = [b for b in merged if b[1]]


def pack_free_list(buffers: Sequence[Buffer]) -> list[int]:
    """In schedule order: at each step allocate the buffers born there (largest first),
    then free those that die there, with a coalescing free list."""
    offsets = [0] * len(buffers)
    born: dict[int, list[int]] = defaultdict(list)
    dying: dict[int, list[int]] = defaultdict(list)
    for index in by_size(buffers):
        born[buffers[index].start].append(index)
        dying[buffers[index].end].append(index)
    pool = FreeList()
    for step in sorted(born.keys() | dying.keys()):
        for index in born[step]:
            offsets[index] = pool.allocate(buffers[index].size)
        for index in dying[step]:
            pool.free(offsets[index], buffers[index].size)
    return offsets


PACKERS: dict[str, Callable[[Sequence[Buffer]], list[int]]] = {
    "size-lowest": pack_size_lowest,
    "size-gap": pack_size_best_gap,
    "area-lowest": pack_area_lowest,
    "breadth-lowest": pack_breadth_lowest,
    "breadth-gap": pack_breadth_best_gap,
    "free-list": pack_free_list,
    "jitter": pack_jitter,
}
"""Every packer by name; `plan` keeps the smallest arena."""


def pack_until(buffers: Sequence[Buffer], bound: int, every_packer: bool) -> dict[str, list[int]]:
    """Each packer's offsets, in `PACKERS` order, stopping at the first that reaches
    `bound` (no packing does better) unless `every_packer`."""
    packings: dict[str, list[int]] = {}
    for name, packer in PACKERS.items():
        packings[name] = packer(buffers)
        if not every_packer and arena_size(buffers, packings[name]) <= bound:
            break
    return packings


def lower_bound_bytes(schedule: Schedule) -> int:
    """The plan's lower bound alone (liveness and in-place sharing, no packing): the
    cheap measure for searches that try many schedules."""
    buffers, _ = share_in_place(schedule, live_intervals(schedule))
    return peak_live_bytes(buffers)


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
