"""Concatenations without copies: the slices of the memory plan and the choice of views.

Three levels, each checked apart from the code under test:
- schedules with `Step.parts` (`liveness`): each part at its offset in the whole,
  one buffer per class of slices live from its first write to its last read, no
  in-place write into a part's bytes while its class is read; every plan passes the
  independent checker (`tests/support/plan_checker.py`), which finds the slices
  from the offsets alone;
- `concat_views` on functions: which concatenations become views, and why the others
  do not; the planned functions run in their arena (`tests/support/arena_runner.py`),
  where a view writes nothing, so an operand not written in place gives garbage;
- compiled programs (DenseNet's and Inception's shapes, convolutions writing into
  their slices) against the interpreter, with no concatenation kernel left;
- seeded random graphs of aligned channels (concatenations of arguments, repeats,
  concatenations and overlapping prefixes; slices; values returned), planned and run
  in their arena (40 seeds; a plan that ignores the slices fails most) and compiled
  (4 seeds). The generated-program suite rarely makes a view (no concatenation of
  300 generated programs is aligned), hence these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from arena_runner import run_in_arena
from compiled_support import (
    assert_same,
    compile_to,
    # an autouse fixture: imported so that pytest runs it around each test here
    kernels_typed_as_declared,  # noqa: F401  # pyright: ignore[reportUnusedImport]
)
from plan_checker import check_module, check_plan
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.dialects.func import FuncOp

import dflow
from dflow.analysis.memory.concat_views import concat_views
from dflow.analysis.memory.liveness import PlanError, Schedule, Step, Value
from dflow.analysis.memory.memory_plan import MemoryPlan, plan
from dflow.analysis.memory.slices import Slices
from dflow.dialects.df.annotations import VIEW
from dflow.dialects.df.types import i64_array
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import parse_module
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function

# ---------------------------------------------------------------- schedules


def checked(schedule: Schedule) -> MemoryPlan:
    """The plan of `schedule`, passed by the independent checker."""
    memory = plan(schedule)
    check_plan(schedule, memory)
    return memory


def test_parts_are_written_at_their_offsets_in_the_whole() -> None:
    # v0 argument; v1 = f(v0), v2 = g(v0) written into v3 = concat(v1, v2); v4 reads v3.
    values = (Value(64, in_arena=False), Value(128), Value(64), Value(192), Value(64))
    steps = (
        Step((0,), (1,)),
        Step((0,), (2,)),
        Step((1, 2), (3,), parts=((1, 0), (2, 128))),
        Step((3,), (4,)),
        Step((4,)),
    )
    memory = checked(Schedule(values, steps))
    offsets = memory.value_offsets()
    assert offsets[1] == offsets[3] and offsets[2] == offsets[3] + 128
    assert len({b.values for b in memory.buffers}) == 2  # the class, and v4
    assert memory.intervals[1] == (0, 2)  # its own reads; its bytes live on in the class
    assert memory.arena_bytes == memory.lower_bound_bytes == 192 + 64
    assert memory.naive_bytes == 128 + 64 + 64  # the whole is no block of its own


def test_a_part_is_not_overwritten_while_its_whole_is_read() -> None:
    # v2 = relu(v1) may write over v1, whose last reader it is, but v1 is a part of
    # v4, read at step 4: v2 needs bytes of its own.
    values = (Value(64, in_arena=False), Value(64), Value(64), Value(64), Value(128), Value(64))
    steps = (
        Step((0,), (1,)),
        Step((1,), (2,), ((2, 1),)),
        Step((0,), (3,)),
        Step((1, 3), (4,), parts=((1, 0), (3, 64))),
        Step((2, 4), (5,)),
        Step((5,)),
    )
    memory = checked(Schedule(values, steps))
    assert memory.inplace_pairs == ()
    offsets = memory.value_offsets()
    assert not offsets[4] <= offsets[2] < offsets[4] + 128


def test_a_part_never_writes_in_place_over_its_input() -> None:
    # v2 = relu(v1) could take v1's dying bytes, but its place is in v3.
    values = (Value(64, in_arena=False), Value(64), Value(64), Value(64), Value(128))
    steps = (
        Step((0,), (1,)),
        Step((1,), (2,), ((2, 1),)),
        Step((0,), (3,)),
        Step((2, 3), (4,), parts=((2, 0), (3, 64))),
        Step((4,)),
    )
    memory = checked(Schedule(values, steps))
    assert memory.inplace_pairs == ()
    assert memory.value_offsets()[2] == memory.value_offsets()[4]


def test_densenet_prefixes_share_the_block_of_the_last_concatenation() -> None:
    # x0; f1 = layer(x0); c1 = (x0, f1); f2 = layer(c1); c2 = (x0, f1, f2); out(c2).
    values = (Value(64, in_arena=False), *(Value(s) for s in (128, 64, 192, 64, 256, 64)))
    steps = (
        Step((0,), (1,)),
        Step((1,), (2,)),
        Step((1, 2), (3,), parts=((1, 0), (2, 128))),
        Step((3,), (4,)),
        Step((1, 2, 4), (5,), parts=((1, 0), (2, 128), (4, 192))),
        Step((5,), (6,)),
        Step((6,)),
    )
    memory = checked(Schedule(values, steps))
    offsets = memory.value_offsets()
    assert offsets[3] == offsets[5] == offsets[1]
    assert offsets[4] == offsets[5] + 192
    assert memory.lower_bound_bytes == 256 + 64  # the class, and the last layer's output


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            (
                Step((), (1,)),
                Step((), (2,)),
                Step((1, 2), (3,), parts=((1, 0), (2, 64))),
                Step((1, 2), (4,), parts=((2, 0), (1, 64))),
                Step((3, 4)),
            ),
            "the parts of value 4 overlap or contradict",
        ),
        (
            (
                Step((), (1,)),
                Step((), (2,)),
                Step((0, 1), (3,), parts=((0, 0), (1, 64))),
                Step((), (4,)),
                Step((2, 3, 4)),
            ),
            "value 0 is a slice but not in the arena",
        ),
    ],
)
def test_contradictory_or_unplannable_parts_are_refused(
    steps: tuple[Step, ...], message: str
) -> None:
    values = (Value(64, in_arena=False), Value(64), Value(64), Value(128), Value(128))
    with pytest.raises(PlanError, match=message):
        plan(Schedule(values, steps))


def test_a_part_off_the_alignment_is_refused() -> None:
    values = (Value(32), Value(32), Value(64))
    steps = (Step((), (0,)), Step((), (1,)), Step((0, 1), (2,), parts=((0, 0), (1, 32))))
    with pytest.raises(PlanError, match="value 1 is a slice off the alignment"):
        plan(Schedule(values, (*steps, Step((2,)))))


def test_slices_refuse_overlapping_leaves_and_take_overlapping_wholes() -> None:
    # a = (x, y) and b = (y, z): both views of one run x y z.
    slices = Slices([64, 64, 64, 128, 128, 64, 128])
    x, y, z, a, b, w, c = range(7)
    assert slices.place(a, [(x, 0), (y, 64)])
    assert slices.place(b, [(y, 0), (z, 64)])
    assert slices.within() == {a: 0, x: 0, y: 64, b: 64, z: 128}
    # c = (w, y) would put w over x: both are written, so refused, nothing changed.
    assert not slices.place(c, [(w, 0), (y, 64)])
    assert slices.within() == {a: 0, x: 0, y: 64, b: 64, z: 128}


# ---------------------------------------------------------------- the choice


def function_of(text: str) -> tuple[ModuleOp, FuncOp]:
    module = parse_module(text, "views.mlir")
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    return module, function


def chosen(text: str) -> list[str]:
    """The names of the concatenations `concat_views` makes views."""
    return [op.result.name_hint or "" for op in concat_views(function_of(text)[1])]


T = "tensor<1x16x2x2xf32>"
"""64 floats, 256 bytes: aligned slices."""


def program(body: str, result: str = "%out", argument: str = "%x") -> str:
    return (
        f"func.func @main({argument}: {T}) -> tensor<1x1x2x2xf32> {{\n{body}\n"
        f"  %out = df.reduce_sum {result} {{axes = array<i64: 1>, keepdims = true}}"
        f" : (tensor<1x48x2x2xf32>) -> tensor<1x1x2x2xf32>\n"
        "  func.return %out : tensor<1x1x2x2xf32>\n}"
    )


LAYERS = f"""
  %a = df.relu %x : ({T}) -> {T}
  %b = df.exp %x : ({T}) -> {T}
  %d = df.tanh %x : ({T}) -> {T}"""


def concat(name: str, operands: str, channels: int, types: str | None = None) -> str:
    count = operands.count("%")
    listed = types or ", ".join([T] * count)
    return (
        f"  %{name} = df.concat {operands} {{axis = 1 : i64}} : ({listed})"
        f" -> tensor<1x{channels}x2x2xf32>"
    )


def test_densenet_chain_every_concatenation_is_a_view() -> None:
    text = program(
        LAYERS
        + "\n"
        + concat("c1", "%a, %b", 32)
        + "\n  %e = df.neg %c1 : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>\n"
        + concat("c2", "%a, %b, %d", 48)
        + "\n  %s = df.reduce_sum %e {axes = array<i64: 1>, keepdims = true}"
        " : (tensor<1x32x2x2xf32>) -> tensor<1x1x2x2xf32>",
        result="%c2",
    )
    assert chosen(text) == ["c1", "c2"]


@pytest.mark.parametrize(
    ("operands", "why"),
    [
        ("%x, %a, %b", "an argument"),
        ("%a, %a, %b", "a repeated operand"),
        ("%a, %k, %b", "a constant"),
    ],
)
def test_a_concatenation_of_what_no_step_writes_in_place_copies(operands: str, why: str) -> None:
    body = LAYERS + f"\n  %k = df.constant dense<1.0> : {T}\n" + concat("c", operands, 48)
    assert chosen(program(body, result="%c")) == [], why


def test_a_returned_operand_or_result_copies() -> None:
    for returned in ("%a", "%c"):
        text = (
            f"func.func @main(%x: {T}) -> ({T}, tensor<1x48x2x2xf32>) {{{LAYERS}\n"
            + concat("c", "%a, %b, %d", 48)
            + f"\n  func.return {'%a' if returned == '%a' else '%b'}, %c"
            f" : {T}, tensor<1x48x2x2xf32>\n}}"
        )
        assert chosen(text) == [], returned


def test_operands_of_a_batch_of_two_are_not_contiguous() -> None:
    t2 = "tensor<2x16x2x2xf32>"
    text = (
        f"func.func @main(%x: {t2}) -> tensor<2x32x2x2xf32> {{\n"
        f"  %a = df.relu %x : ({t2}) -> {t2}\n  %b = df.exp %x : ({t2}) -> {t2}\n"
        + concat("c", "%a, %b", 32, f"{t2}, {t2}").replace("1x32", "2x32")
        + "\n  %n = df.neg %c : (tensor<2x32x2x2xf32>) -> tensor<2x32x2x2xf32>\n"
        "  func.return %n : tensor<2x32x2x2xf32>\n}"
    )
    assert chosen(text) == []
    assert chosen(
        text.replace("{axis = 1 : i64}", "{axis = 0 : i64}").replace("2x32x2x2", "4x16x2x2")
    ) == ["c"]


def test_an_operand_off_the_alignment_copies() -> None:
    t = "tensor<1x3x2x2xf32>"  # 48 bytes
    text = (
        f"func.func @main(%x: {t}) -> tensor<1x6x2x2xf32> {{\n"
        f"  %a = df.relu %x : ({t}) -> {t}\n  %b = df.exp %x : ({t}) -> {t}\n"
        f"  %c = df.concat %a, %b {{axis = 1 : i64}} : ({t}, {t}) -> tensor<1x6x2x2xf32>\n"
        "  %n = df.neg %c : (tensor<1x6x2x2xf32>) -> tensor<1x6x2x2xf32>\n"
        "  func.return %n : tensor<1x6x2x2xf32>\n}"
    )
    assert chosen(text) == []


def test_of_two_contradicting_concatenations_the_later_is_the_view() -> None:
    body = (
        LAYERS
        + "\n"
        + concat("c1", "%b, %a", 32)
        + "\n  %e = df.neg %c1 : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>\n"
        + "  %s = df.reduce_sum %e {axes = array<i64: 1>, keepdims = true}"
        " : (tensor<1x32x2x2xf32>) -> tensor<1x1x2x2xf32>\n" + concat("c2", "%a, %b, %d", 48)
    )
    assert chosen(program(body, result="%c2")) == ["c2"]


def marked_and_planned(module: ModuleOp) -> int:
    """Mark the views as `df-bufferize` does, plan, check the plan; the views marked."""
    marked = 0
    for function in (op for op in module.ops if isinstance(op, FuncOp)):
        for op in concat_views(function):
            op.attributes[VIEW] = UnitAttr()
            marked += 1
    apply_pipeline(module, "df-plan-buffers")
    assert check_module(module) > 0
    return marked


def densenet_block(graph: Graph, x: Tensor, layers: int, growth: int) -> Tensor:
    """DenseNet's block: each layer reads the concatenation of all features before it."""
    features = [x]
    for index in range(layers):
        joined = dflow.concat(features, 1) if len(features) > 1 else features[0]
        channels = joined.shape[1]
        weight = graph.input(f"w{index}", (growth, channels, 3, 3), "f32")
        features.append(dflow.relu(dflow.conv2d(joined, weight, pads=(1, 1, 1, 1))))
    return dflow.concat(features, 1)


