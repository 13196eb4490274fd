"""Memory against recomputation on deep MLP training graphs (df-autodiff + df-recompute).

    python bench/recompute.py            # n = 8, 16, 32, 64
    python bench/recompute.py 8 16       # chosen depths

Each graph is an n-layer perceptron (width 32, batch 1024, a 10-class softmax
cross-entropy) with its gradient w.r.t. every weight and bias: activations
dominate (each is 128 KiB, each weight 4 KiB), as in Chen et al. For each n the
table gives the planner's arena without recomputation, the smallest arena
`df-recompute{mode=budget}` reaches (found by the pass's own searches, then run at
exactly that budget and re-measured by the planner on the rewritten IR), the
extra estimated flops as a share of the forward pass, and the search time. The
growth columns compare with the previous row: the plain arena grows linearly with
n, the budgeted one as about sqrt(n).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from placement import mlp

from dflow.analysis.memory.function_schedule import plan_function
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.transforms.recompute.budget import (
    STRATEGIES,
    RecomputeModel,
    forward_flops,
    proposals,
)

DEPTHS = (8, 16, 32, 64)


def deep_mlp(n: int, batch: int = 1024, width: int = 32) -> ModuleOp:
    """An n-hidden-layer MLP's training graph (loss and gradients), one function."""
    return mlp(batch, (width,) * (n + 1) + (10,))


def gradient(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


def measure(n: int) -> tuple[int, int, float, float]:
    """(plain arena, smallest budget arena, extra flops %, search seconds)."""
    module = deep_mlp(n)
    function = gradient(module)
    plain = plan_function(function)[1].arena_bytes
    forward = forward_flops(function)
    started = time.perf_counter()
    model = RecomputeModel.of(function)
    smallest = min(model.arena_bytes(p.recomputed) for p in proposals(model, tuple(STRATEGIES), 0))
    apply_pipeline(module, f"df-recompute{{mode=budget budget={smallest}}}")
    elapsed = time.perf_counter() - started
    function = gradient(module)
    budgeted = plan_function(function)[1].arena_bytes
    recomputed = forward_flops(function) - forward  # the clones are forward ops
    return plain, budgeted, 100 * recomputed / forward, elapsed


def main() -> None:
    depths = [int(a) for a in sys.argv[1:]] or list(DEPTHS)
    print("n-layer MLP, width 32, batch 1024, f32: arena bytes by the planner")
    print(
        f"{'n':>4} {'no recompute':>14} {'growth':>7} {'budget mode':>13} {'growth':>7} "
        f"{'extra flops':>12} {'search s':>9}"
    )
    previous: tuple[int, int] | None = None
    for n in depths:
        plain, budgeted, extra, seconds = measure(n)
        grow_plain = f"{plain / previous[0]:.2f}x" if previous else ""
        grow_budget = f"{budgeted / previous[1]:.2f}x" if previous else ""
        print(
            f"{n:>4} {plain:>14,} {grow_plain:>7} {budgeted:>13,} {grow_budget:>7} "
            f"{extra:>11.1f}% {seconds:>9.2f}"
        )
        previous = (plain, budgeted)


if __name__ == "__main__":
    main()
