"""Numerics of every `df` op, run through the interpreter on seeded random inputs
(and, for the identity of an empty reduction, compiled too).

Each test builds a `func.func @main` around one op (its operands are the function's
arguments), runs it with `run_function`, and compares with an expected value written
here in plain NumPy or in explicit loops; nothing here calls the dialect's own
reference kernels. Float expectations are computed in float64 and compared with
rtol 1e-5 (f32 results) or 1e-12 (f64 results); integer and boolean results must be
exact, and every result must have the dtype of its element type.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Builtin,
    DenseIntOrFPElementsAttr,
    FunctionType,
    ModuleOp,
    TensorType,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.interpreter import _IMPL_DICT_KEY  # pyright: ignore[reportPrivateUsage]
from xdsl.ir import Block, Operation, Region
from xdsl.parser import Parser

from dflow.dialects.df import (
    DF,
    AbsOp,
    AddNOp,
    AddOp,
    AvgPool2DOp,
    BroadcastToOp,
    CastOp,
    CeilOp,
    ConcatOp,
    ConstantOp,
    Conv2DGradFilterOp,
    Conv2DGradInputOp,
    Conv2DOp,
    CosOp,
    DivOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloorOp,
    FusedOp,
    GreaterEqualOp,
    GreaterOp,
    IdentityOp,
    LessEqualOp,
    LessOp,
    LogOp,
    MatmulOp,
    MaximumOp,
    MaxPool2DOp,
    MinimumOp,
    MulOp,
    NegOp,
    PowOp,
    ReciprocalOp,
    RecvOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceSumOp,
    ReluOp,
    ReshapeOp,
    RoundOp,
    RsqrtOp,
    SelectOp,
    SendOp,
    SigmoidOp,
    SinOp,
    SliceOp,
    SoftmaxOp,
    SqrtOp,
    SquareOp,
    SubOp,
    TanhOp,
    TransposeOp,
)
from dflow.dialects.df.semantics import HasSemantics, evaluate
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.driver.loading.source import parse_module
from dflow.interpreters.df import DfFunctions, run_function
from dflow.runtime import load_program

Array = np.ndarray

DTYPES = {
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_),
}
ELEMENTS = {
    DTYPES["f32"]: f32,
    DTYPES["f64"]: f64,
    DTYPES["i32"]: i32,
    DTYPES["i64"]: i64,
    DTYPES["i1"]: i1,
}
FLOATS = ("f32", "f64")
NUMBERS = (*FLOATS, "i32", "i64")
ALL = (*NUMBERS, "i1")
RTOL = {DTYPES["f32"]: 1e-5, DTYPES["f64"]: 1e-12}


# ----------------------------------------------------------------------------- helpers


def tensor_type(array: Array) -> TensorType:
    return TensorType(ELEMENTS[array.dtype], array.shape)


def run(build: Callable[..., Operation | list[Operation]], *inputs: Array) -> tuple[Array, ...]:
    """Run `build(*arguments)` as the body of `@main`; return the results of its op(s)."""
    types = [tensor_type(a) for a in inputs]
    block = Block(arg_types=types)
    with ImplicitBuilder(block):
        built = build(*block.args)
        ops = built if isinstance(built, list) else [built]
        results = [r for op in ops for r in op.results]
        func.ReturnOp(*results)
    signature = FunctionType.from_lists(types, [r.type for r in results])
    module = ModuleOp([func.FuncOp("main", signature, Region(block))])
    module.verify()
    outputs = run_function(module, "main", inputs)
    for output, result in zip(outputs, results, strict=True):
        assert output.shape == tuple(result.type.get_shape())
    return outputs


def run1(build: Callable[..., Operation], *inputs: Array) -> Array:
    return run(build, *inputs)[0]


def random(
    shape: Sequence[int], dtype: str, seed: int, low: float = -3.0, high: float = 3.0
) -> Array:
    """Seeded random values in [low, high] (integers for int types, coin flips for i1)."""
    rng = np.random.default_rng(seed)
    target = DTYPES[dtype]
    if target.kind == "b":
        return np.asarray(rng.random(shape) < 0.5, dtype=target)
    if target.kind == "i":
        return np.asarray(rng.integers(int(low), int(high), size=shape, endpoint=True), target)
    return np.asarray(rng.uniform(low, high, size=shape), dtype=target)


def small_ints(shape: Sequence[int], dtype: str, seed: int) -> Array:
    """Values from {-1, 0, 1} (or booleans) in any element type, so ties are common."""
    if dtype == "i1":
        return random(shape, dtype, seed)
    return np.asarray(np.random.default_rng(seed).integers(-1, 2, size=shape), DTYPES[dtype])


def wide(x: Array) -> Array:
    """The values in float64 (floats) or int64 (integers), for computing expectations."""
    return x.astype(np.float64 if x.dtype.kind == "f" else np.int64)


def check(actual: Array, expected: Array, dtype: str, *, sums: bool = False) -> None:
    """Same dtype and shape; floats within RTOL, others exact.

    `sums`: the values are sums of many terms, so also allow an absolute error of
    rtol times the largest magnitude (entries that cancel to near zero).
    """
    target = DTYPES[dtype]
    expected = np.asarray(expected)
    assert actual.dtype == target
    assert actual.shape == expected.shape
    if target.kind != "f":
        np.testing.assert_array_equal(actual, expected)
        return
    rtol = RTOL[target]
    atol = rtol * float(np.max(np.abs(expected), initial=0.0)) if sums else 0.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def parse(text: str) -> ModuleOp:
    context = Context()
    for dialect in (Builtin, func.Func, DF):
        context.load_dialect(dialect)
    module = Parser(context, text).parse_module()
    module.verify()
    return module


# ----------------------------------------------------------------------------- constant


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (4,), (2, 3)], ids=str)
def test_constant(dtype: str, shape: tuple[int, ...]) -> None:
    value = random(shape, dtype, seed=1, low=-1000, high=1000)
    attr = DenseIntOrFPElementsAttr.from_list(tensor_type(value), value.reshape(-1).tolist())
    check(run1(lambda: ConstantOp(attr)), value, dtype)


@pytest.mark.parametrize(
    ("literal", "dtype", "expected"),
    [
        ("dense<2.5> : tensor<2x3xf32>", "f32", np.full((2, 3), 2.5)),
        ("dense<[[1.0, 2.0]]> : tensor<1x2xf64>", "f64", [[1.0, 2.0]]),
        ("dense<0.1> : tensor<f64>", "f64", 0.1),
        ("dense<[1099511627776, -3]> : tensor<2xi64>", "i64", [2**40, -3]),
        ("dense<-7> : tensor<3xi32>", "i32", [-7, -7, -7]),
        ("dense<true> : tensor<2x2xi1>", "i1", np.ones((2, 2), bool)),
        ("dense<[true, false, true]> : tensor<3xi1>", "i1", [True, False, True]),
    ],
)
def test_constant_literals(literal: str, dtype: str, expected: object) -> None:
    """Splat and list literals parsed from text, including i64 beyond 32 bits."""
    result_type = literal.split(" : ")[1]
    module = parse(
        f"func.func @main() -> {result_type} {{\n"
        f"  %c = df.constant {literal}\n"
        f"  func.return %c : {result_type}\n}}"
    )
    (actual,) = run_function(module, "main", [])
    check(actual, np.asarray(expected, DTYPES[dtype]), dtype)


# ----------------------------------------------------------------------------- unary


def erf_series(x: Array) -> Array:
    """`erf` by its Maclaurin series `2/√π Σ (-1)ⁿ x²ⁿ⁺¹ / (n! (2n+1))` in double
    precision (80 terms: below 1e-12 of error for |x| <= 3), independent of libm."""
    z = np.asarray(x, dtype=np.float64)
    term = z.copy()  # (-1)^n x^(2n+1) / n!
    total = np.zeros_like(z)
    for n in range(80):
        total += term / (2 * n + 1)
        term = -term * z * z / (n + 1)
    return (2 / np.sqrt(np.pi) * total).astype(np.asarray(x).dtype)


def per_element(function: Callable[[float], float]) -> Callable[[Array], Array]:
    """`function` of Python's `math` (or `round`, halves to even) on each value, as floats."""
    return np.vectorize(function, otypes=[np.float64])


