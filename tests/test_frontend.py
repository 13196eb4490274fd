"""The Python builder (`frontend`): the IR it prints, what that IR computes, build-time
shape errors, and a round trip through text.

Numerics run the built module in the reference interpreter and compare with a NumPy
expression written here, evaluated in float64 on the same inputs (rtol 1e-5 for f32
results); integer and boolean results must match exactly and every result must have
the dtype of its element type.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import dflow
from dflow.dialects import df
from dflow.dialects.df import DF
from dflow.frontend import Graph, Tensor, addn, avg_pool2d, concat, conv2d, max_pool2d, select
from dflow.interpreters.df import run_function

Array = NDArray[Any]
DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int32): "i32"}
DTYPES |= {np.dtype(np.int64): "i64", np.dtype(np.bool_): "i1"}

RNG = np.random.default_rng(2024)
X = RNG.standard_normal((3, 4)).astype(np.float32)  # any sign
Y = RNG.uniform(0.5, 2.0, 4).astype(np.float32)  # positive, broadcasts against X
P = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)  # positive, X's shape
K = np.array([[-7, 0, 3], [5, -2, 9]], np.int32)


def build(body: Callable[..., Any], *arrays: Array) -> ModuleOp:
    """A module whose `@main` takes `arrays`' types as `%a0, %a1, ...` and returns `body`."""
    graph = Graph("main")
    inputs = [graph.input(f"a{i}", a.shape, DTYPES[a.dtype]) for i, a in enumerate(arrays)]
    result = body(*inputs)
    graph.output(*(result if isinstance(result, tuple) else (result,)))
    return graph.module()


def run(body: Callable[..., Any], *arrays: Array) -> tuple[Array, ...]:
    return run_function(build(body, *arrays), "main", arrays)


def widened(array: Array) -> Array:
    return array.astype(np.float64) if array.dtype == np.float32 else array


def assert_matches(got: Array, want: Any) -> None:
    """`got` (from df) equals `want` (NumPy in float64 where the result is f32)."""
    want = np.asarray(want)
    assert got.shape == want.shape
    if want.dtype == np.float64:
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def check(body: Callable[..., Any], expect: Callable[..., Any], *arrays: Array) -> None:
    results = run(body, *arrays)
    wanted = expect(*map(widened, arrays))
    wanted = wanted if isinstance(wanted, tuple) else (wanted,)
    assert len(results) == len(wanted)
    for got, want in zip(results, wanted, strict=True):
        assert_matches(got, want)


def op_lines(module: ModuleOp) -> list[str]:
    """The printed ops of `@main`'s body, one stripped line each."""
    lines = [line.strip() for line in str(module).splitlines()]
    return [line for line in lines if line.startswith(("%", "func.return"))]


# --- (a) the printed IR ------------------------------------------------------------------

T4x8, T8x16 = "tensor<4x8xf32>", "tensor<8x16xf32>"
T4x16, T16 = "tensor<4x16xf32>", "tensor<16xf32>"


def test_affine_prints_matmul_then_broadcasting_add() -> None:
    x, w, b = np.zeros((4, 8), np.float32), np.zeros((8, 16), np.float32), np.zeros(16, np.float32)
    module = build(lambda x, w, b: x @ w + b, x, w, b)
    assert f"func.func @main(%a0: {T4x8}, %a1: {T8x16}, %a2: {T16}) -> {T4x16}" in str(module)
    assert op_lines(module) == [
        f"%0 = df.matmul %a0, %a1 : ({T4x8}, {T8x16}) -> {T4x16}",
        f"%1 = df.add %0, %a2 : ({T4x16}, {T16}) -> {T4x16}",
        f"func.return %1 : {T4x16}",
    ]