def densenet_module(layers: int = 4) -> ModuleOp:
    graph = Graph("main")
    x = dflow.relu(graph.input("x", (1, 16, 6, 6), "f32"))
    block = densenet_block(graph, x, layers, growth=16)
    graph.output(dflow.reduce_sum(dflow.relu(block), axes=[1], keepdims=True))
    return graph.module()


def test_densenet_blocks_run_in_their_arena_with_no_copy() -> None:
    module = densenet_module()
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    inputs = random_inputs(function, 3)
    expected = run_function(module, "main", inputs)
    assert marked_and_planned(module) == 4  # every concatenation of the block
    actual = run_in_arena(function, list(inputs))
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-6)


def test_the_arena_run_fails_where_a_part_is_not_in_place() -> None:
    """The arena check can fail: a view whose operand sits elsewhere reads garbage."""
    module = densenet_module(layers=2)
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    inputs = random_inputs(function, 3)
    expected = run_function(module, "main", inputs)
    marked_and_planned(module)
    first_layer = next(op for op in function.body.block.ops if op.name == "df.conv2d")
    first_layer.attributes["df.offset"] = i64_array([0])
    actual: list[Any] = run_in_arena(function, list(inputs))
    assert not np.allclose(actual[0], expected[0], rtol=1e-6)