UNARY: dict[type[Operation], tuple[Callable[[Array], Array], tuple[float, float], tuple]] = {
    NegOp: (lambda x: -x, (-3, 3), NUMBERS),
    ReciprocalOp: (lambda x: 1.0 / x, (0.25, 4), FLOATS),
    ExpOp: (np.exp, (-5, 5), FLOATS),
    LogOp: (np.log, (0.01, 50), FLOATS),
    SqrtOp: (np.sqrt, (0, 50), FLOATS),
    RsqrtOp: (lambda x: 1.0 / np.sqrt(x), (0.01, 50), FLOATS),
    TanhOp: (np.tanh, (-4, 4), FLOATS),
    ErfOp: (erf_series, (-3, 3), FLOATS),
    SigmoidOp: (lambda x: 1.0 / (1.0 + np.exp(-x)), (-6, 6), FLOATS),
    FloorOp: (per_element(math.floor), (-5, 5), FLOATS),
    CeilOp: (per_element(math.ceil), (-5, 5), FLOATS),
    RoundOp: (per_element(round), (-5, 5), FLOATS),
    SinOp: (per_element(math.sin), (-3, 3), FLOATS),
    CosOp: (per_element(math.cos), (-1.5, 1.5), FLOATS),
    ReluOp: (lambda x: np.where(x > 0, x, 0), (-3, 3), NUMBERS),
    AbsOp: (lambda x: np.where(x < 0, -x, x), (-3, 3), NUMBERS),
    SquareOp: (lambda x: x * x, (-3, 3), NUMBERS),
    IdentityOp: (lambda x: x, (-3, 3), ALL),
}
UNARY_CASES = [
    pytest.param(op, dtype, id=f"{op.name}-{dtype}")
    for op, (_, _, dtypes) in UNARY.items()
    for dtype in dtypes
]


@pytest.mark.parametrize(("op", "dtype"), UNARY_CASES)
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4)], ids=str)
def test_unary(op: type[Operation], dtype: str, shape: tuple[int, ...]) -> None:
    expected_of, (low, high), _ = UNARY[op]
    x = random(shape, dtype, seed=2, low=low, high=high)
    check(run1(op, x), expected_of(wide(x)), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_saturates_without_overflow(dtype: str) -> None:
    x = np.array([-1000.0, 0.0, 1000.0], DTYPES[dtype])
    check(run1(SigmoidOp, x), [0.0, 0.5, 1.0], dtype)


@pytest.mark.parametrize(("dtype", "x"), [("f32", [-10.0, -20.0]), ("f64", [-30.0, -40.0])])
def test_sigmoid_keeps_relative_precision_for_negative_inputs(dtype: str, x: list[float]) -> None:
    values = np.array(x, DTYPES[dtype])
    check(run1(SigmoidOp, values), 1.0 / (1.0 + np.exp(-wide(values))), dtype)


ROUNDING_EDGES = [-2.5, -1.5, -0.5, -0.25, -0.0, 0.0, 0.5, 1.5, 2.5, 0.49999997, 2.0**52 + 1]
"""Halves (to even), zeros (signed), a value just under one half, an odd integer."""


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (FloorOp, [-3, -2, -1, -1, -0.0, 0, 0, 1, 2, 0, 2.0**52 + 1]),
        (CeilOp, [-2, -1, -0.0, -0.0, -0.0, 0, 1, 2, 3, 1, 2.0**52 + 1]),
        (RoundOp, [-2, -2, -0.0, -0.0, -0.0, 0, 0, 2, 2, 0, 2.0**52 + 1]),
    ],
    ids=["floor", "ceil", "round"],
)
def test_rounding_halves_zeros_and_infinities(
    op: type[Operation], expected: list[float], dtype: str
) -> None:
    """NumPy's `floor`, `ceil` and `rint` at the edges: halves to even, the sign of a
    zero result kept, infinities and large integers unchanged."""
    x = np.array([*ROUNDING_EDGES, math.inf, -math.inf], DTYPES[dtype])
    want = np.array([*expected, math.inf, -math.inf], DTYPES[dtype])
    if dtype == "f32":  # 0.49999997 and 2**52 + 1 are other numbers in f32
        want[-4:-2] = {FloorOp: [0, 2.0**52], CeilOp: [1, 2.0**52], RoundOp: [0, 2.0**52]}[op]
    actual = run1(op, x)
    np.testing.assert_array_equal(actual, want)
    np.testing.assert_array_equal(np.signbit(actual), np.signbit(want))


