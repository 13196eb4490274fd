"""Benchmark of `df-plan-buffers`: arena sizes of every packer against the lower bound.

    python bench/memory.py

For each graph (and, for partitioned ones, each device) it prints the naive size
(every op result in its own block), the lower bound (the most bytes live at any
step after in-place sharing: no packing does better), the best arena, its ratio
to the lower bound (1.000 is optimal; the goal is at most 1.05), the packer that
found it and the planner's wall time for that part; then the ratio of every
packer. All sizes are in bytes, 64-byte aligned.

Graphs: `mlp` (784-512-512-10, batch 256, forward and backward from `df-autodiff`),
`convnet` (conv-relu-pool twice and a dense layer, batch 32, forward and
backward), `wide` (16 branches of 4 matmul+tanh, 256x256, summed), `deep` (50
blocks of matmul, tanh, scale, relu on 128x128), `random-N` (tests/graphgen.py,
200 ops), and `mlp@2` (the MLP placed on cpu:0,gpu:0 and partitioned: one arena
per device, sends and receives included).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from placement import convnet, deep, mlp, wide
from xdsl.dialects.builtin import ModuleOp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from graphgen import random_graph

from dflow.analysis.function_schedule import plan_entry
from dflow.analysis.memory_plan import MemoryPlan
from dflow.analysis.packing import PACKERS
from dflow.driver.multidevice import split_for_devices


def _random(seed: int) -> Callable[[], ModuleOp]:
    return lambda: random_graph(seed, min_ops=200, dtype="f32")


def _partitioned(build: Callable[[], ModuleOp], devices: str) -> Callable[[], ModuleOp]:
    return lambda: split_for_devices(build(), devices)


GRAPHS: dict[str, tuple[Callable[[], ModuleOp], str]] = {
    "mlp": (mlp, "main_grad"),
    "convnet": (convnet, "main_grad"),
    "wide": (wide, "main"),
    "deep": (deep, "main"),
    **{f"random-{seed}": (_random(seed), "main") for seed in range(4)},
    "mlp@2": (_partitioned(mlp, "cpu:0,gpu:0"), "main_grad"),
}


def _sizes(name: str, memory: MemoryPlan, seconds: float) -> str:
    bound = max(memory.lower_bound_bytes, 1)
    return (
        f"{name:<16}{memory.naive_bytes:>12,}{memory.lower_bound_bytes:>13,}"
        f"{memory.arena_bytes:>12,}{memory.arena_bytes / bound:>9.3f}"
        f"{memory.naive_bytes / bound:>10.2f}  {memory.packer:<15}{seconds * 1e3:>6.1f}"
    )


def _ratios(name: str, memory: MemoryPlan) -> str:
    bound = max(memory.lower_bound_bytes, 1)
    return f"{name:<16}" + "".join(f"{memory.arenas[p] / bound:>15.3f}" for p in PACKERS)


def _plans() -> list[tuple[str, MemoryPlan, float]]:
    """Every graph's plan per device, with the planner's time for it."""
    rows: list[tuple[str, MemoryPlan, float]] = []
    for name, (build, entry) in GRAPHS.items():
        module = build()
        start = time.perf_counter()
        plans = plan_entry(module, entry, every_packer=True)
        seconds = (time.perf_counter() - start) / len(plans)
        for device, memory in plans.items():
            rows.append((name if len(plans) == 1 else f"{name} {device}", memory, seconds))
    return rows


def main() -> None:
    rows = _plans()
    print("bytes: naive (no reuse), lower bound, best arena; ratios to the lower bound")
    print(
        f"{'graph':<16}{'naive':>12}{'lower bound':>13}{'arena':>12}{'arena/lb':>9}"
        f"{'naive/lb':>10}  {'packer':<15}{'ms':>6}"
    )
    for name, memory, seconds in rows:
        print(_sizes(name, memory, seconds))
    print("\narena / lower bound of each packer")
    print(f"{'graph':<16}" + "".join(f"{p:>15}" for p in PACKERS))
    for name, memory, _ in rows:
        print(_ratios(name, memory))
    worst = max(m.arena_bytes / max(m.lower_bound_bytes, 1) for _, m, _ in rows)
    print(f"\nworst arena / lower bound: {worst:.3f} (goal: at most 1.050)")


if __name__ == "__main__":
    main()
