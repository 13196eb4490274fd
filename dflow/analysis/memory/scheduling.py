"""Memory-aware orders: the order of a schedule's steps that needs the least memory.

The planner (`memory_plan`) places buffers for one order of the steps, and its lower
bound (the most bytes live at any step) depends on that order: a conv net's training
step needs 0.71x the bytes in a better order, with the same ops. XLA picks the best of
several schedulers by simulated peak and PyTorch Inductor reorders for peak memory;
`best_order` does the same here. Each scheduler proposes a topological order, the
planner's own `lower_bound_bytes` judges it (in-place sharing and views re-decided on
that order), and the lowest wins; ties go to the first in `SCHEDULERS`, the written
order first, so a schedule no scheduler improves stays as written.

What may move is said by `Dependences`: a step runs after the steps that write what it
reads; the steps of `chain` (ops with effects: sends and receives) keep their order,
so each device's sequence of transfers, and with it the absence of deadlocks, is the
written one; and a fixed `last` step (a function's return) stays last.

The schedulers, each deterministic (ties: the written order):

- `written`: as written.
- `post-order`: depth first from the sinks (unused values, sends, the results), each
  step after what it reads, in written order (XLA's post-order scheduler).
- `dfs`: the same, visiting first the operand whose subgraph has the most extra users,
  then the most bytes (XLA's DFS memory scheduler).
- `bfs`: the ready step whose predecessors ran earliest (Inductor's BFS).
- `greedy`: list scheduling, the ready step that allocates least minus what it frees.
- `lpmf`: Inductor's least peak memory first: among ready steps, the lowest peak if
  run now, then the least net bytes.
- `random`: `greedy` with each step's net bytes scaled by a seeded random factor in
  [0.5, 1.5) and ties broken at random, `RANDOM_SEEDS` seeds (reproducible).

`exact_schedule` finds the optimum of small schedules, to say how far these are.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from dflow.analysis.memory.liveness import Schedule, Step, align, lower_bound_bytes

RANDOM_SEEDS = 2
"""How many seeded orders `random` tries (more found nothing better on the benchmark
graphs: `bench/memory.py`)."""

Priority = tuple[float, int]
"""A list scheduler's key of a ready step: the least runs first."""


@dataclass(frozen=True)
class Dependences:
    """What must run before what."""

    before: tuple[tuple[int, ...], ...]
    """For each step, the steps that must run earlier: the writers of what it reads,
    and its predecessor in the chain (the fixed last step's are its data only)."""
    last: int | None = None
    """A step that runs after every other (a function's return), if any."""

    @staticmethod
    def of(schedule: Schedule, chain: Sequence[int] = (), last: int | None = None) -> Dependences:
        """The dependences of `schedule`: data, `chain` kept in its order, `last` last."""
        writer: dict[int, int] = {}
        for index, step in enumerate(schedule.steps):
            for value in step.writes:
                writer[value] = index
        before: list[dict[int, None]] = [{} for _ in schedule.steps]
        for index, step in enumerate(schedule.steps):
            for value in step.reads:
                if value in writer and writer[value] != index:
                    before[index][writer[value]] = None
        for first, second in pairwise(chain):
            before[second][first] = None
        return Dependences(tuple(tuple(sorted(b)) for b in before), last)

    def after(self) -> list[list[int]]:
        """For each step, the steps that must run later (the fixed last step aside)."""
        after: list[list[int]] = [[] for _ in self.before]
        for index, earlier in enumerate(self.before):
            for step in earlier:
                after[step].append(index)
        return after

    def is_order(self, order: Sequence[int]) -> bool:
        """Whether `order` runs every step once, each after those it must follow."""
        if sorted(order) != list(range(len(self.before))):
            return False
        if self.last is not None and order[-1] != self.last:
            return False
        position = {step: i for i, step in enumerate(order)}
        return all(
            position[e] < position[s] for s, earlier in enumerate(self.before) for e in earlier
        )


def reorder(schedule: Schedule, order: Sequence[int]) -> Schedule:
    """`schedule` with its steps run in `order` (step indices)."""
    return Schedule(schedule.values, tuple(schedule.steps[i] for i in order))


def bound_of(schedule: Schedule, order: Sequence[int]) -> int:
    """The planner's lower bound for `schedule` run in `order`."""
    return lower_bound_bytes(reorder(schedule, order))


