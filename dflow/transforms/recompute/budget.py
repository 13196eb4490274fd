"""Budget mode: which forward values to keep and which to recompute under a memory budget.

A plan is the set of forward ops whose values the backward pass recomputes instead
of reading; every other forward value is kept (a checkpoint). A recomputed value is
cloned once, just in time: before the first backward op that reads it, or before
the first clone that needs it, whichever comes first; the clone reads kept values
and earlier clones. With checkpoints every few layers this is Chen et al.'s
segmented recomputation: each segment is recomputed from its checkpoint when the
backward pass reaches it.

Plans are judged on the planner's own model (`analysis/memory/memory_plan.py`): the
rewritten function is built as an abstract schedule, without IR, put in the order
`df-schedule` would choose (`analysis/memory/order_choice.py`: reordering alone may meet the
budget, with no recomputation), and its lower bound (liveness after in-place
sharing) is the cost of memory; estimated flops
(the placement cost model) are the cost of recomputation. Three searches propose
plans and the cheapest one within the budget wins:

- `chen`: keep every k-th candidate for every k, and Chen's greedy split by bytes
  (a checkpoint each time the bytes since the last one pass a threshold) for a
  sweep of thresholds;
- `greedy`: recompute candidates in order of flops per byte saved, one more at a
  time, and stop at the first plan within the budget;
- `exact`: every subset of the candidates, for functions of at most
  `EXACT_LIMIT` candidates;
- `milp`: the integer program of `milp.py` (Checkmate's idea for our rewrite),
  solved by HiGHS through `scipy.optimize.milp`, for functions of at most
  `milp.MILP_STEP_LIMIT` ops.

The chosen plan is then applied to the IR and the planner re-measures the arena;
the pass reports that figure, never the estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import is_side_effect_free

from dflow.analysis import cost_model
from dflow.analysis.memory.function_schedule import FunctionSchedule
from dflow.analysis.memory.liveness import Schedule, Step, Value, lower_bound_bytes
from dflow.analysis.memory.memory_plan import plan
from dflow.analysis.memory.order_choice import OrderChoice, choose_order
from dflow.analysis.memory.scheduling import Dependences, reorder
from dflow.transforms.recompute.groups import clone_before, is_target, read_clones, recomputable
from dflow.transforms.recompute.milp import MILP_STEP_LIMIT, BudgetProgram, ProgramInput

EXACT_LIMIT = 10
"""The most candidates the exact search enumerates (2**10 schedules)."""

THRESHOLDS = 24
"""Byte thresholds tried by Chen's greedy split."""


def flops_of(ops: Iterable[Operation]) -> int:
    """Estimated flops (the placement cost model's)."""
    return sum(cost_model.op_flops(op) for op in ops)


def forward_flops(function: FuncOp) -> int:
    """Estimated flops of the forward pass: every op but the backward ones."""
    return flops_of(op for op in function.body.block.ops if not is_target(op))


@dataclass(frozen=True)
class Proposal:
    """A plan with its estimated costs."""

    recomputed: frozenset[int]
    """Op indices (in program order) of the forward ops recomputed for the backward pass."""
    peak: int
    """The planner's lower bound with the clones where `apply_plan` puts them (the
    written order; `RecomputeModel.peak` gives the best order's)."""
    flops: int
    strategy: str


