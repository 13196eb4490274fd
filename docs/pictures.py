"""Draw the README's pictures of `dflow run --trace` and `dflow plan --plot`.

    python docs/pictures.py        # writes docs/images/trace.png and memory.png

The trace is of `examples/towers.mlir` on cpu:0 and cpu:1 (one run after a warm-up,
as `dflow run --trace` makes it), drawn here as Perfetto lays a Chrome trace out: a
row per device, a bar per slice, slices inside a slice (a kernel's library calls)
below it, coloured by category. The memory plot is `dflow plan --plot`'s own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
COLORS = {
    "host": "0.85",
    "kernel": "C0",
    "library": "C1",
    "send": "C2",
    "recv": "C3",
    "copy": "C4",
    "wait": "C7",
}


def dflow(*args: str | Path) -> None:
    subprocess.run([sys.executable, "-m", "dflow", *map(str, args)], check=True, cwd=ROOT)


def draw_trace(trace: dict[str, Any], path: Path) -> None:
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = {
        e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"
    }
    figure = Figure(figsize=(11, 1.2 + 1.1 * len(names)), layout="constrained")
    axes = figure.subplots()
    for event in events:
        row = list(names).index(event["tid"])
        depth = {"host": 0, "kernel": 1, "send": 1, "recv": 1, "copy": 1, "wait": 1}.get(
            event["cat"], 2
        )
        y = row - 0.4 + depth * 0.27
        axes.barh(
            y,
            event["dur"],
            left=event["ts"],
            height=0.25,
            align="edge",
            color=COLORS[event["cat"]],
            edgecolor="white",
            linewidth=0.5,
        )
        if event["cat"] != "host" and event["dur"] > trace["otherData"]["wall_us"] * 0.08:
            axes.text(
                event["ts"] + event["dur"] / 2,
                y + 0.125,
                event["name"],
                ha="center",
                va="center",
                fontsize="x-small",
            )
    axes.set_yticks(range(len(names)), list(names.values()))
    axes.invert_yaxis()
    axes.set_xlabel("microseconds from the start of the run")
    for category, color in COLORS.items():
        axes.barh(0, 0, color=color, label=category)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    axes.set_title("dflow run examples/towers.mlir --devices cpu:0,cpu:1 --trace trace.json")
    figure.savefig(path, dpi=110)


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.json"
        dflow("run", "examples/towers.mlir", "--devices", "cpu:0,cpu:1", "--trace", trace)
        draw_trace(json.loads(trace.read_text()), IMAGES / "trace.png")
    dflow("plan", "examples/mlp.mlir", "--plot", IMAGES / "memory.png")


if __name__ == "__main__":
    main()
