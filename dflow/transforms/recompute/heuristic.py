"""Heuristic mode: Grappler's groups of cheap ops, each kept only where it lowers the peak.

Grappler's MemoryOptimizer recomputes every group of cheap ops that feeds the backward
pass (`groups.py`), whether or not that frees memory where the function peaks: a
recomputed value whose inputs stay live anyway (a bias add recomputed from the kept
matmul it adds to) only adds a clone to the backward pass, and can raise the peak.
Here each group is judged as budget mode judges plans: by the planner's lower bound
(liveness after in-place sharing, `analysis/memory/liveness.py`) of the rewritten function
in the order `df-schedule` would give it (`analysis/memory/order_choice.py`), measured on the
rewritten IR itself (a copy of the function). A group is kept when adding it to those
kept so far lowers the bound; then each kept group that the others do without (the
bound not rising when it goes) is dropped, so every recomputation kept is needed for
the lower peak. Where a group is kept the function is left in `df-schedule`'s order,
the one judged; where none is, the function is left unchanged, and the pass's
statistics say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from dflow.analysis.memory.function_schedule import FunctionSchedule, check_plannable
from dflow.analysis.memory.liveness import PlanError
from dflow.analysis.memory.order_choice import choose_order
from dflow.analysis.memory.scheduling import best_order
from dflow.transforms.recompute.groups import (
    Predicate,
    RecomputeGroup,
    apply_group,
    recomputable,
    recompute_groups,
)
from dflow.transforms.schedule import schedule_function

Indices = tuple[tuple[int, ...], tuple[int, ...]]
"""A group as the positions of its ops and of its targets in the function's block."""


def peak_bound(function: FuncOp, exact: bool = True) -> int | None:
    """The planner's lower bound of `function` in the order `df-schedule` would give
    it (the function is not reordered), or with `exact=False` in the best order of
    its heuristics alone (`scheduling.best_order`: no exact search, so never below the
    former); None where the planner cannot plan it."""
    try:
        check_plannable(function)
        schedule = FunctionSchedule.of(function)
        steps = schedule.schedule()
        dependences = schedule.dependences(steps)
        if not exact:
            return best_order(steps, dependences).bound
        return choose_order(steps, dependences).bound
    except PlanError:
        return None


@dataclass(frozen=True)
class Judged:
    """The groups of a function, those kept (by number), and the bound before and after."""

    groups: list[RecomputeGroup]
    positions: list[Indices]
    kept: list[int]
    before: int | None
    after: int | None

    def kept_groups(self) -> list[RecomputeGroup]:
        return [self.groups[number] for number in self.kept]

    def note(self) -> str:
        """What the heuristic found, for the pass's statistics."""
        tried = f"{len(self.groups)} group" + ("" if len(self.groups) == 1 else "s")
        if self.before is None:
            return "heuristic: the planner cannot plan it; function unchanged"
        if not self.groups:
            return "heuristic: no group of candidates feeds the backward pass; function unchanged"
        if not self.kept:
            return (
                f"heuristic: none of {tried} lowers the peak bound of {self.before} bytes "
                "in df-schedule's order; function unchanged"
            )
        return (
            f"heuristic: {len(self.kept)} of {tried} kept, the peak bound "
            f"{self.before} -> {self.after} bytes in df-schedule's order"
        )


def judge_groups(function: FuncOp, wanted: Predicate) -> Judged:
    """Grappler's groups of the ops `wanted` selects, and those worth recomputing: the
    groups `_search` keeps, where together they lower `peak_bound` of the rewritten
    function; none where they do not."""
    block = function.body.block
    allowed = recomputable(block)
    groups = recompute_groups(block, lambda op: allowed(op) and wanted(op))
    where = {op: index for index, op in enumerate(block.ops)}
    positions = [(_positions(g.ops, where), _positions(g.targets, where)) for g in groups]
    before = peak_bound(function)
    kept = _search(function, positions) if before is not None else []
    after = _bound_with(function, [positions[i] for i in kept]) if kept else before
    if after is None or before is None or after >= before:
        return Judged(groups, positions, [], before, before)
    return Judged(groups, positions, kept, before, after)


def _search(function: FuncOp, positions: list[Indices]) -> list[int]:
    """The groups (by number) that lower the bound of `function` in its heuristics'
    best order (`peak_bound(exact=False)`: the exact search, up to a second a
    function, would run once per group): each one in turn kept where it lowers the
    bound of those kept before it; then each kept one dropped where the others do as
    well without it."""
    kept: list[int] = []
    bound = peak_bound(function, exact=False)
    for number in range(len(positions)):
        trial = _bound_with(function, [positions[i] for i in [*kept, number]], exact=False)
        if trial is not None and (bound is None or trial < bound):
            kept, bound = [*kept, number], trial
    for number in list(kept):
        rest = [i for i in kept if i != number]
        trial = _bound_with(function, [positions[i] for i in rest], exact=False)
        if trial is not None and bound is not None and trial <= bound:
            kept, bound = rest, trial
    return kept


def _positions(ops: tuple[Operation, ...], where: dict[Operation, int]) -> tuple[int, ...]:
    return tuple(where[op] for op in ops)


def _bound_with(function: FuncOp, groups: list[Indices], exact: bool = True) -> int | None:
    """`peak_bound` of a copy of `function` with `groups` recomputed."""
    copy = function.clone()
    apply_groups(copy, groups)
    return peak_bound(copy, exact)


def apply_groups(function: FuncOp, groups: list[Indices]) -> None:
    """Recompute `groups` (positions in `function`'s block, as written), numbered
    `<function>.r<N>` in order."""
    ops = list(function.body.block.ops)
    name = function.sym_name.data
    for number, (members, targets) in enumerate(groups):
        group = RecomputeGroup(tuple(ops[i] for i in members), tuple(ops[i] for i in targets))
        apply_group(group, f"{name}.r{number}")


def recompute_judged(function: FuncOp, judged: Judged) -> None:
    """Apply the groups `judged` kept to `function` and leave it in `df-schedule`'s
    order, the order they were judged in; nothing where none was kept."""
    if judged.kept:
        apply_groups(function, [judged.positions[number] for number in judged.kept])
        schedule_function(function)