# ----------------------------------------------------------------------------- binary

BINARY: dict[type[Operation], tuple[Callable[[Array, Array], Array], tuple, tuple]] = {
    AddOp: (lambda a, b: a + b, ((-3, 3), (-3, 3)), NUMBERS),
    SubOp: (lambda a, b: a - b, ((-3, 3), (-3, 3)), NUMBERS),
    MulOp: (lambda a, b: a * b, ((-3, 3), (-3, 3)), NUMBERS),
    DivOp: (lambda a, b: a / b, ((-3, 3), (0.25, 4)), FLOATS),
    MaximumOp: (lambda a, b: np.where(a > b, a, b), ((-3, 3), (-3, 3)), NUMBERS),
    MinimumOp: (lambda a, b: np.where(a < b, a, b), ((-3, 3), (-3, 3)), NUMBERS),
    PowOp: (lambda a, b: np.exp(b * np.log(a)), ((0.25, 4), (-2, 2)), FLOATS),
}
BROADCASTS = [
    ((3, 4), (3, 4)),
    ((4, 1), (1, 8)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 3, 4)),
    ((2, 1, 4), (3, 1)),
    ((1,), (5,)),
    ((5, 1, 1), (1,)),
    ((), (3,)),
    ((2, 3), ()),
    ((), ()),
]


def binary_inputs(op: type[Operation], shapes: tuple, dtype: str) -> tuple[Array, Array]:
    (low_a, high_a), (low_b, high_b) = BINARY[op][1]
    return (
        random(shapes[0], dtype, seed=3, low=low_a, high=high_a),
        random(shapes[1], dtype, seed=4, low=low_b, high=high_b),
    )


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.name)
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_binary_broadcasting(op: type[Operation], shapes: tuple) -> None:
    a, b = binary_inputs(op, shapes, "f64")
    check(run1(op, a, b), BINARY[op][0](a, b), "f64")


@pytest.mark.parametrize(
    ("op", "dtype"),
    [
        pytest.param(op, dtype, id=f"{op.name}-{dtype}")
        for op, (_, _, dtypes) in BINARY.items()
        for dtype in dtypes
    ],
)
def test_binary_element_types(op: type[Operation], dtype: str) -> None:
    a, b = binary_inputs(op, ((4, 1), (1, 8)), dtype)
    check(run1(op, a, b), BINARY[op][0](wide(a), wide(b)), dtype)


COMPARISONS: dict[type[Operation], Callable[[Array, Array], Array]] = {
    GreaterOp: lambda a, b: a > b,
    GreaterEqualOp: lambda a, b: a >= b,
    LessOp: lambda a, b: a < b,
    LessEqualOp: lambda a, b: a <= b,
    EqualOp: lambda a, b: a == b,
}


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda op: op.name)
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shapes", [((4, 1), (1, 8)), ((), (6,)), ((2, 5), (2, 5))], ids=str)
def test_comparison(op: type[Operation], dtype: str, shapes: tuple) -> None:
    """An i1 result of the broadcast shape; inputs have ties, so > and >= differ."""
    a, b = small_ints(shapes[0], dtype, seed=5), small_ints(shapes[1], dtype, seed=6)
    assert np.any(a == b) and np.any(a != b)
    check(run1(op, a, b), COMPARISONS[op](a, b), "i1")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    "shapes",
    [((4, 1), (1, 8), (8,)), ((), (3,), (3,)), ((2, 3), (), ()), ((3,), (2, 1), ())],
    ids=str,
)
def test_select(dtype: str, shapes: tuple) -> None:
    condition = random(shapes[0], "i1", seed=7)
    on_true = random(shapes[1], dtype, seed=8, low=-9, high=9)
    on_false = random(shapes[2], dtype, seed=9, low=-9, high=9)
    shape = np.broadcast_shapes(*shapes)
    expected = np.empty(shape, DTYPES[dtype])
    for index in np.ndindex(shape):
        chosen = on_true if broadcast_get(condition, index) else on_false
        expected[index] = broadcast_get(chosen, index)
    check(run1(SelectOp, condition, on_true, on_false), expected, dtype)


def broadcast_get(x: Array, index: tuple[int, ...]) -> object:
    """`x` at `index` of a broadcast result: align right, size-1 axes read element 0."""
    tail = index[len(index) - x.ndim :]
    return x[tuple(0 if size == 1 else i for i, size in zip(tail, x.shape, strict=True))]


CAST_SOURCES = {
    "f32": [-2.75, -0.5, -0.0, 0.0, 0.25, 3.9, 7.0, 1.0],
    "f64": [-2.75, -0.5, -0.0, 0.0, 0.25, 3.9, 7.0, 1.0],
    "i32": [-3, 0, 1, 5, 0, -1, 100, 2],
    "i64": [-3, 0, 1, 5, 0, -1, 2**40, 2],
    "i1": [True, False, True, True, False, False, True, False],
}


def python_cast(value: float | bool, target: str) -> float | bool:
    """Python's own conversion: `!= 0` to bool, truncation toward zero to int."""
    if target == "i1":
        return value != 0
    return int(value) if target in ("i32", "i64") else float(value)