# ---------------------------------------------------------------- compiled


def inception_module() -> ModuleOp:
    """Inception's branches: a 1x1, a 3x3 and a pool branch concatenated, twice."""
    graph = Graph("main")
    x = graph.input("x", (1, 16, 8, 8), "f32")
    for block in range(2):
        channels = x.shape[1]
        w1 = graph.input(f"p{block}", (16, channels, 1, 1), "f32")
        w3 = graph.input(f"q{block}", (32, channels, 3, 3), "f32")
        one = dflow.relu(dflow.conv2d(x, w1))
        three = dflow.relu(dflow.conv2d(x, w3, pads=(1, 1, 1, 1)))
        pool = dflow.max_pool2d(x, (3, 3), strides=(1, 1), pads=(1, 1, 1, 1))
        x = dflow.concat([one, three, pool], 1)
    graph.output(dflow.reduce_mean(x, axes=[2, 3]))
    return graph.module()


@pytest.mark.parametrize("build", [densenet_module, inception_module])
def test_compiled_networks_write_into_their_concatenations(build: Any, tmp_path: Path) -> None:
    module = build()
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    inputs = random_inputs(function, 7)
    expected = run_function(module, "main", inputs)
    program = compile_to(module, tmp_path)
    assert_same(program.run("main", inputs), expected, ["out"], f32_atol=1e-4)
    kernels = [op.sym_name.data for op in module.walk() if isinstance(op, FuncOp)]
    assert not any(name.startswith("concat") for name in kernels), kernels