@pytest.mark.parametrize(
    ("body", "array", "patterns"),
    [
        (
            lambda x: 2.0 - x,
            X,
            [
                r"%0 = df.constant dense<2\.0+e\+00> : tensor<f32>",
                r"%1 = df.sub %0, %a0 : \(tensor<f32>, tensor<3x4xf32>\) -> tensor<3x4xf32>",
            ],
        ),
        (
            lambda x: 1 / x,
            X,
            [
                r"%0 = df.constant dense<1\.0+e\+00> : tensor<f32>",
                r"%1 = df.div %0, %a0 : \(tensor<f32>, tensor<3x4xf32>\) -> tensor<3x4xf32>",
            ],
        ),
        (
            lambda k: k * 3,
            K,
            [
                r"%0 = df.constant dense<3> : tensor<i32>",
                r"%1 = df.mul %a0, %0 : \(tensor<2x3xi32>, tensor<i32>\) -> tensor<2x3xi32>",
            ],
        ),
        (
            lambda x: x > 0.5,
            X,
            [r"%1 = df.greater %a0, %0 : \(tensor<3x4xf32>, tensor<f32>\) -> tensor<3x4xi1>"],
        ),
        (
            lambda x: x[1:3, 2:],
            X,
            [
                r"%0 = df.slice %a0 \{start = array<i64: 1, 2>, limit = array<i64: 3, 4>\} "
                r": \(tensor<3x4xf32>\) -> tensor<2x2xf32>"
            ],
        ),
        (
            lambda x: x.sum((1,), keepdims=True),
            X,
            [  # properties in either order
                r"%0 = df.reduce_sum %a0 \{(axes = array<i64: 1>, keepdims = true|"
                r"keepdims = true, axes = array<i64: 1>)\} : \(tensor<3x4xf32>\) -> tensor<3x1xf32>"
            ],
        ),
        (
            lambda x: x.T.cast("f64"),
            X,
            [
                r"%0 = df.transpose %a0 \{perm = array<i64: 1, 0>\} : "
                r"\(tensor<3x4xf32>\) -> tensor<4x3xf32>",
                r"%1 = df.cast %0 : \(tensor<4x3xf32>\) -> tensor<4x3xf64>",
            ],
        ),
    ],
    ids=["rsub", "rdiv", "int-scalar", "compare", "slice", "reduce", "transpose-cast"],
)
def test_printed_ops(body: Callable[..., Tensor], array: Array, patterns: list[str]) -> None:
    lines = op_lines(build(body, array))
    # the patterns match consecutive ops, in order, ending just before func.return
    tail = lines[len(lines) - 1 - len(patterns) : -1]
    assert len(tail) == len(patterns), lines
    for line, pattern in zip(tail, patterns, strict=True):
        assert re.fullmatch(pattern, line), (pattern, line)


def test_conv_and_pool_print_their_options() -> None:
    image, filt = np.zeros((1, 3, 8, 8), np.float32), np.zeros((4, 3, 3, 3), np.float32)
    module = build(
        lambda i, f: max_pool2d(conv2d(i, f, strides=(2, 2), pads=(1, 1, 1, 1)), (2, 2), (2, 2)),
        image,
        filt,
    )
    conv, pool, _ = op_lines(module)
    assert conv.startswith("%0 = df.conv2d %a0, %a1 {")
    assert "strides = array<i64: 2, 2>" in conv
    assert "pads = array<i64: 1, 1, 1, 1>" in conv
    assert conv.endswith(": (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>")
    assert pool.startswith("%1 = df.max_pool2d %0 {")
    assert "kernel = array<i64: 2, 2>" in pool
    assert pool.endswith(": (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>")


# --- (b) numerics against NumPy -----------------------------------------------------------


def sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x: Array, axis: int) -> Array:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# (id, df body, NumPy expectation or None when the same expression works on arrays)
ELEMENTWISE: list[tuple[str, Callable[..., Any], Callable[..., Any] | None]] = [
    ("add", lambda x, y: x + y, None),
    ("sub", lambda x, y: x - y, None),
    ("mul", lambda x, y: x * y, None),
    ("div", lambda x, y: x / y, None),
    ("pow", lambda x, y: (x * x + 1.0) ** y, None),
    ("neg", lambda x, y: -x, None),
    ("abs", lambda x, y: abs(x), None),
    ("radd", lambda x, y: 1.5 + x, None),
    ("rsub", lambda x, y: 2.0 - x, None),
    ("rmul", lambda x, y: 3 * x, None),
    ("rdiv", lambda x, y: 1 / y, None),
    ("scalar-rhs", lambda x, y: (x - 0.5) * 4 / y**2.0, None),
    ("maximum", lambda x, y: x.maximum(y), np.maximum),
    ("minimum", lambda x, y: x.minimum(0.25), lambda x, y: np.minimum(x, 0.25)),
    ("relu", lambda x, y: x.relu(), lambda x, y: np.maximum(x, 0.0)),
    ("exp", lambda x, y: x.exp(), lambda x, y: np.exp(x)),
    ("log", lambda x, y: y.log(), lambda x, y: np.log(y)),
    ("sqrt", lambda x, y: y.sqrt(), lambda x, y: np.sqrt(y)),
    ("rsqrt", lambda x, y: y.rsqrt(), lambda x, y: 1.0 / np.sqrt(y)),
    ("reciprocal", lambda x, y: x.reciprocal(), lambda x, y: 1.0 / x),
    ("tanh", lambda x, y: x.tanh(), lambda x, y: np.tanh(x)),
    ("sigmoid", lambda x, y: x.sigmoid(), lambda x, y: sigmoid(x)),
    ("square", lambda x, y: x.square(), lambda x, y: x * x),
    ("identity", lambda x, y: x.identity(), lambda x, y: x),
]


@pytest.mark.parametrize(
    ("body", "expect"), [case[1:] for case in ELEMENTWISE], ids=[c[0] for c in ELEMENTWISE]
)
def test_elementwise(body: Callable[..., Any], expect: Callable[..., Any] | None) -> None:
    check(body, expect or body, X, Y)


COMPARISONS: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("greater", lambda x, y: x > y, lambda x, y: x > y),
    ("greater-equal", lambda x, y: x >= 0.25, lambda x, y: x >= 0.25),
    ("less", lambda x, y: x < y, lambda x, y: x < y),
    ("less-equal", lambda x, y: x <= 0, lambda x, y: x <= 0),
    ("equal", lambda x, y: x.equal(x.maximum(y)), lambda x, y: x >= y),
    ("select", lambda x, y: select(x > y, x, y), lambda x, y: np.where(x > y, x, y)),
    ("select-abs", lambda x, y: select(x < 0.0, -x, x), lambda x, y: np.abs(x)),
    (
        "select-broadcast",
        lambda x, y: select(x >= 0, y, x * 0.0),
        lambda x, y: np.where(x >= 0, y, 0.0),
    ),
]


@pytest.mark.parametrize(
    ("body", "expect"), [case[1:] for case in COMPARISONS], ids=[c[0] for c in COMPARISONS]
)
def test_comparisons_and_select(body: Callable[..., Any], expect: Callable[..., Any]) -> None:
    check(body, expect, X, Y)


SLICES: list[tuple[str, Callable[[Any], Any]]] = [
    ("rows", lambda x: x[1:3, :]),
    ("cols", lambda x: x[:, 1:]),
    ("first-axis-only", lambda x: x[0:1]),
    ("block", lambda x: x[1:3, 2:4]),
    ("negative-start", lambda x: x[-2:, :-1]),
    ("clipped", lambda x: x[1:10, 3:99]),
]


@pytest.mark.parametrize("index", [case[1] for case in SLICES], ids=[c[0] for c in SLICES])
def test_slicing(index: Callable[[Any], Any]) -> None:
    check(index, index, X)