@pytest.mark.parametrize(("source", "target"), list(itertools.product(ALL, ALL)))
def test_cast(source: str, target: str) -> None:
    values = CAST_SOURCES[source]
    if target == "i32":  # keep values in range of the target
        values = [v for v in values if abs(v) < 2**31]
    x = np.array(values, DTYPES[source]).reshape(-1, 1)
    expected = np.array([[python_cast(v, target)] for v in x[:, 0].tolist()], DTYPES[target])
    check(run1(lambda v: CastOp(v, ELEMENTS[DTYPES[target]]), x), expected, target)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("count", [1, 2, 4])
def test_addn(dtype: str, count: int) -> None:
    terms = [random((3, 4), dtype, seed=10 + k) for k in range(count)]
    expected = wide(terms[0])
    for term in terms[1:]:
        expected = expected + wide(term)
    check(run1(lambda *args: AddNOp(list(args)), *terms), expected, dtype)


# ----------------------------------------------------------------------------- matmul

MATMULS = [  # lhs shape, rhs shape, transpose_a, transpose_b, the product as einsum
    ((3, 4), (4, 5), False, False, "mk,kn->mn"),
    ((4, 3), (4, 5), True, False, "km,kn->mn"),
    ((3, 4), (5, 4), False, True, "mk,nk->mn"),
    ((4, 3), (5, 4), True, True, "km,nk->mn"),
    ((1, 4), (4, 1), False, False, "mk,kn->mn"),
    ((2, 3, 4), (2, 4, 5), False, False, "bmk,bkn->bmn"),
    ((2, 4, 3), (2, 4, 5), True, False, "bkm,bkn->bmn"),
    ((2, 3, 4), (2, 5, 4), False, True, "bmk,bnk->bmn"),
    ((2, 4, 3), (2, 5, 4), True, True, "bkm,bnk->bmn"),
    ((2, 3, 3, 4), (2, 3, 4, 2), False, False, "abmk,abkn->abmn"),
]


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize(("lhs", "rhs", "transpose_a", "transpose_b", "spec"), MATMULS)
def test_matmul(
    dtype: str, lhs: tuple, rhs: tuple, transpose_a: bool, transpose_b: bool, spec: str
) -> None:
    a, b = random(lhs, dtype, seed=11), random(rhs, dtype, seed=12)

    def build(x: object, y: object) -> Operation:
        return MatmulOp(x, y, transpose_a=transpose_a, transpose_b=transpose_b)

    check(run1(build, a, b), np.einsum(spec, wide(a), wide(b)), dtype, sums=True)


# ----------------------------------------------------------------------------- windows


def out_size(size: int, kernel: int, stride: int, pad_total: int, dilation: int = 1) -> int:
    return (size + pad_total - dilation * (kernel - 1) - 1) // stride + 1


def conv_geometry(x_shape: tuple, w_shape: tuple, strides: tuple, pads: tuple, dilations: tuple):
    """The output shape and, per output position and tap, the input pixel read (or None)."""
    _, _, height, width = x_shape
    top, left, bottom, right = pads
    oh = out_size(height, w_shape[2], strides[0], top + bottom, dilations[0])
    ow = out_size(width, w_shape[3], strides[1], left + right, dilations[1])

    def pixel(p: int, q: int, i: int, j: int) -> tuple[int, int] | None:
        h = p * strides[0] + i * dilations[0] - top
        w = q * strides[1] + j * dilations[1] - left
        return (h, w) if 0 <= h < height and 0 <= w < width else None

    return (x_shape[0], w_shape[0], oh, ow), pixel


def taps(out_shape: tuple, kernel: tuple) -> itertools.product:
    """Every (n, o, p, q, i, j): output position and kernel tap."""
    n, o, oh, ow = out_shape
    return itertools.product(range(n), range(o), range(oh), range(ow), *map(range, kernel))


def conv2d_loops(x: Array, w: Array, bias: Array | None, strides, pads, dilations) -> Array:
    shape, pixel = conv_geometry(x.shape, w.shape, strides, pads, dilations)
    y = np.zeros(shape)
    for n, o, p, q, i, j in taps(shape, w.shape[2:]):
        if (hw := pixel(p, q, i, j)) is not None:
            y[n, o, p, q] += np.dot(x[n, :, hw[0], hw[1]], w[o, :, i, j])
    if bias is not None:
        for o in range(shape[1]):
            y[:, o] += bias[o]
    return y


def conv2d_grad_input_loops(dy: Array, w: Array, x_shape: tuple, strides, pads, dilations):
    _, pixel = conv_geometry(x_shape, w.shape, strides, pads, dilations)
    dx = np.zeros(x_shape)
    for n, o, p, q, i, j in taps(dy.shape, w.shape[2:]):
        if (hw := pixel(p, q, i, j)) is not None:
            dx[n, :, hw[0], hw[1]] += dy[n, o, p, q] * w[o, :, i, j]
    return dx


def conv2d_grad_filter_loops(x: Array, dy: Array, w_shape: tuple, strides, pads, dilations):
    _, pixel = conv_geometry(x.shape, w_shape, strides, pads, dilations)
    dw = np.zeros(w_shape)
    for n, o, p, q, i, j in taps(dy.shape, w_shape[2:]):
        if (hw := pixel(p, q, i, j)) is not None:
            dw[o, :, i, j] += x[n, :, hw[0], hw[1]] * dy[n, o, p, q]
    return dw


X_SHAPE, W_SHAPE = (2, 3, 7, 8), (4, 3, 3, 2)
CONVS = [  # strides, pads (top, left, bottom, right), dilations
    ((1, 1), (0, 0, 0, 0), (1, 1)),
    ((2, 1), (1, 0, 2, 1), (1, 1)),
    ((1, 2), (0, 2, 1, 0), (2, 1)),
    ((2, 2), (1, 1, 1, 1), (2, 2)),
    ((3, 2), (2, 1, 0, 1), (1, 2)),
    ((3, 3), (0, 0, 0, 0), (1, 1)),  # input row 6 and columns 2, 5 are never read
]


