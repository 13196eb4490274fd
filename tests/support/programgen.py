"""Seeded random `df` programs shaped like the ones users write, and the modes they run in.

`generate(seed)` builds a verified `@main` over every op family of the dialect
(elementwise, compare, select, cast, addn, matmul with transposes and batches,
conv2d with its gradients, conv2d_nchwc, pools with theirs and of NCHWc, transpose,
reshape, broadcast_to, reductions, softmax, layer_norm, concat, slice, constants) on
values whose shapes broadcast to one base shape `A x B`, where either size may be 0
or 1; one main element type
(f32, f64, i32, i64 or i1) with casts to the others and to the narrow types (f16,
bf16, i8, i16, ui8, ui16, ui32, ui64), whose values then flow on through the ops
that take any type (select, casts, data movement). Like real programs, it leaves
values unused, returns a value twice, returns arguments and constants, and on
about half the programs pins some ops to `cpu:1`. Ops that need a domain get
guarded operands (`log(|x| + 0.5)`); a float is cast to an integer only clamped
(and NaN-free) and compared only where it is exact (below).

Each value records whether it is *exact*: computed only by ops that IEEE rounds
correctly (`+ - * /`, `sqrt`, neg, abs, max, min, select, cast, compares, data
movement, `reduce_max`, `max_pool2d`) from exact values, so that the compiled
code, keeping the interpreter's order of operations, must reproduce it bit for
bit. Transcendentals, `pow`, sums (reductions, products, convolutions, average
pools and the gradients) are not: their order or their library differs. Integers
and booleans are always exact (a comparison or an integer cast reads only exact
floats).

`check(program, modes)` runs it through the interpreter (the oracle) and each mode:

- `interpret`: the oracle itself, whose results must have the declared types;
- `optimize`: `df-optimize`, then the interpreter;
- `compiled`: compiled for one device (pins removed: a single device runs all);
- `devices`: compiled for `cpu:0,cpu:1`, pins kept, values sent between threads.

Results must equal the oracle's: integers and booleans exactly; floats bit for bit
where exact and compiled (the sign of a zero included); otherwise within
`TOLERANCE` (rtol, atol by element type): the inexact ops' own last-place
differences grown through a few more ops, and `df-optimize`'s reassociation
(`x*a + x*b -> x*(a+b)`, add chains into `addn`, folded constants).
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

from dflow.dialects import df
from dflow.dialects.devices import DeviceList
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.types import static_tensor
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.frontend import Graph, Tensor, addn, concat, select
from dflow.frontend.builder import element_type
from dflow.frontend.ops import gather, gather_elements, layer_norm, rem, scatter_add
from dflow.interpreters.df import run_function
from dflow.runtime import load_program
from dflow.runtime.dtypes import is_floating

Array = NDArray[Any]

MODES = ("interpret", "optimize", "compiled", "devices")
TOLERANCE: dict[str, tuple[float, float]] = {
    "bf16": (3e-2, 1e-2),
    "f16": (4e-3, 1e-3),
    "f32": (2e-4, 2e-5),
    "f64": (1e-9, 1e-12),
}
"""(rtol, atol) for floats that are not exact, or that `df-optimize` may reassociate:
an f16 (bf16) result rounds an f32 one, so an f32 difference of one unit may move it
by one unit of its own."""

FLOATS = ("f32", "f64")
INTEGERS = ("i32", "i64")
ELEMENTS = (*FLOATS, *INTEGERS, "i1")
NARROW = ("f16", "bf16", "i8", "i16", "ui8", "ui16", "ui32", "ui64")
"""Cast targets besides `ELEMENTS`: the narrow types (computed in wider ones)."""
NARROW_FLOATS = ("f16", "bf16")
SECOND_DEVICE = "cpu:1"
RECEIVE_TIMEOUT_S = 600.0
"""Generous: a device may wait while the other compiles its kernels (cold, under load)."""
EXACT_UNARY = ("neg", "abs", "relu", "square", "identity", "sqrt", "reciprocal")
ROUNDING = ("floor", "ceil", "round")
"""Exact, but a step: applied to exact values only (a value within the tolerance of an
integer could round the other way)."""
EXACT_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "rem")
STEPS = ("rem",)
"""Binary ops that jump (`fmod` at the multiples of its divisor): of exact values only."""


@dataclass
class Value:
    """A tensor of the program and whether the compiled code must reproduce it bit for bit."""

    tensor: Tensor
    exact: bool

    @property
    def element(self) -> str:
        return str(self.tensor.type.element_type)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tensor.shape


@dataclass(frozen=True)
class Program:
    """One generated program: its module, seeded inputs, and which results are exact."""

    seed: int
    module: ModuleOp
    inputs: list[Array]
    exact: tuple[bool, ...]
    pinned: bool
    census: Counter[str]

    @property
    def grain(self) -> str:
        """The coarsest float type of the program, whose tolerance applies to every
        result that is not exact (an f64 cast of an inexact f32 carries its error)."""
        types = [str(r.type) for op in self.module.walk() for r in op.results]
        held = ("bf16", "f16", "f32")
        return next((g for g in held if any(f"x{g}>" in t or f"<{g}>" in t for t in types)), "f64")

    def describe(self) -> str:
        main = self.module.ops.first
        assert isinstance(main, FuncOp)
        types = ", ".join(str(t) for t in main.function_type.inputs)
        ops = sum(self.census.values())
        pins = " pinned to cpu:1" if self.pinned else ""
        return f"seed {self.seed}: @main({types}), {ops} ops{pins}"


class _Builder:
    """Grows one program step by step from a pool of values."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.graph = Graph("main")
        self.pool: list[Value] = []
        self.arguments: list[Value] = []
        self.constants: list[Value] = []
        self.main = str(self.rng.choice(ELEMENTS, p=[0.25, 0.2, 0.2, 0.2, 0.15]))
        self.base = (self._size(), self._size())

    # ---------------------------------------------------------------- choices

    def _size(self) -> int:
        return int(self.rng.choice([0, 1, 2, 3, 4, 5], p=[0.08, 0.17, 0.2, 0.2, 0.2, 0.15]))

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def family_shape(self) -> tuple[int, ...]:
        """A shape that broadcasts to the base shape: itself, a size-1 axis, a row, a scalar."""
        a, b = self.base
        shapes = [(a, b), (a, b), (1, b), (a, 1), (b,), (), (1, 1)]
        return shapes[int(self.rng.integers(len(shapes)))]

    def pick(self, elements: Sequence[str] | None = None, exact: bool = False) -> Value | None:
        """A recent value more often than an old one, of one of `elements`."""
        found = [
            v
            for v in self.pool
            if (elements is None or v.element in elements) and (v.exact or not exact)
        ]
        if not found:
            return None
        index = len(found) - int(self.rng.geometric(0.3))
        return found[max(index, 0)]

    def value(self, element: str, exact: bool = False, besides: Value | None = None) -> Value:
        """A value of `element` other than `besides` where one is at hand: from the
        pool, else (and sometimes anyway) a new constant."""
        for _ in range(3):
            found = self.pick([element], exact)
            if found is not None and found is not besides and not self.chance(0.15):
                return found
        return self.constant(element)

    # ---------------------------------------------------------------- leaves

    def argument(self, element: str, shape: tuple[int, ...], pooled: bool = True) -> Value:
        """A new argument; in the pool of values (`pooled`) when its shape broadcasts to
        the base shape."""
        value = Value(self.graph.input(f"a{len(self.arguments)}", shape, element), True)
        self.arguments.append(value)
        return self.add(value) if pooled else value

    def constant(self, element: str, shape: tuple[int, ...] | None = None) -> Value:
        shape = self.family_shape() if shape is None else shape
        dtype = numpy_dtype(element_type(element))
        if self.chance(0.4):
            array: Array = np.full(shape, self.rng.choice([0, 1, -1, 2, 0.5, 3]))
        elif dtype.kind == "b":
            array = self.rng.random(shape) < 0.5
        else:
            array = self.rng.normal(size=shape) * 3
        value = Value(self.graph.constant(array.astype(dtype), element), True)
        self.constants.append(value)
        return value

    def add(self, value: Value) -> Value:
        self.pool.append(value)
        return value

    def scalar(self, x: Value, number: float) -> Tensor:
        return self.graph.constant(np.asarray(number), x.element)

    # ---------------------------------------------------------------- families

    def step(self) -> None:
        families: list[Callable[[], Value | None]] = [
            self.unary,
            self.unary,
            self.binary,
            self.binary,
            self.binary,
            self.compare_select,
            self.cast,
            self.addn,
            self.matmul,
            self.window,
            self.movement,
            self.reduction,
            self.softmax,
            self.layer_norm,
            self.concat_slice,
            self.indexing,
        ]
        made = families[int(self.rng.integers(len(families)))]()
        if made is not None:
            self.add(made)

    def unary(self) -> Value | None:
        x = self.pick(("f32", "f64", "i32", "i64"))
        if x is None:
            return None
        names = list(UNARY_FLOAT if x.element in FLOATS else UNARY_NUMBER)
        names = [name for name in names if x.exact or name not in ROUNDING]
        name = names[int(self.rng.integers(len(names)))]
        exact = name in EXACT_UNARY or name in ROUNDING
        return Value(UNARY_FLOAT[name](self, x), x.exact and exact)

    def binary(self) -> Value | None:
        x = self.pick(("f32", "f64", "i32", "i64"))
        if x is None:
            return None
        y = self.value(x.element, besides=x)
        names = list(BINARY_FLOAT if x.element in FLOATS else BINARY_NUMBER)
        names = [name for name in names if (x.exact and y.exact) or name not in STEPS]
        name = names[int(self.rng.integers(len(names)))]
        if self.chance(0.5):
            x, y = y, x
        exact = x.exact and y.exact and name in EXACT_BINARY
        return Value(BINARY_FLOAT[name](self, x, y), exact)

    def compare_select(self) -> Value | None:
        x = self.pick(exact=True)
        if x is None:
            return None
        y = self.value(x.element, exact=True, besides=x)
        compares = [Tensor.__gt__, Tensor.__ge__, Tensor.__lt__, Tensor.__le__, Tensor.equal]
        condition = compares[int(self.rng.integers(len(compares)))](x.tensor, y.tensor)
        if self.chance(0.3):
            return Value(condition, True)
        on_true = self.pick() or x
        on_false = self.value(on_true.element, besides=on_true)
        exact = on_true.exact and on_false.exact
        return Value(select(condition, on_true.tensor, on_false.tensor), exact)

    def cast(self) -> Value | None:
        x = self.pick()
        if x is None:
            return None
        kinds = NARROW if self.chance(0.3) else ELEMENTS
        target = str(self.rng.choice([e for e in kinds if e != x.element]))
        source = x.tensor
        floats = (*FLOATS, *NARROW_FLOATS)
        if x.element in floats and target not in floats:
            if not x.exact:
                return None
            low = 0 if target.startswith("u") else -50  # below 0 to unsigned is undefined
            clamped = source.maximum(self.scalar(x, low)).minimum(self.scalar(x, 50))
            source = select(source.equal(source), clamped, self.scalar(x, 0))
        return Value(source.cast(target), x.exact)

    def full(self, x: Value) -> Tensor:
        """`x` at the base shape."""
        if x.shape == self.base:
            return x.tensor
        return x.tensor.broadcast_to(self.base)

    def addn(self) -> Value | None:
        x = self.pick(("f32", "f64", "i32", "i64"))
        if x is None:
            return None
        terms = [x] + [self.value(x.element) for _ in range(int(self.rng.integers(1, 4)))]
        return Value(addn([self.full(t) for t in terms]), all(t.exact for t in terms))

    def matmul(self) -> Value | None:
        x = self.pick(("f32", "f64", "i32", "i64"))
        if x is None:
            return None
        a, b = self.base
        exact = x.element not in FLOATS
        full = self.full(x)
        kind = int(self.rng.integers(3))
        if kind == 0:  # x @ w or x @ w^T
            w = self.operand(x.element, (b, b))
            return Value(full.matmul(w, transpose_b=self.chance(0.5)), exact)
        if kind == 1:  # w^T @ x
            w = self.operand(x.element, (a, a))
            return Value(w.matmul(full, transpose_a=True), exact)
        w = self.operand(x.element, (2, b, b))  # batched, a batch of two
        stacked = full.reshape((1, a, b)).broadcast_to((2, a, b))
        product = stacked.matmul(w, transpose_b=self.chance(0.5))
        return Value(product.sum([0]), exact)

    def operand(self, element: str, shape: tuple[int, ...]) -> Tensor:
        """A constant or a new argument of `shape`."""
        if self.chance(0.5):
            return self.argument(element, shape, pooled=False).tensor
        return self.constant(element, shape).tensor

    def window(self) -> Value | None:
        """A convolution, a pool or one of their gradients, on the value as one image."""
        x = self.pick(FLOATS)
        a, b = self.base
        if x is None or not a or not b:
            return None
        image = self.full(x).reshape((1, 1, a, b))
        return Value(WINDOWS[int(self.rng.integers(len(WINDOWS)))](self, image), False)

    def movement(self) -> Value | None:
        """A transpose, reshape or broadcast round trip back to the base shape, with an op
        on the way (so the shape op is not the last word)."""
        x = self.pick()
        if x is None:
            return None
        a, b = self.base
        full = self.full(x)
        moved = [full.T, full.reshape((a * b,)), full.reshape((b, a))][int(self.rng.integers(3))]
        if x.element != "i1":
            moved = -moved if self.chance(0.5) else abs(moved)
        back = moved.T if moved.shape == (b, a) and self.chance(0.5) else moved
        return Value(back.reshape(self.base), x.exact)

    def reduction(self) -> Value | None:
        x = self.pick(("f32", "f64", "i32", "i64"))
        if x is None:
            return None
        axes = [[0], [1], [0, 1], [-1]][int(self.rng.integers(4))]
        full = self.full(x)
        reduced_sizes = [full.shape[axis] for axis in axes]
        kinds = ["sum", "mean", "max"] if x.element in FLOATS else ["sum", "max"]
        if 0 in reduced_sizes:  # the maximum of nothing is no number
            kinds.remove("max")
        kind = kinds[int(self.rng.integers(len(kinds)))]
        keepdims = self.chance(0.5)
        reduced = getattr(full, kind)(axes, keepdims=keepdims)
        if not keepdims:
            kept = [1 if i in [axis % 2 for axis in axes] else n for i, n in enumerate(self.base)]
            reduced = reduced.reshape(kept)
        exact = x.exact and (kind == "max" or x.element not in FLOATS)
        return Value(reduced, exact)

    def softmax(self) -> Value | None:
        x = self.pick(FLOATS)
        if x is None:
            return None
        axis = int(self.rng.choice([0, 1, -1]))
        if not self.base[axis]:
            return None
        return Value(self.full(x).softmax(axis), False)

    def layer_norm(self) -> Value | None:
        """Along the last axis, with a scale and a bias (operands or constants)."""
        x = self.pick(FLOATS)
        if x is None or not self.base[1]:
            return None
        scale = self.operand(x.element, (self.base[1],))
        bias = self.constant(x.element, (self.base[1],)).tensor
        epsilon = float(self.rng.choice([1e-5, 0.1]))
        return Value(layer_norm(self.full(x), scale, bias, epsilon), False)

    def concat_slice(self) -> Value | None:
        x = self.pick()
        if x is None:
            return None
        y = self.value(x.element, besides=x)
        axis = int(self.rng.integers(2))
        joined = concat([self.full(x), self.full(y)], axis)
        offset = int(self.rng.integers(self.base[axis] + 1))
        start = [offset if i == axis else 0 for i in range(2)]
        limit = [s + n for s, n in zip(start, self.base, strict=True)]
        part = self.graph.emit(df.SliceOp(joined.value, start, limit))
        return Value(part, x.exact and y.exact)

    def indexing(self) -> Value | None:
        """A gather, gather_elements or scatter-add back to the base shape, at constant
        indices in range (negative ones too, repeated ones often): an index fed at run
        time would be drawn out of range."""
        x = self.pick()
        if x is None:
            return None
        axis = int(self.rng.integers(2))
        size, full = self.base[axis], self.full(x)
        kinds = ["gather", "gather_elements"] + (["scatter_add"] if x.element != "i1" else [])
        kind = kinds[int(self.rng.integers(len(kinds)))]
        shape = self.base if kind == "gather_elements" else (size,)
        indices = self.rng.integers(-size, size, shape) if size else np.zeros(shape, int)
        where = self.graph.constant(indices, "i32" if self.chance(0.5) else "i64")
        if kind == "gather":
            return Value(gather(full, where, axis), x.exact)
        if kind == "gather_elements":
            return Value(gather_elements(full, where, axis), x.exact)
        exact = x.exact and (x.element not in FLOATS or not size)
        return Value(scatter_add(full, where, self.base, axis), exact)

    # ---------------------------------------------------------------- the program

    def results(self) -> list[Value]:
        """Some unused values, a value twice, maybe an argument and a constant."""
        unused = [v for v in self.pool if not v.tensor.value.uses and v not in self.arguments]
        chosen = [v for v in unused if self.chance(0.7)]
        if chosen and self.chance(0.4):
            chosen.append(chosen[int(self.rng.integers(len(chosen)))])
        if self.chance(0.3):
            chosen.append(self.arguments[int(self.rng.integers(len(self.arguments)))])
        if self.chance(0.2):
            chosen.append(self.constant(self.main))
        order = self.rng.permutation(len(chosen))
        return [chosen[i] for i in order]


