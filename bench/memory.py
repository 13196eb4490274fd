"""Benchmark of memory planning: the packers (`df-plan-buffers`) and the order of the
ops (`df-schedule`).

    taskset -c 0 python bench/memory.py [--quick]

1. Packers, for each graph in its written order: the naive size (every op result in
   its own block), the lower bound (the most bytes live at any step after in-place
   sharing: no packing does better), the best arena, its ratio to the lower bound
   (goal: at most 1.05), the packer that found it, the planner's time; then the
   ratio of every packer.
2. Orders, per graph and device: the lower bound as written, in the order
   `df-schedule{strategy=best}` chooses (and which scheduler gave it), the optimum
   where the exact search finishes and the heuristics' best against it (`best` also
   runs the search on small schedules), the arena in both orders and their ratio, the
   scheduling time; then each scheduler's bound against the written one. Goals:
   the conv net training step's arena at most 0.72x as written, no arena above its
   written one, the chosen bound within 5% of the optimum wherever it is computed.
3. The same at the kernel level (after `df-fuse,df-bufferize`: what compiled code
   plans).
4. Time on graphs of about 2,000 ops (a 245-layer MLP training step, a random
   graph): `df-schedule` against the whole lowering pipeline and against lowering
   plus emitting Python, the best of three rounds. Goal: under 10% of the pipeline.

Graphs: `mlp` (784-512-512-10, batch 256, forward and backward from `df-autodiff`),
`convnet` (conv-relu-pool twice and a dense layer, batch 32, forward and backward),
`wide` (16 branches of 4 matmul+tanh, 256x256, summed), `deep` (50 blocks of matmul,
tanh, scale, relu on 128x128), `random-N` (tests/support/graphgen.py, 200 ops; `small-N`: 25
ops, where the exact search finishes), `mlp@2` (the
MLP placed on cpu:0,gpu:0 and partitioned: one arena per device, sends and receives
included), `mlp-N` (`bench/recompute.py`'s N-layer training graphs, width 32, batch
1024) and `resnet18` (ResNet-18 inference at batch 1, through ONNX;
skipped without torch). `--quick` leaves out ResNet-18 and the 2,000-op timings.
"""

from __future__ import annotations

import io
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from placement import convnet, deep, mlp, wide
from recompute import deep_mlp
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from graphgen import random_graph

from dflow.analysis.memory.exact_schedule import exact_order
from dflow.analysis.memory.function_schedule import FunctionSchedule, plan_entry
from dflow.analysis.memory.memory_plan import MemoryPlan, plan
from dflow.analysis.memory.order_choice import OrderChoice, choose_order
from dflow.analysis.memory.packing import PACKERS
from dflow.analysis.memory.scheduling import SCHEDULERS, bound_of, reorder
from dflow.dialects.devices import DeviceList
from dflow.dialects.df.symbols import device_scopes, graph_functions
from dflow.driver.compilation.compiler import compile_module, cyclic_gc_paused, lower
from dflow.driver.compilation.devices import split_for_devices
from dflow.driver.compilation.timing import Timings
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.frontend.onnx import import_model


def _random(seed: int, ops: int = 200) -> Callable[[], ModuleOp]:
    return lambda: random_graph(seed, min_ops=ops, dtype="f32")


def _partitioned(build: Callable[[], ModuleOp], devices: str) -> Callable[[], ModuleOp]:
    return lambda: split_for_devices(build(), DeviceList.parse(devices))


def _deep_mlp(n: int) -> Callable[[], ModuleOp]:
    return lambda: deep_mlp(n)


def resnet18() -> ModuleOp:
    """ResNet-18 (random weights; torchvision's own, through `tests/support/vision.py`)
    exported to ONNX and imported at batch 1."""
    import torch  # noqa: PLC0415 (optional: only this graph needs it)
    from vision import torchvision  # noqa: PLC0415

    torch.manual_seed(0)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            torchvision().models.resnet18().eval(),
            (torch.zeros(1, 3, 224, 224),),
            buffer,
            dynamo=False,
            opset_version=17,
            input_names=["input"],
        )
    return import_model(buffer.getvalue(), {"input": (1, 3, 224, 224)})