def window(strides: tuple, pads: tuple, dilations: tuple) -> dict[str, tuple]:
    return {"strides": strides, "pads": pads, "dilations": dilations}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("with_bias", [False, True], ids=["no_bias", "bias"])
@pytest.mark.parametrize(("strides", "pads", "dilations"), CONVS, ids=str)
def test_conv2d(dtype: str, with_bias: bool, strides, pads, dilations) -> None:
    x, w = random(X_SHAPE, dtype, seed=13), random(W_SHAPE, dtype, seed=14)
    bias = random((W_SHAPE[0],), dtype, seed=15) if with_bias else None
    operands = [x, w] if bias is None else [x, w, bias]
    options = window(strides, pads, dilations)
    expected = conv2d_loops(wide(x), wide(w), None if bias is None else wide(bias), **options)
    check(run1(lambda *v: Conv2DOp(*v, **options), *operands), expected, dtype, sums=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("strides", "pads", "dilations"), CONVS, ids=str)
def test_conv2d_grad_input(dtype: str, strides, pads, dilations) -> None:
    options = window(strides, pads, dilations)
    y_shape, _ = conv_geometry(X_SHAPE, W_SHAPE, **options)
    dy, w = random(y_shape, dtype, seed=16), random(W_SHAPE, dtype, seed=17)
    x_type = TensorType(ELEMENTS[DTYPES[dtype]], X_SHAPE)
    actual = run1(lambda a, b: Conv2DGradInputOp(a, b, x_type, **options), dy, w)
    expected = conv2d_grad_input_loops(wide(dy), wide(w), X_SHAPE, **options)
    check(actual, expected, dtype, sums=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("strides", "pads", "dilations"), CONVS, ids=str)
def test_conv2d_grad_filter(dtype: str, strides, pads, dilations) -> None:
    options = window(strides, pads, dilations)
    y_shape, _ = conv_geometry(X_SHAPE, W_SHAPE, **options)
    x, dy = random(X_SHAPE, dtype, seed=18), random(y_shape, dtype, seed=19)
    w_type = TensorType(ELEMENTS[DTYPES[dtype]], W_SHAPE)
    actual = run1(lambda a, b: Conv2DGradFilterOp(a, b, w_type, **options), x, dy)
    expected = conv2d_grad_filter_loops(wide(x), wide(dy), W_SHAPE, **options)
    check(actual, expected, dtype, sums=True)


GROUPINGS = {"2 groups": (2, 6), "depthwise": (4, 4), "depthwise x2": (4, 8)}
"""Groups and output channels of grouped convolutions of 4 input channels."""


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("grouping", list(GROUPINGS))
@pytest.mark.parametrize(("strides", "pads", "dilations"), CONVS[1:4], ids=str)
def test_grouped_conv2d_and_its_gradients(dtype: str, grouping: str, strides, pads, dilations):
    """A grouped conv2d and its gradients equal the loops run on each group's channels."""
    groups, filters = GROUPINGS[grouping]
    x_shape, w_shape = (2, 4, 7, 8), (filters, 4 // groups, 3, 2)
    options = window(strides, pads, dilations)
    y_shape, _ = conv_geometry(x_shape, w_shape, **options)
    x, w = random(x_shape, dtype, seed=23), random(w_shape, dtype, seed=24)
    bias, dy = random((filters,), dtype, seed=25), random(y_shape, dtype, seed=26)
    ins, outs = 4 // groups, filters // groups
    parts = [
        (slice(g * ins, (g + 1) * ins), slice(g * outs, (g + 1) * outs)) for g in range(groups)
    ]
    element = ELEMENTS[DTYPES[dtype]]
    grouped = {**options, "groups": groups}
    actual = run1(lambda *v: Conv2DOp(*v, **grouped), x, w, bias)
    y = np.concatenate(
        [conv2d_loops(wide(x[:, c]), wide(w[o]), None, **options) for c, o in parts], 1
    )
    check(actual, y + wide(bias)[None, :, None, None], dtype, sums=True)
    actual = run1(
        lambda a, b: Conv2DGradInputOp(a, b, TensorType(element, x_shape), **grouped), dy, w
    )
    dx = [
        conv2d_grad_input_loops(wide(dy[:, o]), wide(w[o]), (2, ins, 7, 8), **options)
        for c, o in parts
    ]
    check(actual, np.concatenate(dx, 1), dtype, sums=True)
    actual = run1(
        lambda a, b: Conv2DGradFilterOp(a, b, TensorType(element, w_shape), **grouped), x, dy
    )
    shape = (outs, *w_shape[1:])
    dw = [
        conv2d_grad_filter_loops(wide(x[:, c]), wide(dy[:, o]), shape, **options) for c, o in parts
    ]
    check(actual, np.concatenate(dw, 0), dtype, sums=True)


@pytest.mark.parametrize(("strides", "pads", "dilations"), CONVS, ids=str)
def test_conv2d_gradients_are_adjoints(strides, pads, dilations) -> None:
    """<conv(x, w), dy> == <x, grad_input(dy, w)> == <w, grad_filter(x, dy)> in f64."""
    options = window(strides, pads, dilations)
    y_shape, _ = conv_geometry(X_SHAPE, W_SHAPE, **options)
    x, w = random(X_SHAPE, "f64", seed=20), random(W_SHAPE, "f64", seed=21)
    dy = random(y_shape, "f64", seed=22)

    def build(xv: object, wv: object, dyv: object) -> list[Operation]:
        return [
            Conv2DOp(xv, wv, **options),
            Conv2DGradInputOp(dyv, wv, TensorType(f64, X_SHAPE), **options),
            Conv2DGradFilterOp(xv, dyv, TensorType(f64, W_SHAPE), **options),
        ]

    y, dx, dw = run(build, x, w, dy)
    forward = np.sum(y * dy)
    assert np.sum(x * dx) == pytest.approx(forward, rel=1e-12)
    assert np.sum(w * dw) == pytest.approx(forward, rel=1e-12)


def pool_loops(x: Array, kernel: tuple, strides: tuple, pads: tuple, reduce: Callable) -> Array:
    """`reduce` over the input elements of each window; padding positions are skipped."""
    n, c, height, width = x.shape
    top, left, bottom, right = pads
    oh = out_size(height, kernel[0], strides[0], top + bottom)
    ow = out_size(width, kernel[1], strides[1], left + right)
    y = np.zeros((n, c, oh, ow))
    for b, ch, p, q in itertools.product(range(n), range(c), range(oh), range(ow)):
        inside = [
            x[b, ch, h, w]
            for h in range(p * strides[0] - top, p * strides[0] - top + kernel[0])
            for w in range(q * strides[1] - left, q * strides[1] - left + kernel[1])
            if 0 <= h < height and 0 <= w < width
        ]
        y[b, ch, p, q] = reduce(inside)
    return y


POOLS = [  # kernel, strides, pads (top, left, bottom, right)
    ((2, 2), (2, 2), (0, 0, 0, 0)),
    ((3, 2), (1, 1), (1, 0, 2, 1)),
    ((3, 3), (2, 2), (1, 1, 1, 1)),
    ((2, 3), (2, 1), (0, 2, 1, 1)),
    ((3, 3), (3, 2), (2, 0, 0, 2)),
    ((2, 2), (3, 3), (1, 1, 0, 0)),  # stride larger than the kernel
]
POOL_OPS = {
    MaxPool2DOp: max,
    AvgPool2DOp: lambda values: sum(values) / len(values),
}


@pytest.mark.parametrize("op", POOL_OPS, ids=lambda op: op.name)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("kernel", "strides", "pads"), POOLS, ids=str)
def test_pool2d(op: type[Operation], dtype: str, kernel, strides, pads) -> None:
    """Inputs are all negative, so a max that counted padding (as 0) would show."""
    x = random((2, 3, 7, 6), dtype, seed=23, low=-5, high=-1)
    actual = run1(lambda v: op(v, kernel=kernel, strides=strides, pads=pads), x)
    check(actual, pool_loops(wide(x), kernel, strides, pads, POOL_OPS[op]), dtype)