def _pin(module: ModuleOp, rng: np.random.Generator) -> bool:
    """Pin about a third of the ops to the second device (half the programs)."""
    if rng.random() < 0.5:
        return False
    for op in module.walk():
        if op.name.startswith("df.") and rng.random() < 0.35:
            op.attributes["df.device"] = StringAttr(SECOND_DEVICE)
    return True


def _inputs(function: FuncOp, rng: np.random.Generator) -> list[Array]:
    """Normal floats (scale 2), integers in [-10, 10), fair booleans."""
    inputs: list[Array] = []
    for type in function.function_type.inputs:
        tensor = static_tensor(type)
        dtype, shape = numpy_dtype(tensor.element_type), tensor.get_shape()
        if dtype.kind == "f":
            inputs.append((rng.standard_normal(shape) * 2).astype(dtype))
        elif dtype.kind == "b":
            inputs.append(rng.random(shape) < 0.5)
        else:
            inputs.append(rng.integers(-10, 10, shape).astype(dtype))
    return inputs


def generate(seed: int, steps: tuple[int, int] = (4, 11)) -> Program:
    """The program of `seed`: a few arguments, then `steps` (low, high) random steps."""
    builder = _Builder(seed)
    builder.argument(builder.main, builder.base)
    builder.argument(builder.main, builder.family_shape())
    if builder.chance(0.5):
        builder.argument(str(builder.rng.choice(ELEMENTS)), builder.family_shape())
    for _ in range(int(builder.rng.integers(*steps))):
        builder.step()
    results = builder.results()
    builder.graph.output(*(v.tensor for v in results))
    module = builder.graph.module()
    census = Counter(op.name for op in module.walk() if op.name.startswith("df."))
    pinned = _pin(module, builder.rng)
    main = module.ops.first
    assert isinstance(main, FuncOp)
    inputs = _inputs(main, builder.rng)
    return Program(seed, module, inputs, tuple(v.exact for v in results), pinned, census)