def view_groups(schedule: Schedule) -> list[int]:
    """For each value, the storage it shares through views (its root's index), or -1
    outside the arena: a view is its source's bytes for as long as either lives."""
    parent = list(range(len(schedule.values)))

    def find(value: int) -> int:
        while parent[value] != value:
            parent[value] = parent[parent[value]]
            value = parent[value]
        return value

    for step in schedule.steps:
        for output, source in step.alias:
            parent[find(output)] = find(source)
    return [find(v) if value.in_arena else -1 for v, value in enumerate(schedule.values)]


@dataclass
class Footprint:
    """The planner's memory model, updated as a scheduler runs the steps one by one.

    A storage (a value and its views) is allocated by the step that writes its first
    value and freed by its last reader; a step whose operand dies there and may be
    overwritten in place (same size) allocates nothing for that output. `net(s)` is
    what running `s` now adds to the live bytes, `rise(s)` what it adds while it runs
    (before its dying operands are freed)."""

    size: dict[int, int] = field(default_factory=dict[int, int])
    readers: dict[int, set[int]] = field(default_factory=dict[int, set[int]])
    """The steps not yet run that read each storage."""
    reads: list[tuple[int, ...]] = field(default_factory=list[tuple[int, ...]])
    """The storages each step reads."""
    born: list[tuple[int, ...]] = field(default_factory=list[tuple[int, ...]])
    """The storages each step allocates."""
    inplace: list[tuple[tuple[int, int], ...]] = field(
        default_factory=list[tuple[tuple[int, int], ...]]
    )
    """Each step's in-place candidates: (the operand's storage, the output's bytes)."""
    live: int = 0

    @staticmethod
    def of(schedule: Schedule) -> Footprint:
        group = view_groups(schedule)
        footprint = Footprint()
        viewed = {output for step in schedule.steps for output, _ in step.alias}
        for index, step in enumerate(schedule.steps):
            born = tuple(group[v] for v in step.writes if group[v] >= 0 and v not in viewed)
            for storage in born:
                footprint.size[storage] = align(schedule.values[storage].size)
                footprint.readers.setdefault(storage, set())
            reads = tuple(dict.fromkeys(group[v] for v in step.reads if group[v] >= 0))
            for storage in reads:
                footprint.readers.setdefault(storage, set()).add(index)
            footprint.born.append(born)
            footprint.reads.append(reads)
            footprint.inplace.append(_inplace(schedule, step, group, viewed))
        return footprint

    def _dying(self, index: int) -> int:
        """The bytes `index` frees if run now: storages it reads last, storages it
        writes that nobody reads."""
        readers, size = self.readers, self.size
        freed = sum(size[g] for g in self.reads[index] if len(readers[g]) == 1)
        return freed + sum(size[g] for g in self.born[index] if not readers[g])

    def _saving(self, index: int) -> int:
        """The bytes `index` writes in place over dying operands if run now."""
        taken: set[int] = set()
        saving = 0
        for source, size in self.inplace[index]:
            if source not in taken and len(self.readers[source]) == 1:
                taken.add(source)
                saving += size
        return saving

    def allocated(self, index: int) -> int:
        return sum(self.size[g] for g in self.born[index])

    def net(self, index: int) -> int:
        return self.allocated(index) - self._dying(index)

    def rise(self, index: int) -> int:
        return self.allocated(index) - self._saving(index)

    def run(self, index: int) -> list[int]:
        """Account for running `index`; the steps that became the last reader of a
        storage (their `net` and `rise` changed)."""
        self.live += self.net(index)
        changed: list[int] = []
        for storage in self.reads[index]:
            readers = self.readers[storage]
            readers.discard(index)
            if len(readers) == 1:
                changed.extend(readers)
        return changed


def _inplace(
    schedule: Schedule, step: Step, group: list[int], viewed: set[int]
) -> tuple[tuple[int, int], ...]:
    """A step's in-place candidates, as `Footprint.inplace` keeps them."""
    values = schedule.values
    return tuple(
        (group[source], align(values[output].size))
        for output, source in step.inplace
        if group[source] >= 0
        and group[output] >= 0
        and output not in viewed
        and values[output].size == values[source].size
    )


@dataclass
class Ready:
    """The steps whose predecessors have all run (the fixed last step never)."""

    dependences: Dependences
    waiting: list[int] = field(default_factory=list[int])
    after: list[list[int]] = field(default_factory=list[list[int]])

    @staticmethod
    def of(dependences: Dependences) -> Ready:
        waiting = [len(b) for b in dependences.before]
        return Ready(dependences, waiting, dependences.after())

    def initial(self) -> list[int]:
        last = self.dependences.last
        return [s for s, count in enumerate(self.waiting) if not count and s != last]

    def run(self, index: int) -> list[int]:
        """Mark `index` run; the steps that became ready."""
        ready: list[int] = []
        for step in self.after[index]:
            self.waiting[step] -= 1
            if not self.waiting[step] and step != self.dependences.last:
                ready.append(step)
        return ready


