"""Compiled programs (the numba target and the runtime) against the reference interpreter.

Every `df` op, alone or beside a few others in one module (kernels cost ~0.1 s each
to compile, so one module holds many independent results), is lowered with
`dflow.driver.compilation.compiler.compile_module`, written with `write_modules`, loaded with
`runtime.load_program` and run; its results must equal the interpreter's
(`run_function`) on the same inputs: same dtype and shape, floats within
rtol 1e-5 / atol 1e-6 (f32) or rtol 1e-10 (f64), integers and booleans exactly.
Inputs include the awkward values (zeros, negatives under log and sqrt, NaN under
maximum, overflowing integers), since IEEE specials and wrapping are semantics too.
Then seeded random fused graphs, random placements over cpu:0 and cpu:1 (against
the single-device interpreter run), the runtime's feed and receive checks, and
the `dflow compile` / compiled `dflow run` command line.
"""

from __future__ import annotations

import os
import re
import shutil
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from cli_support import ROOT, run_dflow
from graphgen import random_graph
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType

from dflow.backend.numba.module import emit_modules
from dflow.dialects import df
from dflow.dialects.devices import DeviceList
from dflow.driver.compilation import compiler
from dflow.driver.compilation.compiler import compile_module, compiled_program, write_modules
from dflow.driver.compilation.timing import Timings
from dflow.driver.errors import DflowError
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import parse_module
from dflow.frontend import Graph, Tensor, addn, avg_pool2d, concat, conv2d, max_pool2d, select
from dflow.frontend.builder import element_type
from dflow.interpreters.df import run_function
from dflow.runtime import LoadedProgram, ProgramError, load_program
from dflow.runtime.library import cpu as cpu_library
from dflow.runtime.library.blas import SGEMM

Array = NDArray[Any]
Body = Callable[..., dict[str, Tensor]]

NAMES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.bool_): "i1",
}
DTYPES = {name: dtype for dtype, name in NAMES.items()}
FLOATS = ("f32", "f64")
INTEGERS = ("i32", "i64")
NUMBERS = (*FLOATS, *INTEGERS)
TOLERANCE = {np.dtype(np.float32): (1e-5, 1e-6), np.dtype(np.float64): (1e-10, 1e-12)}


# ----------------------------------------------------------------------------- helpers


def build(arrays: Sequence[Array], body: Body) -> tuple[ModuleOp, list[str]]:
    """`@main` over one argument per array, returning `body(graph, *arguments)`'s values;
    also the results' names (for messages)."""
    graph = Graph("main")
    arguments = [
        graph.input(f"a{i}", array.shape, NAMES[array.dtype]) for i, array in enumerate(arrays)
    ]
    results = body(graph, *arguments)
    graph.output(*results.values())
    return graph.module(), list(results)


LOADED: list[LoadedProgram] = []


def compile_to(module: ModuleOp, directory: Path, devices: str | None = None) -> LoadedProgram:
    """`module` compiled (in place) into `directory` and loaded."""
    sources = compile_module(module, None if devices is None else DeviceList.parse(devices))
    write_modules(sources, directory)
    program = load_program(directory)
    LOADED.append(program)
    return program


DECLARED: dict[int, set[tuple[Any, ...]]] = {}
"""The argument types declared for each kernel dispatcher (by `id`) by every program
loaded so far: a kernel in several programs, or for several dtypes (its text is the
same), is one dispatcher (`runtime/kernel_cache.py`)."""


@pytest.fixture(autouse=True)
def kernels_typed_as_declared() -> Iterator[None]:
    """After each test, every kernel its programs ran was called only with types some
    program's `KERNEL_ARGUMENTS` declares for it (C-contiguous arrays of that dtype
    and rank), which is what the runtime's warm start loads from the cache: a wrong
    entry would leave numba compiling a specialization nobody declared."""
    LOADED.clear()
    yield
    kernels: list[tuple[str, Any]] = []
    for program in LOADED:
        for part in program.parts:
            declared: dict[str, list[tuple[str, int]]] = getattr(
                part.module, "KERNEL_ARGUMENTS", {}
            )
            for name, arguments in declared.items():
                dispatcher = getattr(part.module, name)
                expected = tuple(
                    numba.types.Array(numba.from_dtype(np.dtype(d)), r, "C") for d, r in arguments
                )
                DECLARED.setdefault(id(dispatcher), set()).add(expected)
                kernels.append((f"{part.device} {name}", dispatcher))
    for name, dispatcher in kernels:
        called = set(dispatcher.signatures)
        assert called <= DECLARED[id(dispatcher)], f"{name}: {called} not declared"


def assert_same(
    actual: Sequence[Any], expected: Sequence[Any], names: Sequence[str], f32_atol: float = 1e-6
) -> None:
    """Same dtypes and shapes; floats close (`f32_atol` for sums whose terms cancel)."""
    assert len(actual) == len(expected) == len(names)
    for name, result, want in zip(names, actual, expected, strict=True):
        got = np.asarray(result)
        assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, expected {want.dtype}"
        assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
        if want.dtype.kind == "f":
            rtol, atol = TOLERANCE[want.dtype]
            atol = max(atol, f32_atol) if want.dtype == np.float32 else atol
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


def check(
    directory: Path, arrays: Sequence[Array], body: Body, f32_atol: float = 1e-6
) -> LoadedProgram:
    """Compiled `body` over `arrays` equals the interpreter; returns the program."""
    module, names = build(arrays, body)
    expected = run_function(module, "main", arrays)
    program = compile_to(module, directory)
    assert_same(program.run("main", arrays), expected, names, f32_atol)
    return program


def normal(rng: np.random.Generator, shape: Sequence[int], dtype: str, scale: float = 2.0) -> Array:
    """Seeded values of `dtype`: scaled normal floats, integers in [-10, 10), fair booleans."""
    if dtype in FLOATS:
        return (rng.standard_normal(shape) * scale).astype(DTYPES[dtype])
    if dtype == "i1":
        return rng.random(shape) < 0.5
    return rng.integers(-10, 10, shape).astype(DTYPES[dtype])


# ----------------------------------------------------------------------------- elementwise

UNARY_NUMBERS: dict[str, Callable[[Tensor], Tensor]] = {
    "neg": lambda x: -x,
    "abs": abs,
    "square": lambda x: x.square(),
    "relu": lambda x: x.relu(),
    "identity": lambda x: x.identity(),
}
UNARY_FLOATS: dict[str, Callable[[Tensor], Tensor]] = {
    "reciprocal": lambda x: x.reciprocal(),
    "exp": lambda x: x.exp(),
    "log": lambda x: x.log(),
    "sqrt": lambda x: x.sqrt(),
    "rsqrt": lambda x: x.rsqrt(),
    "tanh": lambda x: x.tanh(),
    "erf": lambda x: x.erf(),
    "sigmoid": lambda x: x.sigmoid(),
}
BINARY_NUMBERS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": lambda a, b: a.maximum(b),
    "minimum": lambda a, b: a.minimum(b),
}
BINARY_FLOATS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
}
COMPARES: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b,
    "less": lambda a, b: a < b,
    "less_equal": lambda a, b: a <= b,
    "equal": lambda a, b: a.equal(b),
}


