"""Choosing a schedule's order by strategy: what `df-schedule`, `df-recompute` and
`dflow plan` share.

`best` keeps the order of least lower bound among every heuristic of `scheduling`
(the written order on ties); `exact` also runs `exact_schedule`'s search (within its
limits) and keeps its order where it is better; a scheduler's name takes that
scheduler's order, better or worse than written (to compare them). Orders are judged
by the planner's lower bound, which its packers reach on every benchmark graph
(`bench/memory.py` checks the arenas too).
"""

from __future__ import annotations

from dataclasses import dataclass

from dflow.analysis.exact_schedule import TIME_LIMIT_S, exact_order
from dflow.analysis.liveness import Schedule
from dflow.analysis.scheduling import SCHEDULERS, Dependences, best_order, bound_of

STRATEGIES = ("best", "exact", *SCHEDULERS)
"""Every strategy by name."""


@dataclass(frozen=True)
class OrderChoice:
    """The order chosen for a schedule, and what the others reached."""

    order: tuple[int, ...]
    strategy: str
    """The scheduler whose order it is (`exact` for the search's)."""
    bound: int
    """The planner's lower bound in `order`."""
    written_bound: int
    exact_bound: int | None = None
    """The least bound of any order, where the exact search ran and finished."""


def choose_order(
    schedule: Schedule,
    dependences: Dependences,
    strategy: str = "best",
    time_limit: float = TIME_LIMIT_S,
) -> OrderChoice:
    """The order `strategy` gives `schedule` (`time_limit`: the exact search's)."""
    if strategy not in ("best", "exact"):
        orders = SCHEDULERS[strategy](schedule, dependences)
        bounds = [bound_of(schedule, order) for order in orders]
        chosen = min(range(len(orders)), key=lambda i: bounds[i])
        written = bound_of(schedule, range(len(schedule.steps)))
        return OrderChoice(tuple(orders[chosen]), strategy, bounds[chosen], written)
    best = best_order(schedule, dependences)
    choice = OrderChoice(best.order, best.strategy, best.bound, best.bounds["written"])
    if strategy == "exact":
        exact = exact_order(schedule, dependences, best.bound, time_limit)
        if exact is not None:
            better = exact.bound < best.bound
            order, name = (exact.order, "exact") if better else (best.order, best.strategy)
            choice = OrderChoice(order, name, exact.bound, choice.written_bound, exact.bound)
    return choice
