"""df-recompute: results unchanged in every mode, plans checked against the planner
run on the rewritten IR, and budget mode's sublinear growth on deep MLPs."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from dflow.analysis.memory.function_schedule import plan_function
from dflow.dialects.df import annotations
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function
from dflow.transforms.autodiff import differentiate
from dflow.transforms.recompute.budget import RecomputeModel, apply_plan, flops_of
from dflow.transforms.recompute.groups import is_target
from dflow.transforms.recompute.heuristic import peak_bound
from dflow.transforms.schedule import schedule_function

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from recompute import deep_mlp

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": Tensor.relu,
    "tanh": Tensor.tanh,
    "sigmoid": Tensor.sigmoid,
    "square": Tensor.square,
    "exp of tanh": lambda t: t.tanh().exp(),
}


def random_training_graph(seed: int, hints: bool, layers: int | None = None) -> ModuleOp:
    """A random MLP-like loss (matmuls, biases, random activations, skip products)
    differentiated by df-autodiff w.r.t. every weight; some forward ops hinted."""
    rng = np.random.default_rng(seed)
    g = Graph("main")
    h = g.input("x", (8, 12))
    weights: list[int] = []
    width = 12
    values: list[Tensor] = []
    for layer in range(layers or int(rng.integers(2, 5))):
        out = int(rng.choice([6, 12, 16]))
        w = g.input(f"w{layer}", (width, out))
        b = g.input(f"b{layer}", (out,))
        weights += [2 * layer + 1, 2 * layer + 2]
        name = list(ACTIVATIONS)[int(rng.integers(len(ACTIVATIONS)))]
        h = ACTIVATIONS[name](h @ w + b)
        same = [v for v in values if v.type == h.type]
        if same and rng.random() < 0.5:
            h = h * same[int(rng.integers(len(same)))]
        values.append(h)
        width = out
    g.output((h.square()).mean())
    function = differentiate(g.function(), weights)
    if hints:
        for op in function.body.block.ops:
            if not is_target(op) and op.results and rng.random() < 0.5:
                op.attributes[annotations.RECOMPUTE] = UnitAttr()
    return ModuleOp([function])


def gradient_function(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


def feeds(function: FuncOp, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        (rng.standard_normal(a.type.get_shape()) * 0.5).astype(np.float32)  # pyright: ignore
        for a in function.args
    ]


def run(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    return run_function(module, gradient_function(module).sym_name.data, inputs)


def clones(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if annotations.RECOMPUTED in op.attributes]


def arena(module: ModuleOp) -> int:
    return plan_function(gradient_function(module))[1].arena_bytes


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    "pipeline",
    ["df-recompute", "df-recompute{mode=heuristic}", "df-recompute{mode=heuristic},cse"],
)
def test_groups_keep_results(seed: int, pipeline: str) -> None:
    """Recomputation repeats the same ops on the same inputs: results bit for bit.
    Hints mode recomputes every hinted group; heuristic mode only what lowers the
    planner's peak bound in df-schedule's order (else it leaves the function as it
    was)."""
    module = random_training_graph(seed, hints=True)
    inputs = feeds(gradient_function(module), seed)
    expected = run(module, inputs)
    text, bound = str(module), peak_bound(gradient_function(module))
    apply_pipeline(module, pipeline)
    module.verify()
    if "heuristic" not in pipeline:
        assert clones(module)
    elif clones(module):
        after = peak_bound(gradient_function(module))
        assert after is not None and bound is not None and after < bound
    elif "cse" not in pipeline:
        assert str(module) == text
    for got, want in zip(run(module, inputs), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_heuristic_mode_keeps_a_group_where_it_lowers_the_peak() -> None:
    """Over the random training graphs, heuristic mode does recompute somewhere (the
    test above would pass vacuously if it never did), and every time it does, the
    bound is lower."""
    kept = 0
    for seed in range(8):
        module = random_training_graph(seed, hints=False, layers=4)
        before = peak_bound(gradient_function(module))
        apply_pipeline(module, "df-recompute{mode=heuristic}")
        if clones(module):
            kept += 1
            after = peak_bound(gradient_function(module))
            assert after is not None and before is not None and after < before
    assert kept


@pytest.mark.parametrize("seed", range(6))
def test_budget_mode_keeps_results_and_meets_the_budget(seed: int) -> None:
    module = random_training_graph(seed, hints=False)
    function = gradient_function(module)
    inputs = feeds(function, seed)
    expected = run(module, inputs)
    before = arena(module)
    model = RecomputeModel.of(function)
    smallest = min(model.arena_bytes(r) for r in _chen_and_greedy(model))
    budget = (smallest + before) // 2 if smallest < before else before
    apply_pipeline(module, f"df-recompute{{mode=budget budget={budget}}},cse")
    assert arena(module) <= budget
    for got, want in zip(run(module, inputs), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def _chen_and_greedy(model: RecomputeModel) -> list[frozenset[int]]:
    from dflow.transforms.recompute.budget import chen_plans, greedy_plans  # noqa: PLC0415

    return [*chen_plans(model, 0), *greedy_plans(model, 0)]


def chain_module() -> ModuleOp:
    """The chain of tests/filecheck/transforms/recompute.mlir, built by autodiff:
    exp, neg, exp, exp of 1024 floats, summed."""
    g = Graph("chain")
    x = g.input("x", (1024,))
    g.output((-x.exp()).exp().exp().sum())
    return ModuleOp([differentiate(g.function(), [0])])


def small_random_training_graph() -> ModuleOp:
    return random_training_graph(4, hints=False, layers=1)


@pytest.mark.parametrize("make", [chain_module, small_random_training_graph])
def test_budget_plan_is_the_cheapest_the_planner_accepts(make: Callable[[], ModuleOp]) -> None:
    """Against brute force on the IR itself: every subset of (at most 10) candidates
    applied with `apply_plan` to a fresh copy, reordered by df-schedule and planned by
    df-plan-buffers; the pass must choose the fewest flops among those within the
    budget."""
    module = make()
    model = RecomputeModel.of(gradient_function(module))
    candidates = model.candidates
    assert len(candidates) <= 10, "more candidates than the brute force enumerates"
    measured: list[tuple[int, int]] = []
    for count in range(len(candidates) + 1):
        for subset in combinations(candidates, count):
            copy = module.clone()
            copy_model = RecomputeModel.of(gradient_function(copy))
            apply_plan(gradient_function(copy), copy_model, frozenset(subset))
            schedule_function(gradient_function(copy))
            measured.append((arena(copy), flops_of(clones(copy))))
    peaks = sorted({peak for peak, _ in measured})
    budget = peaks[len(peaks) // 3]
    cheapest = min(flops for peak, flops in measured if peak <= budget)
    apply_pipeline(module, f"df-recompute{{mode=budget budget={budget}}}")
    assert arena(module) <= budget
    assert flops_of(clones(module)) == cheapest


def test_infeasible_budget_names_the_smallest_peak() -> None:
    module = chain_module()
    with pytest.raises(PassFailedException, match=r"the smallest peak reached is \d+ bytes"):
        apply_pipeline(module, "df-recompute{mode=budget budget=64}")


def smallest_budget_peak(n: int) -> tuple[int, int]:
    """(arena without recomputation, smallest arena budget mode reaches) for an
    n-layer MLP, both by the planner on the rewritten IR."""
    module = deep_mlp(n, batch=256, width=16)
    function = gradient_function(module)
    before = arena(module)
    model = RecomputeModel.of(function)
    smallest = min(model.arena_bytes(r) for r in _chen_and_greedy(model))
    apply_pipeline(module, f"df-recompute{{mode=budget budget={smallest}}}")
    return before, arena(module)


def test_budget_peak_grows_sublinearly() -> None:
    """Chen et al.: with checkpoints every ~sqrt(n) layers the activations kept grow as
    sqrt(n). Four times the layers: the plain peak grows more than 3x (linearly, with
    the fixed input and classifier), budget mode's smallest peak about 2x (sqrt 4)."""
    base_4, best_4 = smallest_budget_peak(4)
    base_16, best_16 = smallest_budget_peak(16)
    assert base_16 / base_4 > 3
    assert best_16 / best_4 < 2.3
    assert best_16 < base_16 / 2