# ----------------------------------------------------------------------------- op tables


def _guarded(x: Tensor, builder: _Builder, value: Value) -> Tensor:
    return abs(x) + builder.scalar(value, 0.5)


def _clamped(x: Tensor, builder: _Builder, value: Value) -> Tensor:
    """`x` within [-4, 4]."""
    return x.maximum(builder.scalar(value, -4)).minimum(builder.scalar(value, 4))


UNARY_NUMBER: dict[str, Callable[[_Builder, Value], Tensor]] = {
    "neg": lambda b, x: -x.tensor,
    "abs": lambda b, x: abs(x.tensor),
    "relu": lambda b, x: x.tensor.relu(),
    "square": lambda b, x: x.tensor.square(),
    "identity": lambda b, x: x.tensor.identity(),
}
UNARY_FLOAT: dict[str, Callable[[_Builder, Value], Tensor]] = {
    **UNARY_NUMBER,
    "reciprocal": lambda b, x: _guarded(x.tensor, b, x).reciprocal(),
    "exp": lambda b, x: x.tensor.minimum(b.scalar(x, 10)).exp(),
    "log": lambda b, x: _guarded(x.tensor, b, x).log(),
    "sqrt": lambda b, x: abs(x.tensor).sqrt(),
    "rsqrt": lambda b, x: _guarded(x.tensor, b, x).rsqrt(),
    "tanh": lambda b, x: x.tensor.tanh(),
    "erf": lambda b, x: x.tensor.erf(),
    "sigmoid": lambda b, x: x.tensor.sigmoid(),
    "floor": lambda b, x: x.tensor.floor(),
    "ceil": lambda b, x: x.tensor.ceil(),
    "round": lambda b, x: x.tensor.round(),
    # clamped, so that an inexact x's error is not that of a large argument
    "sin": lambda b, x: _clamped(x.tensor, b, x).sin(),
    "cos": lambda b, x: _clamped(x.tensor, b, x).cos(),
}
BINARY_NUMBER: dict[str, Callable[[_Builder, Value, Value], Tensor]] = {
    "add": lambda b, x, y: x.tensor + y.tensor,
    "sub": lambda b, x, y: x.tensor - y.tensor,
    "mul": lambda b, x, y: x.tensor * y.tensor,
    "maximum": lambda b, x, y: x.tensor.maximum(y.tensor),
    "minimum": lambda b, x, y: x.tensor.minimum(y.tensor),
}
BINARY_FLOAT: dict[str, Callable[[_Builder, Value, Value], Tensor]] = {
    **BINARY_NUMBER,
    "div": lambda b, x, y: x.tensor / _guarded(y.tensor, b, y),
    "pow": lambda b, x, y: (
        _guarded(x.tensor, b, x) ** y.tensor.maximum(b.scalar(y, -3)).minimum(b.scalar(y, 3))
    ),
    "rem": lambda b, x, y: rem(x.tensor, _guarded(y.tensor, b, y)),
}


