"""`dflow plan FILE --plot memory.png`: the arena as the planner laid it out.

One panel per device, from the plan `df-plan-buffers` makes of the entry function
on it, its ops in the order `df-schedule` chooses (`analysis/memory/memory_plan.py`):
across, the schedule's steps (one per op); up, the byte offset in the arena. Each
value in the arena is a rectangle named after it, at its offset and as tall as its
bytes, from the step that writes it to the last that reads it
(`MemoryPlan.placements`: the rectangles the tests give the plan checker). Over
them, the bytes live at each step after in-place sharing (a line whose peak is the
lower bound, dashed) and the arena's size. Any picture format matplotlib writes
with no package beyond its own (`FORMATS`); matplotlib is an optional extra (`pip
install 'dflow[plot]'`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dflow.analysis.memory.memory_plan import Placement
from dflow.driver.errors import DflowError
from dflow.driver.tools.memory_report import DevicePlan

FORMATS = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".eps", ".ps")
"""The picture formats `--plot` writes, by file suffix: those every matplotlib the
`plot` extra allows (3.7 on) writes with only its own dependencies (Pillow for the
bitmaps); not `.pgf`, which needs LaTeX."""


def check_plot(path: Path) -> None:
    """That a plot can be written at `path`, before any work or output: a format of
    `FORMATS`, an existing folder, matplotlib installed."""
    if path.suffix.lower() not in FORMATS:
        raise DflowError(f"--plot writes {', '.join(FORMATS)} files, not {path.name!r}")
    if path.parent.exists() and not path.parent.is_dir():
        raise DflowError(f"cannot write {path}: {path.parent} is a file, not a folder")
    if not path.parent.is_dir():
        raise DflowError(f"cannot write {path}: there is no folder {path.parent}")
    _figure_class()


def draw(plans: list[DevicePlan], path: Path) -> None:
    """The plans, a panel per device, written to `path` (its suffix: the format;
    an SVG keeps its text as text)."""
    check_plot(path)
    figure = figure_of(plans)
    from matplotlib import rcParams  # noqa: PLC0415 (figure_of has checked it is there)

    rcParams["svg.fonttype"] = "none"
    try:
        figure.savefig(path)  # pyright: ignore[reportUnknownMemberType] (its stub: **kwargs)
    except OSError as error:
        raise DflowError(f"cannot write {path}: {error.strerror or error}") from None


def figure_of(plans: list[DevicePlan]) -> Any:
    """The matplotlib figure of `plans`: a panel per device."""
    figure = _figure_class()(figsize=(10, 3.2 * len(plans)), layout="constrained")
    axes = figure.subplots(len(plans), 1, squeeze=False)[:, 0]
    for panel, device_plan in zip(axes, plans, strict=True):
        _panel(panel, device_plan)
    return figure


def _figure_class() -> Any:
    """matplotlib's `Figure`, or a one-line error saying how to install it."""
    try:
        from matplotlib.figure import Figure  # noqa: PLC0415 (an optional extra)
    except ImportError:
        raise DflowError("--plot needs matplotlib: pip install 'dflow[plot]'") from None
    return Figure


def _panel(axes: Any, drawn: DevicePlan) -> None:
    plan = drawn.plan
    colors = [f"C{i % 10}" for i in range(len(drawn.placements))]
    for placement, color in zip(drawn.placements, colors, strict=True):
        _rectangle(axes, placement, color, plan.arena_bytes)
    live = plan.live_bytes()
    if live:
        axes.step(range(len(live)), live, where="mid", color="black", label="live bytes")
    axes.axhline(plan.lower_bound_bytes, color="black", linestyle="--", label="lower bound")
    axes.axhline(plan.arena_bytes, color="firebrick", label="arena")
    axes.set_xlim(-0.5, max(drawn.steps, 1) - 0.5)
    axes.set_ylim(0, max(plan.arena_bytes, plan.lower_bound_bytes, 1) * 1.08)
    axes.set_xlabel("schedule step (op)")
    axes.set_ylabel("arena offset (bytes)")
    axes.set_title(
        f"{drawn.device}: arena {plan.arena_bytes} B, lower bound {plan.lower_bound_bytes} B, "
        f"no reuse {plan.naive_bytes} B ({plan.packer})"
    )
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")


def _rectangle(axes: Any, placement: Placement, color: str, arena: int) -> None:
    from matplotlib.patches import Rectangle  # noqa: PLC0415 (an optional extra)

    width = placement.end - placement.start + 1
    corner = (placement.start - 0.5, placement.offset)
    axes.add_patch(
        Rectangle(corner, width, placement.size, facecolor=color, alpha=0.55, edgecolor="white")
    )
    if placement.size >= arena * 0.06:  # named where the next value in place leaves it seen
        across = placement.start + max(placement.end - placement.start - 1, 0) / 2
        middle = (across, placement.offset + placement.size / 2)
        axes.text(
            *middle, placement.name, ha="center", va="center", fontsize="x-small", clip_on=True
        )
