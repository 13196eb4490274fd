"""Memory-aware scheduling: the schedulers, the exact search, `df-schedule`.

- On seeded random abstract schedules (views, in-place candidates, sizes from 64 bytes
  to 64 KiB, a chain of effects, a fixed last step): every scheduler gives an order
  that keeps every dependence; `best` is never above the written order and ties keep
  it; the exact search equals brute force over every topological order, each measured
  by the planner itself (`lower_bound_bytes`), and its order reaches its figure;
  `floor_bytes` is never above the optimum.
- On random graphs, every strategy's reordered function, planned, passes the
  independent plan checker and, run inside its arena (a byte array that starts as
  garbage), gives the interpreter's results bit for bit; with sends (held to the
  end), each sent value stays intact and the sends keep their written order;
  partitioned placements plan a valid arena per device.
- Generated programs (`programgen.py`: pins, sends between two CPU devices, every op
  family) compiled with each strategy give the interpreter's results.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import numpy as np
import pytest
from graphgen import place_randomly, random_graph
from plan_checker import check_module
from programgen import check, generate
from test_memory_plan import _sent_intact, _with_sends, run_in_arena
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from dflow.analysis.memory.exact_schedule import QUICK, Limits, exact_order
from dflow.analysis.memory.function_schedule import FunctionSchedule
from dflow.analysis.memory.liveness import Schedule, Step, Value
from dflow.analysis.memory.order_choice import STRATEGIES, choose_order
from dflow.analysis.memory.scheduling import (
    SCHEDULERS,
    Dependences,
    best_order,
    bound_of,
    floor_bytes,
)
from dflow.dialects.df.communication import RecvOp, SendOp
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.interpreters.df import run_function
from dflow.transforms.schedule import Strategy

# ------------------------------------------------------- abstract schedules

SIZES = (64, 256, 1000, 4096, 65536)


def random_problem(seed: int, steps: int) -> tuple[Schedule, Dependences]:
    """A random schedule of `steps` steps: each writes one value (sometimes two) of a
    random size, reads up to three earlier values or arguments; some may write in place
    over an operand of their size, some are views of an operand; a chain of a few steps
    (effects) and a last step that reads a random set of values (the results)."""
    rng = random.Random(seed)
    values = [Value(rng.choice(SIZES), in_arena=False, name=f"arg{i}") for i in range(2)]
    written: list[int] = []
    built: list[Step] = []
    for index in range(steps - 1):
        reads = tuple(dict.fromkeys(rng.choice([0, 1, *written]) for _ in range(rng.randint(0, 3))))
        arena_reads = [r for r in reads if values[r].in_arena]
        kind = rng.random()
        if arena_reads and kind < 0.2:
            source = rng.choice(arena_reads)
            values.append(Value(values[source].size, name=f"v{index}"))
            built.append(Step(reads, (len(values) - 1,), (), ((len(values) - 1, source),)))
        elif arena_reads and kind < 0.6:
            source = rng.choice(arena_reads)
            values.append(Value(values[source].size, name=f"v{index}"))
            built.append(Step(reads, (len(values) - 1,), ((len(values) - 1, source),)))
        else:
            count = 2 if kind > 0.9 else 1
            outputs = tuple(range(len(values), len(values) + count))
            values.extend(Value(rng.choice(SIZES), name=f"v{index}.{i}") for i in range(count))
            built.append(Step(reads, outputs))
        written.extend(built[-1].writes)
    results = tuple(rng.sample(written, min(len(written), rng.randint(1, 3))))
    built.append(Step(results))
    chain = sorted(rng.sample(range(steps - 1), min(steps - 1, rng.randint(0, 3))))
    schedule = Schedule(tuple(values), tuple(built))
    return schedule, Dependences.of(schedule, chain, steps - 1)


def topological_orders(dependences: Dependences) -> Iterator[list[int]]:
    """Every order that keeps the dependences (the brute force)."""
    count = len(dependences.before)
    before = [set(b) for b in dependences.before]
    if dependences.last is not None:
        before[dependences.last] = set(range(count)) - {dependences.last}
    order: list[int] = []

    def extend() -> Iterator[list[int]]:
        if len(order) == count:
            yield list(order)
            return
        for step in range(count):
            if step not in order and before[step] <= set(order):
                order.append(step)
                yield from extend()
                order.pop()

    return extend()


@pytest.mark.parametrize("seed", range(60))
def test_every_scheduler_keeps_every_dependence(seed: int) -> None:
    schedule, dependences = random_problem(seed, 6 + seed % 30)
    for name, scheduler in SCHEDULERS.items():
        for order in scheduler(schedule, dependences):
            assert dependences.is_order(order), name


@pytest.mark.parametrize("seed", range(60))
def test_best_is_never_above_written_and_ties_keep_it(seed: int) -> None:
    schedule, dependences = random_problem(seed, 6 + seed % 30)
    written = bound_of(schedule, range(len(schedule.steps)))
    choice = best_order(schedule, dependences)
    assert choice.bound == bound_of(schedule, choice.order) <= written
    assert choice.bounds["written"] == written
    if choice.bound == written:
        assert choice.order == tuple(range(len(schedule.steps)))
        assert choice.strategy == "written"
    else:
        assert choice.bound == min(choice.bounds.values()) < written


@pytest.mark.parametrize("seed", range(80))
def test_the_exact_search_equals_brute_force(seed: int) -> None:
    """The optimum over every topological order, each measured by the planner, is what
    the search finds; its order reaches it; the floor is never above it."""
    schedule, dependences = random_problem(seed, 4 + seed % 5)
    optimum = min(bound_of(schedule, order) for order in topological_orders(dependences))
    exact = exact_order(schedule, dependences)
    assert exact is not None
    assert dependences.is_order(exact.order)
    assert exact.bound == optimum == bound_of(schedule, exact.order)
    assert floor_bytes(schedule) <= optimum
    bounded = exact_order(schedule, dependences, ceiling=optimum)
    assert bounded is not None and bounded.bound == optimum


def test_the_heuristics_miss_the_optimum_somewhere() -> None:
    """The exact search is not a copy of the heuristics: on some of the random
    schedules it finds a strictly lower peak (else it would show nothing)."""
    gaps = 0
    for seed in range(200):
        schedule, dependences = random_problem(seed, 8)
        exact = exact_order(schedule, dependences)
        assert exact is not None
        gaps += exact.bound < best_order(schedule, dependences).bound
    assert gaps > 0


def test_the_exact_search_gives_up_past_its_limits() -> None:
    """Thirty independent steps have 2**30 sets of run steps: no answer, quickly."""
    values = tuple(Value(64, name=f"v{i}") for i in range(30))
    steps = (*(Step((), (i,)) for i in range(30)), Step(tuple(range(30))))
    schedule = Schedule(values, steps)
    dependences = Dependences.of(schedule, (), 30)
    assert exact_order(schedule, dependences, limits=Limits(seconds=0.5)) is None
    assert exact_order(schedule, dependences, limits=QUICK) is None
    choice = choose_order(schedule, dependences, "exact", time_limit=0.5)
    assert choice.exact_bound is None and choice.bound == 30 * 64


def two_branches() -> Schedule:
    """Two branches from an argument, each a 4 KiB value reduced to 64 bytes, written
    interleaved (a, b, then their sums), both sums returned."""
    values = (
        Value(4096, False, "x"),
        Value(4096, name="a"),
        Value(4096, name="b"),
        Value(64, name="ra"),
        Value(64, name="rb"),
    )
    steps = (Step((0,), (1,)), Step((0,), (2,)), Step((1,), (3,)), Step((2,), (4,)), Step((3, 4)))
    return Schedule(values, steps)


def test_the_two_branch_graph_finishes_one_branch_first() -> None:
    """As written both large values are live with the first sum (8 KiB + 64); one
    branch at a time needs one large value and both sums (4 KiB + 128). Greedy and
    LPMF find that; BFS runs both ready roots first and keeps the written bound."""
    schedule = two_branches()
    dependences = Dependences.of(schedule, (), 4)
    assert bound_of(schedule, range(5)) == 2 * 4096 + 64
    for name in ("greedy", "lpmf"):
        [order] = SCHEDULERS[name](schedule, dependences)
        assert bound_of(schedule, order) == 4096 + 64 + 64, name
    [order] = SCHEDULERS["bfs"](schedule, dependences)
    assert bound_of(schedule, order) == 2 * 4096 + 64
    choice = best_order(schedule, dependences)
    assert choice.bound == 4096 + 64 + 64 and choice.strategy != "written"
    assert choice.order == (0, 2, 1, 3, 4)


def test_the_chain_of_effects_is_kept() -> None:
    """The same graph with steps 0, 1 and 2 chained (ops with effects): every order
    keeps them in that sequence, so both large values are live together again."""
    schedule = two_branches()
    dependences = Dependences.of(schedule, (0, 1, 2), 4)
    for scheduler in SCHEDULERS.values():
        for order in scheduler(schedule, dependences):
            assert order.index(0) < order.index(1) < order.index(2)
    assert best_order(schedule, dependences).bound == 2 * 4096 + 64


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_choose_order_takes_the_named_scheduler(strategy: str) -> None:
    schedule, dependences = random_problem(7, 20)
    choice = choose_order(schedule, dependences, strategy)
    assert dependences.is_order(choice.order)
    assert choice.bound == bound_of(schedule, choice.order)
    assert choice.written_bound == bound_of(schedule, range(20))
    if strategy in SCHEDULERS:
        proposed = SCHEDULERS[strategy](schedule, dependences)
        assert choice.bound == min(bound_of(schedule, o) for o in proposed)
    if strategy == "exact":
        assert choice.exact_bound == choice.bound <= best_order(schedule, dependences).bound


# ------------------------------------------------------- graphs in the IR


def _main(module: ModuleOp) -> FuncOp:
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    return function


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", range(4))
def test_reordered_graphs_run_in_their_arena_like_the_interpreter(strategy: str, seed: int) -> None:
    module = random_graph(seed + 300, min_ops=40, dtype="f32" if seed % 2 else "f64")
    inputs = random_inputs(_main(module), seed)
    expected = run_function(module, "main", inputs)
    apply_pipeline(module, f"df-schedule{{strategy={strategy}}},df-plan-buffers")
    module.verify()
    assert check_module(module) > 0
    for got, want in zip(run_in_arena(_main(module), list(inputs)), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def _send_keys(function: FuncOp) -> list[str]:
    return [op.key.data for op in function.body.block.ops if isinstance(op, SendOp)]


@pytest.mark.parametrize("strategy", ["best", "greedy", "lpmf", "dfs", "random"])
def test_reordered_sends_keep_their_order_and_stay_intact(strategy: str) -> None:
    moved = 0
    for seed in range(4):
        module, function, inputs, expected = _with_sends(seed)
        keys = _send_keys(function)
        written = [op.name for op in function.body.block.ops]
        apply_pipeline(
            module,
            f"df-schedule{{strategy={strategy} hold-sends=true}},"
            "df-plan-buffers{hold-sends=true}",
        )
        module.verify()
        assert _send_keys(function) == keys
        moved += [op.name for op in function.body.block.ops] != written
        results, intact = _sent_intact(function, list(inputs))
        assert intact, seed
        for got, want in zip(results, expected, strict=True):
            np.testing.assert_array_equal(got, want)
    assert moved > 0 or strategy == "best"


@pytest.mark.parametrize("strategy", ["best", "exact", "lpmf", "post-order"])
@pytest.mark.parametrize("seed", range(3))
def test_partitioned_placements_schedule_and_plan_each_device(strategy: str, seed: int) -> None:
    module = random_graph(seed + 100, min_ops=40)
    place_randomly(module, seed)
    apply_pipeline(module, "df-partition")
    sequences = _transfers(module)
    apply_pipeline(module, f"df-schedule{{strategy={strategy}}},df-plan-buffers")
    module.verify()
    assert _transfers(module) == sequences
    assert check_module(module) > 0


def _transfers(module: ModuleOp) -> list[list[str]]:
    """Each device function's sends and receives (op and key), in order."""
    found: list[list[str]] = []
    for part in module.ops:
        for function in part.ops if isinstance(part, ModuleOp) else ():
            if isinstance(function, FuncOp):
                ops = function.body.block.ops
                found.append(
                    [f"{op.name} {op.key.data}" for op in ops if isinstance(op, SendOp | RecvOp)]
                )
    assert any(found)
    return found


def test_the_schedule_of_a_function_is_what_the_pass_writes() -> None:
    """`df-schedule` leaves the ops in the order `choose_order` gives the function."""
    module = random_graph(5, min_ops=60)
    function = _main(module)
    schedule = FunctionSchedule.of(function)
    steps = schedule.schedule()
    choice = choose_order(steps, schedule.dependences(steps), "lpmf")
    expected = [schedule.ops[i] for i in choice.order]
    apply_pipeline(module, "df-schedule{strategy=lpmf}")
    assert list(function.body.block.ops) == expected


# ------------------------------------------------------- compiled


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_generated_programs_compiled_with_every_strategy(strategy: str, tmp_path: Path) -> None:
    """Two generated programs with pins, run on two CPU devices (values sent between
    threads), give the interpreter's results whatever the order of their ops."""
    for seed in (3, 8):
        outcome = check(generate(seed), ["devices"], tmp_path, schedule=strategy)
        assert not outcome.failures, outcome.failures


def test_the_pass_option_names_every_strategy() -> None:
    """`df-schedule{strategy=...}` accepts exactly the strategies `choose_order` knows."""
    assert get_args(Strategy) == STRATEGIES
