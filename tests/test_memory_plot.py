"""`dflow plan --plot`: the picture is written, a panel per device; the rectangles it
draws are the plan's placements, and those pass the independent plan checker
(`plan_checker.check_blocks`) on the examples and on generated programs (unused
values, size-0 and size-1 axes, every dtype); bad use is one line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from cli_support import ROOT, run_dflow
from matplotlib.patches import Rectangle
from plan_checker import Block, check_blocks
from programgen import generate

from dflow.dialects.devices import DeviceList
from dflow.driver.compilation.devices import devices_for
from dflow.driver.loading.source import read_module
from dflow.driver.tools.memory_plot import figure_of
from dflow.driver.tools.memory_report import DevicePlan, device_plans

MLP = ROOT / "examples" / "mlp.mlir"
TOWERS = ROOT / "examples" / "towers.mlir"


def checked(drawn: DevicePlan) -> None:
    """The placements as the checker's blocks: inside the arena, aligned, and no two
    live at once sharing a byte, but the pairs the schedule lets share in place and
    the views (candidates read from the schedule, as in test_memory_plan)."""
    steps = drawn.schedule.steps
    names = {v: drawn.schedule.values[v].name or f"v{v}" for v in drawn.plan.intervals}
    blocks = [Block(p.name, p.size, p.offset, p.start, p.end) for p in drawn.placements]
    assert [b.name for b in blocks] == [names[v] for v in sorted(names)]
    pairs = {(names[i], names[o]) for step in steps for o, i in step.inplace if i in names}
    views = {(names[i], names[o]) for step in steps for o, i in step.alias if i in names}
    assert len(set(names.values())) == len(names), "names tell values apart"
    check_blocks(blocks, drawn.plan.arena_bytes, pairs, views=views)
    assert max(drawn.plan.live_bytes(), default=0) == drawn.plan.lower_bound_bytes


def drawn_rectangles(drawn: list[DevicePlan]) -> list[list[tuple[float, float, float, float]]]:
    """The rectangles each panel of the figure holds, as (x, y, width, height)."""
    figure = figure_of(drawn)
    return [
        [
            (p.get_x(), p.get_y(), p.get_width(), p.get_height())
            for p in axes.patches
            if isinstance(p, Rectangle)
        ]
        for axes in figure.axes
    ]


@pytest.mark.parametrize(("program", "devices"), [(MLP, None), (TOWERS, "cpu:0,cpu:1")])
def test_the_picture_draws_the_checked_plan(program: Path, devices: str | None) -> None:
    drawn = device_plans(
        read_module(program), "main", None if devices is None else DeviceList.parse(devices)
    )
    assert [d.device for d in drawn] == (devices or "cpu:0").split(",")
    for panel, rectangles in zip(drawn, drawn_rectangles(drawn), strict=True):
        checked(panel)
        expected = [
            (p.start - 0.5, p.offset, p.end - p.start + 1, p.size) for p in panel.placements
        ]
        assert rectangles == expected


@pytest.mark.parametrize("seed", range(8))
def test_generated_programs(seed: int) -> None:
    module = generate(seed).module.clone()
    devices = devices_for(module, None)  # cpu:0, and cpu:1 where ops are pinned to it
    for panel in device_plans(module, "main", devices):
        checked(panel)


def test_the_command_writes_each_format(tmp_path: Path) -> None:
    plain = run_dflow("plan", TOWERS, "--devices", "cpu:0,cpu:1")
    for suffix in ("png", "svg", "pdf"):
        path = tmp_path / f"memory.{suffix}"
        done = run_dflow("plan", TOWERS, "--devices", "cpu:0,cpu:1", "--plot", path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == plain.stdout
        assert done.stderr == f"dflow: drew the plan of 2 devices in {path}\n"
        magic = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}[suffix]
        assert path.read_bytes().startswith(magic)
    svg = (tmp_path / "memory.svg").read_text()
    figures = re.findall(r"cpu:(\d): arena (\d+) B, lower bound (\d+) B", svg)
    assert sorted(figures) == [("0", "81920", "81920"), ("1", "81920", "81920")]
    assert "81920" in plain.stdout  # the table's figures, the titles' too
    for name in ("ha", "ra", "hb", "rb"):  # each large value is named
        assert f">{name}<" in svg


def test_a_bad_format_is_one_line_before_any_work(tmp_path: Path) -> None:
    done = run_dflow("plan", tmp_path / "absent.mlir", "--plot", "memory.pgf")
    assert done.returncode == 1
    assert done.stderr == (
        f"{tmp_path / 'absent.mlir'}: error: --plot writes .png, .svg, .pdf, .jpg, .jpeg, "
        ".tif, .tiff, .webp, .eps, .ps files, not 'memory.pgf'\n"
    )


def test_without_matplotlib_is_one_line(tmp_path: Path) -> None:
    """matplotlib shadowed by a package that cannot be imported, as when it is not
    installed."""
    fake = tmp_path / "site" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = run_dflow("plan", MLP, "--plot", tmp_path / "m.png", env=env)
    assert done.returncode == 1
    assert done.stderr == f"{MLP}: error: --plot needs matplotlib: pip install 'dflow[plot]'\n"
    assert not (tmp_path / "m.png").exists()


def test_plot_and_table_come_from_one_plan_per_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dflow plan --plot` places and partitions the program once, and schedules and
    plans each device's function once, for the table and the picture alike."""
    from dflow.driver.frontdoors.cli import main  # noqa: PLC0415
    from dflow.driver.tools import memory_report  # noqa: PLC0415

    calls = {"split": 0, "plan": 0}
    split, plan = memory_report.split_for_devices, memory_report.plan_function

    def counted_split(*args: object) -> object:
        calls["split"] += 1
        return split(*args)  # pyright: ignore[reportArgumentType]

    def counted_plan(*args: object) -> object:
        calls["plan"] += 1
        return plan(*args)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(memory_report, "split_for_devices", counted_split)
    monkeypatch.setattr(memory_report, "plan_function", counted_plan)
    picture = tmp_path / "towers.svg"
    code = main(["plan", str(TOWERS), "--devices", "cpu:0,cpu:1", "--plot", str(picture)])
    out = capsys.readouterr().out
    assert code == 0 and picture.stat().st_size > 0
    assert out.splitlines()[0].split() == ["device", *memory_report.PLAN_FIGURES]
    assert calls == {"split": 1, "plan": 2}  # two devices, one plan each