GRAPHS: dict[str, tuple[Callable[[], ModuleOp], str]] = {
    "mlp": (mlp, "main_grad"),
    "convnet": (convnet, "main_grad"),
    "wide": (wide, "main"),
    "deep": (deep, "main"),
    **{f"random-{seed}": (_random(seed), "main") for seed in range(4)},
    **{f"small-{seed}": (_random(seed, 25), "main") for seed in range(8)},
    "mlp@2": (_partitioned(mlp, "cpu:0,gpu:0"), "main_grad"),
    **{f"mlp-{n}": (_deep_mlp(n), "main_grad") for n in (8, 16, 32, 64)},
    "resnet18": (resnet18, "main"),
}

CONVNET_GOAL = 0.72
OPTIMUM_GOAL = 1.05


# ---------------------------------------------------------------- 1. packers


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


def _plans(modules: dict[str, tuple[ModuleOp, str]]) -> list[tuple[str, MemoryPlan, float]]:
    """Every graph's plan per device, with the planner's time for it."""
    rows: list[tuple[str, MemoryPlan, float]] = []
    for name, (module, entry) in modules.items():
        start = time.perf_counter()
        plans = plan_entry(module, entry, every_packer=True)
        seconds = (time.perf_counter() - start) / len(plans)
        for device, memory in plans.items():
            rows.append((name if len(plans) == 1 else f"{name} {device}", memory, seconds))
    return rows


def packers(modules: dict[str, tuple[ModuleOp, str]]) -> None:
    rows = _plans(modules)
    print("1. packers, written order. bytes: naive, lower bound, best arena; ratios to the bound")
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


# ---------------------------------------------------------------- 2, 3. orders


class OrderRow:
    """One function's orders: as written, chosen, optimum, and the arenas."""

    def __init__(self, name: str, function: FuncOp, exact: bool):
        schedule = FunctionSchedule.of(function)
        steps = schedule.schedule()
        dependences = schedule.dependences(steps)
        start = time.perf_counter()
        self.choice: OrderChoice = choose_order(steps, dependences)
        self.seconds = time.perf_counter() - start
        self.name = name
        self.steps = len(steps.steps)
        found = exact_order(steps, dependences, self.choice.bound) if exact else None
        self.optimum = None if found is None else found.bound
        self.arena_written = plan(steps).arena_bytes
        self.arena_chosen = plan(reorder(steps, self.choice.order)).arena_bytes
        self.bounds = {
            scheduler: min(bound_of(steps, order) for order in propose(steps, dependences))
            for scheduler, propose in SCHEDULERS.items()
        }

    @property
    def heuristic(self) -> int:
        """The least bound of the heuristics alone."""
        return min(self.bounds.values())

    def line(self) -> str:
        choice = self.choice
        optimum = "-" if self.optimum is None else f"{self.optimum:,}"
        gap = "-" if self.optimum is None else f"{self.heuristic / max(self.optimum, 1):.3f}"
        return (
            f"{self.name:<20}{self.steps:>6}{choice.written_bound:>13,}{choice.bound:>13,}"
            f"{choice.bound / max(choice.written_bound, 1):>7.3f}  {choice.strategy:<11}"
            f"{optimum:>13}{gap:>9}{self.arena_written:>13,}{self.arena_chosen:>13,}"
            f"{self.arena_chosen / max(self.arena_written, 1):>7.3f}{self.seconds * 1e3:>8.1f}"
        )

    def strategies(self) -> str:
        written = max(self.choice.written_bound, 1)
        return f"{self.name:<20}" + "".join(
            f"{self.bounds[s] / written:>11.3f}" for s in SCHEDULERS
        )


def order_rows(modules: dict[str, tuple[ModuleOp, str]], exact: bool) -> list[OrderRow]:
    rows: list[OrderRow] = []
    for name, (module, entry) in modules.items():
        for device, scope in device_scopes(module):
            for function in graph_functions(scope):
                if function.sym_name.data == entry:
                    rows.append(OrderRow(f"{name} {device}" if device else name, function, exact))
    return rows


def print_orders(title: str, rows: list[OrderRow]) -> None:
    print(f"\n{title}")
    print(
        f"{'graph':<20}{'steps':>6}{'written lb':>13}{'chosen lb':>13}{'ratio':>7}  "
        f"{'by':<11}{'optimum':>13}{'heur/opt':>9}{'arena wr.':>13}{'arena ch.':>13}"
        f"{'ratio':>7}{'ms':>8}"
    )
    for row in rows:
        print(row.line())
    print("\nlower bound of each scheduler / as written")
    print(f"{'graph':<20}" + "".join(f"{s:>11}" for s in SCHEDULERS))
    for row in rows:
        print(row.strategies())


