"""Seeded random `df` graphs for differential tests.

`random_graph(seed)` builds a well-typed `@main` of at least `min_ops` ops over
values whose shapes all broadcast to (4, 8): every elementwise op, compare and
select, cast, addn, broadcasting with scalars and size-1 axes, matmul, reductions
with keepdims, transpose and reshape round trips, and constants, including the
neutral splats (0, 1, -1, 2) and constant-only subgraphs that the optimizer folds
and simplifies. Domain-restricted ops get guarded operands (`log(|x| + 0.5)`) so
results stay finite and comparisons mean something.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

from dflow.frontend import Graph, Tensor, addn, select

SHAPES: tuple[tuple[int, ...], ...] = ((4, 8), (4, 8), (8,), (4, 1), (1, 8), ())
NEUTRAL = (0.0, 1.0, -1.0, 2.0, 0.5)

UNARY: dict[str, Callable[[Tensor], Tensor]] = {
    "neg": lambda x: -x,
    "reciprocal": lambda x: (abs(x) + 0.5).reciprocal(),
    "exp": lambda x: x.tanh().exp(),
    "log": lambda x: (abs(x) + 0.5).log(),
    "sqrt": lambda x: abs(x).sqrt(),
    "rsqrt": lambda x: (abs(x) + 0.5).rsqrt(),
    "tanh": lambda x: x.tanh(),
    "erf": lambda x: x.erf(),
    "sigmoid": lambda x: x.sigmoid(),
    "relu": lambda x: x.relu(),
    "abs": abs,
    "square": lambda x: x.square(),
    "identity": lambda x: x.identity(),
}

BINARY: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (abs(b) + 0.5),
    "maximum": lambda a, b: a.maximum(b),
    "minimum": lambda a, b: a.minimum(b),
    "pow": lambda a, b: (abs(a) + 0.5) ** b.tanh(),
}


class _Builder:
    def __init__(self, seed: int, dtype: str):
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.graph = Graph("main")
        self.values: list[Tensor] = []
        self.turn = int(self.rng.integers(len(UNARY) * len(BINARY)))

    def pick(self) -> Tensor:
        """A recent value more often than an old one, so chains grow deep."""
        index = len(self.values) - 1 - int(self.rng.geometric(0.35)) + 1
        return self.values[max(index, 0)]

    def constant(self) -> Tensor:
        shape = SHAPES[self.rng.integers(len(SHAPES))]
        if self.rng.random() < 0.5:
            value: Any = np.full(shape, self.rng.choice(NEUTRAL))
        else:
            value = self.rng.normal(size=shape)
        return self.graph.constant(value, self.dtype)

    def operand(self) -> Tensor:
        return self.constant() if self.rng.random() < 0.25 else self.pick()

    def step(self) -> None:
        """Add one op (with its guards): the elementwise ops take turns, so that
        every graph has most of them."""
        kind = self.rng.choice(["unary", "binary", "binary", "other"])
        self.turn += 1
        if kind == "unary":
            unary = list(UNARY.values())[self.turn % len(UNARY)]
            self.values.append(unary(self.pick()))
        elif kind == "binary":
            binary = list(BINARY.values())[self.turn % len(BINARY)]
            self.values.append(binary(self.pick(), self.operand()))
        else:
            self.values.append(self.other())

    def full(self, x: Tensor) -> Tensor:
        """`x` broadcast to (4, 8) by adding a zero constant (which the optimizer removes
        only where the types allow)."""
        if x.shape == (4, 8):
            return x
        return x + self.graph.constant(np.zeros((4, 8)), self.dtype)

    def other(self) -> Tensor:
        """One of the non-elementwise-chain ops, each with operands it accepts."""
        x, y = self.pick(), self.operand()
        makers: list[Callable[[], Tensor]] = [
            lambda: select(x > y, x, self.operand()),
            lambda: x.cast("f32").cast(self.dtype),
            lambda: addn([self.full(x), self.full(y), self.full(x)]),
            lambda: (
                self.full(x) @ self.graph.constant(self.rng.normal(size=(8, 8)) / 3, self.dtype)
            ),
            lambda: self.full(x).sum([1], keepdims=True) * 0.125,
            lambda: self.full(x).T.reshape([32]).reshape([8, 4]).T,
            lambda: self.full(x).max([0], keepdims=True) - y,
        ]
        return makers[int(self.rng.integers(len(makers)))]()


def random_graph(seed: int, min_ops: int = 30, dtype: str = "f64") -> ModuleOp:
    """A verified module with one `@main(%x: 4x8, %y: 8, %z: scalar)` of at least
    `min_ops` ops, returning every value nothing else uses (so no op is dead)."""
    builder = _Builder(seed, dtype)
    graph = builder.graph
    builder.values += [
        graph.input("x", (4, 8), dtype),
        graph.input("y", (8,), dtype),
        graph.input("z", (), dtype),
    ]
    while len(graph.block.ops) < min_ops:
        builder.step()
    graph.output(*(value for value in builder.values if not value.value.uses))
    return graph.module()


DEVICE_POOL = ("cpu:0", "cpu:1", "gpu:0", "gpu:1")


def place_randomly(module: ModuleOp, seed: int) -> list[str]:
    """Put every df op on a random device of 2 to 4 drawn from `DEVICE_POOL`; returns them."""
    rng = np.random.default_rng(seed)
    devices = [str(d) for d in rng.choice(DEVICE_POOL, size=int(rng.integers(2, 5)), replace=False)]
    for op in module.walk():
        if op.name.startswith("df."):
            op.attributes["df.device"] = StringAttr(str(rng.choice(devices)))
    return devices


def op_names(module: ModuleOp) -> set[str]:
    return {op.name for op in module.walk()}