def _finished(dependences: Dependences, order: list[int]) -> list[int]:
    """`order` with the fixed last step appended."""
    return order if dependences.last is None else [*order, dependences.last]


def written_order(schedule: Schedule, dependences: Dependences) -> list[int]:
    """As written."""
    return list(range(len(schedule.steps)))


def _depth_first(
    dependences: Dependences, roots: Sequence[int], key: Callable[[int], tuple[int, ...]]
) -> list[int]:
    """Post-order depth-first search over `before` from `roots` (iterative: chains of
    thousands of ops), visiting each step's predecessors in order of `key`."""
    seen = [False] * len(dependences.before)
    order: list[int] = []
    for root in roots:
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, iter(sorted(dependences.before[root], key=key)))]
        while stack:
            step, pending = stack[-1]
            following = next((p for p in pending if not seen[p]), None)
            if following is None:
                stack.pop()
                order.append(step)
            else:
                seen[following] = True
                stack.append((following, iter(sorted(dependences.before[following], key=key))))
    return order


def _sinks(dependences: Dependences) -> list[int]:
    """The steps nothing must follow, in written order; the fixed last step last."""
    after = dependences.after()
    sinks = [s for s, later in enumerate(after) if not later and s != dependences.last]
    return _finished(dependences, sinks)


def post_order(schedule: Schedule, dependences: Dependences) -> list[int]:
    """Depth first from the sinks, predecessors in written order."""
    return _depth_first(dependences, _sinks(dependences), key=lambda s: (s,))


def dfs_order(schedule: Schedule, dependences: Dependences) -> list[int]:
    """Depth first from the sinks, visiting first the predecessor with the most extra
    users below it, then the most bytes below it (XLA's DFS memory scheduler)."""
    after = dependences.after()
    extra = [0] * len(schedule.steps)
    total = [0] * len(schedule.steps)
    cumulative = 0
    for index in _depth_first(dependences, _sinks(dependences), key=lambda s: (s,)):
        step = schedule.steps[index]
        own = sum(align(schedule.values[v].size) for v in step.writes)
        cumulative += own
        earlier = dependences.before[index]
        extra[index] = max(len(after[index]) - 1, 0) + sum(extra[p] for p in earlier)
        total[index] = min(own + sum(total[p] for p in earlier), cumulative)
    return _depth_first(dependences, _sinks(dependences), key=lambda s: (-extra[s], -total[s], s))


def bfs_order(schedule: Schedule, dependences: Dependences) -> list[int]:
    """The ready step whose predecessors ran earliest first (Inductor's BFS): values
    are read soon after they are written."""
    ready = Ready.of(dependences)
    position: dict[int, int] = {}

    def entry(step: int) -> tuple[list[int], int]:
        return sorted(position[p] for p in dependences.before[step]), step

    heap = [entry(s) for s in ready.initial()]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        _, step = heapq.heappop(heap)
        position[step] = len(order)
        order.append(step)
        for following in ready.run(step):
            heapq.heappush(heap, entry(following))
    return _finished(dependences, order)


def _list_schedule(
    schedule: Schedule, dependences: Dependences, key: Callable[[Footprint, int], Priority]
) -> list[int]:
    """The ready step of least `key` first; a step's key is recomputed when it becomes
    the last reader of a storage (the only event that changes its net bytes)."""
    footprint = Footprint.of(schedule)
    ready = Ready.of(dependences)
    current: dict[int, Priority] = {}
    heap: list[tuple[Priority, int]] = []

    def push(step: int) -> None:
        current[step] = key(footprint, step)
        heapq.heappush(heap, (current[step], step))

    for step in ready.initial():
        push(step)
    order: list[int] = []
    while heap:
        priority, step = heapq.heappop(heap)
        if current.get(step) != priority:
            continue
        del current[step]
        order.append(step)
        for changed in footprint.run(step):
            if changed in current:
                push(changed)
        for following in ready.run(step):
            push(following)
    return _finished(dependences, order)