REDUCTIONS: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("sum-all", lambda x: x.sum(), lambda x: x.sum()),
    ("sum-0", lambda x: x.sum((0,)), lambda x: x.sum(axis=0)),
    ("sum-last-keep", lambda x: x.sum((-1,), True), lambda x: x.sum(axis=-1, keepdims=True)),
    ("mean-0", lambda x: x.mean((0,)), lambda x: x.mean(axis=0)),
    ("mean-all-keep", lambda x: x.mean(keepdims=True), lambda x: x.mean(keepdims=True)),
    ("max-1", lambda x: x.max((1,)), lambda x: x.max(axis=1)),
    (
        "max-3d",
        lambda x: x.reshape((3, 2, 2)).max((0, 2)),
        lambda x: x.reshape(3, 2, 2).max((0, 2)),
    ),
    ("softmax-last", lambda x: x.softmax(), lambda x: softmax(x, -1)),
    ("softmax-0", lambda x: x.softmax(0), lambda x: softmax(x, 0)),
]


@pytest.mark.parametrize(
    ("body", "expect"), [case[1:] for case in REDUCTIONS], ids=[c[0] for c in REDUCTIONS]
)
def test_reductions(body: Callable[[Any], Any], expect: Callable[[Any], Any]) -> None:
    check(body, expect, X)


SHAPE_OPS: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("T", lambda x: x.T, lambda x: x.T),
    (
        "transpose-3d",
        lambda x: x.reshape((2, 3, 2)).transpose((2, 0, 1)),
        lambda x: x.reshape(2, 3, 2).transpose(2, 0, 1),
    ),
    ("reshape", lambda x: x.reshape((2, 6)), lambda x: x.reshape(2, 6)),
    ("broadcast_to", lambda x: x.broadcast_to((2, 3, 4)), lambda x: np.broadcast_to(x, (2, 3, 4))),
    ("matmul-T", lambda x: x @ x.T, lambda x: x @ x.T),
    ("transpose_b", lambda x: x.matmul(x, transpose_b=True), lambda x: x @ x.T),
    ("transpose_a", lambda x: x.matmul(x, transpose_a=True), lambda x: x.T @ x),
]


@pytest.mark.parametrize(
    ("body", "expect"), [case[1:] for case in SHAPE_OPS], ids=[c[0] for c in SHAPE_OPS]
)
def test_shape_ops_and_matmul(body: Callable[[Any], Any], expect: Callable[[Any], Any]) -> None:
    check(body, expect, X)


def test_concat_and_addn() -> None:
    check(
        lambda x, p: (concat([x, p], 0), concat([x, 2.0 * p, x], 1), addn([x, p, x * p])),
        lambda x, p: (
            np.concatenate([x, p], 0),
            np.concatenate([x, 2.0 * p, x], 1),
            x + p + x * p,
        ),
        X,
        P,
    )


@pytest.mark.parametrize(
    ("array", "dtype", "expect"),
    [
        (np.array([-2.7, -0.5, 0.0, 1.5, 3.9], np.float32), "i32", [-2, 0, 0, 1, 3]),
        (K, "f32", K.astype(np.float64)),
        (K, "i64", K.astype(np.int64)),
        (np.array([-1.0, 0.0, 2.5], np.float32), "i1", [True, False, True]),
        (np.array([0.1, -3.25], np.float32), "f64", np.array([0.1, -3.25], np.float32)),
    ],
    ids=["f32-to-i32-truncates", "i32-to-f32", "i32-to-i64", "f32-to-i1", "f32-to-f64"],
)
def test_cast(array: Array, dtype: str, expect: Any) -> None:
    (got,) = run(lambda t: t.cast(dtype), array)
    want = np.asarray(expect)
    if dtype == "f64":
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want.astype(np.float64))
    elif dtype == "i32":
        assert_matches(got, want.astype(np.int32))
    else:
        assert_matches(got, want)


