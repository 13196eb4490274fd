"""`df-place-devices`: the placement rules on builder-made graphs, the report and its
numbers, HEFT on independent branches, cycles of groups, errors, and that placed
random programs (pins, a colocation group) keep every rule and, partitioned and run
one interpreter per device, compute what the unpartitioned program computes.

Hand-computed figures use overridden cost parameters (1 GFLOP/s, 1 GB/s ...) so
every time is a round number of microseconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from graphgen import random_graph
from partition_checker import check_partitioned
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from dflow.analysis.cost_model import CostModel, Work, op_flops, work_of
from dflow.backend.numba.capabilities import GPU_PENDING, NUMBA_CAPABILITIES, NumbaPlaceDevicesPass
from dflow.dialects import df
from dflow.dialects.devices import kind_of
from dflow.dialects.df.annotations import COLOCATE, DEVICE
from dflow.dialects.df.base import DfOp
from dflow.driver.compilation.interpreted import run_partitioned
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import make_context, parse_module
from dflow.frontend import Graph, Tensor, conv2d, max_pool2d
from dflow.interpreters.df import run_function
from dflow.transforms.placement import PlaceDevicesPass
from dflow.transforms.placement.colocation import UnionFind, strongly_connected
from dflow.transforms.placement.report import RULES, PlacementReport

US = 1e-6

can_run = NUMBA_CAPABILITIES.can_run
"""What the numba target's devices run (the pass the driver runs asks the same)."""


def pin(tensor: Tensor, device: str) -> Tensor:
    tensor.value.owner.attributes[DEVICE] = StringAttr(device)
    return tensor


def colocate(tensor: Tensor, name: str) -> Tensor:
    tensor.value.owner.attributes[COLOCATE] = StringAttr(name)
    return tensor


def named(tensor: Tensor, name: str) -> Tensor:
    tensor.value.name_hint = name
    return tensor


MODULES: dict[int, ModuleOp] = {}
"""The module last made of each graph (by id), where `device` finds a tensor's op."""


def module_of(graph: Graph) -> ModuleOp:
    """`graph.module()` (a copy of the graph's ops, in their order), kept for `device`."""
    module = graph.module()
    MODULES[id(graph)] = module
    return module


def op_of(tensor: Tensor) -> Operation:
    """The op of `tensor` in its graph's last module: the op at the same position of
    the function (a module is a copy of the graph's block)."""
    position = list(tensor.graph.block.ops).index(tensor.value.owner)
    function = SymbolTable.lookup_symbol(MODULES[id(tensor.graph)], tensor.graph.name)
    assert isinstance(function, FuncOp)
    return list(function.body.block.ops)[position]


def device(tensor: Tensor) -> str:
    """The device placed on the op of `tensor` in its graph's last module."""
    attr = op_of(tensor).attributes[DEVICE]
    assert isinstance(attr, StringAttr)
    return attr.data


def place(module: ModuleOp, **options: Any) -> PlacementReport:
    return NumbaPlaceDevicesPass(**options).place(module)


def rules(report: PlacementReport, function: int = 0) -> dict[str, str]:
    """Each named op's rule."""
    return {op.name: op.rule for op in report.functions[function].ops if op.name}


def df_ops(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if isinstance(op, DfOp)]


# --- rules 1-3 ------------------------------------------------------------------------


def test_pin_is_kept_and_the_rest_follows_the_cost() -> None:
    g = Graph()
    x = g.input("x", (4,))
    e = named(pin(x.exp(), "gpu:0"), "e")
    n = named(-e, "n")
    g.output(n)
    report = place(module_of(g), devices="cpu:0,gpu:0")
    assert (device(e), device(n)) == ("gpu:0", "cpu:0")
    assert rules(report) == {"e": "pin", "n": "cost"}


def test_default_devices_is_cpu0() -> None:
    g = Graph()
    g.output(g.input("x", (4,)).exp())
    module = module_of(g)
    NumbaPlaceDevicesPass().apply(make_context(), module)
    assert {op.attributes[DEVICE] for op in df_ops(module)} == {StringAttr("cpu:0")}


