"""`df-recompute`: trade compute for memory in training graphs (rematerialization).

    xdsl-opt train.mlir -p 'df-autodiff{wrt=1,2},df-recompute{mode=heuristic stats=true}'
    xdsl-opt train.mlir -p 'df-autodiff{wrt=1,2},df-recompute{mode=budget budget=1048576}'

Works on each function holding backward ops (`df.backward`, as `df-autodiff` makes
them), or on `func` only:

- `mode=hints` (Grappler's MemoryOptimizer): ops carrying `df.recompute` that feed a
  backward op are grown into connected groups, pruned to what feeds the backward
  ops, and each group is cloned before its first backward user (`groups.py`).
- `mode=heuristic`: the same, with every cheap op a candidate without a hint:
  elementwise ops, casts, addn, reshape, transpose, broadcast_to (not matmul, conv,
  pools, reductions or softmax); a group is kept only where it lowers the planner's
  peak bound in `df-schedule`'s order (`heuristic.py`), and the function is left in
  that order; where no group does, the function is unchanged (`stats=true` says so).
- `mode=budget budget=BYTES`: choose the values to keep so that the planner's peak
  arena for the function, in the order `df-schedule` gives it (the pass leaves the
  function in that order), is at most BYTES, with the least estimated recomputation
  (`budget.py`: Chen's segmentations, a greedy order, every subset of a small
  function, an integer program (`milp.py`); `strategy=` runs one). A budget no plan meets is an
  error that gives the smallest peak reached.

Never recomputed: ops with effects, received values, constants, backward ops and
whatever depends on them. Each clone carries `df.recomputed = "<func>.r<N>"`, its
group, so that upstream `cse` (which compares attributes) never merges it back into
its original: `df-recompute` may run before or after `cse`/`df-optimize`.
`stats=true` reports to stderr, per function: the planner's peak before and after,
the ops recomputed and their estimated flops as a share of the forward pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from dflow.analysis.memory.function_schedule import plan_function
from dflow.analysis.memory.liveness import PlanError
from dflow.dialects.df import annotations
from dflow.dialects.df.traits import CheapToRecompute, has_trait
from dflow.passes import statistics
from dflow.passes.failures import pass_failure
from dflow.transforms.recompute.budget import (
    STRATEGIES,
    Proposal,
    RecomputeModel,
    apply_plan,
    flops_of,
    forward_flops,
    proposals,
)
from dflow.transforms.recompute.groups import (
    Predicate,
    apply_group,
    is_target,
    recomputable,
    recompute_groups,
)
from dflow.transforms.recompute.heuristic import judge_groups, recompute_judged
from dflow.transforms.schedule import schedule_function

_fail = pass_failure("df-recompute")


def _ops(count: int) -> str:
    return f"{count} op" if count == 1 else f"{count} ops"


def _how(plan: Proposal) -> str:
    if not plan.recomputed:
        return "recomputing nothing"
    return f"{plan.strategy}: {_ops(len(plan.recomputed))} recomputed"


def _hinted(op: Operation) -> bool:
    return annotations.RECOMPUTE in op.attributes


def _cheap_or_hinted(op: Operation) -> bool:
    return has_trait(op, CheapToRecompute) or _hinted(op)


@dataclass(frozen=True)
class Outcome:
    """What the pass did to one function."""

    recomputed_ops: int
    extra_flops: int
    forward_flops: int
    strategy: str = ""


def recompute_by_groups(function: FuncOp, wanted: Predicate) -> Outcome:
    """Hints mode: Grappler's groups of the ops `wanted` selects, all recomputed."""
    block = function.body.block
    allowed = recomputable(block)
    forward = forward_flops(function)
    groups = recompute_groups(block, lambda op: allowed(op) and wanted(op))
    name = function.sym_name.data
    extra = 0
    for number, group in enumerate(groups):
        extra += flops_of(group.ops)
        apply_group(group, f"{name}.r{number}")
    return Outcome(sum(len(g.ops) for g in groups), extra, forward)


def recompute_heuristic(function: FuncOp) -> Outcome:
    """Heuristic mode: the groups of cheap (or hinted) ops that lower the peak
    (`heuristic.py`); the function unchanged where none does."""
    forward = forward_flops(function)
    judged = judge_groups(function, _cheap_or_hinted)
    recompute_judged(function, judged)
    kept = judged.kept_groups()
    extra = sum(flops_of(group.ops) for group in kept)
    return Outcome(sum(len(group.ops) for group in kept), extra, forward, judged.note())


