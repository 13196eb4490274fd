"""`dflow plan`'s report: each device's memory plan, made once for the figures and
the picture (`memory_plot`).

The program is placed and partitioned on the devices asked for; on each device the
entry is put in `df-schedule`'s order and planned (`analysis/memory/function_schedule.py`),
and the exact search looks for an order with a lower bound below the chosen one's.
`DevicePlan` holds what both the table (`figures`, `plan_table`) and the plot
(`placements`) read, so `dflow plan --plot` places, partitions, schedules and plans
once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException

from dflow.analysis.memory.exact_schedule import exact_order
from dflow.analysis.memory.function_schedule import plan_function
from dflow.analysis.memory.liveness import PlanError, Schedule
from dflow.analysis.memory.memory_plan import MemoryPlan, Placement
from dflow.dialects.devices import DEFAULT_DEVICE, DeviceList
from dflow.dialects.df.symbols import device_scopes, require_function
from dflow.driver.compilation.devices import split_for_devices
from dflow.driver.errors import DflowError, first_line
from dflow.passes.failures import pass_failure
from dflow.transforms.schedule import schedule_function

PLAN_FIGURES = (
    "written_bound_bytes",
    "lower_bound_bytes",
    "optimum_bytes",
    "arena_bytes",
    "naive_bytes",
)
"""What `dflow plan` reports of each device's memory plan."""

FAILURE = pass_failure("dflow plan")
"""How a missing entry, or one the planner cannot plan, is reported: as a failure of
`dflow plan`."""


@dataclass(frozen=True)
class DevicePlan:
    """One device's plan of the entry, in `df-schedule`'s order: its steps, the
    memory plan, the bound as written and the least bound of any order (None where
    the exact search passes its limits)."""

    device: str
    schedule: Schedule
    plan: MemoryPlan
    written_bound: int
    optimum: int | None

    @property
    def steps(self) -> int:
        return len(self.schedule.steps)

    @cached_property
    def placements(self) -> list[Placement]:
        """Each value's rectangle in the arena (offset, bytes, first and last step)."""
        return self.plan.placements(self.schedule)

    def figures(self) -> dict[str, int | None]:
        """The figures of `PLAN_FIGURES`, in bytes."""
        return {
            "written_bound_bytes": self.written_bound,
            "lower_bound_bytes": self.plan.lower_bound_bytes,
            "optimum_bytes": self.optimum,
            "arena_bytes": self.plan.arena_bytes,
            "naive_bytes": self.plan.naive_bytes,
        }


def device_plans(module: ModuleOp, entry: str, devices: DeviceList | None) -> list[DevicePlan]:
    """The plan of `entry` on each device, once placed and partitioned on `devices`
    (`module` is changed: partitioned and reordered)."""
    module = split_for_devices(module, devices)
    try:
        return [
            _device_plan(device or DEFAULT_DEVICE, require_function(scope, entry, FAILURE))
            for device, scope in device_scopes(module)
        ]
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None


def _device_plan(device: str, function: FuncOp) -> DevicePlan:
    choice = schedule_function(function)
    try:
        schedule, memory = plan_function(function)
    except PlanError as error:  # the planner's: labelled with the function already
        raise FAILURE(str(error)) from None
    steps = schedule.schedule()
    exact = exact_order(steps, schedule.dependences(steps), ceiling=choice.bound)
    optimum = None if exact is None else exact.bound
    return DevicePlan(device, steps, memory, choice.written_bound, optimum)


def memory_figures(
    module: ModuleOp, entry: str, devices: DeviceList | None = None
) -> dict[str, dict[str, int | None]]:
    """Per device, `DevicePlan.figures` (`dflow plan --json`, `Program.memory`)."""
    return {plan.device: plan.figures() for plan in device_plans(module, entry, devices)}


def plan_table(plans: list[DevicePlan]) -> str:
    """One row per device: the lower bound as written and in the chosen order, the
    optimum (`-` where not computed), the arena and the naive size, in bytes."""
    rows = {plan.device: plan.figures() for plan in plans}
    width = max(len("device"), *map(len, rows))
    lines = [f"{'device':<{width}}" + "".join(f"  {name}" for name in PLAN_FIGURES)]
    for device, row in rows.items():
        cells = ("-" if row[n] is None else str(row[n]) for n in PLAN_FIGURES)
        lines.append(
            f"{device:<{width}}"
            + "".join(f"  {cell:>{len(n)}}" for n, cell in zip(PLAN_FIGURES, cells, strict=True))
        )
    return "\n".join(lines)