def test_colocation_joins_a_group_to_its_pin() -> None:
    g = Graph()
    x = g.input("x", (4,))
    a = colocate(pin(x.exp(), "gpu:0"), "g")
    b = named(colocate(x.tanh(), "g"), "b")
    c = colocate(b.sigmoid(), "g")
    g.output(a + c)
    report = place(module_of(g), devices="cpu:0,gpu:0")
    assert device(b) == device(c) == "gpu:0"
    assert rules(report)["b"] == "colocation"


def test_generator_with_one_consumer_follows_it() -> None:
    g = Graph()
    x = g.input("x", (4,))
    one = named(g.constant(np.ones(4, np.float32)), "one")
    shared = named(g.constant(np.ones(4, np.float32)), "shared")
    m = pin(x * one, "gpu:0")
    g.output(m, (x + shared) - shared)
    report = place(module_of(g), devices="cpu:0,gpu:0")
    assert device(one) == "gpu:0"
    assert device(shared) == "cpu:0"
    assert rules(report)["one"] == "heuristic"
    assert rules(report)["shared"] == "cost"


def test_reshape_follows_its_producer_but_not_an_argument() -> None:
    g = Graph()
    x = g.input("x", (2, 4))
    e = pin(x.exp(), "gpu:0")
    r = named(e.reshape([8]), "r")
    a = named(x.reshape([8]), "a")
    g.output(r, a)
    report = place(module_of(g), devices="cpu:0,gpu:0")
    assert (device(r), device(a)) == ("gpu:0", "cpu:0")
    assert rules(report) == {"r": "heuristic", "a": "cost"}


def test_pinned_ops_take_no_heuristic() -> None:
    g = Graph()
    x = g.input("x", (4,))
    c = pin(g.constant(np.ones(4, np.float32)), "cpu:0")
    m = pin(x * c, "gpu:0")
    g.output(m)
    place(module_of(g), devices="cpu:0,gpu:0")
    assert (device(c), device(m)) == ("cpu:0", "gpu:0")


def conv_gradient_graph() -> tuple[Graph, Tensor, Tensor]:
    """A conv2d forward on a big batch and the gradient of its input."""
    g = Graph()
    dy = g.input("dy", (8, 16, 32, 32))
    w = g.input("w", (16, 16, 3, 3))
    dx = named(Tensor(g, g.emit(_grad_input(dy, w)).value), "dx")
    y = named(conv2d(dx, w), "y")
    g.output(y)
    return g, dx, y


def _grad_input(dy: Tensor, w: Tensor) -> Operation:
    return df.Conv2DGradInputOp(dy.value, w.value, TensorType(f32, (8, 16, 34, 34)))


@pytest.mark.parametrize("strategy", ["cost", "single"])
def test_capability_keeps_conv_gradients_off_the_gpu(strategy: str) -> None:
    g, dx, y = conv_gradient_graph()
    report = place(module_of(g), devices="gpu:0,cpu:0", strategy=strategy)
    assert (device(dx), device(y)) == ("cpu:0", "gpu:0")
    assert rules(report)["dx"] == "capability"


def test_capability_table() -> None:
    """The numba target's GPUs lack the convolution and pool gradients and the NCHWc
    ops of `df-layout` (no CUDA routine yet), its CPUs run every op; the pass without
    a target limits nothing."""
    _, dx, _ = conv_gradient_graph()
    grad = dx.value.owner
    assert isinstance(grad, Operation)
    assert can_run("cpu:3", grad)
    assert not can_run("gpu:0", grad) and kind_of("gpu:12") == "gpu"
    assert PlaceDevicesPass.capabilities.can_run("gpu:0", grad)  # no target: no limits
    assert set(NUMBA_CAPABILITIES.missing) == {"gpu"}  # a CPU runs every op
    missing = {op.name for op in GPU_PENDING}
    assert missing == {
        "df.conv2d_grad_input",
        "df.conv2d_grad_filter",
        "df.max_pool2d_grad",
        "df.max_pool2d_indices",
        "df.max_pool2d_grad_indices",
        "df.avg_pool2d_grad",
        "df.conv2d_nchwc",
        "df.max_pool2d_nchwc",
        "df.avg_pool2d_nchwc",
    }