def test_comparison_cast_back_to_float_counts() -> None:
    check(
        lambda x, y: (x > y).cast("f32").sum((1,)),
        lambda x, y: (x > y).sum(axis=1).astype(np.float64),
        X,
        Y,
    )


# NCHW conv and pooling, written as explicit loops over output positions.


def windows(x: Array, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int]):
    """Yield (i, j, window[n, c, kh, kw]) for every output position (i, j)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    rows = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    cols = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    for i in range(rows):
        for j in range(cols):
            rows_taken = slice(i * sh, i * sh + dh * (kh - 1) + 1, dh)
            cols_taken = slice(j * sw, j * sw + dw * (kw - 1) + 1, dw)
            yield i, j, x[:, :, rows_taken, cols_taken]


def conv_reference(
    x: Array,
    f: Array,
    b: Array,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
) -> Array:
    top, left, bottom, right = pads
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    found = list(windows(padded, f.shape[2:], strides, dilations))
    out = np.zeros((x.shape[0], f.shape[0], found[-1][0] + 1, found[-1][1] + 1))
    for i, j, window in found:
        out[:, :, i, j] = np.einsum("nchw,kchw->nk", window, f)
    return out + b[None, :, None, None]


def pool_reference(x: Array, kernel: Sequence[int], strides: Sequence[int], reduce: Any) -> Array:
    found = list(windows(x, kernel, strides, (1, 1)))
    out = np.zeros((*x.shape[:2], found[-1][0] + 1, found[-1][1] + 1))
    for i, j, window in found:
        out[:, :, i, j] = reduce(window, axis=(2, 3))
    return out


IMAGE = RNG.standard_normal((2, 3, 9, 8)).astype(np.float32)
FILTER = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
BIAS = RNG.standard_normal(4).astype(np.float32)


@pytest.mark.parametrize(
    ("strides", "pads", "dilations"),
    [
        ((1, 1), (0, 0, 0, 0), (1, 1)),
        ((2, 1), (1, 0, 2, 1), (1, 1)),
        ((1, 2), (0, 1, 0, 1), (2, 1)),
    ],
    ids=["plain", "strided-padded", "dilated"],
)
def test_conv2d_then_pooling(
    strides: tuple[int, int], pads: tuple[int, int, int, int], dilations: tuple[int, int]
) -> None:
    def body(image: Tensor, filt: Tensor, bias: Tensor) -> tuple[Tensor, ...]:
        conv = conv2d(image, filt, bias, strides=strides, pads=pads, dilations=dilations)
        return conv, max_pool2d(conv.relu(), (2, 2), (2, 2)), avg_pool2d(conv, (2, 1), (1, 1))

    def expect(image: Array, filt: Array, bias: Array) -> tuple[Array, ...]:
        conv = conv_reference(image, filt, bias, strides, pads, dilations)
        return (
            conv,
            pool_reference(np.maximum(conv, 0.0), (2, 2), (2, 2), np.max),
            pool_reference(conv, (2, 1), (1, 1), np.mean),
        )

    check(body, expect, IMAGE, FILTER, BIAS)


def test_conv2d_without_bias() -> None:
    check(
        conv2d,
        lambda image, filt: conv_reference(image, filt, np.zeros(4), (1, 1), (0,) * 4, (1, 1)),
        IMAGE,
        FILTER,
    )


# --- (c) shape errors at build time --------------------------------------------------------


def shape_error(make: Callable[[Graph, Tensor], Any]) -> str:
    """Build on a graph with `%x: tensor<3x4xf32>`; return the error's message."""
    graph = Graph()
    x = graph.input("x", (3, 4))
    with pytest.raises(VerifyException) as error:
        make(graph, x)
    return str(error.value)