def _conv(builder: _Builder, image: Tensor) -> Tensor:
    """conv2d (a bias half the time) with a 1x1, 3x3 or 2x2 filter keeping the size, and
    its two gradients, summed back to the base shape; or conv2d_nchwc."""
    if builder.chance(0.25):
        return _conv_nchwc(builder, image)
    a, b = builder.base
    kernel, pads = [((1, 1), (0, 0, 0, 0)), ((3, 3), (1, 1, 1, 1)), ((2, 2), (0, 0, 1, 1))][
        int(builder.rng.integers(3))
    ]
    channels = int(builder.rng.integers(1, 3))
    element = str(image.type.element_type)
    weights = builder.operand(element, (channels, 1, *kernel))
    bias = builder.constant(element, (channels,)).tensor if builder.chance(0.5) else None
    out = image.graph.emit(
        df.Conv2DOp(image.value, weights.value, None if bias is None else bias.value, pads=pads)
    )
    kind = int(builder.rng.integers(3))
    if kind == 1:
        out = image.graph.emit(
            df.Conv2DGradInputOp(out.value, weights.value, image.type, pads=pads)
        )
    elif kind == 2:
        grad = image.graph.emit(
            df.Conv2DGradFilterOp(image.value, out.value, weights.type, pads=pads)
        )
        return grad.sum().reshape((1, 1)) * image.reshape((a, b))
    return out.sum([0, 1])