def test_a_group_goes_where_all_its_ops_can_run() -> None:
    """Colocated with a gradient the gpu cannot run, a heavy matmul stays on the cpu."""
    g, dx, _ = conv_gradient_graph()
    a = g.input("a", (512, 512))
    m = named(colocate(a @ a, "bwd"), "m")
    colocate(dx, "bwd")
    g.output(m)
    report = place(module_of(g), devices="gpu:0,cpu:0")
    assert device(m) == "cpu:0"
    assert rules(report)["m"] == "colocation"


# --- rule 5: cost and single -------------------------------------------------------------


def test_cost_sends_a_big_matmul_to_the_gpu_and_keeps_tiny_ops_on_the_cpu() -> None:
    g = Graph()
    a = g.input("a", (1024, 1024))
    x = g.input("x", (4,))
    m = a @ a
    t = x.exp().tanh().sigmoid()
    g.output(m, t)
    module = module_of(g)
    place(module, devices="cpu:0,gpu:0")
    assert device(m) == "gpu:0"
    tiny = [op for op in df_ops(module) if op is not op_of(m)]
    assert {op.attributes[DEVICE] for op in tiny} == {StringAttr("cpu:0")}


def test_single_puts_everything_on_the_first_capable_device() -> None:
    g = Graph()
    a = g.input("a", (1024, 1024))
    g.output((a @ a).relu())
    module = module_of(g)
    report = place(module, devices="cpu:1,gpu:0", strategy="single")
    assert {op.attributes[DEVICE] for op in df_ops(module)} == {StringAttr("cpu:1")}
    assert {op.rule for op in report.functions[0].ops} == {"single"}


def two_branches(size: int = 256) -> Graph:
    """Two heavy independent matmul chains joined at the end."""
    g = Graph()
    x = g.input("x", (size, size))
    w1 = g.input("w1", (size, size))
    w2 = g.input("w2", (size, size))
    left = named((x @ w1).relu() @ w1, "left")
    right = named((x @ w2).relu() @ w2, "right")
    g.output(left + right)
    return g


def test_heft_spreads_independent_branches_over_two_cpus() -> None:
    single = place(module_of(two_branches()), devices="cpu:0,cpu:1", strategy="single")
    g = two_branches()
    module = module_of(g)
    cost = place(module, devices="cpu:0,cpu:1")
    matmuls = [op for op in df_ops(module) if isinstance(op, df.MatmulOp)]
    placed = [op.attributes[DEVICE] for op in matmuls]
    assert placed[:2] != placed[2:] and len(set(placed[:2])) == len(set(placed[2:])) == 1
    assert cost.makespan_s / single.makespan_s == pytest.approx(0.5, abs=0.05)
    loads = cost.functions[0].devices
    assert loads["cpu:0"].busy_s == pytest.approx(loads["cpu:1"].busy_s, rel=0.1)


def test_placing_again_keeps_every_device() -> None:
    module = module_of(two_branches())
    first = place(module, devices="cpu:0,gpu:0")
    devices = [op.attributes[DEVICE] for op in df_ops(module)]
    again = place(module, devices="cpu:0,gpu:0")
    assert [op.attributes[DEVICE] for op in df_ops(module)] == devices
    assert {op.rule for op in again.functions[0].ops} == {"pin"}
    assert again.makespan_s == pytest.approx(first.makespan_s)


# --- rule 4: cycles of groups ---------------------------------------------------------