@pytest.mark.parametrize("dtype", NUMBERS)
def test_unary_ops(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(1)
    x = normal(rng, (4, 8), dtype)
    if dtype in FLOATS:
        # zero, a negative zero, large magnitudes (exp overflows, sigmoid saturates)
        x.flat[:5] = [0.0, -0.0, 100.0, -100.0, 1e-3]
    else:
        x.flat[:3] = [0, 70000, -70001]  # square wraps in i32
    positive = np.abs(normal(rng, (4, 8), dtype)) + 0.1 if dtype in FLOATS else x

    def body(g: Graph, x: Tensor, p: Tensor) -> dict[str, Tensor]:
        results = {name: op(x) for name, op in UNARY_NUMBERS.items()}
        results["scalar_neg"] = -g.constant(np.asarray(3, DTYPES[dtype]))
        if dtype in FLOATS:
            for name, op in UNARY_FLOATS.items():
                results[name] = op(x)  # outside the domain: NaN and inf are results too
                results[f"{name}_positive"] = op(p)
        return results

    check(tmp_path, [x, positive], body)


@pytest.mark.parametrize("dtype", NUMBERS)
def test_binary_ops_broadcast(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(2)
    x = normal(rng, (4, 8), dtype)
    y = normal(rng, (4, 1), dtype)
    z = normal(rng, (1, 8), dtype)
    s = normal(rng, (), dtype)
    v = normal(rng, (8,), dtype)
    if dtype in FLOATS:
        x.flat[:3] = [np.nan, 0.0, -0.0]  # NaN through maximum/minimum, zero divisors
        z.flat[0] = 0.0

    def body(g: Graph, x: Tensor, y: Tensor, z: Tensor, s: Tensor, v: Tensor) -> dict[str, Tensor]:
        ops = BINARY_NUMBERS | (BINARY_FLOATS if dtype in FLOATS else {})
        results: dict[str, Tensor] = {}
        for name, op in ops.items():
            results[f"{name}(4x1,1x8)"] = op(y, z)
            results[f"{name}(scalar,4x8)"] = op(s, x)
            results[f"{name}(4x8,8)"] = op(x, v)
        if dtype in FLOATS:
            results["pow(positive,4x1)"] = (abs(x) + 0.5) ** y
            results["pow(4x8,3)"] = x ** g.constant(np.asarray(3.0, DTYPES[dtype]))
        return results

    check(tmp_path, [x, y, z, s, v], body)


@pytest.mark.parametrize("dtype", (*NUMBERS, "i1"))
def test_comparisons(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = normal(rng, (4, 8), dtype)
    y = normal(rng, (4, 1), dtype)
    z = normal(rng, (1, 8), dtype)
    s = normal(rng, (), dtype)
    x[1] = x[0]  # ties, so equal and the *_equal forms see true cases
    if dtype in FLOATS:
        x.flat[5] = np.nan

    def body(g: Graph, x: Tensor, y: Tensor, z: Tensor, s: Tensor) -> dict[str, Tensor]:
        results: dict[str, Tensor] = {}
        rolled = concat([x[1:4], x[0:1]], 0)
        for name, op in COMPARES.items():
            results[f"{name}(4x1,1x8)"] = op(y, z)
            results[f"{name}(4x8,rows rolled)"] = op(x, rolled)
            if dtype in ("f32", "i1"):  # the same kernels at the other types
                results[f"{name}(4x8,scalar)"] = op(x, s)
                results[f"{name}(4x8,itself)"] = op(x, x)
        return results

    check(tmp_path, [x, y, z, s], body)


def test_integer_arithmetic_wraps_inside_fused_kernels(tmp_path: Path) -> None:
    """An i32 product that overflows must wrap before the next op of its kernel sees it."""
    x = np.array([[70000, -70001, 3, 46341], [65536, 2, -65536, 1]], np.int32)
    big = np.array([[2**40 + 3, -(2**62)], [2**62, 5]], np.int64)

    def body(g: Graph, x: Tensor, big: Tensor) -> dict[str, Tensor]:
        square = x * x
        return {
            "i32 square > 0": square > 0,
            "i32 square + 1": square + 1,
            "i32 (x*x*x) max": (square * x).max([1]),
            "i32 sum of squares": square.sum(),
            "i64 big*4 < 0": (big * 4) < 0,
            "i64 big+big": big + big,
        }

    check(tmp_path, [x, big], body)


# ----------------------------------------------------------------------------- select, cast, addn


def test_select_broadcasts(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    arrays = [
        rng.random((4, 1)) < 0.5,
        normal(rng, (1, 8), "f32"),
        normal(rng, (), "f32"),
        normal(rng, (4, 8), "i64"),
        rng.random((4, 8)) < 0.5,
        rng.random((8,)) < 0.5,
    ]

    def body(
        g: Graph, c: Tensor, a: Tensor, s: Tensor, i: Tensor, b: Tensor, bv: Tensor
    ) -> dict[str, Tensor]:
        return {
            "select(4x1,1x8,scalar)": select(c, a, s),
            "select(compare,i,-i)": select(i > 0, i, -i),
            "select(4x8,scalar i64,4x8)": select(b, g.constant(np.asarray(7, np.int64)), i),
            "select on i1 values": select(c, b, bv),
        }

    check(tmp_path, arrays, body)


def test_cast_between_all_element_types(tmp_path: Path) -> None:
    floats = np.array([[0.0, -0.0, 0.3, -0.7, 2.5, -2.5], [1e3, -1e3, 7.99, -7.99, 1.0, 65.5]])
    arrays = [
        floats.astype(np.float32),
        floats,
        np.array([[0, 1, -1, 7, -8, 100], [2**31 - 1, -(2**31), 5, 0, 3, -3]], np.int32),
        np.array([[0, 1, -1, 2**40 + 5, -(2**40) - 7, 100], [2**33, 3, 0, -5, 9, -9]], np.int64),
        np.array([[True, False, True, True, False, False]] * 2),
    ]
    elements = ("f32", "f64", "i32", "i64", "i1")

    def body(g: Graph, *values: Tensor) -> dict[str, Tensor]:
        return {
            f"{source} -> {target}": value.cast(target)
            for source, value in zip(elements, values, strict=True)
            for target in elements
        }

    check(tmp_path, arrays, body)


@pytest.mark.parametrize("dtype", NUMBERS)
def test_addn(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(5)
    arrays = [normal(rng, (3, 5), dtype) for _ in range(4)]

    def body(g: Graph, a: Tensor, b: Tensor, c: Tensor, d: Tensor) -> dict[str, Tensor]:
        return {
            "addn(a)": addn([a]),
            "addn(a,b)": addn([a, b]),
            "addn(a,b,c,d)": addn([a, b, c, d]),
            "addn(a,a,a)": addn([a, a, a]),
        }

    check(tmp_path, arrays, body)


# ----------------------------------------------------------------------------- contractions


@pytest.mark.parametrize("dtype", NUMBERS)
def test_matmul(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(6)
    arrays = [
        normal(rng, (3, 4), dtype),
        normal(rng, (4, 5), dtype),
        normal(rng, (4, 3), dtype),
        normal(rng, (5, 4), dtype),
        normal(rng, (2, 3, 4), dtype),
        normal(rng, (2, 4, 5), dtype),
        normal(rng, (2, 2, 4, 3), dtype),
        normal(rng, (2, 2, 5, 4), dtype),
    ]

    def body(
        g: Graph, a: Tensor, b: Tensor, at: Tensor, bt: Tensor, *batched: Tensor
    ) -> dict[str, Tensor]:
        a3, b3, a4t, b4t = batched
        return {
            "a@b": a @ b,
            "a.T@b": at.matmul(b, transpose_a=True),
            "a@b.T": a.matmul(bt, transpose_b=True),
            "a.T@b.T": at.matmul(bt, transpose_a=True, transpose_b=True),
            "batched": a3 @ b3,
            "batched 4-D, both transposed": a4t.matmul(b4t, transpose_a=True, transpose_b=True),
            "matmul then add (fused)": (a @ b) + b[0:1, :],
            "empty inner dimension (zeros)": a[:, 0:0] @ b[0:0, :],
            "no rows": a[0:0, :] @ b,
        }

    check(tmp_path, arrays, body)


CONV_OPTIONS: dict[str, dict[str, tuple[int, ...]]] = {
    "plain": {},
    "strides": {"strides": (2, 1)},  # the input's last row is in no window
    "pads": {"pads": (1, 0, 2, 1)},
    "dilations": {"dilations": (2, 1)},
    "all": {"strides": (2, 2), "pads": (1, 2, 0, 1), "dilations": (1, 2)},
}
# Each kernel that calls a library routine costs ~1 s to compile, so f64 (the same
# routines at another type) checks fewer variants.
CONV_VARIANTS = {
    "f32": {
        "conv2d": ("plain", "strides", "pads", "dilations", "all"),
        "bias": ("strides", "all"),
        "gradients": ("plain", "strides", "all"),
    },
    "f64": {"conv2d": (), "bias": ("all",), "gradients": ("all",)},
}


def conv(x: Tensor, w: Tensor, bias: Tensor | None, options: dict[str, tuple[int, ...]]) -> Tensor:
    return conv2d(
        x,
        w,
        bias,
        strides=options.get("strides", (1, 1)),
        pads=options.get("pads", (0, 0, 0, 0)),
        dilations=options.get("dilations", (1, 1)),
    )


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d_and_its_gradients(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(7)
    x = normal(rng, (2, 3, 8, 7), dtype)
    w = normal(rng, (4, 3, 3, 2), dtype)
    bias = normal(rng, (4,), dtype)
    w1 = normal(rng, (2, 3, 1, 1), dtype)
    input_type = TensorType(element_type(dtype), x.shape)
    filter_type = TensorType(element_type(dtype), w.shape)
    variants = CONV_VARIANTS[dtype]

    def body(g: Graph, x: Tensor, w: Tensor, bias: Tensor, w1: Tensor) -> dict[str, Tensor]:
        results: dict[str, Tensor] = {}
        if dtype == "f32":
            results["1x1"] = conv2d(x, w1)
        for name in variants["conv2d"]:
            results[name] = conv(x, w, None, CONV_OPTIONS[name])
        for name in variants["bias"]:
            results[f"{name}+bias"] = conv(x, w, bias, CONV_OPTIONS[name])
        for name in variants["gradients"]:
            options = CONV_OPTIONS[name]
            y = results[name] if name in results else conv(x, w, None, options)
            dy = (y * 0.5).tanh()  # an output gradient of the right shape
            results[f"{name} grad_input"] = g.emit(
                df.Conv2DGradInputOp(dy.value, w.value, input_type, **options)
            )
            results[f"{name} grad_filter"] = g.emit(
                df.Conv2DGradFilterOp(x.value, dy.value, filter_type, **options)
            )
        return results

    # sums of ~20 products of size ~4 that cancel: f32 rounding reaches ~1e-5
    check(tmp_path, [x, w, bias, w1], body, f32_atol=2e-5)


POOL_OPTIONS: dict[str, dict[str, tuple[int, ...]]] = {
    "3x3/1 pad 1": {"kernel": (3, 3), "pads": (1, 1, 1, 1)},
    "2x2/2": {"kernel": (2, 2), "strides": (2, 2)},
    "3x2/(2,1) pads (0,1,2,0)": {"kernel": (3, 2), "strides": (2, 1), "pads": (0, 1, 2, 0)},
}


@pytest.mark.parametrize("dtype", FLOATS)
def test_pools_and_their_gradients(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(8)
    x = normal(rng, (2, 2, 7, 6), dtype)
    ties = rng.integers(0, 3, (2, 2, 7, 6)).astype(DTYPES[dtype])  # max ties: first wins
    negative = -np.abs(x) - 1  # padding never wins a max
    with_nan = x.copy()
    with_nan[0, 1, 3, 2] = np.nan  # a NaN in a window wins it, as in np.max
    input_type = TensorType(element_type(dtype), x.shape)
    options_used = list(POOL_OPTIONS) if dtype == "f32" else list(POOL_OPTIONS)[-1:]

    def body(
        g: Graph, x: Tensor, ties: Tensor, negative: Tensor, with_nan: Tensor
    ) -> dict[str, Tensor]:
        results: dict[str, Tensor] = {"max with a NaN": max_pool2d(with_nan, (3, 3))}
        for name in options_used:
            options = POOL_OPTIONS[name]
            inputs = [("", x)] + (
                [(" ties", ties), (" negative", negative)] if name == options_used[0] else []
            )
            for label, value in inputs:
                pooled = max_pool2d(value, **options)
                results[f"max {name}{label}"] = pooled
                results[f"max grad {name}{label}"] = g.emit(
                    df.MaxPool2DGradOp(value.value, pooled.tanh().value, **options)
                )
            averaged = avg_pool2d(x, **options)
            results[f"avg {name}"] = averaged
            results[f"avg grad {name}"] = g.emit(
                df.AvgPool2DGradOp(averaged.tanh().value, input_type, **options)
            )
        return results

    check(tmp_path, [x, ties, negative, with_nan], body)


# ----------------------------------------------------------------------------- shape ops


SHAPE_OPS_AT_EVERY_TYPE = (
    "transpose (2,0,1)",
    "reshape scalar to 1x1",
    "broadcast 3x1 to 2x3x4",
    "slice",
    "concat axis 1 of three",
    "concat of reshapes",
)


@pytest.mark.parametrize("dtype", (*NUMBERS, "i1"))
def test_shape_ops(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(9)
    arrays = [
        normal(rng, (2, 3, 4), dtype),
        normal(rng, (3, 1), dtype),
        normal(rng, (), dtype),
        normal(rng, (2, 5, 4), dtype),
    ]

    def body(g: Graph, x: Tensor, col: Tensor, s: Tensor, w: Tensor) -> dict[str, Tensor]:
        makers: dict[str, Callable[[], Tensor]] = {
            "transpose (2,0,1)": lambda: x.transpose([2, 0, 1]),
            "transpose 2-D": lambda: col.T,
            "transpose identity perm": lambda: x.transpose([0, 1, 2]),
            "reshape 3-D to 2-D": lambda: x.reshape([6, 4]),
            "reshape to 4-D": lambda: x.reshape([1, 4, 3, 2]),
            "reshape scalar to 1x1": lambda: s.reshape([1, 1]),
            "reshape 3x1 to 3": lambda: col.reshape([3]),
            "broadcast scalar": lambda: s.broadcast_to([2, 3]),
            "broadcast 3x1 to 2x3x4": lambda: col.broadcast_to([2, 3, 4]),
            "broadcast same shape": lambda: x.broadcast_to([2, 3, 4]),
            "slice": lambda: x[0:2, 1:3, 1:4],
            "slice middle": lambda: x[1:2, 1:2, 2:3],
            "slice whole": lambda: x[:, :, :],
            "concat axis 0": lambda: concat([x, x], 0),
            "concat axis 1 of three": lambda: concat([x, x[:, 0:1, :], x[:, 1:3, :]], 1),
            "concat axis -1 (2)": lambda: concat([x, x[:, :, 0:1]], -1),
            "concat one": lambda: concat([x], 1),
            "concat different sizes": lambda: concat([x, w], 1),
            "transpose of slice": lambda: x[:, 1:3, :].transpose([1, 2, 0]),
            "concat of reshapes": lambda: concat([x.reshape([6, 4]), w.reshape([10, 4])], 0),
        }
        if dtype != "i1":
            makers["identity"] = x.identity
        if dtype not in ("f32", "i1"):  # the same kernels at another type: a few suffice
            makers = {k: v for k, v in makers.items() if k in SHAPE_OPS_AT_EVERY_TYPE}
        return {name: make() for name, make in makers.items()}

    check(tmp_path, arrays, body)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "one-kernel-per-op"])
def test_reshapes_of_arena_values_are_views(tmp_path: Path, fused: bool) -> None:
    """A reshape of a computed value is a view of its bytes (no kernel): the value
    stays intact while the view is read, even where an elementwise op would
    otherwise overwrite it in place (unfused, `-a` is `a`'s last reader and a
    candidate); views of views, of 0-d values, and a view read beside its source."""
    rng = np.random.default_rng(21)
    arrays = [normal(rng, (4, 6), "f32"), normal(rng, (), "f32")]

    def body(g: Graph, x: Tensor, s: Tensor) -> dict[str, Tensor]:
        a = x.exp()
        r = a.reshape([6, 4])
        n = -a
        flat = r.reshape([24]).reshape([2, 12])
        t = r.sqrt() + n.reshape([6, 4])
        scalar = (s * 2.0).reshape([1, 1])
        return {
            "t": t * 1.0,
            "flat": flat + 0.5,
            "view beside source": (a + a.reshape([1, 4, 6])).reshape([4, 6]),
            "scalar": scalar + scalar,
        }

    module, names = build(arrays, body)
    expected = run_function(module, "main", arrays)
    if fused:
        write_modules(compile_module(module), tmp_path)
    else:
        apply_pipeline(module, "df-bufferize,df-plan-buffers,df-lower-host")
        write_modules({"cpu_0.py": emit_modules(module)["cpu:0"]}, tmp_path)
    program = load_program(tmp_path)
    LOADED.append(program)
    assert_same(program.run("main", arrays), expected, names)
    kernels = program.parts[0].module.KERNEL_ARGUMENTS
    # only the returned "view beside source" reshape copies (into the caller's output)
    assert sum(name.startswith("reshape") for name in kernels) == 1, sorted(kernels)


def test_zero_size_slices(tmp_path: Path) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def body(g: Graph, x: Tensor) -> dict[str, Tensor]:
        empty = g.emit(df.SliceOp(x.value, [1, 0], [1, 4]))
        return {
            "empty slice": empty,
            "concat with empty": concat([x, empty], 0),
            "sum of empty": empty.sum([0]),
            "exp of empty": empty.exp(),
        }

    check(tmp_path, [x], body)


# ----------------------------------------------------------------------------- reductions

REDUCE_AXES: tuple[tuple[int, ...] | None, ...] = (
    None,
    (0,),
    (1,),
    (-1,),
    (0, 1),  # leading axes: summed into the result row by row
    (0, 2),
    (2, 0, 1),
)


@pytest.mark.parametrize("dtype", NUMBERS)
def test_reductions(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(10)
    x = normal(rng, (2, 3, 4), dtype)
    n = normal(rng, (3, 4), dtype)
    if dtype in FLOATS:
        n.flat[5] = np.nan  # reduce_max propagates NaN
    s = normal(rng, (), dtype)
    negative = -np.abs(normal(rng, (5,), dtype)) - 1  # max starts below every element

    def body(g: Graph, x: Tensor, n: Tensor, s: Tensor, neg: Tensor) -> dict[str, Tensor]:
        results: dict[str, Tensor] = {}
        makers = {"sum": x.sum, "max": x.max} | ({"mean": x.mean} if dtype in FLOATS else {})
        for name, reduce in makers.items():
            for turn, axes in enumerate(REDUCE_AXES):
                keepdims = (turn + len(name)) % 2 == 1  # each reduction sees both forms
                results[f"{name} axes={axes} keepdims={keepdims}"] = reduce(axes, keepdims)
        results["max with NaN, axis 1"] = n.max([1])
        results["max with NaN, axis 0"] = n.max([0])
        results["fused square, summed over the leading axes"] = (x * x).sum([0, 1])
        results["max of negatives"] = neg.max()
        results["sum of a scalar"] = s.sum()
        results["max of a scalar, keepdims"] = s.max(None, True)
        results["sum of 3 axes to a scalar then add"] = x.sum() + s
        return results

    check(tmp_path, [x, n, s, negative], body)


@pytest.mark.parametrize("dtype", NUMBERS)
def test_long_rows_reduce_in_lanes(tmp_path: Path, dtype: str) -> None:
    """Rows of 16 and 37 (two chunks of eight lanes; four and a tail of five): single-axis
    reductions and softmax go through `reduce_in_lanes`. A NaN in a middle lane and in
    the tail must reach the maximum; the row's largest value sits in the last lane."""
    rng = np.random.default_rng(12)
    exact = normal(rng, (3, 16), dtype)
    long = normal(rng, (4, 37), dtype)
    if dtype in FLOATS:
        long[1, 13] = np.nan  # lane 5 of the second chunk
        long[2, 35] = np.nan  # the tail
        long[3, 31] = 50  # lane 7: the maximum
    wide = normal(rng, (37, 3), dtype)

    def body(g: Graph, exact: Tensor, long: Tensor, wide: Tensor) -> dict[str, Tensor]:
        results: dict[str, Tensor] = {}
        makers = {"sum": Tensor.sum, "max": Tensor.max}
        makers |= {"mean": Tensor.mean} if dtype in FLOATS else {}
        for name, reduce in makers.items():
            results[f"{name} of rows of 16"] = reduce(exact, [1])
            results[f"{name} of rows of 37"] = reduce(long, [-1], True)
            results[f"{name} down a column of 37"] = reduce(wide, [0])
            results[f"{name} of a fused square"] = reduce(long * long, [1])
        if dtype in FLOATS:
            results["softmax of rows of 16"] = exact.softmax(1)
            results["softmax of rows of 37"] = long.softmax(1)
        return results

    check(tmp_path, [exact, long, wide], body)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_on_every_axis(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(11)
    x = normal(rng, (2, 3, 4), dtype)
    big = (normal(rng, (3, 5), dtype) * 300).astype(DTYPES[dtype])  # never overflows
    v = normal(rng, (6,), dtype)

    def body(g: Graph, x: Tensor, big: Tensor, v: Tensor) -> dict[str, Tensor]:
        results = {f"axis {axis}": x.softmax(axis) for axis in (0, 1, 2, -1, -3)}
        results["large values, axis 0"] = big.softmax(0)
        results["large values, axis 1"] = big.softmax(1)
        results["1-D"] = v.softmax()
        results["softmax of a product"] = (big * big).softmax(1)
        return results

    check(tmp_path, [x, big, v], body)


# ----------------------------------------------------------------------------- constants, results


def test_constants_and_returned_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    x = normal(rng, (2, 3), "f32")

    def body(g: Graph, x: Tensor) -> dict[str, Tensor]:
        dense = g.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        exp = x.exp()
        return {
            "returned dense f32 constant": dense,
            "returned splat f64": g.constant(np.full((2, 2), 1.5)),
            "returned i32 constant": g.constant(np.array([1, -2, 3], np.int32)),
            "returned i64 scalar": g.constant(np.asarray(2**40, np.int64)),
            "returned i1 constant": g.constant(np.array([[True, False], [False, True]])),
            "constant used by an op": x + dense,
            "splat used by an op": x * g.constant(np.full((1, 3), -2.0, np.float32)),
            "an argument returned": x,
            "the same argument again": x,
            "a reshaped argument": x.reshape([3, 2]),
            "a value returned": exp,
            "the same value again": exp,
            "the same constant again": dense,
            "constant-only op": dense * dense,
        }

    check(tmp_path, [x], body)


def test_a_program_runs_again_with_new_inputs(tmp_path: Path) -> None:
    """The arena is kept between runs; results of one run are not views into it."""
    rng = np.random.default_rng(13)
    first = [normal(rng, (8, 16), "f32"), normal(rng, (16, 4), "f32")]
    second = [normal(rng, (8, 16), "f32"), normal(rng, (16, 4), "f32")]

    def body(g: Graph, x: Tensor, w: Tensor) -> dict[str, Tensor]:
        h = (x @ w).relu()
        return {"h": h, "softmax": h.softmax(), "sum": h.sum([0])}

    module, names = build(first, body)
    want_first = run_function(module, "main", first)
    want_second = run_function(module, "main", second)
    program = compile_to(module, tmp_path)
    got_first = program.run("main", first)
    got_second = program.run("main", second)
    assert_same(got_first, want_first, names)
    assert_same(got_second, want_second, names)


def test_parallel_kernels(tmp_path: Path) -> None:
    """`parallel=True`: the outer loop of each nest is a `prange`, except a single trip
    (a scalar result), which numba's parfors cannot store; 0-d arrays are read with
    `.item()`, since parfors pass them to a `prange` body as scalars."""
    rng = np.random.default_rng(14)
    arrays = [normal(rng, (8, 16), "f32"), normal(rng, (16, 4), "f32"), normal(rng, (3, 5), "f64")]

    def body(g: Graph, x: Tensor, w: Tensor, v: Tensor) -> dict[str, Tensor]:
        h = (x @ w).relu()
        return {
            "h": h,
            "softmax": h.softmax(0),
            "loss": h.mean(),
            "sum keepdims": v.sum([0], keepdims=True),
            "max to scalar": (v * v).max(),
            "elementwise": (v.exp() - 1.0) * v,
            "scaled by a scalar": v * v.sum(),  # a prange reading a 0-d array
        }

    module, names = build(arrays, body)
    expected = run_function(module, "main", arrays)
    sources = compile_module(module, parallel=True)
    assert "numba.prange" in sources["cpu_0.py"]
    assert ".item()" in sources["cpu_0.py"]
    write_modules(sources, tmp_path)
    assert_same(load_program(tmp_path).run("main", arrays), expected, names)


CALLS = """
func.func @helper(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = df.exp %s : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e, %a : tensor<4xf32>, tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:2 = func.call @helper(%x, %y)
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %q:2 = func.call @helper(%r#0, %x)
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %q#0, %r#1, %q#1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
"""


def test_calls_are_inlined_and_every_function_is_an_entry(tmp_path: Path) -> None:
    module = parse_module(CALLS, "calls.mlir")
    inputs = [np.linspace(-1, 1, 4, dtype=np.float32), np.full(4, 0.5, np.float32)]
    expected = {entry: run_function(module, entry, inputs) for entry in ("main", "helper")}
    program = compile_to(module, tmp_path)
    for entry, want in expected.items():
        assert_same(program.run(entry, inputs), want, [f"{entry} {i}" for i in range(len(want))])


@pytest.mark.parametrize("devices", [None, "cpu:0,cpu:1"])
def test_a_gradient_program(tmp_path: Path, devices: str | None) -> None:
    """`df-autodiff`'s @main_grad of the MLP (matmul with transposes, reductions,
    broadcasting gradients), compiled, equals the interpreter."""
    module = parse_module((ROOT / "examples" / "mlp.mlir").read_text(), "mlp.mlir")
    apply_pipeline(module, "df-autodiff{func=main wrt=1,2,3,4}")
    inputs = random_inputs(next(iter(module.ops)), 4)  # type: ignore[arg-type]
    expected = run_function(module, "main_grad", inputs)
    program = compile_to(module, tmp_path, devices)
    names = ["loss", "p", "d w1", "d b1", "d w2", "d b2"]
    assert_same(program.run("main_grad", inputs), expected, names)


# ----------------------------------------------------------------------------- real programs

TWO_CPUS = [None, "cpu:0,cpu:1"]

UNUSED_VALUES = """
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %a = df.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.neg %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.softmax %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = df.matmul %x, %w {df.device = "cpu:1"}
      : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = df.relu %m {df.device = "cpu:1"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = df.reduce_sum %r {axes = array<i64: 1>, df.device = "cpu:1"}
      : (tensor<4x3xf32>) -> tensor<4xf32>
  %y = df.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = df.tanh %y {df.device = "cpu:1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = df.reduce_max %c {axes = array<i64: 1>, df.device = "cpu:1"}
      : (tensor<4x8xf32>) -> tensor<4xf32>
  %u = df.sigmoid %k : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y, %k : tensor<4x8xf32>, tensor<4xf32>
}
"""


def check_text(
    directory: Path, text: str, devices: str | None = None, entries: Sequence[str] = ("main",)
) -> LoadedProgram:
    """The program `text`, compiled for `devices`, equals the interpreter on seeded
    inputs for each of `entries`; returns the program."""
    module = parse_module(text, "program.mlir")
    runs: list[tuple[str, list[Array], Sequence[Any]]] = []
    for entry in entries:
        function = next(f for f in module.ops if getattr(f, "sym_name", None) == StringAttr(entry))
        inputs = random_inputs(function, 5)  # type: ignore[arg-type]
        runs.append((entry, inputs, run_function(module, entry, inputs)))
    program = compile_to(module, directory, devices)
    for entry, inputs, expected in runs:
        names = [f"@{entry} result {i}" for i in range(len(expected))]
        assert_same(program.run(entry, inputs, timeout=20), expected, names)
    return program


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_unused_values_and_groups_are_dropped(tmp_path: Path, devices: str | None) -> None:
    """Two chained unused elementwise ops (a fused group with no results), an unused
    softmax, a whole unused matmul group and an unused sigmoid of a value received
    from another device: the lowering drops them (`df-prune` before `df-fuse`), so
    the program compiles, launches no kernel for them, and still equals the
    interpreter, on the one device the pins name and on cpu:0,cpu:1."""
    module = parse_module(UNUSED_VALUES, "unused.mlir")
    inputs = random_inputs(next(iter(module.ops)), 3)  # type: ignore[arg-type]
    pruned = apply_pipeline(module.clone(), "df-inline,df-prune")
    assert_same(
        run_function(pruned, "main", inputs), run_function(module, "main", inputs), ["y", "k"]
    )
    program = check_text(tmp_path, UNUSED_VALUES, devices)
    kernels = [name for part in program.parts for name in part.module.KERNEL_ARGUMENTS]
    assert not [k for k in kernels if re.match(r"(softmax|neg|sigmoid|fused_exp)", k)], kernels
    # Without devices the pins name only cpu:1, so every op runs there and relu, tanh
    # and reduce_max make one group; on cpu:0,cpu:1 relu stays on cpu:0 (two kernels).
    assert len(kernels) == (1 if devices is None else 2), kernels


RETURNED = """
func.func @main(%x: tensor<2x3xf32>, %n: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>,
    tensor<2x3xf32>, tensor<3xi32>, tensor<2xf64>, tensor<2xf64>, tensor<i1>, tensor<2x3xf32>) {
  %c = df.constant dense<[2.0, -1.5]> : tensor<2xf64>
  %t = df.constant dense<true> : tensor<i1>
  %y = df.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = df.neg %y {df.device = "cpu:1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y, %y, %x, %n, %c, %c, %t, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
      tensor<3xi32>, tensor<2xf64>, tensor<2xf64>, tensor<i1>, tensor<2x3xf32>
}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_results_returned_twice_arguments_and_constants(
    tmp_path: Path, devices: str | None
) -> None:
    """A value returned twice, a returned argument and a returned constant (twice),
    and a result computed from a value sent to another device."""
    program = check_text(tmp_path, RETURNED, devices)
    inputs = random_inputs(next(iter(parse_module(RETURNED, "r.mlir").ops)), 1)  # type: ignore[arg-type]
    kept = inputs[0].copy()
    program.run("main", inputs)[2][...] = 0  # the returned argument is a copy
    assert np.array_equal(inputs[0], kept)


NOTHING_USED = """
func.func @main(%x: tensor<4xf32>) {
  %a = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.softmax %a {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
func.func @only_constant() -> tensor<2xi64> {
  %c = df.constant dense<[3, -4]> : tensor<2xi64>
  func.return %c : tensor<2xi64>
}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_an_entry_that_returns_nothing_and_one_of_a_constant(
    tmp_path: Path, devices: str | None
) -> None:
    check_text(tmp_path, NOTHING_USED, devices, entries=("main", "only_constant"))


SEVERAL_FUNCTIONS = """
func.func @layer(%x: tensor<2x4xf64>, %w: tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>) {
  %m = df.matmul %x, %w : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %h = df.tanh %m : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %unused = df.exp %h : (tensor<2x4xf64>) -> tensor<2x4xf64>
  func.return %h, %x : tensor<2x4xf64>, tensor<2x4xf64>
}
func.func @main(%x: tensor<2x4xf64>, %w: tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>) {
  %a:2 = func.call @layer(%x, %w)
      : (tensor<2x4xf64>, tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>)
  %b:2 = func.call @layer(%a#0, %w)
      : (tensor<2x4xf64>, tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>)
  %s = df.add %b#0, %a#1 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  func.return %s, %b#1 : tensor<2x4xf64>, tensor<2x4xf64>
}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_several_functions_calling_each_other(tmp_path: Path, devices: str | None) -> None:
    """Calls inlined; the callee's unused value and returned argument, and the callee as
    an entry of its own."""
    check_text(tmp_path, SEVERAL_FUNCTIONS, devices, entries=("main", "layer"))


SIZE_ZERO = """
func.func @main(%x: tensor<0x8xf32>, %w: tensor<8x3xf32>, %v: tensor<3x0xf32>,
    %u: tensor<0x5xf32>, %r: tensor<1x8xf32>) -> (tensor<0x8xf32>, tensor<8xf32>, tensor<0xf32>,
    tensor<1x8xf32>, tensor<0x3xf32>, tensor<3x5xf32>, tensor<0x8xf32>, tensor<8xf32>,
    tensor<8x0xf32>, tensor<0x8xi1>) {
  %e = df.exp %x : (tensor<0x8xf32>) -> tensor<0x8xf32>
  %a = df.add %e, %r : (tensor<0x8xf32>, tensor<1x8xf32>) -> tensor<0x8xf32>
  %s = df.reduce_sum %a {axes = array<i64: 0>} : (tensor<0x8xf32>) -> tensor<8xf32>
  %m = df.reduce_max %a {axes = array<i64: 1>, df.device = "cpu:1"}
      : (tensor<0x8xf32>) -> tensor<0xf32>
  %k = df.reduce_mean %x {axes = array<i64: 0>, keepdims = true}
      : (tensor<0x8xf32>) -> tensor<1x8xf32>
  %p = df.matmul %x, %w : (tensor<0x8xf32>, tensor<8x3xf32>) -> tensor<0x3xf32>
  %q = df.matmul %v, %u {df.device = "cpu:1"}
      : (tensor<3x0xf32>, tensor<0x5xf32>) -> tensor<3x5xf32>
  %f = df.softmax %a : (tensor<0x8xf32>) -> tensor<0x8xf32>
  %t = df.transpose %a {perm = array<i64: 1, 0>} : (tensor<0x8xf32>) -> tensor<8x0xf32>
  %g = df.greater %a, %r : (tensor<0x8xf32>, tensor<1x8xf32>) -> tensor<0x8xi1>
  %c = df.reduce_sum %t {axes = array<i64: 1>} : (tensor<8x0xf32>) -> tensor<8xf32>
  func.return %a, %s, %m, %k, %p, %q, %f, %c, %t, %g : tensor<0x8xf32>, tensor<8xf32>,
      tensor<0xf32>, tensor<1x8xf32>, tensor<0x3xf32>, tensor<3x5xf32>, tensor<0x8xf32>,
      tensor<8xf32>, tensor<8x0xf32>, tensor<0x8xi1>
}
"""


@pytest.mark.filterwarnings("ignore:Mean of empty slice")  # NumPy's, in the interpreter
@pytest.mark.parametrize("devices", TWO_CPUS)
def test_size_zero_dimensions(tmp_path: Path, devices: str | None) -> None:
    """Size-0 axes through elementwise ops (broadcast against a size-1 axis), compares,
    reductions over and beside them (sums of nothing are 0), softmax, transpose and
    products with an empty outer or inner dimension (the latter all zeros)."""
    check_text(tmp_path, SIZE_ZERO, devices)


EMPTY_CONSTANT = """
func.func @main(%x: tensor<0x3xf32>, %y: tensor<1x3xf32>) -> (tensor<0x3xf32>, tensor<3xf32>) {
  %e = df.constant dense<> : tensor<0x3xf32>
  %a = df.add %x, %e : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
  %b = df.mul %a, %y : (tensor<0x3xf32>, tensor<1x3xf32>) -> tensor<0x3xf32>
  %s = df.reduce_sum %b {axes = array<i64: 0>} : (tensor<0x3xf32>) -> tensor<3xf32>
  func.return %b, %s : tensor<0x3xf32>, tensor<3xf32>
}
"""


def test_an_empty_constant_in_a_fused_group(tmp_path: Path) -> None:
    """Found by generated programs: an empty constant is a splat of nothing, and the
    group's kernel read its element 0 (an IndexError while lowering)."""
    check_text(tmp_path, EMPTY_CONSTANT)


def every_element_type(element: str) -> str:
    """A program over `element`: compare, select, transpose, casts to f64 and back,
    reshape, concat and slice, and for numbers also add, abs, reduce_max and matmul;
    results of each kind, an argument among them."""
    t, v = f"tensor<3x4x{element}>", f"tensor<4x{element}>"
    lines = [
        f"%g = df.greater_equal %x, %y : ({t}, {v}) -> tensor<3x4xi1>",
        f'%e = df.select %g, %x, %y {{df.device = "cpu:1"}} : (tensor<3x4xi1>, {t}, {v}) -> {t}',
        f"%p = df.transpose %e {{perm = array<i64: 1, 0>}} : ({t}) -> tensor<4x3x{element}>",
        f"%f = df.cast %p : (tensor<4x3x{element}>) -> tensor<4x3xf64>",
        "%r = df.reshape %f : (tensor<4x3xf64>) -> tensor<3x4xf64>",
        f"%k = df.cast %r : (tensor<3x4xf64>) -> {t}",
        f"%c = df.concat %e, %k {{axis = 0}} : ({t}, {t}) -> tensor<6x4x{element}>",
        "%h = df.slice %c {start = array<i64: 2, 0>, limit = array<i64: 5, 4>}"
        f" : (tensor<6x4x{element}>) -> {t}",
    ]
    results = {"%e": t, "%g": "tensor<3x4xi1>", "%x": t, "%p": f"tensor<4x3x{element}>"}
    results |= {"%r": "tensor<3x4xf64>", "%h": t}
    if element != "i1":
        lines += [
            f"%a = df.add %x, %y : ({t}, {v}) -> {t}",
            f'%b = df.abs %a {{df.device = "cpu:1"}} : ({t}) -> {t}',
            f"%s = df.reduce_max %b {{axes = array<i64: 0>}} : ({t}) -> {v}",
            f"%m = df.matmul %x, %a {{transpose_b = true}} : ({t}, {t}) -> tensor<3x3x{element}>",
        ]
        results |= {"%b": t, "%s": v, "%m": f"tensor<3x3x{element}>"}
    types = ", ".join(results.values())
    body = "\n  ".join(lines)
    return f"""
func.func @main(%x: {t}, %y: {v}) -> ({types}) {{
  {body}
  func.return {", ".join(results)} : {types}
}}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
@pytest.mark.parametrize("element", [*NUMBERS, "i1"])
def test_every_element_type(tmp_path: Path, element: str, devices: str | None) -> None:
    check_text(tmp_path, every_element_type(element), devices)


# ----------------------------------------------------------------------------- random graphs


@pytest.mark.parametrize("seed", range(6))
def test_random_fused_graphs(tmp_path: Path, seed: int) -> None:
    dtype = "f64" if seed % 2 == 0 else "f32"
    module = random_graph(seed, min_ops=30, dtype=dtype)
    main = next(iter(module.ops))
    inputs = random_inputs(main, seed)  # type: ignore[arg-type]
    expected = run_function(module, "main", inputs)
    program = compile_to(module, tmp_path)
    assert_same(program.run("main", inputs), expected, [f"out{i}" for i in range(len(expected))])


def place_on_cpus(module: ModuleOp, seed: int) -> None:
    """Every df op on cpu:0 or cpu:1 at random."""
    rng = np.random.default_rng(seed)
    for op in module.walk():
        if op.name.startswith("df."):
            op.attributes["df.device"] = StringAttr(str(rng.choice(["cpu:0", "cpu:1"])))


@pytest.mark.parametrize("seed", range(4))
def test_random_placements_over_two_cpus(tmp_path: Path, seed: int) -> None:
    dtype = "f64" if seed % 2 == 0 else "f32"
    module = random_graph(100 + seed, min_ops=30, dtype=dtype)
    main = next(iter(module.ops))
    inputs = random_inputs(main, seed)  # type: ignore[arg-type]
    expected = run_function(module, "main", inputs)
    place_on_cpus(module, seed)
    program = compile_to(module, tmp_path, devices="cpu:0,cpu:1")
    assert sorted(program.devices) == ["cpu:0", "cpu:1"]
    assert "rt.send(" in (tmp_path / "cpu_0.py").read_text() + (tmp_path / "cpu_1.py").read_text()
    names = [f"out{i}" for i in range(len(expected))]
    assert_same(program.run("main", inputs, timeout=20), expected, names)
    assert_same(program.run("main", inputs, timeout=20), expected, names)  # and again


# ----------------------------------------------------------------------------- runtime checks


@pytest.fixture(scope="module")
def small_program(tmp_path_factory: pytest.TempPathFactory) -> LoadedProgram:
    def body(g: Graph, x: Tensor, n: Tensor) -> dict[str, Tensor]:
        return {"y": x * n.cast("f32").sum()}

    arrays = [np.zeros((2, 3), np.float32), np.zeros((4,), np.int64)]
    module, _ = build(arrays, body)
    return compile_to(module, tmp_path_factory.mktemp("small"))


def test_results_kept_by_the_caller_are_never_overwritten(small_program: LoadedProgram) -> None:
    """Results are written into output arrays the caller owns: later runs must not
    touch one the caller, or a view of it, still holds."""
    x, n = np.ones((2, 3), np.float32), np.arange(4, dtype=np.int64)
    kept = small_program.run("main", [x, n])[0]
    view = small_program.run("main", [x * 2, n])[0][1:]
    later = [small_program.run("main", [x * k, n])[0] for k in (3, 4, 5)]
    np.testing.assert_array_equal(kept, np.full((2, 3), 6.0))
    np.testing.assert_array_equal(view, np.full((1, 3), 12.0))
    for k, result in zip((3, 4, 5), later, strict=True):
        np.testing.assert_array_equal(result, np.full((2, 3), 6.0 * k))
        assert not np.shares_memory(result, kept) and not np.shares_memory(result, view)


def test_a_dropped_result_array_is_reused(small_program: LoadedProgram) -> None:
    """Once the caller drops a result, the next run writes into the same array (no
    fresh memory, no page faults); a weak reference sees it survive in the pool."""
    x, n = np.ones((2, 3), np.float32), np.arange(4, dtype=np.int64)
    first = small_program.run("main", [x, n])[0]
    handle = weakref.ref(first)
    del first
    second = small_program.run("main", [x * 2, n])[0]
    assert handle() is second
    np.testing.assert_array_equal(second, np.full((2, 3), 12.0))


def test_runtime_checks_feeds(small_program: LoadedProgram) -> None:
    x, n = np.ones((2, 3), np.float32), np.arange(4, dtype=np.int64)
    np.testing.assert_array_equal(small_program.run("main", [x, n])[0], np.full((2, 3), 6.0))
    # strided and transposed feeds are taken as the arrays they are
    strided_x = np.arange(6, dtype=np.float32).reshape(3, 2).T
    strided_n = np.arange(8, dtype=np.int64)[::2]
    np.testing.assert_array_equal(
        small_program.run("main", [strided_x, strided_n])[0], strided_x * 12
    )
    with pytest.raises(ProgramError, match=r"@main argument 0: expected \(2, 3\) float32, got "):
        small_program.run("main", [np.ones((3, 2), np.float32), n])
    with pytest.raises(ProgramError, match=r"argument 1: expected \(4,\) int64, got \(4,\) int32"):
        small_program.run("main", [x, n.astype(np.int32)])
    with pytest.raises(ProgramError, match=r"argument 0: .* got \(2, 3\) float64"):
        small_program.run("main", [x.astype(np.float64), n])
    with pytest.raises(ProgramError, match=r"@main takes 2 arguments, 1 given"):
        small_program.run("main", [x])
    with pytest.raises(ProgramError, match=r"@main takes 2 arguments, 3 given"):
        small_program.run("main", [x, n, n])
    with pytest.raises(ProgramError, match=r"no entry @nope"):
        small_program.run("nope", [x, n])


LOST_SEND = """
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> attributes {
        df.arguments = array<i64: 0>, df.results = array<i64: 0>,
        df.function_type = (tensor<2xf32>) -> tensor<2xf32>} {
      %b = df.recv {df.device = "cpu:0", key = "never_sent", from = "cpu:1", to = "cpu:0"}
          : () -> tensor<2xf32>
      %a = df.add %x, %b {df.device = "cpu:0"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      func.return %a : tensor<2xf32>
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main(%x: tensor<2xf32>) attributes {
        df.arguments = array<i64: 0>, df.results = array<i64>,
        df.function_type = (tensor<2xf32>) -> tensor<2xf32>} {
      %n = df.neg %x {df.device = "cpu:1"} : (tensor<2xf32>) -> tensor<2xf32>
      df.send %n {df.device = "cpu:1", key = "other", from = "cpu:1", to = "cpu:0"}
          : (tensor<2xf32>) -> ()
      func.return
    }
  }
}
"""


def test_a_receive_that_never_arrives_times_out_naming_its_key(tmp_path: Path) -> None:
    program = compile_to(parse_module(LOST_SEND, "lost.mlir"), tmp_path)
    with pytest.raises(
        ProgramError, match=r"key 'never_sent' from cpu:1 on cpu:0 waited .* s and no send arrived"
    ):
        program.run("main", [np.ones(2, np.float32)], timeout=0.3)


def test_a_receive_cycle_is_refused_when_compiling(tmp_path: Path) -> None:
    """Devices that wait on each other never reach the runtime: lowering refuses them."""
    text = (Path(__file__).parent / "data" / "receive_cycle.mlir").read_text()
    with pytest.raises(DflowError, match=r"wait on each other in a cycle"):
        compile_module(parse_module(text, "cycle.mlir"))


def test_compiled_program_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path))
    text = (ROOT / "examples" / "mlp.mlir").read_text()
    first = compiled_program(text, parse_module(text, "mlp.mlir"))
    written = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("cpu_0.py")}
    assert len(written) == 1
    second = compiled_program(text, parse_module(text, "mlp.mlir"))
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("cpu_0.py")} == written
    module = parse_module(text, "mlp.mlir")
    inputs = random_inputs(next(iter(module.ops)), 3)  # type: ignore[arg-type]
    expected = run_function(module, "main", inputs)
    assert_same(first.run("main", inputs), expected, ["loss", "p"])
    assert_same(second.run("main", inputs), expected, ["loss", "p"])


# ----------------------------------------------------------------------------- command line


def summary_values(text: str) -> list[tuple[str, list[float]]]:
    """Each summary line's head (name, shape, dtype) and its numbers."""
    parsed: list[tuple[str, list[float]]] = []
    for line in text.strip().splitlines():
        head, _, numbers = (
            line.partition(" value ") if " value " in line else line.partition(" min ")
        )
        parsed.append((head, [float(n) for n in re.findall(r"-?[\d.]+(?:e[-+]?\d+)?", numbers)]))
    return parsed


def assert_same_summary(compiled: str, interpreted: str) -> None:
    got, want = summary_values(compiled), summary_values(interpreted)
    assert [head for head, _ in got] == [head for head, _ in want], compiled
    for (_, a), (_, b) in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4)


def test_written_modules_are_stamped_with_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numba checks a cached kernel against its own file only, though the kernel holds
    the library routines it calls: a new compiler or runtime must rewrite the file."""
    sources = {"cpu_0.py": '"""a module"""\nDEVICE = "cpu:0"\n'}
    monkeypatch.setattr(compiler, "compiler_fingerprint", lambda: "a" * 64)
    write_modules(sources, tmp_path)
    first = (tmp_path / "cpu_0.py").read_text()
    monkeypatch.setattr(compiler, "compiler_fingerprint", lambda: "b" * 64)
    write_modules(sources, tmp_path)
    second = (tmp_path / "cpu_0.py").read_text()
    assert first.startswith("# dflow compiler and runtime aaaa") and first.endswith(
        sources["cpu_0.py"]
    )
    assert second.startswith("# dflow compiler and runtime bbbb") and second != first


def test_editing_placement_or_the_pipeline_misses_the_cache(tmp_path: Path) -> None:
    """The cache key covers every module whose change alters what is compiled: a
    copy of dflow run twice hits its entry; after an edit of a placement rule, and
    again after one of the lowering pipeline's definition, it compiles a new one."""
    package = tmp_path / "src" / "dflow"
    shutil.copytree(ROOT / "dflow", package, ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    environment = {**os.environ, "PYTHONPATH": str(package.parent), "DFLOW_CACHE_DIR": str(cache)}
    program = ROOT / "examples" / "towers.mlir"

    def entries_after_a_run() -> set[str]:
        run = run_dflow("run", program, "--devices", "cpu:0,cpu:1", env=environment, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        return {entry.name for entry in cache.iterdir() if re.fullmatch("[0-9a-f]{24}", entry.name)}

    first = entries_after_a_run()
    assert entries_after_a_run() == first and len(first) == 1
    rule = package / "transforms" / "placement" / "colocation.py"
    rule.write_text(rule.read_text() + "\n# an edited placement rule\n")
    second = entries_after_a_run()
    assert len(second) == 2 and first < second
    pipeline = package / "driver" / "compilation" / "compiler.py"
    text = pipeline.read_text()
    assert "def lowering_pipeline(" in text
    pipeline.write_text(text + "\n# an edited lowering pipeline\n")
    assert len(entries_after_a_run()) == 3


def test_cli_compile_writes_an_importable_module(tmp_path: Path) -> None:
    result = run_dflow("compile", "examples/mlp.mlir", "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    source = (tmp_path / "out" / "cpu_0.py").read_text()
    assert "def main(rt, x, w1, b1, w2, b2, labels):" in source
    assert re.search(r"^@_kernel\(\"[0-9a-f]{24}\"\)$", source, re.MULTILINE)
    program = load_program(tmp_path / "out")
    module = parse_module((ROOT / "examples" / "mlp.mlir").read_text(), "mlp.mlir")
    inputs = random_inputs(next(iter(module.ops)), 0)  # type: ignore[arg-type]
    assert_same(program.run("main", inputs), run_function(module, "main", inputs), ["loss", "p"])


def test_cli_run_compiled_matches_interpret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path / "cache"))
    interpreted = run_dflow("run", "examples/mlp.mlir", "--interpret")
    compiled = run_dflow("run", "examples/mlp.mlir")
    assert interpreted.returncode == 0, interpreted.stderr
    assert compiled.returncode == 0, compiled.stderr
    assert_same_summary(compiled.stdout, interpreted.stdout)
    assert any((tmp_path / "cache").rglob("cpu_0.py"))
    two = run_dflow("run", "examples/mlp.mlir", "--devices", "cpu:0,cpu:1")
    assert two.returncode == 0, two.stderr
    assert_same_summary(two.stdout, interpreted.stdout)


def test_cli_run_compiled_on_two_devices_saves_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path / "cache"))
    module = parse_module((ROOT / "examples" / "towers.mlir").read_text(), "towers.mlir")
    inputs = random_inputs(next(iter(module.ops)), 5)  # type: ignore[arg-type]
    names = ["x", "a1", "a2", "b1", "b2"]
    feeds = dict(zip(names, inputs, strict=True))
    np.savez(tmp_path / "in.npz", **feeds)  # pyright: ignore[reportArgumentType] (numpy's stub)
    result = run_dflow(
        "run",
        "examples/towers.mlir",
        "--devices",
        "cpu:0,cpu:1",
        "--inputs",
        tmp_path / "in.npz",
        "--output",
        tmp_path / "out.npz",
    )
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "out.npz") as saved:
        # the towers' sums (terms near 1000) cancel, and OpenBLAS's last bits depend on
        # its thread count (two CPU devices take half the cores each): an absolute atol
        assert_same([saved["out0"]], run_function(module, "main", inputs), ["y"], 1e-3)
    assert len(list((tmp_path / "cache").rglob("cpu_*.py"))) == 2


def test_cli_run_compiled_reports_bad_inputs(tmp_path: Path) -> None:
    np.savez(tmp_path / "in.npz", x=np.zeros((8, 16), np.float64))
    result = run_dflow("run", "examples/mlp.mlir", "--inputs", tmp_path / "in.npz")
    assert result.returncode == 1
    assert "input 'x' has dtype float64" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(SGEMM is None, reason="NumPy has no bundled OpenBLAS: np.dot is used")
def test_blas_products_refuse_strided_operands() -> None:
    """The CBLAS path reads rows by their length: kernels always pass C-contiguous
    buffers, and anything else is refused, never read with the wrong strides."""
    matmul: Any = getattr(cpu_library, "matmul_f32")  # noqa: B009 (untyped numba dispatcher)
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.empty((3, 4), np.float32)
    with pytest.raises(ValueError, match="C-contiguous"):
        matmul(a[:3, :4], a[:4, :4].copy(), out, 0, 0)
    matmul(a[:3, :4].copy(), a[:4, :4].copy(), out, 0, 0)
    np.testing.assert_array_equal(out, a[:3, :4] @ a[:4, :4])


@pytest.mark.parametrize("setting", ["1", None])
def test_lowered_module_is_verified_only_where_asked(
    monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    """`DFLOW_VERIFY=1` (the tests' setting) verifies the lowered module; unset, the
    step is skipped, and a builder's invalid op would go unreported until numba."""
    if setting is None:
        monkeypatch.delenv(compiler.VERIFY_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(compiler.VERIFY_VARIABLE, setting)
    timings = Timings()
    compile_module(
        parse_module((ROOT / "examples" / "mlp.mlir").read_text(), "mlp.mlir"), timings=timings
    )
    steps = [what for what, _ in timings.rows]
    assert ("verify the lowered module" in steps) == (setting == "1")
    assert "df-bufferize" in steps and steps[-1] == "emit Python (-t numba)"