def goals(rows: list[OrderRow]) -> None:
    convnet_row = next(r for r in rows if r.name == "convnet")
    ratio = convnet_row.arena_chosen / convnet_row.arena_written
    print(
        f"\nconvnet arena {convnet_row.arena_written:,} -> {convnet_row.arena_chosen:,}: "
        f"{ratio:.3f}x (goal: at most {CONVNET_GOAL})"
    )
    worse = [r.name for r in rows if r.arena_chosen > r.arena_written]
    print(f"arenas above their written one: {', '.join(worse) or 'none'} (goal: none)")
    known = [r for r in rows if r.optimum is not None]
    if known:
        chosen = max(known, key=lambda r: r.choice.bound / max(r.optimum or 1, 1))
        heuristic = max(known, key=lambda r: r.heuristic / max(r.optimum or 1, 1))
        print(
            f"optimum computed for {len(known)} of {len(rows)}; worst chosen / optimum "
            f"{chosen.choice.bound / max(chosen.optimum or 1, 1):.3f} ({chosen.name}) "
            f"(goal: at most {OPTIMUM_GOAL}); heuristics alone "
            f"{heuristic.heuristic / max(heuristic.optimum or 1, 1):.3f} ({heuristic.name})"
        )


def kernel_level(modules: dict[str, tuple[ModuleOp, str]]) -> dict[str, tuple[ModuleOp, str]]:
    """Each graph fused and bufferized, as the compiled code plans it."""
    lowered: dict[str, tuple[ModuleOp, str]] = {}
    for name, (module, entry) in modules.items():
        clone = module.clone()
        apply_pipeline(clone, "df-inline,df-prune,df-fuse,df-bufferize")
        lowered[name] = (clone, entry)
    return lowered


# ---------------------------------------------------------------- 4. time


def _one_round(build: Callable[[], ModuleOp]) -> tuple[float, float, float]:
    """(df-schedule, lowering, lowering and emitting) seconds for one compile."""
    module = build()
    timings = Timings()
    with cyclic_gc_paused():
        start = time.perf_counter()
        lower(module.clone(), None, timings)
        lowered = time.perf_counter() - start
        start = time.perf_counter()
        compile_module(module)
        emitted = time.perf_counter() - start
    return dict(timings.rows)["df-schedule"], lowered, emitted


def timing() -> None:
    print("\n4. df-schedule's time on graphs of about 2,000 ops (best of 3 rounds)")
    print(
        f"{'graph':<14}{'ops':>6}{'schedule s':>12}{'lower s':>9}{'share':>7}"
        f"{'lower+emit s':>14}{'share':>7}"
    )
    builds = {
        "mlp-245": lambda: deep_mlp(245),
        "random-2000": lambda: random_graph(1, min_ops=2000, dtype="f32"),
    }
    for name, build in builds.items():
        ops = sum(1 for op in build().walk() if not isinstance(op, ModuleOp | FuncOp))
        rounds = [_one_round(build) for _ in range(3)]
        schedule, lowered, emitted = (min(r[i] for r in rounds) for i in range(3))
        print(
            f"{name:<14}{ops:>6}{schedule:>12.3f}{lowered:>9.3f}{schedule / lowered:>7.1%}"
            f"{emitted:>14.3f}{schedule / emitted:>7.1%}  (goal: under 10%)"
        )


def _modules(quick: bool) -> dict[str, tuple[ModuleOp, str]]:
    modules: dict[str, tuple[ModuleOp, str]] = {}
    for name, (build, entry) in GRAPHS.items():
        if quick and name == "resnet18":
            continue
        try:
            modules[name] = (build(), entry)
        except ImportError as error:
            print(f"({name} skipped: {error})")
    return modules


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    modules = _modules(quick)
    packers(modules)
    rows = order_rows(modules, exact=True)
    print_orders("2. orders (df-schedule{strategy=best}), bytes; graph level", rows)
    goals(rows)
    print_orders(
        "3. orders at the kernel level (after df-fuse,df-bufferize), bytes",
        order_rows(kernel_level(modules), exact=True),
    )
    if not quick:
        timing()


if __name__ == "__main__":
    main()