BUILD_ERRORS: list[tuple[str, Callable[[Graph, Tensor], Any], tuple[str, str]]] = [
    ("add", lambda g, x: x + g.input("z", (5,)), ("3x4", "5")),
    ("rsub-broadcast", lambda g, x: g.input("z", (2, 1, 3)) - x, ("2x1x3", "3x4")),
    ("compare", lambda g, x: x > g.input("z", (4, 3)), ("3x4", "4x3")),
    ("matmul", lambda g, x: x @ g.input("w", (5, 2)), ("3x4", "5x2")),
    ("matmul-rank", lambda g, x: x @ g.input("v", (4,)), ("3x4", "4")),
    ("concat", lambda g, x: concat([x, g.input("c", (2, 5))], 0), ("3x4", "2x5")),
    ("select", lambda g, x: select(x > 0, x, g.input("e", (2, 4))), ("3x4", "2x4")),
    (
        "conv2d",
        lambda g, x: conv2d(g.input("i", (1, 3, 5, 5)), g.input("f", (2, 4, 3, 3))),
        ("1x3x5x5", "2x4x3x3"),
    ),
]


@pytest.mark.parametrize(
    ("make", "shapes"), [case[1:] for case in BUILD_ERRORS], ids=[c[0] for c in BUILD_ERRORS]
)
def test_shape_errors_raise_at_build_time(
    make: Callable[[Graph, Tensor], Any], shapes: tuple[str, str]
) -> None:
    message = shape_error(make)
    for shape in shapes:
        assert re.search(rf"(?<![\dx]){shape}(?![\dx])", message), (shape, message)


GIVEN_RESULT_ERRORS: list[tuple[str, Callable[[Graph, Tensor], Any], tuple[str, str]]] = [
    ("addn", lambda g, x: addn([x, g.input("d", (4, 3))]), ("3x4", "4x3")),
    ("reshape", lambda g, x: x.reshape((5,)), ("3x4", "5")),
    ("broadcast_to", lambda g, x: x.broadcast_to((3, 5)), ("3x4", "3x5")),
    ("softmax-axis", lambda g, x: x.softmax(2), ("axis 2", "rank 2")),
]


@pytest.mark.parametrize(
    ("make", "shapes"),
    [case[1:] for case in GIVEN_RESULT_ERRORS],
    ids=[c[0] for c in GIVEN_RESULT_ERRORS],
)
def test_shape_errors_of_given_result_types_raise_at_build_time(
    make: Callable[[Graph, Tensor], Any], shapes: tuple[str, str]
) -> None:
    message = shape_error(make)
    for shape in shapes:
        assert shape in message


def test_slicing_with_too_many_indices_raises() -> None:
    graph = Graph()
    x = graph.input("x", (3, 4))
    with pytest.raises((IndexError, ValueError)):
        x[1:2, 1:2, 0:1]


def test_slicing_with_a_step_raises() -> None:
    graph = Graph()
    x = graph.input("x", (3, 4))
    with pytest.raises(ValueError, match="step"):
        x[::2]


def test_the_df_op_refuses_mixed_element_types_naming_both() -> None:
    graph = Graph()
    x, k = graph.input("x", (3, 4)), graph.input("k", (3, 4), "i32")
    with pytest.raises(VerifyException, match=r"tensor<3x4xf32>.*tensor<3x4xi32>"):
        df.AddOp(x.value, k.value)


def test_operators_cast_mixed_element_types_as_numpy_promotes() -> None:
    """f32 + i32 is f64 in NumPy (`np.result_type`): both operands are cast first, so
    the df.add itself stays strictly typed."""
    k = np.arange(12, dtype=np.int32).reshape(3, 4)
    module = build(lambda x, k: x + k, X, k)
    assert op_lines(module)[:3] == [
        "%0 = df.cast %a0 : (tensor<3x4xf32>) -> tensor<3x4xf64>",
        "%1 = df.cast %a1 : (tensor<3x4xi32>) -> tensor<3x4xf64>",
        "%2 = df.add %0, %1 : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>",
    ]
    (got,) = run_function(module, "main", [X, k])
    want = X + k
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got, want)


