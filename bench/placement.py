"""Benchmark of `df-place-devices`: estimated makespans of its strategies and two lower bounds.

    python bench/placement.py

For each graph and device set it prints the makespan the cost model estimates for
`strategy=cost` (HEFT) and for `strategy=single` (all on the first device that can
run each op), two lower bounds on any placement's makespan, and the ratio
cost/single (below 1: the cost strategy wins):
- work: every op's time on its fastest allowed device kind, summed, over the
  number of devices (no device can do more than its share faster);
- path: the longest dependency chain with every op on its fastest allowed
  device kind and transfers free.
The last column is the wall time of the pass itself. All times but that are
estimates of the default cost model, not measurements.

Graphs: `wide` (16 independent branches of 4 matmuls, 256x256, summed),
`deep` (a chain of 50 blocks: a 128x128 matmul, tanh, a scale, relu: 250 ops),
`mlp` (784-512-512-10 batch 256 forward and backward, from `df-autodiff`) and
`convnet` (conv-relu-pool twice and a dense layer, batch 32, forward and backward:
its conv gradients run only on the cpu).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from dflow.analysis.cost_model import CostModel, work_of
from dflow.backend.numba.capabilities import NUMBA_CAPABILITIES, NumbaPlaceDevicesPass
from dflow.dialects.devices import kind_of
from dflow.dialects.df.base import DfOp
from dflow.frontend import Graph, Tensor, addn, conv2d, max_pool2d
from dflow.transforms.autodiff import differentiate

DEVICE_SETS = ("cpu:0,cpu:1", "cpu:0,gpu:0", "cpu:0,cpu:1,cpu:2,cpu:3", "cpu:0,gpu:0,gpu:1")


def wide(branches: int = 16, depth: int = 4, size: int = 256) -> ModuleOp:
    g = Graph()
    x = g.input("x", (size, size))
    weights = [g.input(f"w{i}", (size, size)) for i in range(branches)]
    outputs: list[Tensor] = []
    for w in weights:
        h = x
        for _ in range(depth):
            h = (h @ w).tanh()
        outputs.append(h)
    g.output(addn(outputs))
    return g.module()


def deep(blocks: int = 50, size: int = 128) -> ModuleOp:
    g = Graph()
    h = g.input("x", (size, size))
    w = g.input("w", (size, size))
    for _ in range(blocks):
        h = ((h @ w).tanh() * 0.5).relu()
    g.output(h)
    return g.module()


def with_gradient(g: Graph, wrt: Sequence[int]) -> ModuleOp:
    """The module of `g`'s gradient function only (forward and backward)."""
    function = g.function()
    return ModuleOp([differentiate(function, wrt)])


def mlp(
    batch: int = 256,
    sizes: Sequence[int] = (784, 512, 512, 10),
    activations: Sequence[str] = (),
) -> ModuleOp:
    """The MLP training step: the loss of a softmax classifier and its gradient with
    respect to every weight and bias; `activations`: the first hidden layers' (`relu`
    or `tanh`), relu for the others."""
    g = Graph()
    h = g.input("x", (batch, sizes[0]))
    labels = g.input("labels", (batch, sizes[-1]))
    layers = len(sizes) - 1
    for i in range(layers):
        w = g.input(f"w{i}", (sizes[i], sizes[i + 1]))
        b = g.input(f"b{i}", (sizes[i + 1],))
        h = h @ w + b
        if i < layers - 1:
            tanh = i < len(activations) and activations[i] == "tanh"
            h = h.tanh() if tanh else h.relu()
    loss = -(labels * h.softmax().log()).sum([1]).mean()
    g.output(loss)
    return with_gradient(g, range(2, 2 + 2 * layers))


def convnet(batch: int = 32) -> ModuleOp:
    g = Graph()
    image = g.input("image", (batch, 3, 32, 32))
    f1 = g.input("f1", (16, 3, 3, 3))
    f2 = g.input("f2", (32, 16, 3, 3))
    dense = g.input("dense", (32 * 8 * 8, 10))
    h = max_pool2d(conv2d(image, f1, pads=(1, 1, 1, 1)).relu(), (2, 2), (2, 2))
    h = max_pool2d(conv2d(h, f2, pads=(1, 1, 1, 1)).relu(), (2, 2), (2, 2))
    logits = h.reshape([batch, 32 * 8 * 8]) @ dense
    g.output(logits.square().mean() * np.float32(0.5))
    return with_gradient(g, (1, 2, 3))


GRAPHS: dict[str, Callable[[], ModuleOp]] = {
    "wide": wide,
    "deep": deep,
    "mlp": mlp,
    "convnet": convnet,
}


def fastest_times(ops: Sequence[Operation], devices: Sequence[str]) -> dict[Operation, float]:
    """Each op's time on the fastest device kind of `devices` that can run it."""
    model = CostModel()
    times: dict[Operation, float] = {}
    for op in ops:
        kinds = {kind_of(d) for d in devices if NUMBA_CAPABILITIES.can_run(d, op)}
        times[op] = min(model.compute_time(work_of(op), kind) for kind in kinds)
    return times


def lower_bounds(function: FuncOp, devices: Sequence[str]) -> tuple[float, float]:
    """(total work / devices, critical path), both with ops on their fastest kind."""
    ops = [op for op in function.walk() if isinstance(op, DfOp)]
    times = fastest_times(ops, devices)
    finish: dict[Operation, float] = {}
    for op in ops:
        ready = max(
            (finish.get(v.owner, 0.0) for v in op.operands if isinstance(v.owner, Operation)),
            default=0.0,
        )
        finish[op] = ready + times[op]
    return sum(times.values()) / len(devices), max(finish.values(), default=0.0)


def makespan(make: Callable[[], ModuleOp], devices: str, strategy: str) -> tuple[float, float]:
    """The estimated makespan of the last function, and the pass's wall time."""
    module = make()
    started = time.perf_counter()
    report = NumbaPlaceDevicesPass(devices=devices, strategy=strategy).place(module)
    return report.functions[-1].makespan_s, time.perf_counter() - started


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.3f}"


def main() -> None:
    print(
        f"{'graph':<8} {'ops':>5} {'devices':<24} {'cost ms':>9} {'single ms':>9} "
        f"{'work LB':>9} {'path LB':>9} {'cost/single':>11} {'pass s':>7}"
    )
    for name, make in GRAPHS.items():
        module = make()
        function = next(op for op in module.ops if isinstance(op, FuncOp))
        count = sum(1 for op in function.walk() if isinstance(op, DfOp))
        for devices in DEVICE_SETS:
            cost, seconds = makespan(make, devices, "cost")
            single, _ = makespan(make, devices, "single")
            work, path = lower_bounds(function, devices.split(","))
            print(
                f"{name:<8} {count:>5} {devices:<24} {ms(cost)} {ms(single)} "
                f"{ms(work)} {ms(path)} {cost / single:>11.3f} {seconds:>7.2f}"
            )


if __name__ == "__main__":
    main()