def _conv_nchwc(builder: _Builder, image: Tensor) -> Tensor:
    """conv2d_nchwc of blocks of one channel (`df-layout` makes blocks of 16 of real
    networks' convolutions only), a bias half the time, summed back to the base shape."""
    a, b = builder.base
    kernel, pads = [((1, 1), (0, 0, 0, 0)), ((3, 3), (1, 1, 1, 1)), ((2, 2), (0, 0, 1, 1))][
        int(builder.rng.integers(3))
    ]
    channels = int(builder.rng.integers(1, 3))
    element = str(image.type.element_type)
    weights = builder.operand(element, (channels, 1, *kernel, 1, 1))
    bias = builder.constant(element, (channels,)).tensor if builder.chance(0.5) else None
    blocked = image.reshape((1, 1, a, b, 1))
    out = image.graph.emit(
        df.Conv2DNchwcOp(
            blocked.value, weights.value, None if bias is None else bias.value, pads=pads
        )
    )
    return out.sum([0, 1, 4])


def _pool_nchwc(builder: _Builder, image: Tensor) -> Tensor:
    """A 2x2 pool of NCHWc of blocks of one channel, stride 1, padded to keep the size."""
    a, b = builder.base
    options: dict[str, Any] = {"kernel": (2, 2), "pads": (0, 0, 1, 1)}
    blocked = image.reshape((1, 1, a, b, 1)).value
    pool = df.MaxPool2DNchwcOp if builder.chance(0.5) else df.AvgPool2DNchwcOp
    return image.graph.emit(pool(blocked, **options)).reshape((a, b))


