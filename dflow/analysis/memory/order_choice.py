"""Choosing a schedule's order by strategy: what `df-schedule`, `df-recompute` and
`dflow plan` share.

`best` keeps the order of least lower bound among every heuristic of `scheduling`
(the written order on ties), and on small schedules the exact search's where it
finishes within a fixed amount of work and is better; `exact` runs that search within
its full limits; a scheduler's name takes that
scheduler's order, better or worse than written (to compare them). Orders are judged
by the planner's lower bound, which its packers reach on every benchmark graph
(`bench/memory.py` checks the arenas too).
"""

from __future__ import annotations

from dataclasses import dataclass

from dflow.analysis.memory.exact_schedule import QUICK, TIME_LIMIT_S, Limits, exact_order
from dflow.analysis.memory.liveness import Schedule
from dflow.analysis.memory.scheduling import (
    SCHEDULERS,
    Dependences,
    best_order,
    bound_of,
    floor_bytes,
)

STRATEGIES = ("best", "exact", *SCHEDULERS)
"""Every strategy by name."""

QUICK_EXACT_STEPS = 64
"""`best` also runs the exact search, within `exact_schedule.QUICK`'s limits, on
schedules of at most this many steps: small functions get their optimum for tens of
milliseconds at most (the heuristics alone miss it by up to 29% on `bench/memory.py`'s
small random graphs)."""


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
        exact = exact_order(schedule, dependences, best.bound, Limits(seconds=time_limit))
    elif len(schedule.steps) <= QUICK_EXACT_STEPS and best.bound > floor_bytes(schedule):
        exact = exact_order(schedule, dependences, best.bound - 1, QUICK)  # only better
    else:
        exact = None
    if exact is not None:
        better = exact.bound < best.bound
        order, name = (exact.order, "exact") if better else (best.order, best.strategy)
        choice = OrderChoice(order, name, exact.bound, choice.written_bound, exact.bound)
    return choice