@pytest.mark.parametrize("op", POOL_OPS, ids=lambda op: op.name)
@pytest.mark.parametrize(("kernel", "strides", "pads"), POOLS, ids=str)
def test_pool2d_ignores_padding(op: type[Operation], kernel, strides, pads) -> None:
    """Pooling a constant gives that constant everywhere, border windows included."""
    x = np.full((1, 2, 5, 6), -2.5, np.float32)
    actual = run1(lambda v: op(v, kernel=kernel, strides=strides, pads=pads), x)
    assert actual.dtype == np.float32
    np.testing.assert_array_equal(actual, np.full_like(actual, -2.5))


# ----------------------------------------------------------------------------- shape ops


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    ("shape", "perm"),
    [
        ((3, 4), (1, 0)),
        ((2, 3, 4), (2, 0, 1)),
        ((2, 3, 4), (0, 1, 2)),
        ((2, 3, 4, 5), (3, 1, 0, 2)),
    ],
    ids=str,
)
def test_transpose(dtype: str, shape: tuple, perm: tuple) -> None:
    x = random(shape, dtype, seed=24, low=-50, high=50)
    expected = np.empty(tuple(shape[p] for p in perm), x.dtype)
    for index in np.ndindex(shape):
        expected[tuple(index[p] for p in perm)] = x[index]
    check(run1(lambda v: TransposeOp(v, perm), x), expected, dtype)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    ("shape", "new_shape"),
    [
        ((2, 3, 4), (6, 4)),
        ((2, 3, 4), (24,)),
        ((2, 3, 4), (4, 1, 6)),
        ((), (1, 1)),
        ((1, 1), ()),
        ((6,), (2, 3)),
    ],
    ids=str,
)
def test_reshape(dtype: str, shape: tuple, new_shape: tuple) -> None:
    """Row-major order is kept: element k of the flattened input is element k of the result."""
    x = random(shape, dtype, seed=25, low=-50, high=50)
    expected = np.array(x.ravel().tolist(), x.dtype).reshape(new_shape)
    check(run1(lambda v: ReshapeOp(v, new_shape), x), expected, dtype)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    ("shape", "target"),
    [((3, 1), (2, 3, 4)), ((), (2, 3)), ((4,), (3, 4)), ((1, 1), (1, 5)), ((2, 3), (2, 3))],
    ids=str,
)
def test_broadcast_to(dtype: str, shape: tuple, target: tuple) -> None:
    x = random(shape, dtype, seed=26, low=-50, high=50)
    expected = np.empty(target, x.dtype)
    for index in np.ndindex(target):
        expected[index] = broadcast_get(x, index)
    check(run1(lambda v: BroadcastToOp(v, target), x), expected, dtype)


REDUCTIONS: dict[type[Operation], tuple[Callable[..., Array], tuple]] = {
    ReduceSumOp: (np.sum, NUMBERS),
    ReduceMeanOp: (np.mean, FLOATS),
    ReduceMaxOp: (np.max, NUMBERS),
}
AXES = [None, [0], [-1], [1], [0, 2], [2, 0], [-3, -1], [1, -1], [0, 1, 2], []]


@pytest.mark.parametrize(
    ("op", "dtype"),
    [
        pytest.param(op, dtype, id=f"{op.name}-{dtype}")
        for op, (_, dtypes) in REDUCTIONS.items()
        for dtype in dtypes
    ],
)
@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keepdims"])
@pytest.mark.parametrize("axes", AXES, ids=str)
def test_reduce(op: type[Operation], dtype: str, keepdims: bool, axes: list[int] | None) -> None:
    """Absent axes reduce every axis; negative axes count from the end."""
    x = random((2, 3, 4), dtype, seed=27)
    reduce = REDUCTIONS[op][0]
    expected = reduce(wide(x), axis=None if axes is None else tuple(axes), keepdims=keepdims)
    check(run1(lambda v: op(v, axes, keepdims), x), expected, dtype, sums=True)