@dataclass
class RecomputeModel:
    """A function's ops as the planner sees them, and the plans' schedules."""

    base: FunctionSchedule
    candidates: list[int]
    """Indices of the forward ops that may be recomputed, in program order."""
    flops: list[int]
    effects: frozenset[int]
    """Indices of the ops with effects (sends, receives): their order is kept."""
    readers: list[list[int]] = field(default_factory=list[list[int]])
    """For each op, the ops reading one of its results."""

    @staticmethod
    def of(function: FuncOp) -> RecomputeModel:
        base = FunctionSchedule.of(function)
        effects = frozenset(i for i, op in enumerate(base.ops) if not is_side_effect_free(op))
        allowed = recomputable(function.body.block)
        position = {op: index for index, op in enumerate(base.ops)}
        candidates = [i for i, op in enumerate(base.ops) if allowed(op) and not is_target(op)]
        readers: list[list[int]] = [[] for _ in base.ops]
        for index, op in enumerate(base.ops):
            for operand in op.operands:
                owner = operand.owner
                if isinstance(owner, Operation) and owner in position:
                    readers[position[owner]].append(index)
        flops = [flops_of([op]) for op in base.ops]
        return RecomputeModel(base, candidates, flops, effects, readers)

    def clone_times(self, recomputed: frozenset[int]) -> dict[int, int]:
        """For each recomputed op the backward pass needs, the index of the op its
        clone goes before (the first target, or clone, that reads it)."""
        times: dict[int, int] = {}
        for index in sorted(recomputed, reverse=True):
            needs = [
                times[r] if r in recomputed else r
                for r in self.readers[index]
                if (r in recomputed and r in times) or is_target(self.base.ops[r])
            ]
            if needs:
                times[index] = min(needs)
        return times

    def extra_flops(self, times: dict[int, int]) -> int:
        return sum(self.flops[i] for i in times)

    def schedule(self, times: dict[int, int]) -> Schedule:
        """The rewritten function as the planner's schedule."""
        return self.layout(times)[0]

    def layout(self, times: dict[int, int]) -> tuple[Schedule, Dependences]:
        """The rewritten function as the planner's schedule, its clones where
        `apply_plan` puts them, and what its order must keep (`df-schedule`'s rules)."""
        values = list(self.base.sizes)
        clone_of: dict[int, int] = {}
        by_anchor: dict[int, list[int]] = {}
        for index in sorted(times):
            by_anchor.setdefault(times[index], []).append(index)
        steps: list[Step] = []
        chain: list[int] = []
        for index, op in enumerate(self.base.ops):
            for recomputed in by_anchor.get(index, []):
                steps.append(self._clone_step(recomputed, values, clone_of))
            if index in self.effects:
                chain.append(len(steps))
            step = self.base.step(op)
            steps.append(_read_clones(step, clone_of) if is_target(op) else step)
        schedule = Schedule(tuple(values), tuple(steps))
        return schedule, Dependences.of(schedule, chain, len(steps) - 1)

    def _clone_step(self, index: int, values: list[Value], clone_of: dict[int, int]) -> Step:
        step = self.base.step(self.base.ops[index])
        for write in step.writes:
            clone_of[write] = len(values)
            values.append(values[write])
        return _read_clones(step, clone_of, writes=True)

    def ordered(self, recomputed: frozenset[int]) -> tuple[Schedule, OrderChoice]:
        """The plan's schedule and the order `df-schedule` would choose for it."""
        schedule, dependences = self.layout(self.clone_times(recomputed))
        return schedule, choose_order(schedule, dependences)

    def peak(self, recomputed: frozenset[int]) -> int:
        """The planner's lower bound for the plan in its best order."""
        return self.ordered(recomputed)[1].bound

    def arena_bytes(self, recomputed: frozenset[int]) -> int:
        """The planner's arena (all packers) for the plan in its best order, before any
        IR is built."""
        schedule, choice = self.ordered(recomputed)
        return plan(reorder(schedule, choice.order)).arena_bytes

    def propose(self, recomputed: frozenset[int], strategy: str) -> Proposal:
        times = self.clone_times(recomputed)
        peak = lower_bound_bytes(self.schedule(times))
        return Proposal(frozenset(times), peak, self.extra_flops(times), strategy)


def _read_clones(step: Step, clone_of: dict[int, int], writes: bool = False) -> Step:
    def mapped(value: int) -> int:
        return clone_of.get(value, value)

    out = tuple(mapped(w) for w in step.writes) if writes else step.writes
    pairs = tuple((mapped(o) if writes else o, mapped(i)) for o, i in step.inplace)
    alias = tuple((mapped(o) if writes else o, mapped(i)) for o, i in step.alias)
    parts = tuple((mapped(p), at) for p, at in step.parts)
    return Step(tuple(mapped(r) for r in step.reads), out, pairs, alias, parts)