def cycle_graph(pins: tuple[str | None, str | None]) -> tuple[Graph, list[Tensor]]:
    """a → b → c with a and c colocated: the groups {a, c} and {b} form a cycle."""
    g = Graph()
    x = g.input("x", (64, 64))
    a = named(colocate(x @ x, "g"), "a")
    b = named(a.tanh(), "b")
    c = named(colocate(a + b, "g"), "c")
    for tensor, where in zip((a, b), pins, strict=True):
        if where:
            pin(tensor, where)
    g.output(c)
    return g, [a, b, c]


def test_groups_on_a_cycle_are_placed_as_one_unit() -> None:
    g, ops = cycle_graph((None, None))
    report = place(module_of(g), devices="cpu:0,gpu:0")
    assert len({device(t) for t in ops}) == 1
    assert set(rules(report).values()) == {"cycle"}


def test_a_cycle_with_one_pin_goes_to_the_pin() -> None:
    g, ops = cycle_graph((None, "gpu:0"))
    report = place(module_of(g), devices="cpu:0,gpu:0")
    assert [device(t) for t in ops] == ["gpu:0"] * 3
    assert rules(report) == {"a": "cycle", "b": "pin", "c": "cycle"}


def test_a_cycle_with_two_pins_keeps_both() -> None:
    g, ops = cycle_graph(("gpu:0", "cpu:0"))
    report = place(module_of(g), devices="cpu:0,gpu:0")
    assert [device(t) for t in ops] == ["gpu:0", "cpu:0", "gpu:0"]
    assert rules(report) == {"a": "pin", "b": "pin", "c": "colocation"}


def test_strongly_connected_components_in_topological_order() -> None:
    successors = [[1], [2], [1, 3], [], [0]]
    assert strongly_connected(successors) == [[4], [0], [1, 2], [3]]
    chain = [[i + 1] for i in range(9999)] + [[]]
    assert len(strongly_connected(chain)) == 10000


def test_union_find() -> None:
    sets = UnionFind[int]()
    assert sets.union(1, 2) and sets.union(3, 4) and sets.union(2, 4)
    assert not sets.union(1, 3)
    assert sets.find(1) == sets.find(4) != sets.find(5)


# --- rule 6: the report ------------------------------------------------------------------

HAND_COSTS: dict[str, Any] = {
    "cpu_gflops": 1,
    "cpu_gbps": 1,
    "launch_us_cpu": 1,
    "gpu_gflops": 10,
    "gpu_gbps": 10,
    "launch_us_gpu": 2,
    "link_gbps": 1,
    "link_latency_us": 5,
}


def three_ops() -> Graph:
    """a = exp(x), b = a*a (pinned to gpu:0), c = sum(b), over 1000 floats."""
    g = Graph()
    x = g.input("x", (1000,))
    a = named(x.exp(), "a")
    b = named(pin(a * a, "gpu:0"), "b")
    g.output(named(b.sum(), "c"))
    return g