def _pool(builder: _Builder, image: Tensor) -> Tensor:
    """A 2x2 pool of stride 1 padded to keep the size, or its gradient (a max pool's
    by searching the windows again, or from their maxima's indices); or one of
    NCHWc."""
    if builder.chance(0.25):
        return _pool_nchwc(builder, image)
    a, b = builder.base
    options: dict[str, Any] = {"kernel": (2, 2), "pads": (0, 0, 1, 1)}
    kind = int(builder.rng.integers(6))
    if kind in (0, 2, 4):
        pooled = image.graph.emit(df.MaxPool2DOp(image.value, **options))
        if kind == 2:
            pooled = image.graph.emit(df.MaxPool2DGradOp(image.value, pooled.value, **options))
        if kind == 4:  # the gradient as df-autodiff makes it: from the maxima's indices
            indices = image.graph.emit(df.MaxPool2DIndicesOp(image.value, **options))
            gradient = df.MaxPool2DGradIndicesOp(pooled.value, indices.value, image.type, **options)
            pooled = image.graph.emit(gradient)
    else:
        pooled = image.graph.emit(df.AvgPool2DOp(image.value, **options))
        if kind in (3, 5):
            pooled = image.graph.emit(df.AvgPool2DGradOp(pooled.value, image.type, **options))
    return pooled.reshape((a, b))


