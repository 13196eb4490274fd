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
from dataclasses import dataclass, field

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
    reads: list[list[int]]
    """The storages each step reads."""
    inplace: list[list[tuple[int, int]]]
    """Each step's in-place candidates: (the operand's storage, the output's bytes)."""
    plain: list[int | None] = field(default_factory=list[int | None])
    """The bytes each step adds while it runs where that needs no test: it writes
    nothing in place and it alone writes what it allocates (else None)."""

    @staticmethod
    def of(schedule: Schedule) -> _Storages:
        footprint = Footprint.of(schedule)
        number = {root: i for i, root in enumerate(sorted(footprint.size))}
        count = len(number)
        storages = _Storages([0] * count, [0] * count, [0] * count, [], [], [])
        for root, index in number.items():
            storages.sizes[index] = footprint.size[root]
            storages.readers[index] = sum(1 << step for step in footprint.readers[root])
        for step, born in enumerate(footprint.born):
            storages.born.append([number[root] for root in born])
            for root in born:
                storages.writers[number[root]] |= 1 << step
            storages.reads.append([number[root] for root in footprint.reads[step]])
            storages.inplace.append([(number[g], size) for g, size in footprint.inplace[step]])
        for step, born in enumerate(storages.born):
            alone = all(storages.writers[g] == 1 << step for g in born)
            plain = alone and not storages.inplace[step]
            storages.plain.append(sum(storages.sizes[g] for g in born) if plain else None)
        return storages

    def during(self, done: int, live: int, step: int) -> int:
        """The bytes live while `step` runs after `done` (`live`: the bytes live
        between steps once `done` has run)."""
        now = done | 1 << step
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

    def live_next(self, done: int, live: int, step: int) -> int:
        """The bytes live between steps once `step` has run after `done` (`live`: those
        once `done` has run): less what `step` reads last, plus what it allocates that
        a later step reads."""
        now = done | 1 << step
        sizes, writers, readers = self.sizes, self.writers, self.readers
        for storage in self.reads[step]:
            if writers[storage] & done and not readers[storage] & ~now:
                live -= sizes[storage]
        for storage in self.born[step]:
            if not writers[storage] & done and readers[storage] & ~now:
                live += sizes[storage]
        return live


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


_State = tuple[int, int, int, int, int]
"""A set of run steps: its best peak, the bytes live after it, the steps ready to run
next (a bit mask), the set before it and the step run last."""


@dataclass
class _Search:
    storages: _Storages
    before: list[int]
    """Each step's predecessors, as a bit mask (the fixed last step: every other)."""
    after: list[list[int]]
    """Each step's successors."""
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
        after = [[t for t in range(count) if before[t] >> step & 1] for step in range(count)]
        deadline = time.monotonic() + limits.seconds
        return _Search(_Storages.of(schedule), before, after, ceiling, limits, deadline)

    def run(self) -> Exact | None:
        ready = sum(1 << step for step, earlier in enumerate(self.before) if not earlier)
        layer: dict[int, _State] = {0: (0, 0, ready, -1, -1)}
        parents = [layer]
        for _ in self.before:
            following = self._expand(layer)
            if not following:
                return None
            parents.append(following)
            layer = following
        full = (1 << len(self.before)) - 1
        return Exact(_path(parents, full), layer[full][0]) if full in layer else None

    def _expand(self, layer: dict[int, _State]) -> dict[int, _State] | None:
        """The sets one step further, each reached at its least peak; None past the
        limits."""
        following: dict[int, _State] = {}
        limits = self.limits
        for done, (peak, live, ready, _, _) in layer.items():
            self._extend(done, peak, live, ready, following)
            self.expanded += 1
            if len(following) > limits.states or self.expanded > limits.work:
                return None
            if time.monotonic() > self.deadline:
                return None
        return following

    def _extend(
        self, done: int, peak: int, live: int, ready: int, following: dict[int, _State]
    ) -> None:
        """Run each ready step after `done`, keeping each new set's least peak (the
        first found on ties: steps in ascending order)."""
        storages, ceiling = self.storages, self.ceiling
        plain = storages.plain
        waiting = ready
        while waiting:
            bit = waiting & -waiting
            waiting ^= bit
            step = bit.bit_length() - 1
            rise = plain[step]
            during = live + rise if rise is not None else storages.during(done, live, step)
            reached = during if during > peak else peak
            if ceiling is not None and reached > ceiling:
                continue
            now = done | bit
            known = following.get(now)
            if known is None or reached < known[0]:
                following[now] = (reached, *self._after_step(done, live, ready, step))

    def _after_step(self, done: int, live: int, ready: int, step: int) -> tuple[int, int, int, int]:
        """The live bytes and ready steps once `step` has run after `done`, then
        `done` and `step` (the way back)."""
        now = done | 1 << step
        before = self.before
        for successor in self.after[step]:
            if not before[successor] & ~now:
                ready |= 1 << successor
        ready &= ~(1 << step)
        return self.storages.live_next(done, live, step), ready, done, step


def _path(parents: list[dict[int, _State]], full: int) -> tuple[int, ...]:
    order: list[int] = []
    done = full
    for layer in reversed(parents[1:]):
        *_, done_before, step = layer[done]
        order.append(step)
        done = done_before
    return tuple(reversed(order))