def test_report_numbers_by_hand(tmp_path: Path) -> None:
    """On the cpu (1 GFLOP/s, 1 GB/s, 1 us per kernel) exp takes 1 + max(8, 8) = 9 us.
    Moving a (4000 B) to the gpu costs 5 + 4 us: b starts at 18 us and takes
    2 + max(0.1, 1.2) = 3.2 us. The sum takes 2 + 0.4004 us on the gpu and its
    4 bytes reach the host 5.004 us later (28.6044 us), against 30.2 + 5.004 us on
    the cpu: it stays on the gpu."""
    path = tmp_path / "place.json"
    NumbaPlaceDevicesPass(devices="cpu:0,gpu:0", report=str(path), **HAND_COSTS).apply(
        make_context(), module_of(three_ops())
    )
    report = json.loads(path.read_text())
    assert set(report) == {
        "pass",
        "strategy",
        "devices",
        "ranks",
        "host",
        "cost_model",
        "makespan_s",
        "device_totals",
        "functions",
    }
    assert (report["pass"], report["strategy"], report["host"]) == (
        "df-place-devices",
        "cost",
        "cpu:0",
    )
    assert report["devices"] == ["cpu:0", "gpu:0"]
    assert report["ranks"] == {"cpu:0": None, "gpu:0": None}
    assert report["cost_model"]["link_latency_us"] == 5.0
    (main,) = report["functions"]
    assert main["name"] == "main"
    assert main["makespan_s"] == pytest.approx(28.6044 * US)
    assert report["makespan_s"] == pytest.approx(28.6044 * US)
    cpu, gpu = main["devices"]["cpu:0"], main["devices"]["gpu:0"]
    assert cpu == {
        "ops": 1,
        "busy_s": pytest.approx(9 * US),
        "bytes_sent": 4000,
        "bytes_received": 4,
    }
    assert gpu == {
        "ops": 2,
        "busy_s": pytest.approx(5.6004 * US),
        "bytes_sent": 4,
        "bytes_received": 4000,
    }
    assert report["device_totals"] == main["devices"]
    ops = main["ops"]
    assert [op["op"] for op in ops] == ["df.exp", "df.mul", "df.reduce_sum"]
    assert [(op["name"], op["device"], op["rule"]) for op in ops] == [
        ("a", "cpu:0", "cost"),
        ("b", "gpu:0", "pin"),
        ("c", "gpu:0", "cost"),
    ]
    starts = [op["start_s"] / US for op in ops]
    finishes = [op["finish_s"] / US for op in ops]
    assert starts == pytest.approx([0, 18, 21.2])
    assert finishes == pytest.approx([9, 21.2, 23.6004])
    assert set(ops[0]) == {
        "index",
        "op",
        "name",
        "location",
        "device",
        "rule",
        "start_s",
        "finish_s",
    }
    assert all(op["rule"] in RULES for op in ops)


def test_single_on_one_device_adds_up_the_ops() -> None:
    report = place(module_of(three_ops()), devices="gpu:0,cpu:0", strategy="single", **HAND_COSTS)
    loads = report.functions[0].devices
    # gpu: exp 2 + 0.8, mul 3.2, sum 2.4004; the argument comes from the host
    # (5 + 4 us) and the result goes back (5.004 us).
    assert loads["gpu:0"].busy_s == pytest.approx(8.4004 * US)
    assert report.makespan_s == pytest.approx((9 + 8.4004 + 5.004) * US)
    assert loads["cpu:0"] == type(loads["cpu:0"])(0, 0.0, 4000, 4)


def test_stats_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    NumbaPlaceDevicesPass(devices="cpu:0,gpu:0", stats=True, **HAND_COSTS).apply(
        make_context(), module_of(three_ops())
    )
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        "df-place-devices: strategy cost on cpu:0, gpu:0 (host cpu:0); estimated makespan 28.60 us"
    )
    assert lines[1] == "  @main: makespan 28.60 us"
    assert lines[3].split() == ["cpu:0", "1", "9.00", "us", "4000", "B", "4", "B"]
    assert lines[-1].split() == ["df.reduce_sum", "%c", "gpu:0", "cost"]


def test_the_pass_runs_from_a_pipeline_spec() -> None:
    module = module_of(three_ops())
    apply_pipeline(module, 'df-place-devices{devices="cpu:0,gpu:0" strategy=single}')
    assert [op.attributes[DEVICE] for op in df_ops(module)] == [
        StringAttr("cpu:0"),
        StringAttr("gpu:0"),
        StringAttr("cpu:0"),
    ]


# --- the cost model ----------------------------------------------------------------------