# ---------------------------------------------------------------- random graphs


def random_concat_graph(seed: int, steps: int = 14) -> ModuleOp:
    """A random graph of NCHW values of one 4x4 plane (64 bytes a channel, so every
    concatenation along channels is aligned): unary ops of earlier values (in place
    where one dies), concatenations of 2-4 earlier values (an argument, a repeat, a
    concatenation, an overlapping prefix of another), channel slices; some values
    returned, the rest summed into one more result."""
    rng = np.random.default_rng(seed)
    graph = Graph("main")
    values: list[Tensor] = [graph.input("x", (1, int(rng.integers(1, 4)), 4, 4), "f32")]
    unary = [dflow.relu, dflow.exp, dflow.neg, dflow.tanh]
    for _ in range(steps):
        kind = rng.choice(["unary", "concat", "concat", "slice"])
        if kind == "unary":
            source = values[int(rng.integers(len(values)))]
            values.append(unary[int(rng.integers(len(unary)))](source))
        elif kind == "concat":
            count = int(rng.integers(2, 5))
            picked = [values[int(i)] for i in rng.integers(len(values), size=count)]
            values.append(dflow.concat(picked, 1))
        else:
            source = values[int(rng.integers(len(values)))]
            channels = source.shape[1]
            start = int(rng.integers(channels))
            stop = int(rng.integers(start + 1, channels + 1))
            values.append(dflow.slice(source, (0, start, 0, 0), (1, stop, 4, 4)))
    chosen = [rng.random() < 0.2 for _ in values[1:]]
    returned = [v for v, keep in zip(values[1:], chosen, strict=True) if keep]
    summed = [v for v, keep in zip(values[1:], chosen, strict=True) if not keep]
    rest = [dflow.reduce_sum(v, axes=[1], keepdims=True) for v in summed]
    graph.output(*returned, dflow.addn(rest) if len(rest) > 1 else rest[0])
    return graph.module()