def chen_plans(model: RecomputeModel, _budget: int) -> Iterator[frozenset[int]]:
    """Chen et al.'s segmentations: every k-th candidate kept, and the greedy split by
    bytes for a sweep of thresholds."""
    candidates = model.candidates
    for stride in range(1, len(candidates) + 1):
        kept = set(candidates[stride - 1 :: stride])
        yield frozenset(c for c in candidates if c not in kept)
    sizes = [_bytes_of(model, c) for c in candidates]
    total = sum(sizes)
    smallest = max(min(sizes, default=1), 1)
    for step in range(THRESHOLDS):
        threshold = smallest * (total / smallest) ** (step / max(THRESHOLDS - 1, 1))
        yield _split_by_bytes(candidates, sizes, threshold)


def _bytes_of(model: RecomputeModel, index: int) -> int:
    return sum(model.base.sizes[w].size for w in model.base.step(model.base.ops[index]).writes)


def _split_by_bytes(
    candidates: Sequence[int], sizes: Sequence[int], threshold: float
) -> frozenset[int]:
    recomputed: set[int] = set()
    since = 0
    for candidate, size in zip(candidates, sizes, strict=True):
        since += size
        if since > threshold:
            since = 0
        else:
            recomputed.add(candidate)
    return frozenset(recomputed)


def greedy_plans(model: RecomputeModel, _budget: int) -> Iterator[frozenset[int]]:
    """One more candidate recomputed at a time, the cheapest per byte first."""
    order = sorted(
        model.candidates,
        key=lambda c: model.flops[c] / max(_bytes_of(model, c), 1),
    )
    for count in range(len(order) + 1):
        yield frozenset(order[:count])


def exact_plans(model: RecomputeModel, _budget: int) -> Iterator[frozenset[int]]:
    """Every subset of the candidates (only for small functions)."""
    if len(model.candidates) > EXACT_LIMIT:
        return
    for count in range(len(model.candidates) + 1):
        for subset in combinations(model.candidates, count):
            yield frozenset(subset)


def milp_plans(model: RecomputeModel, budget: int) -> Iterator[frozenset[int]]:
    """The integer program's plan (only for small functions, when it finds one)."""
    if len(model.base.ops) > MILP_STEP_LIMIT:
        return
    ops = model.base.ops
    given = ProgramInput(
        model.base.schedule(),
        model.candidates,
        model.readers,
        frozenset(i for i, op in enumerate(ops) if is_target(op)),
        [model.base.step(op).writes for op in ops],
        model.flops,
    )
    plan = BudgetProgram(given, budget).solve()
    if plan is not None:
        yield plan


Strategy = Callable[[RecomputeModel, int], Iterator[frozenset[int]]]

STRATEGIES: dict[str, Strategy] = {
    "chen": chen_plans,
    "greedy": greedy_plans,
    "exact": exact_plans,
    "milp": milp_plans,
}


def proposals(model: RecomputeModel, strategies: Sequence[str], budget: int) -> list[Proposal]:
    """Every distinct plan the strategies propose for `budget`, with its costs, and the
    plan that recomputes nothing."""
    seen = {frozenset[int](): model.propose(frozenset(), "none")}
    for name in strategies:
        for recomputed in STRATEGIES[name](model, budget):
            proposal = model.propose(recomputed, name)
            if proposal.recomputed not in seen:
                seen[proposal.recomputed] = proposal
    return list(seen.values())


def apply_plan(function: FuncOp, model: RecomputeModel, recomputed: frozenset[int]) -> int:
    """Rewrite `function` by the plan; return how many ops were cloned."""
    times = model.clone_times(recomputed)
    ops = model.base.ops
    mapping: dict[SSAValue, SSAValue] = {}
    name = function.sym_name.data
    anchors = sorted(set(times.values()))
    for number, anchor in enumerate(anchors):
        group = [ops[i] for i in sorted(times) if times[i] == anchor]
        clone_before(group, ops[anchor], f"{name}.r{number}", mapping)
    for op in ops:
        if is_target(op):
            read_clones(op, mapping)
    return len(times)