@pytest.mark.parametrize("op", REDUCTIONS, ids=lambda op: op.name)
def test_reduce_scalar(op: type[Operation]) -> None:
    x = np.array(-1.5, np.float32)
    check(run1(op, x), -1.5, "f32")


def naive_softmax(x: Array, axis: int) -> Array:
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [-1, 0, 1, -2, 2])
def test_softmax(dtype: str, axis: int) -> None:
    x = random((3, 4, 5), dtype, seed=28)
    actual = run1(lambda v: SoftmaxOp(v, axis), x)
    check(actual, naive_softmax(wide(x), axis), dtype)
    check(np.sum(actual, axis=axis), np.ones(np.delete(x.shape, axis)), dtype, sums=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_is_stable_for_large_inputs(dtype: str) -> None:
    x = np.array([[1000.0, 999.0, -1000.0], [1000.0] * 3, [-1000.0, -1000.0, -999.0]])
    shifted = x - np.array([[1000.0], [1000.0], [-999.0]])  # softmax ignores a row offset
    actual = run1(SoftmaxOp, x.astype(DTYPES[dtype]))
    assert np.all(np.isfinite(actual))
    check(actual, naive_softmax(shifted, -1), dtype)
    check(np.sum(actual, axis=-1), np.ones(3), dtype, sums=True)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        ([(2, 3), (4, 3)], 0),
        ([(2, 3), (2, 1), (2, 2)], 1),
        ([(2, 3, 4), (2, 3, 1)], -1),
        ([(3,)], 0),
        ([(2, 1, 3), (2, 2, 3)], -2),
    ],
    ids=str,
)
def test_concat(dtype: str, shapes: list[tuple], axis: int) -> None:
    parts = [random(shape, dtype, seed=29 + k, low=-50, high=50) for k, shape in enumerate(shapes)]
    actual = run1(lambda *v: ConcatOp(list(v), axis), *parts)
    offset = 0
    for part in parts:  # each part sits in its own range of the axis, in operand order
        size = part.shape[axis]
        check(np.take(actual, range(offset, offset + size), axis=axis), part, dtype)
        offset += size
    assert actual.shape[axis] == offset


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    ("shape", "start", "limit"),
    [
        ((5, 6), (1, 2), (4, 6)),
        ((2, 3, 4), (0, 0, 0), (2, 3, 4)),
        ((2, 3, 4), (1, 1, 3), (2, 3, 4)),
        ((4, 5), (2, 1), (2, 5)),
        ((7,), (3,), (4,)),
    ],
    ids=str,
)
def test_slice(dtype: str, shape: tuple, start: tuple, limit: tuple) -> None:
    x = random(shape, dtype, seed=32, low=-50, high=50)
    expected = np.empty([hi - lo for lo, hi in zip(start, limit, strict=True)], x.dtype)
    for index in np.ndindex(expected.shape):
        expected[index] = x[tuple(i + lo for i, lo in zip(index, start, strict=True))]
    check(run1(lambda v: SliceOp(v, start, limit), x), expected, dtype)


# ----------------------------------------------------------------------------- NaN
# NaN propagates through maximum, minimum, relu, reduce_max and max_pool2d as through
# `np.maximum` (not `np.fmax`, which would drop it), and comparisons on NaN are false.
# Expectations come from plain Python floats: `nan_max` / `nan_min` spell the rule out.


def nan_max(values: Sequence[float]) -> float:
    return math.nan if any(math.isnan(v) for v in values) else max(values)


def nan_min(values: Sequence[float]) -> float:
    return math.nan if any(math.isnan(v) for v in values) else min(values)