def recompute_to_budget(function: FuncOp, budget: int, strategies: tuple[str, ...]) -> Outcome:
    """Budget mode: the cheapest plan whose re-measured arena fits in `budget`."""
    try:
        model = RecomputeModel.of(function)
    except PlanError as error:  # the planner's, for what it cannot plan
        raise _fail(f"mode=budget: {error}") from None
    forward = forward_flops(function)
    found = sorted(proposals(model, strategies, budget), key=lambda p: (p.flops, p.peak))
    fitting = (p for p in found if model.peak(p.recomputed) <= budget)
    chosen = next((p for p in fitting if model.arena_bytes(p.recomputed) <= budget), None)
    if chosen is None:
        smallest = min(found, key=lambda p: model.arena_bytes(p.recomputed))
        raise _fail(
            f"@{function.sym_name.data}: no plan keeps the peak within {budget} bytes; "
            f"the smallest peak reached is {model.arena_bytes(smallest.recomputed)} bytes "
            f"({_how(smallest)})"
        )
    apply_plan(function, model, chosen.recomputed)
    schedule_function(function)
    measured = peak_bytes(function)
    if measured is None or measured > budget:
        raise _fail(
            f"@{function.sym_name.data}: the planner measured {measured} bytes, over the budget"
        )
    return Outcome(len(chosen.recomputed), chosen.flops, forward, chosen.strategy)


def peak_bytes(function: FuncOp) -> int | None:
    """The planner's arena for `function`, or None where it cannot plan it (calls)."""
    try:
        return plan_function(function)[1].arena_bytes
    except PlanError:
        return None


def training_functions(module: ModuleOp, name: str) -> list[FuncOp]:
    """The functions to rewrite: `name` only, or every one holding backward ops."""
    functions = [op for op in module.walk() if isinstance(op, FuncOp) and not op.is_declaration]
    if name:
        functions = [f for f in functions if f.sym_name.data == name]
        if not functions:
            raise _fail(f"no function @{name}")
        return functions
    return [f for f in functions if any(is_target(op) for op in f.body.walk())]


def report(function: FuncOp, before: int | None, after: int | None, outcome: Outcome) -> str:
    peak = "peak not measured (the planner cannot plan it)"
    if before is not None and after is not None:
        peak = f"peak {before} -> {after} bytes"
    share = 100 * outcome.extra_flops / outcome.forward_flops if outcome.forward_flops else 0.0
    via = f" ({outcome.strategy})" if outcome.strategy else ""
    return (
        f"df-recompute: @{function.sym_name.data}: {peak}; {_ops(outcome.recomputed_ops)} "
        f"recomputed{via}, +{outcome.extra_flops} flops = {share:.1f}% of the forward pass"
    )


@dataclass(frozen=True)
class RecomputePass(ModulePass):
    """Recompute forward values next to their backward users instead of keeping them."""

    name = "df-recompute"

    mode: Literal["hints", "heuristic", "budget"] = "hints"
    budget: int = 0
    """Bytes the planner's arena may take (`mode=budget`)."""
    strategy: Literal["all", "chen", "greedy", "exact", "milp"] = "all"
    """The searches `mode=budget` runs (`all`: each, keeping the best plan)."""
    func: str = ""
    """Only this function (default: every function holding backward ops)."""
    stats: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode == "budget" and self.budget <= 0:
            raise _fail("mode=budget needs budget=BYTES (a positive number of bytes)")
        for function in training_functions(op, self.func):
            before = peak_bytes(function) if self.stats else None
            outcome = self.rewrite(function)
            if self.stats:
                statistics.report(report(function, before, peak_bytes(function), outcome))

    def rewrite(self, function: FuncOp) -> Outcome:
        if self.mode == "budget":
            strategies = tuple(STRATEGIES) if self.strategy == "all" else (self.strategy,)
            return recompute_to_budget(function, self.budget, strategies)
        if self.mode == "heuristic":
            return recompute_heuristic(function)
        return recompute_by_groups(function, _hinted)