WINDOWS: list[Callable[[_Builder, Tensor], Tensor]] = [_conv, _pool]


# ----------------------------------------------------------------------------- checking


@dataclass
class Failure:
    """One mode's disagreement with the oracle (or its crash)."""

    mode: str
    message: str


@dataclass
class Outcome:
    """What running one program in the chosen modes gave."""

    program: Program
    failures: list[Failure] = field(default_factory=list[Failure])


def _first_difference(got: Array, want: Array, differs: Array) -> str:
    index = tuple(int(i) for i in np.argwhere(differs)[0])
    first = f"{got[index]!r} instead of {want[index]!r}"
    return f"{int(differs.sum())} of {want.size} elements, first at {index}: {first}"


def _same(got: Any, want: Array, tolerance: tuple[float, float] | None) -> str | None:
    """Why `got` differs from the oracle's `want` (bit for bit, or within `tolerance`),
    or None."""
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{list(got.shape)} instead of {want.dtype}{list(want.shape)}"
    if not is_floating(want.dtype):
        differs = got != want
    elif tolerance is None:
        width = np.dtype(f"u{want.dtype.itemsize}")
        differs = got.view(width) != want.view(width)
    else:
        rtol, atol = tolerance
        wide = got.astype(np.float64), want.astype(np.float64)  # bf16 has no isclose
        differs = ~np.isclose(*wide, rtol=rtol, atol=atol, equal_nan=True)
    if not differs.any():
        return None
    how = (
        "not bit-exact" if tolerance is None else f"beyond rtol {tolerance[0]} atol {tolerance[1]}"
    )
    return f"{how}: {_first_difference(got, want, differs)}"