@pytest.mark.parametrize("seed", range(40))
def test_random_concat_graphs_plan_and_run_in_their_arena(seed: int) -> None:
    """Random graphs with their views marked: the plan passes the checker, and run in
    their arena (a view writes nothing) they give the interpreter's results."""
    module = random_concat_graph(seed)
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    inputs = random_inputs(function, seed)
    expected = run_function(module, "main", inputs)
    marked_and_planned(module)
    for got, want in zip(run_in_arena(function, list(inputs)), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_random_concat_graphs_make_views() -> None:
    """The random graphs above do exercise views: most seeds mark some."""
    marked = [marked_and_planned(random_concat_graph(seed)) for seed in range(40)]
    assert sum(1 for m in marked if m) >= 20, marked


@pytest.mark.parametrize("seed", range(4))
def test_random_concat_graphs_compiled(seed: int, tmp_path: Path) -> None:
    """Random graphs of other seeds compiled: the interpreter's results."""
    module = random_concat_graph(seed + 100)
    function = next(iter(module.ops))
    assert isinstance(function, FuncOp)
    inputs = random_inputs(function, seed)
    expected = run_function(module, "main", inputs)
    program = compile_to(module, tmp_path)
    names = [f"out{i}" for i in range(len(expected))]
    assert_same(program.run("main", inputs), expected, names, f32_atol=1e-5)