def scheduled_arena(module: ModuleOp) -> int:
    """The arena of the gradient function in the order df-schedule chooses."""
    copy = module.clone()
    schedule_function(gradient_function(copy))
    return arena(copy)


def test_plans_are_judged_in_the_best_order() -> None:
    """A two-layer MLP at 85% of its arena as written: recomputing one op (1024 flops)
    is the cheapest plan in the written order (the integer program's, below), but in
    the order df-schedule chooses the function fits as it is: budget mode recomputes
    nothing and leaves the function in that order."""
    module = deep_mlp(2, batch=64, width=16)
    budget = arena(module) * 85 // 100
    assert scheduled_arena(module) <= budget
    apply_pipeline(module, f"df-recompute{{mode=budget budget={budget}}}")
    assert not clones(module)
    assert arena(module) <= budget


def test_best_plan_of_all_strategies_is_kept() -> None:
    """On a three-layer MLP at 85% of its arena in the best order the integer program
    finds a plan (36,864 flops) that the segmentations (37,888) and the greedy order
    (42,112) miss: `all` keeps the cheapest plan within the budget, whichever search
    found it."""
    costs: dict[str, int] = {}
    for strategy in ("chen", "greedy", "milp", "all"):  # too many candidates for exact
        module = deep_mlp(3, batch=64, width=16)
        budget = scheduled_arena(module) * 85 // 100
        apply_pipeline(module, f"df-recompute{{mode=budget budget={budget} strategy={strategy}}}")
        assert arena(module) <= budget
        costs[strategy] = flops_of(clones(module))
    assert costs["all"] == min(costs.values())
    assert costs["milp"] < min(costs["chen"], costs["greedy"])


def test_integer_program_alone_fails_cleanly_when_it_finds_nothing() -> None:
    """The program leaves in-place sharing out, so it can miss plans that exist; alone,
    that is the infeasible-budget error, never a crash."""
    module = chain_module()
    with pytest.raises(PassFailedException, match="no plan keeps the peak within"):
        apply_pipeline(module, "df-recompute{mode=budget budget=12416 strategy=milp}")
