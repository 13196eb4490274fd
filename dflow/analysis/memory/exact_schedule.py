"""The order of least peak memory, exactly, for small schedules.

A dynamic program over the sets of steps already run (the down-sets of the
dependences, each a bit mask): the best peak to reach a set is the least, over the
step run last, of the peak before it and the bytes live while it runs. Those bytes
depend on the set alone, as the planner computes them (`liveness`):

- a storage (a value and its views: `scheduling.view_groups`) is live while a step
  runs if a step already run or this one wrote a value of it, and this step or one not
  yet run reads it, or this step writes it (a value nobody reads lives at its own
  step); returned values are read by the last step, so they live to the end;
- a step writes an output in place over an operand's storage (no bytes of its own)
  when the operand may be overwritten (`Step.inplace`), has the output's size, and no
  step after this one reads that storage.

So the optimum is exact for the planner's lower bound (the tests compare it with every
topological order of small graphs, measured by the planner itself). States whose peak
already passes the best heuristic order's are dropped; the search gives up (None)
past `STATE_LIMIT` states or `TIME_LIMIT_S` seconds (by default), so it serves
schedules of a few dozen steps, depending on how many orders they allow.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from dflow.analysis.memory.liveness import Schedule
from dflow.analysis.memory.scheduling import Dependences, Footprint

STATE_LIMIT = 200_000
"""The most sets of run steps the search keeps at once, by default."""

TIME_LIMIT_S = 2.0
"""The default time the search may take, in seconds."""


@dataclass(frozen=True)
class Exact:
    """An order of least peak, and that peak (the planner's lower bound for it)."""

    order: tuple[int, ...]
    bound: int


@dataclass
class _Storages:
    """`scheduling.Footprint`'s storages numbered, their births and readers as bit masks."""

    sizes: list[int]
    writers: list[int]
    """The step that allocates each storage (a view's step only reads it)."""
    readers: list[int]
    born: list[list[int]]
    """The storages each step allocates (it writes their first value)."""
    inplace: list[list[tuple[int, int]]]
    """Each step's in-place candidates: (the operand's storage, the output's bytes)."""

    @staticmethod
    def of(schedule: Schedule) -> _Storages:
        footprint = Footprint.of(schedule)
        number = {root: i for i, root in enumerate(sorted(footprint.size))}
        count = len(number)
        storages = _Storages([0] * count, [0] * count, [0] * count, [], [])
        for root, index in number.items():
            storages.sizes[index] = footprint.size[root]
            storages.readers[index] = sum(1 << step for step in footprint.readers[root])
        for step, born in enumerate(footprint.born):
            storages.born.append([number[root] for root in born])
            for root in born:
                storages.writers[number[root]] |= 1 << step
            storages.inplace.append([(number[g], size) for g, size in footprint.inplace[step]])
        return storages

    def live_after(self, done: int) -> int:
        """The bytes live between steps once the steps of `done` have run."""
        return sum(
            size
            for size, writers, readers in zip(self.sizes, self.writers, self.readers, strict=True)
            if writers & done and readers & ~done
        )

    def during(self, done: int, live: int, step: int) -> int:
        """The bytes live while `step` runs after `done` (`live`: `live_after(done)`)."""
        bit = 1 << step
        now = done | bit
        total = live
        for storage in self.born[step]:
            if not self.writers[storage] & done:
                total += self.sizes[storage]
        taken: set[int] = set()
        for source, size in self.inplace[step]:
            if source not in taken and not self.readers[source] & ~now:
                taken.add(source)
                total -= size
        return total


@dataclass(frozen=True)
class Limits:
    """When the search gives up."""

    seconds: float = TIME_LIMIT_S
    states: int = STATE_LIMIT
    """Sets of run steps kept at once."""
    work: float = math.inf
    """Sets of run steps expanded in all: a limit independent of the machine's speed,
    so that whether the search finishes, and so the order chosen, is too."""


QUICK = Limits(seconds=math.inf, states=2_000, work=20_000)
"""The limits under which `df-schedule{strategy=best}` tries the search on small
schedules: tens of milliseconds at most, the same answer on every machine."""


def exact_order(
    schedule: Schedule,
    dependences: Dependences,
    ceiling: int | None = None,
    limits: Limits = Limits(),
) -> Exact | None:
    """An order of least peak, or None when the search passes its `limits`. `ceiling`:
    a peak some order reaches (the best heuristic's): states above it are dropped."""
    return _Search.of(schedule, dependences, ceiling, limits).run()


@dataclass
class _Search:
    storages: _Storages
    before: list[int]
    """Each step's predecessors, as a bit mask (the fixed last step: every other)."""
    ceiling: int | None
    limits: Limits
    deadline: float
    expanded: int = 0

    @staticmethod
    def of(
        schedule: Schedule, dependences: Dependences, ceiling: int | None, limits: Limits
    ) -> _Search:
        count = len(schedule.steps)
        before = [sum(1 << p for p in earlier) for earlier in dependences.before]
        if dependences.last is not None:
            before[dependences.last] = ((1 << count) - 1) & ~(1 << dependences.last)
        deadline = time.monotonic() + limits.seconds
        return _Search(_Storages.of(schedule), before, ceiling, limits, deadline)

    def run(self) -> Exact | None:
        layer: dict[int, tuple[int, int, int]] = {0: (0, -1, -1)}
        """Each set of run steps: its best peak, the set before it and the step run last."""
        parents = [layer]
        for _ in self.before:
            following = self._expand(layer)
            if not following:
                return None
            parents.append(following)
            layer = following
        full = (1 << len(self.before)) - 1
        return Exact(_path(parents, full), layer[full][0]) if full in layer else None

    def _expand(
        self, layer: dict[int, tuple[int, int, int]]
    ) -> dict[int, tuple[int, int, int]] | None:
        """The sets one step further, each reached at its least peak; None past the
        limits."""
        following: dict[int, tuple[int, int, int]] = {}
        limits = self.limits
        for done, (peak, _, _) in layer.items():
            self._extend(done, peak, following)
            self.expanded += 1
            if len(following) > limits.states or self.expanded > limits.work:
                return None
            if time.monotonic() > self.deadline:
                return None
        return following

    def _extend(self, done: int, peak: int, following: dict[int, tuple[int, int, int]]) -> None:
        live = self.storages.live_after(done)
        for step, earlier in enumerate(self.before):
            bit = 1 << step
            if done & bit or earlier & ~done:
                continue
            reached = max(peak, self.storages.during(done, live, step))
            if self.ceiling is not None and reached > self.ceiling:
                continue
            known = following.get(done | bit)
            if known is None or reached < known[0]:
                following[done | bit] = (reached, done, step)


def _path(parents: list[dict[int, tuple[int, int, int]]], full: int) -> tuple[int, ...]:
    order: list[int] = []
    done = full
    for layer in reversed(parents[1:]):
        _, done_before, step = layer[done]
        order.append(step)
        done = done_before
    return tuple(reversed(order))
