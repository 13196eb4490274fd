"""The buffer planner: liveness, in-place sharing, packers, `df-plan-buffers`, `dflow plan`.

Every plan made here is checked by the independent checker (tests/support/plan_checker.py):
hand-written schedules, seeded random intervals and schedules, hypothesis
properties, random graphs (tests/support/graphgen.py) and random partitioned placements.
Random graphs are also run inside their planned arena (each result written at its
offset into one byte array that starts as garbage, operands read back from there)
and must give the interpreter's results bit for bit: a plan that lets a live value
be overwritten fails that. Negative tests show the checker catches overlaps,
blocks outside the arena, misaligned offsets and forged in-place sharing.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from arena_runner import ArenaRun, run_in_arena
from cli_support import run_dflow
from graphgen import place_randomly, random_graph
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_checker import Block, check_blocks, check_module, check_plan
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from dflow.analysis.memory.function_schedule import plan_entry
from dflow.analysis.memory.liveness import (
    ALIGNMENT,
    Buffer,
    PlanError,
    Schedule,
    Step,
    Value,
    align,
    peak_live_bytes,
)
from dflow.analysis.memory.memory_plan import plan
from dflow.analysis.memory.packing import PACKERS, FreeList, arena_size
from dflow.dialects.df.communication import SendOp
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.types import i64_array
from dflow.driver.frontdoors.cli import main
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import parse_module
from dflow.frontend import Graph
from dflow.interpreters.df import run_function
from dflow.transforms.autodiff import differentiate

# ---------------------------------------------------------------- pure planner


def blocks_of(buffers: list[Buffer], offsets: list[int]) -> list[Block]:
    return [
        Block(f"b{i}", b.size, o, b.start, b.end)
        for i, (b, o) in enumerate(zip(buffers, offsets, strict=True))
    ]


def chain(sizes: list[int], inplace: bool = True) -> Schedule:
    """v0 (an argument) -> v1 -> v2 ... each step reading the previous value; the last
    step returns the final value."""
    values = (Value(sizes[0], in_arena=False), *(Value(s) for s in sizes[1:]))
    steps = [Step((i,), (i + 1,), ((i + 1, i),) if inplace else ()) for i in range(len(sizes) - 1)]
    return Schedule(values, (*steps, Step((len(sizes) - 1,))))


def test_align_rounds_up_to_64() -> None:
    assert [align(n) for n in (0, 1, 64, 65, 128)] == [0, 64, 64, 128, 128]
    assert ALIGNMENT == 64


def test_an_elementwise_chain_shares_one_buffer() -> None:
    schedule = chain([400, 400, 400, 400])
    memory = plan(schedule)
    check_plan(schedule, memory)
    assert [b.values for b in memory.buffers] == [(1, 2, 3)]
    assert memory.inplace_pairs == ((1, 2), (2, 3))
    assert memory.arena_bytes == memory.lower_bound_bytes == 448
    assert memory.naive_bytes == 3 * 448


def test_the_argument_is_never_overwritten() -> None:
    schedule = chain([256, 256])
    memory = plan(schedule)
    assert memory.value_offsets() == {1: 0}
    assert 0 not in memory.intervals


def test_a_view_keeps_its_source_alive() -> None:
    # v2 is a view of v1 (a reshape); v3 could overwrite v1, whose own last reader
    # it is, but v2 is read after: the bytes are not free, so no in-place.
    values = (Value(64, in_arena=False), *(Value(64) for _ in range(4)))
    steps = (
        Step((0,), (1,)),
        Step((1,), (2,), alias=((2, 1),)),
        Step((1,), (3,), ((3, 1),)),
        Step((2, 3), (4,)),
        Step((4,)),
    )
    schedule = Schedule(values, steps)
    memory = plan(schedule)
    check_plan(schedule, memory)
    assert memory.inplace_pairs == ()
    offsets = memory.value_offsets()
    assert offsets[2] == offsets[1] != offsets[3]
    assert memory.intervals[1] == (0, 2) and memory.intervals[2] == (1, 3)
    assert memory.lower_bound_bytes == 3 * 64  # step 3 reads v1/v2 and v3, writes v4
    assert memory.naive_bytes == 3 * 64  # v1, v3, v4: the view has no block of its own


def test_a_dying_view_and_source_can_be_overwritten() -> None:
    # v1 -> v2 = view(v1) -> v3 = relu(v2): both die at step 2, so v3 takes their bytes.
    values = (Value(64, in_arena=False), Value(64), Value(64), Value(64))
    steps = (
        Step((0,), (1,)),
        Step((1,), (2,), alias=((2, 1),)),
        Step((2,), (3,), ((3, 2),)),
        Step((3,)),
    )
    schedule = Schedule(values, steps)
    memory = plan(schedule)
    check_plan(schedule, memory)
    assert [b.values for b in memory.buffers] == [(1, 2, 3)]
    assert memory.arena_bytes == memory.lower_bound_bytes == 64
    assert memory.naive_bytes == 2 * 64


def test_the_checker_refuses_overwriting_a_viewed_source() -> None:
    # The plan the group-end rule prevents: v3 over v1 while its view v2 is still read.
    blocks = [Block("v1", 64, 0, 0, 2), Block("v2", 64, 0, 1, 3), Block("v3", 64, 0, 2, 3)]
    with pytest.raises(AssertionError, match="overlaps"):
        check_blocks(blocks, 64, {("v1", "v3")}, views={("v1", "v2")})
    check_blocks(blocks[:2], 64, views={("v1", "v2")})  # the view alone is fine


def test_no_in_place_over_a_value_read_later() -> None:
    # v1 -> v2 (candidate), but v3 reads v1 after v2 is made
    values = (Value(64, in_arena=False), Value(64), Value(64), Value(64))
    steps = (Step((0,), (1,)), Step((1,), (2,), ((2, 1),)), Step((1, 2), (3,)), Step((3,)))
    schedule = Schedule(values, steps)
    memory = plan(schedule)
    check_plan(schedule, memory)
    assert memory.inplace_pairs == ()
    offsets = memory.value_offsets()
    assert offsets[1] != offsets[2]


def test_no_in_place_across_sizes_or_outside_the_arena() -> None:
    values = (Value(64, in_arena=False), Value(64), Value(128), Value(128))
    steps = (
        Step((0,), (1,)),
        Step((1,), (2,), ((2, 1),)),  # 64 -> 128 bytes: refused
        Step((2, 0), (3,), ((3, 0),)),  # over the argument: refused
        Step((3,)),
    )
    memory = plan(Schedule(values, steps))
    assert memory.inplace_pairs == ()


def test_two_outputs_never_take_one_input() -> None:
    values = (Value(64, in_arena=False), Value(64), Value(64), Value(64))
    steps = (Step((0,), (1,)), Step((1,), (2, 3), ((2, 1), (3, 1))), Step((2, 3)))
    schedule = Schedule(values, steps)
    memory = plan(schedule)
    check_plan(schedule, memory)
    assert memory.inplace_pairs == ((1, 2),)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ((Step((), (1,)), Step((), (1,))), "written twice"),
        ((Step((1,), ()),), "read at step 0 before written"),
        ((Step((0,), ()),), "never written"),
    ],
)
def test_bad_schedules_are_refused(steps: tuple[Step, ...], message: str) -> None:
    values = (Value(8, in_arena=False, name="x"), Value(8, name="y"))
    with pytest.raises(PlanError, match=message):
        plan(Schedule(values, steps))


def test_lower_bound_is_the_peak_of_live_aligned_bytes() -> None:
    buffers = [
        Buffer((0,), 128, 0, 2, (0,)),
        Buffer((1,), 64, 1, 1, (0,)),
        Buffer((2,), 256, 2, 3, (0,)),
    ]
    assert peak_live_bytes(buffers) == 128 + 256
    assert peak_live_bytes([]) == 0


def test_free_list_reuses_and_coalesces() -> None:
    pool = FreeList()
    a, b, c = pool.allocate(64), pool.allocate(128), pool.allocate(64)
    assert (a, b, c, pool.top) == (0, 64, 192, 256)
    pool.free(a, 64)
    pool.free(b, 128)
    assert pool.blocks == [[0, 192]]
    assert pool.allocate(192) == 0
    pool.free(c, 64)
    assert pool.allocate(128) == 192  # the top block grows instead of a new one
    assert pool.top == 320


def random_buffers(rng: random.Random, count: int, steps: int) -> list[Buffer]:
    buffers: list[Buffer] = []
    for index in range(count):
        start = rng.randrange(steps)
        size = align(rng.choice([0, 1, 63, 64, 100, 640, 4096, rng.randrange(1, 20000)]))
        buffers.append(Buffer((index,), size, start, min(steps, start + rng.randrange(6)), (0,)))
    return buffers


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("packer", list(PACKERS))
def test_every_packer_is_valid_on_random_intervals(seed: int, packer: str) -> None:
    buffers = random_buffers(random.Random(seed), count=40, steps=30)
    offsets = PACKERS[packer](buffers)
    arena = arena_size(buffers, offsets)
    check_blocks(blocks_of(buffers, offsets), arena)
    assert arena >= peak_live_bytes(buffers)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 12), st.integers(0, 4)),
        max_size=14,
    ),
    st.sampled_from(list(PACKERS)),
)
def test_packers_never_overlap_live_buffers(specs: list[tuple[int, int, int]], packer: str) -> None:
    buffers = [
        Buffer((i,), blocks * ALIGNMENT, start, start + length, (0,))
        for i, (blocks, start, length) in enumerate(specs)
    ]
    offsets = PACKERS[packer](buffers)
    check_blocks(blocks_of(buffers, offsets), arena_size(buffers, offsets))


def random_schedule(rng: random.Random, steps: int) -> Schedule:
    """Values of a few sizes; each step reads up to three earlier values and writes one,
    offering each same-size operand as an in-place candidate; the last step returns
    some values."""
    sizes = [64, 64, 128, 200, 4096]
    values = [Value(rng.choice(sizes), in_arena=False) for _ in range(2)]
    schedule: list[Step] = []
    for _ in range(steps):
        reads = tuple(rng.sample(range(len(values)), min(len(values), rng.randint(1, 3))))
        out = len(values)
        values.append(Value(rng.choice(sizes)))
        candidates = tuple((out, r) for r in reads if values[r].size == values[out].size)
        schedule.append(Step(reads, (out,), candidates))
    returned = tuple(rng.sample(range(len(values)), 3))
    return Schedule(tuple(values), (*schedule, Step(returned)))


@pytest.mark.parametrize("seed", range(40))
def test_random_schedules_plan_validly(seed: int) -> None:
    schedule = random_schedule(random.Random(seed), steps=25)
    check_plan(schedule, plan(schedule))


# ---------------------------------------------------------------- the checker


def test_checker_catches_an_overlap() -> None:
    blocks = [Block("a", 64, 0, 0, 2), Block("b", 64, 32 + 32, 1, 3), Block("c", 64, 0, 2, 4)]
    with pytest.raises(AssertionError, match=r"a \[0, 64\) steps 0-2 overlaps c"):
        check_blocks(blocks, 128)


def test_checker_allows_only_declared_exact_in_place_pairs() -> None:
    a, b = Block("a", 64, 0, 0, 2), Block("b", 64, 0, 2, 3)
    check_blocks([a, b], 64, {("a", "b")})
    with pytest.raises(AssertionError, match="overlaps"):
        check_blocks([a, b], 64)  # not a declared pair
    with pytest.raises(AssertionError, match="overlaps"):
        check_blocks([a, Block("b", 64, 0, 1, 3)], 64, {("a", "b")})  # both live at step 1
    with pytest.raises(AssertionError, match="overlaps"):
        check_blocks([Block("a", 128, 0, 0, 2), Block("b", 64, 64, 2, 3)], 128, {("a", "b")})


def test_checker_catches_blocks_outside_the_arena_and_misalignment() -> None:
    with pytest.raises(AssertionError, match="outside the arena of 64 bytes"):
        check_blocks([Block("a", 65, 0, 0, 0)], 64)
    with pytest.raises(AssertionError, match="not aligned"):
        check_blocks([Block("a", 8, 8, 0, 0)], 64)


# ---------------------------------------------------------------- the pass on IR


def planned(module: ModuleOp) -> ModuleOp:
    apply_pipeline(module, "df-plan-buffers")
    module.verify()
    return module


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_run_in_their_arena_like_the_interpreter(seed: int) -> None:
    module = random_graph(seed, min_ops=40, dtype="f32" if seed % 2 else "f64")
    main_function = next(iter(module.ops))
    assert isinstance(main_function, FuncOp)
    inputs = random_inputs(main_function, seed)
    expected = run_function(module, "main", inputs)
    planned(module)
    assert check_module(module) > 0
    actual = run_in_arena(main_function, list(inputs))
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(10))
def test_random_partitioned_placements_plan_one_valid_arena_per_device(seed: int) -> None:
    module = random_graph(seed + 100, min_ops=40)
    place_randomly(module, seed)
    apply_pipeline(module, "df-partition")
    planned(module)
    assert check_module(module) > 0
    figures = plan_entry(module, "main")
    for part in module.ops:
        assert isinstance(part, ModuleOp)
        device = part.attributes["df.device"]
        arena = part.attributes["df.arena_bytes"]
        assert isinstance(device, StringAttr) and isinstance(arena, IntegerAttr)
        assert figures[device.data].arena_bytes == arena.value.data


def _with_sends(seed: int) -> tuple[ModuleOp, FuncOp, list[Any], list[Any]]:
    """A random graph, its feeds and its interpreted results, then a `df.send` of about
    a third of its values right after each is computed (to another rank's device)."""
    module = random_graph(seed + 200, min_ops=30, dtype="f32")
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    inputs = random_inputs(function, seed)
    expected = run_function(module, "main", inputs)
    rng = random.Random(seed)
    for index, op in enumerate(list(function.body.block.ops)):
        if op.results and not isinstance(op, ConstantOp) and rng.random() < 0.35:
            send = SendOp(op.results[0], f"main.k{index}", "cpu:0", "cpu:0@1")
            function.body.block.insert_op_after(send, op)
    return module, function, inputs, expected


def _sent_intact(function: FuncOp, inputs: list[Any]) -> tuple[list[Any], bool]:
    """`run_in_arena` that also keeps a copy of each sent value as it was sent: the
    results, and whether every sent value's bytes are still in its block at the end
    (what an MPI send reading the arena while the function runs on needs)."""
    run = ArenaRun(function)
    results = run.run(inputs)
    return results, run.sends_intact()


def test_held_sends_stay_in_their_blocks_to_the_end() -> None:
    """With `hold-sends`, every sent value's bytes are still in the arena when the
    function returns, on random graphs, and the results equal the interpreter's;
    without it, the planner reuses some sent block (so the check can fail)."""
    reused = 0
    for seed in range(8):
        module, function, inputs, expected = _with_sends(seed)
        free = module.clone()
        apply_pipeline(module, "df-plan-buffers{hold-sends=true}")
        module.verify()
        results, intact = _sent_intact(function, list(inputs))
        assert intact, seed
        for got, want in zip(results, expected, strict=True):
            np.testing.assert_array_equal(got, want)
        apply_pipeline(free, "df-plan-buffers")
        free_function = next(iter(free.ops))
        assert isinstance(free_function, FuncOp)
        reused += not _sent_intact(free_function, list(inputs))[1]
    assert reused > 0


def mlp_gradient(batch: int = 16) -> ModuleOp:
    g = Graph()
    h = g.input("x", (batch, 32))
    labels = g.input("labels", (batch, 10))
    sizes = (32, 24, 10)
    for i in range(2):
        w = g.input(f"w{i}", (sizes[i], sizes[i + 1]))
        h = h @ w
        if i == 0:
            h = h.relu()
    g.output(-(labels * h.softmax().log()).sum([1]).mean())
    return ModuleOp([differentiate(g.function(), (2, 3))])


def test_a_training_step_is_planned_within_5_percent_of_its_bound() -> None:
    module = planned(mlp_gradient())
    assert check_module(module) > 20
    [memory] = plan_entry(module, "main_grad").values()
    assert memory.arena_bytes <= 1.05 * memory.lower_bound_bytes
    assert memory.inplace_pairs


def first_offset(op: Operation) -> int:
    offsets = op.attributes["df.offset"]
    assert isinstance(offsets, DenseArrayBase)
    return int(offsets.get_values()[0])  # pyright: ignore[reportArgumentType]


DIAMOND = """\
func.func @main(%x: tensor<16xf32>, %w: tensor<16x16xf32>) -> tensor<16xf32> {
  %a = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = df.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = df.tanh %a : (tensor<16xf32>) -> tensor<16xf32>
  %k = df.constant dense<2.0> : tensor<16xf32>
  %d = df.add %b, %c : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %e = df.mul %d, %k : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %e : tensor<16xf32>
}
"""


def diamond() -> tuple[ModuleOp, list[Operation]]:
    module = planned(parse_module(DIAMOND, "diamond.mlir"))
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    return module, list(function.body.block.ops)


def test_checker_catches_a_corrupted_ir_plan() -> None:
    module, (a, b, *_) = diamond()
    assert check_module(module) == 5
    b.attributes["df.offset"] = i64_array([first_offset(a)])  # %a is read again by %c
    with pytest.raises(AssertionError, match="overlaps"):
        check_module(module)


def test_checker_catches_out_of_arena_misaligned_and_constant_offsets() -> None:
    module, _ = diamond()
    function = next(iter(module.ops))
    function.attributes["df.arena_bytes"] = IntegerAttr(64, i64)
    with pytest.raises(AssertionError, match="outside the arena"):
        check_module(module)
    module, (a, *_) = diamond()
    a.attributes["df.offset"] = i64_array([first_offset(a) + 4])
    with pytest.raises(AssertionError, match="not aligned"):
        check_module(module)
    module, (_, _, _, k, *_) = diamond()
    k.attributes["df.offset"] = i64_array([0])
    with pytest.raises(AssertionError, match="not in the arena"):
        check_module(module)


def test_checker_refuses_in_place_sharing_a_matmul_does_not_allow() -> None:
    module = planned(
        parse_module(
            """\
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = df.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = df.matmul %a, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m : tensor<4x4xf32>
}
""",
            "m.mlir",
        )
    )
    a, m, _ = next(iter(module.ops)).regions[0].block.ops
    assert first_offset(a) != first_offset(m)
    m.attributes["df.offset"] = i64_array([first_offset(a)])
    with pytest.raises(AssertionError, match="overlaps"):
        check_module(module)


def test_replanning_gives_the_same_plan_and_stats_go_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    module, _ = diamond()
    before = str(module)
    apply_pipeline(module, "df-plan-buffers{stats=true}")
    assert str(module) == before
    err = capsys.readouterr().err
    assert "InPlace: 3" in err and "(@main arena_bytes: 128)" in err
    assert "(@main naive_bytes: 320)" in err


def test_calls_are_refused() -> None:
    module = parse_module(
        """\
func.func @f(%v: tensor<4xf32>) -> tensor<4xf32> {
  func.return %v : tensor<4xf32>
}
func.func private @g(tensor<4xf32>) -> tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
""",
        "calls.mlir",
    )
    with pytest.raises(PassFailedException, match=r"^df-plan-buffers: @main holds func\.call"):
        apply_pipeline(module, "df-plan-buffers")
    with pytest.raises(PlanError, match=r"^@main holds func\.call") as error:
        plan_entry(module, "main")  # the analysis names no pass: each pass names itself
    assert not isinstance(error.value, PassFailedException)


# ---------------------------------------------------------------- dflow plan


def test_plan_json_is_one_line_per_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "examples/towers.mlir", "--devices", "cpu:0,cpu:1", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    report = json.loads(out)
    assert list(report) == ["devices"] and list(report["devices"]) == ["cpu:0", "cpu:1"]
    for figures in report["devices"].values():
        assert list(figures) == [
            "written_bound_bytes",
            "lower_bound_bytes",
            "optimum_bytes",
            "arena_bytes",
            "naive_bytes",
        ]
        assert figures["optimum_bytes"] <= figures["lower_bound_bytes"]
        assert figures["lower_bound_bytes"] <= figures["written_bound_bytes"]
        assert figures["lower_bound_bytes"] <= figures["arena_bytes"] <= figures["naive_bytes"]


def test_plan_table_on_one_device(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "diamond.mlir"
    path.write_text(DIAMOND)
    assert main(["plan", str(path)]) == 0
    assert capsys.readouterr().out.split() == [
        "device",
        "written_bound_bytes",
        "lower_bound_bytes",
        "optimum_bytes",
        "arena_bytes",
        "naive_bytes",
        "cpu:0",
        *("128", "128", "128", "128", "320"),
    ]


TWO_BRANCHES = """\
func.func @main(%x: tensor<1024xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = df.exp %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = df.tanh %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %ra = df.reduce_sum %a : (tensor<1024xf32>) -> tensor<f32>
  %rb = df.reduce_sum %b : (tensor<1024xf32>) -> tensor<f32>
  func.return %ra, %rb : tensor<f32>, tensor<f32>
}
"""


def test_plan_reports_the_order_chosen_and_the_optimum(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """As written, %a and %b (4 KiB each) are live with %ra (64 bytes once aligned):
    8256. Finishing one branch first, at most one 4 KiB value is live, with both sums
    at %rb: 4096 + 64 + 64 = 4224, which every order needs (%rb's step holds %b, its
    result and %ra, returned), so it is the optimum; the arena packs it exactly; the
    naive size is 2 * 4096 + 2 * 64."""
    path = tmp_path / "branches.mlir"
    path.write_text(TWO_BRANCHES)
    assert main(["plan", str(path), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["devices"]["cpu:0"]
    assert figures == {
        "written_bound_bytes": 8256,
        "lower_bound_bytes": 4224,
        "optimum_bytes": 4224,
        "arena_bytes": 4224,
        "naive_bytes": 8320,
    }


def test_plan_shows_a_dash_where_the_optimum_is_not_computed(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Thirty independent results allow 30! orders: the exact search gives up."""
    lines = [f"  %v{i} = df.exp %x : (tensor<16xf32>) -> tensor<16xf32>" for i in range(30)]
    names = ", ".join(f"%v{i}" for i in range(30))
    types = ", ".join(["tensor<16xf32>"] * 30)
    head = f"func.func @main(%x: tensor<16xf32>) -> ({types}) {{"
    text = "\n".join([head, *lines, f"  func.return {names} : {types}", "}", ""])
    path = tmp_path / "wide.mlir"
    path.write_text(text)
    assert main(["plan", str(path)]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row == ["cpu:0", "1920", "1920", "-", "1920", "1920"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--entry", "nope"], "mlp.mlir: error: dflow plan: no function @nope"),
        (["--devices", "cpu:0,tpu:0"], "mlp.mlir: error: --devices: bad device 'tpu:0'"),
    ],
)
def test_plan_errors_are_one_line(args: list[str], message: str) -> None:
    result = run_dflow("plan", "examples/mlp.mlir", *args)
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("examples/" + message), line


@pytest.mark.parametrize("seed", range(6))
def test_fused_programs_plan_one_block_per_kernel_result(seed: int) -> None:
    module = random_graph(seed, min_ops=40)
    apply_pipeline(module, "df-fuse")
    fused = [op for op in module.walk() if op.name == "df.fused"]
    assert fused, "the random graph should fuse"
    planned(module)
    assert check_module(module) > 0
    for op in fused:
        offsets = op.attributes["df.offset"]
        assert isinstance(offsets, DenseArrayBase)
        assert len(offsets.get_values()) == len(op.results)


# A comparison that broadcasts its f32 operand (8 elements, 32 bytes) to an i1 result
# of 4x8 (32 bytes): equal bytes, different element types and shapes. Writing the
# result over `%a` element for element would clobber floats still to be read.
MIXED_TYPES = """\
func.func @main(%x: tensor<8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = df.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  %c = df.less %a, %y : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %s = df.select %c, %y, %x : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
"""


def test_no_in_place_across_element_types_of_equal_bytes() -> None:
    module = planned(parse_module(MIXED_TYPES, "mixed.mlir"))
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    a, c, _, _ = function.body.block.ops
    assert first_offset(a) != first_offset(c)
    [memory] = plan_entry(module, "main").values()
    assert memory.inplace_pairs == ()
    assert check_module(module) == 3
    rng = np.random.default_rng(7)
    inputs = [rng.normal(size=(8,)).astype(np.float32), rng.normal(size=(4, 8)).astype(np.float32)]
    x, y = inputs
    expected = np.where(np.exp(x) < y, y, x)
    [actual] = run_in_arena(function, inputs)
    np.testing.assert_array_equal(actual, expected)