def _compare(program: Program, mode: str, got: Sequence[Any], want: Sequence[Array]) -> str | None:
    if len(got) != len(want):
        return f"{len(got)} results instead of {len(want)}"
    for index, (result, expected, exact) in enumerate(zip(got, want, program.exact, strict=True)):
        reordered = mode == "optimize" or not exact
        why = _same(result, expected, TOLERANCE[program.grain] if reordered else None)
        if why is not None:
            return f"result {index}: {why}"
    return None


def _declared(program: Program, results: Sequence[Array]) -> str | None:
    main = program.module.ops.first
    assert isinstance(main, FuncOp)
    for index, (result, type) in enumerate(zip(results, main.function_type.outputs, strict=True)):
        tensor = static_tensor(type)
        want = (numpy_dtype(tensor.element_type), tuple(tensor.get_shape()))
        if (result.dtype, result.shape) != want:
            return f"result {index} is {result.dtype}{list(result.shape)}, declared {want}"
    return None


def _unpinned(module: ModuleOp) -> ModuleOp:
    clone = module.clone()
    for op in clone.walk():
        op.attributes.pop("df.device", None)
    return clone


def _compiled(
    module: ModuleOp, devices: str | None, directory: Path, inputs: list[Array], schedule: str
) -> Any:
    """`module` compiled for `devices` (its ops ordered by `schedule`) into `directory`,
    loaded and run; the modules are then dropped from `sys.modules` (a long run loads
    thousands)."""
    listed = None if devices is None else DeviceList.parse(devices)
    write_modules(compile_module(module, listed, schedule=schedule), directory)
    program = load_program(directory)
    try:
        return program.run("main", inputs, timeout=RECEIVE_TIMEOUT_S)
    finally:
        for part in program.parts:
            sys.modules.pop(part.module.__name__, None)


def _run_mode(program: Program, mode: str, directory: Path, schedule: str) -> list[Any]:
    module = program.module
    if mode == "optimize":
        return list(
            run_function(apply_pipeline(module.clone(), "df-optimize"), "main", program.inputs)
        )
    if mode == "compiled":
        return _compiled(_unpinned(module), None, directory, program.inputs, schedule)
    return _compiled(module.clone(), "cpu:0,cpu:1", directory, program.inputs, schedule)


def check(
    program: Program,
    modes: Sequence[str],
    workdir: Path,
    keep: bool = False,
    schedule: str = "best",
) -> Outcome:
    """Run `program` in the interpreter and in each of `modes` (compiled ones under
    `workdir`, removed unless `keep`, their ops ordered by the `df-schedule` strategy
    `schedule`); what disagreed."""
    outcome = Outcome(program)
    try:
        expected = [np.asarray(r) for r in run_function(program.module, "main", program.inputs)]
    except Exception as error:  # the oracle failing is a failure of every mode
        outcome.failures.append(Failure("interpret", f"{type(error).__name__}: {error}"))
        return outcome
    if "interpret" in modes and (why := _declared(program, expected)) is not None:
        outcome.failures.append(Failure("interpret", why))
    for mode in modes:
        if mode == "interpret":
            continue
        directory = workdir / f"{program.seed}-{mode}"
        try:
            why = _compare(program, mode, _run_mode(program, mode, directory, schedule), expected)
        except Exception as error:  # a crash is reported as the mode's failure
            why = f"{type(error).__name__}: {str(error)[:500]}"
        if why is not None:
            outcome.failures.append(Failure(mode, why))
        if not keep:
            shutil.rmtree(directory, ignore_errors=True)
    return outcome