def test_work_of_contractions_and_windows() -> None:
    g = Graph()
    a = g.input("a", (3, 4, 5))
    b = g.input("b", (3, 6, 5))
    x = g.input("x", (2, 3, 8, 8))
    w = g.input("w", (4, 3, 3, 3))
    m = a.matmul(b, transpose_b=True)
    y = conv2d(x, w, strides=(2, 2))
    p = max_pool2d(x, (2, 2), (2, 2))
    c = g.constant(np.ones(4, np.float32))
    r = m.reshape([72])

    def work(t: Tensor) -> Work:
        op = t.value.owner
        assert isinstance(op, Operation)
        assert op_flops(op) == work_of(op).flops  # the kernels' count, without bytes
        return work_of(op)

    assert work(m).flops == 2 * 3 * 4 * 6 * 5
    assert work(m).bytes == (60 + 90 + 72) * 4
    assert work(y).flops == 2 * (2 * 4 * 3 * 3) * (3 * 3 * 3)
    assert work(p).flops == (2 * 3 * 4 * 4) * 4
    assert work(c) == work(r) == Work(0, 0, kernel=False)
    assert work(x.exp()).flops == 8 * 2 * 3 * 8 * 8


def test_cost_model_times() -> None:
    model = CostModel(**{k: float(v) for k, v in HAND_COSTS.items()})
    assert model.compute_time(Work(8000, 8000), "cpu") == pytest.approx(9 * US)
    assert model.compute_time(Work(1000, 12000), "gpu") == pytest.approx(3.2 * US)
    assert model.compute_time(Work(0, 0, kernel=False), "gpu") == 0
    assert model.transfer_time(4000) == pytest.approx(9 * US)


# --- errors ------------------------------------------------------------------------------

CONFLICT = """\
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %s = df.add %x, %y {df.device = "cpu:0", df.colocate = "g"}
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = df.constant {df.colocate = "g"} dense<2.0> : tensor<4xf32>
  %m = df.mul %s, %t {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %m : tensor<4xf32>
}
"""


def test_conflicting_pins_name_both_ops_with_lines_and_the_chain() -> None:
    module = parse_module(CONFLICT, "prog.mlir")
    with pytest.raises(PassFailedException) as error:
        place(module, devices="cpu:0,gpu:0")
    assert str(error.value) == (
        "df-place-devices: conflicting devices in one colocation group: "
        "df.add (%s, line 2) is pinned to cpu:0 and df.mul (%m, line 5) to gpu:0; "
        'joined by: %s -[colocate "g"]- %t -[generator of]- %m'
    )


def test_report_gives_locations() -> None:
    module = parse_module(CONFLICT.replace('{df.device = "gpu:0"}', ""), "prog.mlir")
    report = place(module, devices="cpu:0")
    assert [op.location for op in report.functions[0].ops] == [
        "prog.mlir:2:3",
        "prog.mlir:4:3",
        "prog.mlir:5:3",
    ]


def _conv_module() -> ModuleOp:
    return module_of(conv_gradient_graph()[0])


def _unnamed_pinned_conv() -> ModuleOp:
    g, dx, _ = conv_gradient_graph()
    dx.value.name_hint = None
    pin(dx, "gpu:0")
    return module_of(g)


ERRORS: list[tuple[Callable[[], ModuleOp], dict[str, Any], str]] = [
    (
        lambda: module_of(three_ops()),
        {"devices": "cpu:0,gpu:1"},
        "df.mul (%b) is pinned to gpu:0, which is not in the device list cpu:0,gpu:1",
    ),
    (
        lambda: module_of(three_ops()),
        {"devices": "cpu:0;gpu:0"},
        "devices: bad device 'cpu:0;gpu:0': "
        "each must be cpu:N or gpu:N (optionally @RANK, as in cpu:0@1)",
    ),
    (
        lambda: module_of(three_ops()),
        {"devices": "gpu:0, gpu:0"},
        "devices: device gpu:0 is listed twice in 'gpu:0, gpu:0'",
    ),
    (
        lambda: module_of(three_ops()),
        {"devices": " "},
        "devices is empty: name at least one device, e.g. devices=cpu:0",
    ),
    (
        lambda: module_of(three_ops()),
        {"devices": "gpu:0", "strategy": "random"},
        'unknown strategy "random": use cost or single',
    ),
    (
        lambda: module_of(three_ops()),
        {"devices": "gpu:0", "cpu_gflops": -1},
        "cpu_gflops=-1.0 must be a positive number",
    ),
    (
        _unnamed_pinned_conv,
        {"devices": "cpu:0,gpu:0"},
        "df.conv2d_grad_input (#0 in @main) is pinned to gpu:0, but gpu devices cannot "
        "run df.conv2d_grad_input",
    ),
    (
        _conv_module,
        {"devices": "gpu:0"},
        "no device of gpu:0 can run every op of a colocation group: "
        "df.conv2d_grad_input (%dx) runs on none of them",
    ),
]


