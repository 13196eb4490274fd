"""`df-schedule`: reorder each graph function's ops for the least memory.

    xdsl-opt train.mlir -p 'df-autodiff{wrt=1,2},df-schedule{strategy=best stats=true}'
    dflow opt m.mlir -p 'df-fuse,df-bufferize,df-schedule,df-plan-buffers'

The buffer planner (`df-plan-buffers`) places buffers for the order the ops are
written in; its lower bound, the most bytes live at once, depends on that order.
This pass chooses the order (`analysis/memory/order_choice.py`): `strategy=best` (the
default, and the lowering pipeline's) keeps the order of least lower bound among
every heuristic (`analysis/memory/scheduling.py`: post-order, DFS, BFS, greedy by net
bytes, Inductor's LPMF, seeded random), the written order on ties; `exact` also
searches for the optimum of small functions (`analysis/memory/exact_schedule.py`); a
scheduler's name (`written`, `post-order`, `dfs`, `bfs`, `greedy`, `lpmf`,
`random`) applies that scheduler's order.

Works at every level the planner does: a graph, each device's part of a partitioned
module, the fused kernels after `df-bufferize`. Ops with effects (`df.send`,
`df.recv`) keep their order on each device, so the transfers between devices happen
in the written sequence (no new deadlock); the return stays last. In-place writes and
views are decided afterwards by the planner, on the new order.

`stats=true` prints, per function, the lower bound as written, in the chosen order
and (`exact`) the optimum where the search finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from dflow.analysis.memory.function_schedule import (
    FunctionSchedule,
    check_plannable,
    function_label,
)
from dflow.analysis.memory.liveness import PlanError
from dflow.analysis.memory.order_choice import OrderChoice, choose_order
from dflow.dialects.df.symbols import device_scopes, graph_functions
from dflow.passes import statistics
from dflow.passes.failures import pass_failure

_fail = pass_failure("df-schedule")

Strategy = Literal[
    "best", "exact", "written", "post-order", "dfs", "bfs", "greedy", "lpmf", "random"
]


def schedule_function(
    function: FuncOp, strategy: str = "best", hold_sends: bool = False
) -> OrderChoice:
    """Reorder `function`'s ops by `strategy`; what was chosen. What the planner
    cannot plan fails as this pass."""
    try:
        check_plannable(function)
        schedule = FunctionSchedule.of(function, hold_sends)
    except PlanError as error:  # the planner's: labelled with the function already
        raise _fail(str(error)) from None
    steps = schedule.schedule()
    try:
        choice = choose_order(steps, schedule.dependences(steps), strategy)
    except PlanError as error:  # a value read before it is written
        raise _fail(f"{function_label(function)}: {error}") from None
    if list(choice.order) != list(range(len(schedule.ops))):
        schedule.reorder(choice.order)
    return choice


def describe(choice: OrderChoice) -> str:
    """`written W, chosen C bytes (S, R x)` and the optimum where known."""
    ratio = choice.bound / choice.written_bound if choice.written_bound else 1.0
    exact = "" if choice.exact_bound is None else f"; optimum {choice.exact_bound}"
    return (
        f"lower bound as written {choice.written_bound}, in the order chosen "
        f"{choice.bound} bytes ({choice.strategy}, {ratio:.3f}x){exact}"
    )


@dataclass(frozen=True)
class SchedulePass(ModulePass):
    """Reorder each graph function's ops for the least memory."""

    name = "df-schedule"

    strategy: Strategy = "best"
    """`best`, `exact`, or one scheduler's name."""

    hold_sends: bool = False
    """Judge orders as `df-plan-buffers{hold-sends=true}` plans: sent values live to the
    end of their function."""

    stats: bool = False
    """Print, per function, the lower bound as written and in the order chosen."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for device, scope in device_scopes(op):
            for function in graph_functions(scope):
                choice = schedule_function(function, self.strategy, self.hold_sends)
                if self.stats:
                    where = f"@{function.sym_name.data}" + (f" on {device}" if device else "")
                    statistics.report(f"{self.name}: {where}: {describe(choice)}")
