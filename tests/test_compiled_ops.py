"""Each `df` op family compiled (the numba target and the runtime) against the reference
interpreter.

Every `df` op, alone or beside a few others in one module (kernels cost ~0.1 s each
to compile, so one module holds many independent results), is lowered with
`dflow.driver.compilation.compiler.compile_module`, written with `write_modules`, loaded with
`runtime.load_program` and run; its results must equal the interpreter's
(`run_function`) on the same inputs: same dtype and shape, floats within
rtol 1e-5 / atol 1e-6 (f32) or rtol 1e-10 (f64), integers and booleans exactly
(`compiled_support.check`). Inputs include the awkward values (zeros, negatives under
log and sqrt, NaN under maximum, overflowing integers), since IEEE specials and
wrapping are semantics too. By family: elementwise ops; select, cast and addn;
contractions (matmul, conv2d and the pools with their gradients); shape ops;
reductions and softmax. Whole programs are in `test_compiled_programs.py`, the
runtime's checks and the compile cache in `test_compiled_runtime.py`, the command
line in `test_compiled_cli.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from compiled_support import (
    DTYPES,
    FLOATS,
    LOADED,
    NUMBERS,
    assert_same,
    build,
    check,
    # an autouse fixture: imported so that pytest runs it around each test here
    kernels_typed_as_declared,  # noqa: F401  # pyright: ignore[reportUnusedImport]
    normal,
)
from xdsl.dialects.builtin import TensorType

from dflow import layer_norm
from dflow.backend.numba.module import emit_modules
from dflow.dialects import df
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.frontend import Graph, Tensor, addn, avg_pool2d, concat, conv2d, max_pool2d, select
from dflow.frontend.builder import element_type
from dflow.interpreters.df import run_function
from dflow.runtime import load_program

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
    "floor": lambda x: x.floor(),
    "ceil": lambda x: x.ceil(),
    "round": lambda x: x.round(),
    "sin": lambda x: x.sin(),
    "cos": lambda x: x.cos(),
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
        # zero, a negative zero, large magnitudes (exp overflows, sigmoid saturates),
        # halves (round goes to even)
        x.flat[:9] = [0.0, -0.0, 100.0, -100.0, 1e-3, 0.5, 1.5, -2.5, -0.5]
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


GROUPINGS = {"2 groups": (2, 6), "4 groups": (4, 8), "depthwise": (8, 8), "depthwise x2": (8, 16)}
"""Groups and output channels of the grouped convolutions of 8 input channels."""


@pytest.mark.parametrize("dtype", FLOATS)
def test_grouped_conv2d_and_its_gradients(tmp_path: Path, dtype: str) -> None:
    """Grouped convolutions (2 and 4 groups, depthwise with one and two filters per
    channel) with strides, pads, dilations and bias, and their gradients."""
    rng = np.random.default_rng(9)
    x = normal(rng, (2, 8, 8, 7), dtype)
    arrays = [x]
    for groups, filters in GROUPINGS.values():
        arrays += [normal(rng, (filters, 8 // groups, 3, 2), dtype), normal(rng, (filters,), dtype)]
    input_type = TensorType(element_type(dtype), x.shape)
    options = CONV_OPTIONS["all"]

    def body(g: Graph, x: Tensor, *weights: Tensor) -> dict[str, Tensor]:
        results: dict[str, Tensor] = {}
        for index, (name, (groups, _)) in enumerate(GROUPINGS.items()):
            w, bias = weights[2 * index], weights[2 * index + 1]
            window = {**options, "groups": groups}
            y = conv2d(x, w, None, **window)
            results[name] = y
            results[f"{name}+bias"] = conv2d(x, w, bias, **window)
            dy = (y * 0.5).tanh()  # an output gradient of the right shape
            filter_type = TensorType(element_type(dtype), w.type.get_shape())
            results[f"{name} grad_input"] = g.emit(
                df.Conv2DGradInputOp(dy.value, w.value, input_type, **window)
            )
            results[f"{name} grad_filter"] = g.emit(
                df.Conv2DGradFilterOp(x.value, dy.value, filter_type, **window)
            )
        return results

    check(tmp_path, arrays, body, f32_atol=2e-5)


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
    module = program.parts[0].module
    # numba's kernels, and the llvm target's in its segments
    kernels = [*module.KERNEL_ARGUMENTS]
    kernels += [k for facts in module.KERNELS.values() for k in facts.get("kernels", [])]
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
def test_layer_norm_rows(tmp_path: Path, dtype: str) -> None:
    """Rows shorter and longer than the lanes, a fused prologue, a large offset (the
    variance of centered values, not E[x²] - mean²), a 1-D input."""
    rng = np.random.default_rng(12)
    short, long = normal(rng, (3, 5), dtype), normal(rng, (2, 4, 37), dtype)
    offset = (normal(rng, (4, 16), dtype) + 1000).astype(DTYPES[dtype])
    scales = [normal(rng, (n,), dtype) for n in (5, 37, 16)]

    def body(
        g: Graph, short: Tensor, long: Tensor, offset: Tensor, *p: Tensor
    ) -> dict[str, Tensor]:
        s5, s37, s16 = p
        return {
            "rows of 5": layer_norm(short, s5, s5),
            "rows of 37, epsilon 0.1": layer_norm(long, s37, s37 * 2.0, 0.1),
            "after a fused tanh": layer_norm(long.tanh(), s37, s37),
            "offset by 1000": layer_norm(offset, s16, s16),
            "1-D": layer_norm(s37, s37, s37),
        }

    # at 1000, an f32 holds x to 6e-5: the centered values differ by that much between
    # orders of summing; E[x²] - mean² would lose every digit (1e6 - 1e6)
    check(tmp_path, [short, long, offset, *scales], body, f32_atol=2e-4)


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