@pytest.mark.parametrize(("make", "options", "message"), ERRORS)
def test_errors(make: Callable[[], ModuleOp], options: dict[str, Any], message: str) -> None:
    with pytest.raises(PassFailedException) as error:
        place(make(), **options)
    assert str(error.value) == "df-place-devices: " + message


# --- placed programs run right -----------------------------------------------------------
# Placing only annotates, so the interpreter cannot tell a placed program from the
# original: what placement can break is the program its decisions make. Random graphs
# get pins and a colocation group, are placed, and each decision is checked; then the
# program is partitioned and run with one interpreter per device, which must give the
# unpartitioned results bit for bit.

DEVICE_POOL = ("cpu:0", "cpu:1", "gpu:0", "gpu:1")


def constrain(
    module: ModuleOp, devices: list[str], seed: int
) -> tuple[dict[Operation, str], list[Operation]]:
    """Pin two ops to the first two devices (where they can run there) and colocate two
    other ops; returns the pins and the group."""
    rng = np.random.default_rng(seed)
    ops = [op for op in df_ops(module) if not isinstance(op, df.ConstantOp)]
    chosen = [ops[int(i)] for i in rng.choice(len(ops), size=4, replace=False)]
    pins = {op: d for op, d in zip(chosen[:2], devices, strict=False) if can_run(d, op)}
    for op, pinned in pins.items():
        op.attributes[DEVICE] = StringAttr(pinned)
    group = chosen[2:]
    for op in group:
        op.attributes[COLOCATE] = StringAttr("together")
    return pins, group


def check_decisions(
    module: ModuleOp,
    report: PlacementReport,
    devices: list[str],
    pins: dict[Operation, str],
    group: list[Operation],
) -> None:
    """Every op on a listed device that can run it, pins kept, the group on one device,
    and under `single` every op it placed on the first listed device able to run it."""
    ops = df_ops(module)
    placed = {op: device_of(op) for op in ops}
    assert [p.op for p in report.functions[0].ops] == [op.name for op in ops]
    for op, decision in zip(ops, report.functions[0].ops, strict=True):
        assert placed[op] == decision.device in devices and can_run(placed[op], op)
        if decision.rule == "single":
            assert placed[op] == next(d for d in devices if can_run(d, op))
    assert {op: placed[op] for op in pins} == pins
    assert len({placed[op] for op in group}) == 1


def device_of(op: Operation) -> str:
    attr = op.attributes[DEVICE]
    assert isinstance(attr, StringAttr)
    return attr.data


@pytest.mark.parametrize("seed", range(8))
def test_placed_random_graphs_partition_and_run_like_one_device(seed: int) -> None:
    rng = np.random.default_rng(seed)
    devices = [str(d) for d in rng.permutation(DEVICE_POOL)[: int(rng.integers(2, 5))]]
    strategy = ("cost", "single")[seed % 2]
    original = random_graph(seed, min_ops=30)
    module = original.clone()
    main = next(op for op in original.ops if isinstance(op, FuncOp))
    inputs = random_inputs(main, seed=seed)
    pins, group = constrain(module, devices, seed)
    report = place(module, devices=",".join(devices), strategy=strategy)
    module.verify()
    check_decisions(module, report, devices, pins, group)
    assert sum(load.ops for load in report.totals().values()) == len(df_ops(module))
    assert report.makespan_s > 0
    apply_pipeline(module, "df-partition")
    assert check_partitioned(module) > 0
    expected = run_function(original, "main", inputs)
    actual = run_partitioned(module, "main", inputs, timeout=10)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(got, want)