def greedy_order(schedule: Schedule, dependences: Dependences) -> list[int]:
    """The ready step that allocates least minus what it frees first."""
    return _list_schedule(
        schedule, dependences, lambda memory, step: (float(memory.net(step)), step)
    )


def random_orders(schedule: Schedule, dependences: Dependences) -> list[list[int]]:
    """`greedy` with each step's net bytes scaled by a random factor in [0.5, 1.5) and
    random ties, for each of `RANDOM_SEEDS` seeds."""
    return [
        _list_schedule(schedule, dependences, _jittered(len(schedule.steps), seed))
        for seed in range(RANDOM_SEEDS)
    ]


def _jittered(count: int, seed: int) -> Callable[[Footprint, int], Priority]:
    rng = random.Random(seed)
    scale = [rng.uniform(0.5, 1.5) for _ in range(count)]
    rank = list(range(count))
    rng.shuffle(rank)
    return lambda memory, step: (memory.net(step) * scale[step], rank[step])


def lpmf_order(schedule: Schedule, dependences: Dependences) -> list[int]:
    """Inductor's least peak memory first: among the ready steps, those that keep the
    peak so far if run now, the one of least net bytes; if none does, the one that
    raises the peak least. Each ready step's (rise, net) is kept and recomputed only
    when it becomes the last reader of a storage."""
    footprint = Footprint.of(schedule)
    ready = Ready.of(dependences)
    costs = {s: (footprint.rise(s), footprint.net(s)) for s in ready.initial()}
    peak = 0
    order: list[int] = []
    while costs:
        live = footprint.live
        step = min(costs, key=lambda s: (max(live + costs[s][0], peak), costs[s][1], s))
        peak = max(peak, live + costs.pop(step)[0])
        order.append(step)
        for changed in footprint.run(step):
            if changed in costs:
                costs[changed] = (footprint.rise(changed), footprint.net(changed))
        for following in ready.run(step):
            costs[following] = (footprint.rise(following), footprint.net(following))
    return _finished(dependences, order)


Scheduler = Callable[[Schedule, Dependences], list[list[int]]]


def _one(scheduler: Callable[[Schedule, Dependences], list[int]]) -> Scheduler:
    return lambda schedule, dependences: [scheduler(schedule, dependences)]


SCHEDULERS: dict[str, Scheduler] = {
    "written": _one(written_order),
    "post-order": _one(post_order),
    "dfs": _one(dfs_order),
    "bfs": _one(bfs_order),
    "greedy": _one(greedy_order),
    "lpmf": _one(lpmf_order),
    "random": random_orders,
}
"""Every heuristic scheduler by name, each giving one order or a few; `best_order`
tries them in this order."""


@dataclass(frozen=True)
class Choice:
    """The order kept, and how each scheduler did."""

    order: tuple[int, ...]
    bound: int
    """The planner's lower bound for `order`."""
    strategy: str
    bounds: dict[str, int]
    """The best bound each scheduler reached, by name."""


def floor_bytes(schedule: Schedule) -> int:
    """A lower bound of every order's peak: the most bytes one step needs at once (the
    storages it reads and writes, less what it might write in place), or the last
    step's (the returned values). An order that reaches it is optimal."""
    footprint = Footprint.of(schedule)
    floor = 0
    for index in range(len(schedule.steps)):
        storages = {*footprint.reads[index], *footprint.born[index]}
        saving = sum(size for _, size in footprint.inplace[index])
        floor = max(floor, sum(footprint.size[g] for g in storages) - saving)
    return floor


def best_order(
    schedule: Schedule, dependences: Dependences, strategies: Sequence[str] = tuple(SCHEDULERS)
) -> Choice:
    """The order of least lower bound among those `strategies` propose (ties: the
    first proposed; `written` is always tried first). Stops at an order that reaches
    `floor_bytes`: none does better."""
    names = ["written", *(s for s in strategies if s != "written")]
    floor = floor_bytes(schedule)
    best: Choice | None = None
    bounds: dict[str, int] = {}
    seen: dict[tuple[int, ...], int] = {}
    for name in names:
        for proposed in SCHEDULERS[name](schedule, dependences):
            order = tuple(proposed)
            if order not in seen:
                seen[order] = bound_of(schedule, order)
            bound = seen[order]
            bounds[name] = min(bound, bounds.get(name, bound))
            if best is None or bound < best.bound:
                best = Choice(order, bound, name, bounds)
        assert best is not None
        if best.bound <= floor:
            break
    assert best is not None
    return Choice(best.order, best.bound, best.strategy, bounds)