# --- (d) round trip through text -----------------------------------------------------------


B1 = np.linspace(-1, 1, 32, dtype=np.float32)


def mlp() -> ModuleOp:
    graph = Graph("main")
    x = graph.input("x", (8, 16))
    w1, b1 = graph.input("w1", (16, 32)), graph.constant(B1)
    w2 = graph.input("w2", (32, 10))
    labels = graph.input("labels", (8, 10))
    hidden = (x @ w1 + b1).relu()
    probabilities = (hidden @ w2 + 0.1).softmax(-1)
    loss = -(labels * probabilities.log()).sum((1,)).mean()
    graph.output(probabilities, loss)
    return graph.module()


def test_mlp_round_trips_through_text() -> None:
    module = mlp()
    text = str(module)
    context = Context()
    for dialect in (Builtin, Func, DF):
        context.load_dialect(dialect)
    parsed = Parser(context, text).parse_module()
    parsed.verify()
    assert str(parsed) == text
    assert parsed.is_structurally_equivalent(module)


def test_mlp_matches_numpy() -> None:
    rng = np.random.default_rng(5)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in [(8, 16), (16, 32), (32, 10)])
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]
    probabilities, loss = run_function(mlp(), "main", [x, w1, w2, labels])
    x64, w164, w264 = (a.astype(np.float64) for a in (x, w1, w2))
    hidden = np.maximum(x64 @ w164 + B1.astype(np.float64), 0.0)
    want = softmax(hidden @ w264 + 0.1, -1)
    assert_matches(probabilities, want)
    assert_matches(loss, -(labels * np.log(want)).sum(axis=1).mean())


def test_integer_index_drops_the_axis() -> None:
    graph = Graph()
    x = graph.input("x", (3, 4))
    graph.output(x[1], x[:, 2])
    module = graph.module()
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    row, column = run_function(module, "main", [data])
    np.testing.assert_array_equal(row, data[1])
    np.testing.assert_array_equal(column, data[:, 2])


# --- (e) a graph makes any number of modules and programs ---------------------------------


def doubling() -> Graph:
    """`main(x) = relu(double(x) - 1)`, `@double` a callee beside it."""
    callee = Graph("double")
    y = callee.input("y", (3, 4))
    callee.output(y * 2.0)
    graph = Graph("main")
    x = graph.input("x", (3, 4))
    (doubled,) = graph.call(callee.function(), [x])
    graph.output((doubled - 1.0).relu())
    return graph


def test_module_twice_gives_equal_independent_modules() -> None:
    graph = doubling()
    first, second = graph.module(), graph.module()
    assert first is not second
    assert str(first) == str(second)
    assert {id(op) for op in first.walk()}.isdisjoint(id(op) for op in second.walk())
    second.verify()
    assert [op.sym_name.data for op in second.ops] == ["main", "double"]  # pyright: ignore[reportAttributeAccessIssue]


def test_a_graph_keeps_growing_after_a_module() -> None:
    graph = Graph("main")
    x = graph.input("x", (3, 4))
    graph.output(x * 2.0)
    before = graph.module()
    graph.output(x + 1.0)
    after = graph.module()
    assert op_lines(before)[-1] == "func.return %1 : tensor<3x4xf32>"
    assert len(run_function(before, "main", [X])) == 1
    doubled, incremented = run_function(after, "main", [X])
    np.testing.assert_array_equal(doubled, X * np.float32(2.0))
    np.testing.assert_array_equal(incremented, X + np.float32(1.0))


def test_a_graph_compiles_any_number_of_times() -> None:
    graph = Graph("main")
    x = graph.input("x", (3, 4))
    graph.output((x * 2.0 - 1.0).relu())
    want = np.maximum(X * np.float32(2.0) - np.float32(1.0), np.float32(0.0))
    graph.module()
    results = [dflow.compile(graph)(X), graph.compile()(X), graph.compile()(X)]
    for got in results:
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