NAN_A = [math.nan, 1.5, math.nan, -2.0, 3.0, -math.inf]
NAN_B = [2.0, math.nan, math.nan, -3.0, 4.0, math.nan]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("op", "rule"), [(MaximumOp, nan_max), (MinimumOp, nan_min)])
def test_maximum_minimum_propagate_nan(
    op: type[Operation], rule: Callable[[Sequence[float]], float], dtype: str
) -> None:
    a, b = (np.array(v, DTYPES[dtype]) for v in (NAN_A, NAN_B))
    expected = np.array([rule([x, y]) for x, y in zip(NAN_A, NAN_B, strict=True)])
    check(run1(op, a, b), expected, dtype)
    check(run1(op, b, a), expected, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_relu_propagates_nan(dtype: str) -> None:
    x = [math.nan, -1.0, 2.0, -math.inf]
    check(run1(ReluOp, np.array(x, DTYPES[dtype])), np.array([math.nan, 0.0, 2.0, 0.0]), dtype)


@pytest.mark.parametrize("op", list(UNARY), ids=lambda op: op.name)
def test_unary_propagates_nan(op: type[Operation]) -> None:
    x = np.array([math.nan, 0.5], np.float64)
    assert np.isnan(run1(op, x)[0])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axes", [None, [0], [1]], ids=str)
def test_reduce_max_propagates_nan(dtype: str, axes: list[int] | None) -> None:
    rows = [[1.0, 5.0, -2.0, 0.5], [3.0, 2.0, math.nan, 9.0], [-1.0, -4.0, -3.0, -2.0]]
    if axes is None:
        expected = np.array(nan_max([v for row in rows for v in row]))
    elif axes == [0]:
        expected = np.array([nan_max([row[j] for row in rows]) for j in range(4)])
    else:
        expected = np.array([nan_max(row) for row in rows])
    actual = run1(lambda v: ReduceMaxOp(v, axes), np.array(rows, DTYPES[dtype]))
    check(actual, expected, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_pool2d_propagates_nan(dtype: str) -> None:
    """The NaN sits in a window's first, middle and last positions across the strides."""
    x = random((1, 2, 5, 5), dtype, seed=40)
    x[0, 0, 1, 1] = x[0, 1, 2, 4] = math.nan
    kernel, strides, pads = (3, 3), (1, 2), (1, 1, 1, 1)
    actual = run1(lambda v: MaxPool2DOp(v, kernel=kernel, strides=strides, pads=pads), x)
    check(actual, pool_loops(wide(x), kernel, strides, pads, nan_max), dtype)


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda op: op.name)
@pytest.mark.parametrize("dtype", FLOATS)
def test_comparisons_with_nan_are_false(op: type[Operation], dtype: str) -> None:
    a, b = (np.array(v, DTYPES[dtype]) for v in (NAN_A, NAN_B))
    expected = np.array([COMPARISONS[op](x, y) for x, y in zip(a, b, strict=True)])
    check(run1(op, a, b), expected, "i1")


# ----------------------------------------------------------------------------- empty axes
# A reduction over a size-0 axis gives its identity: reduce_sum 0, reduce_mean NaN
# (0 / 0), reduce_max the lowest value of the type (-inf, or the smallest integer),
# which is where the compiled kernels' accumulators start. The interpreter and a
# compiled program must agree on it.


def lowest_value(dtype: str) -> float:
    """-inf for floats, -2**(bits - 1) for integers: written from the bit width."""
    target = DTYPES[dtype]
    return -math.inf if target.kind == "f" else -(2 ** (8 * target.itemsize - 1))


EMPTY_REDUCTIONS = [  # input shape, axes, keepdims, result shape
    ((0, 3), [0], False, (3,)),
    ((2, 0), [1], True, (2, 1)),
    ((4, 0, 2), [1], False, (4, 2)),
    ((0, 3), None, False, ()),
    ((2, 0), [0], False, (0,)),  # beside the empty axis: nothing to reduce, no result
]


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize(("shape", "axes", "keepdims", "result"), EMPTY_REDUCTIONS, ids=str)
def test_reductions_over_an_empty_axis_give_their_identity(
    dtype: str, shape: tuple, axes: list[int] | None, keepdims: bool, result: tuple
) -> None:
    x = np.zeros(shape, DTYPES[dtype])
    identities = {ReduceSumOp: 0, ReduceMaxOp: lowest_value(dtype), ReduceMeanOp: math.nan}
    for op, identity in identities.items():
        if op is ReduceMeanOp and dtype not in FLOATS:
            continue
        check(run1(lambda v, op=op: op(v, axes, keepdims), x), np.full(result, identity), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_over_an_empty_axis(dtype: str) -> None:
    actual = run1(lambda v: SoftmaxOp(v, 1), np.zeros((3, 0), DTYPES[dtype]))
    check(actual, np.zeros((3, 0)), dtype)


EMPTY_MAX = """
func.func @main(%a: tensor<0x3xf32>, %b: tensor<2x0xf64>, %c: tensor<0x3xi32>,
    %d: tensor<4x0x2xi64>) -> (tensor<3xf32>, tensor<2x1xf64>, tensor<3xi32>, tensor<4x2xi64>,
    tensor<f32>) {
  %0 = df.reduce_max %a {axes = array<i64: 0>} : (tensor<0x3xf32>) -> tensor<3xf32>
  %1 = df.reduce_max %b {axes = array<i64: 1>, keepdims = true}
      : (tensor<2x0xf64>) -> tensor<2x1xf64>
  %2 = df.reduce_max %c {axes = array<i64: 0>} : (tensor<0x3xi32>) -> tensor<3xi32>
  %3 = df.reduce_max %d {axes = array<i64: 1>} : (tensor<4x0x2xi64>) -> tensor<4x2xi64>
  %4 = df.reduce_max %a : (tensor<0x3xf32>) -> tensor<f32>
  func.return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<2x1xf64>, tensor<3xi32>,
      tensor<4x2xi64>, tensor<f32>
}
"""


def test_compiled_reduce_max_over_an_empty_axis_agrees(tmp_path: Path) -> None:
    """The compiled program (numba kernels) and the interpreter give the same identity."""
    inputs = [np.zeros(s, DTYPES[d]) for s, d in [((0, 3), "f32"), ((2, 0), "f64")]]
    inputs += [np.zeros((0, 3), np.int32), np.zeros((4, 0, 2), np.int64)]
    module = parse_module(EMPTY_MAX, "empty_max.mlir")
    interpreted = run_function(module, "main", inputs)
    write_modules(compile_module(module), tmp_path)
    compiled = load_program(tmp_path).run("main", inputs)
    expected = [(3,), (2, 1), (3,), (4, 2), ()]
    dtypes = ["f32", "f64", "i32", "i64", "f32"]
    for got, want, shape, dtype in zip(compiled, interpreted, expected, dtypes, strict=True):
        check(np.asarray(got), np.full(shape, lowest_value(dtype)), dtype)
        check(want, np.full(shape, lowest_value(dtype)), dtype)


def test_an_op_without_semantics_is_named() -> None:
    """Communication has no NumPy meaning alone (the interpreter runs it per device)."""
    recv = RecvOp(TensorType(f32, [4]), "k0", "cpu:0", "cpu:1")
    with pytest.raises(KeyError, match=r"df\.recv has no reference semantics"):
        evaluate(recv, [])


def test_the_interpreter_runs_every_op() -> None:
    """Each df op has its interpreter function (the table of `DfFunctions`): by its
    semantics, or by its own (send, recv, fused); `df.yield` ends a fused body."""
    implemented: dict[type[Operation], object] = getattr(DfFunctions, _IMPL_DICT_KEY)
    missing = {op.name for op in DF.operations if op not in implemented} - {"df.yield"}
    assert not missing, sorted(missing)
    by_semantics = {op for op in DF.operations if issubclass(op, HasSemantics)}
    assert set(implemented) - by_semantics == {SendOp, RecvOp, FusedOp}
