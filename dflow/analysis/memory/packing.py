"""Packing buffers into one arena: each gets an offset, none overlaps a buffer
live at the same step.

Every offset is a multiple of `liveness.ALIGNMENT` (64 bytes: a cache line, and
enough for any SIMD load) and every size is rounded up to it. Packers run in turn
until one reaches the lower bound (no packing can do better; `every_packer` runs
them all, to compare them) and the smallest arena wins (ties: the first in
`PACKERS`): decreasing size, each at the lowest free offset (`size-lowest`) or in
the tightest free gap (`size-gap`); decreasing size * lifetime (`area-lowest`);
TFLite's greedy by breadth, the busiest steps first (`breadth-lowest`,
`breadth-gap`); NNVM's allocator in schedule order with a coalescing free list
(`free-list`); and decreasing size under seeded random jitter (`jitter`), which
breaks the near-ties that mislead the plain size order.

Each packer is quadratic in the number of buffers, the overlaps of each one found
by NumPy over all placed before it (5,000 ops' graphs plan in tens of ms).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dflow.analysis.memory.liveness import Buffer, peak_live_bytes


def arena_size(buffers: Sequence[Buffer], offsets: Sequence[int]) -> int:
    """The end of the highest block."""
    return max((o + b.size for b, o in zip(buffers, offsets, strict=True)), default=0)


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
    starts = np.array([b.start for b in buffers], np.int64)
    ends = np.array([b.end for b in buffers], np.int64)
    sizes = np.array([b.size for b in buffers], np.int64)
    offsets = np.zeros(len(buffers), np.int64)
    placed = np.zeros(len(buffers), bool)
    for index in order:
        buffer = buffers[index]
        live = placed & (starts <= buffer.end) & (ends >= buffer.start)  # both live at a step
        lows = offsets[live]
        taken = list(zip(lows.tolist(), (lows + sizes[live]).tolist(), strict=True))
        offsets[index] = fit(buffer.size, taken)
        placed[index] = True
    return offsets.tolist()


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
