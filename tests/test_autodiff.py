"""`df-autodiff`: gradients checked against central finite differences.

Each numeric test builds a float64 `@main` computing `loss = sum(op(args) * W)` with
fixed random weights W, runs `df-autodiff` over every argument, runs `@main_grad` in
the reference interpreter and compares each gradient with central differences of
`@main` (eps 1e-6, rtol 1e-5, atol 1e-7). Inputs keep away from kinks (relu, abs,
max and pooling ties, maximum/minimum ties). Further tests check the shape of
`@main_grad` (results, order, accumulation, zero gradients, `df.backward` marks) and
every error the pass reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import PassFailedException

from dflow import layer_norm, rem
from dflow.dialects.df import AddNOp, ConstantOp
from dflow.dialects.df.annotations import BACKWARD
from dflow.driver.loading.source import make_context, parse_module
from dflow.frontend import Graph, Tensor, addn, avg_pool2d, concat, conv2d, max_pool2d, select
from dflow.interpreters.df import make_interpreter, run_function
from dflow.transforms.autodiff import AutodiffPass

Array = NDArray[Any]
Body = Callable[..., Tensor]

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-7


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def normal(*shape: int, seed: int = 0) -> Array:
    return rng(seed).standard_normal(shape)


def positive(*shape: int, seed: int = 0) -> Array:
    return rng(seed).uniform(0.5, 2.0, shape)


def away_from_zero(*shape: int, seed: int = 0) -> Array:
    """|x| in [0.2, 1.5], either sign: no relu/abs kink within eps."""
    generator = rng(seed)
    return generator.choice([-1.0, 1.0], shape) * generator.uniform(0.2, 1.5, shape)


def distinct(*shape: int, seed: int = 0) -> Array:
    """Values 0.1 apart in random order: no ties for max and pooling."""
    count = int(np.prod(shape))
    return rng(seed).permutation(count).reshape(shape) * 0.1 - count * 0.05


def dtype_name(array: Array) -> str:
    return {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32"}[array.dtype]


def loss_module(body: Body, inputs: Sequence[Array], weight_seed: int = 99) -> ModuleOp:
    """`@main(args) -> sum(body(args) * W)` with fixed random weights W of body's shape."""
    graph = Graph("main")
    args = [graph.input(f"a{i}", a.shape, dtype_name(a)) for i, a in enumerate(inputs)]
    out = body(*args)
    weights = rng(weight_seed).uniform(-1.0, 1.0, out.shape)
    graph.output((out * graph.constant(weights, out.type.element_type)).sum())
    return graph.module()


def differentiate(module: ModuleOp, wrt: Sequence[int], func: str = "main") -> ModuleOp:
    AutodiffPass(func=func, wrt=tuple(wrt)).apply(make_context(), module)
    module.verify()
    return module


def numeric_gradient(module: ModuleOp, inputs: Sequence[Array], index: int) -> Array:
    """Central differences of `@main`'s result 0 w.r.t. argument `index`, in float64.

    The step is measured after rounding to the argument's dtype, so f32 arguments
    work with a larger eps."""
    interpreter = make_interpreter(module)
    eps = EPS if inputs[index].dtype == np.float64 else 1e-3
    grad = np.zeros(inputs[index].shape)
    for position in np.ndindex(inputs[index].shape):
        values: list[float] = []
        steps: list[float] = []
        for sign in (1.0, -1.0):
            moved = [a.copy() for a in inputs]
            moved[index][position] += sign * eps
            values.append(float(interpreter.call_op("main", tuple(moved))[0]))
            steps.append(float(moved[index][position]))
        grad[position] = (values[0] - values[1]) / (steps[0] - steps[1])
    return grad


def check_gradients(body: Body, *inputs: Array, rtol: float = RTOL) -> None:
    """Every argument's gradient from `@main_grad` equals central differences."""
    module = differentiate(loss_module(body, inputs), range(len(inputs)))
    results = run_function(module, "main_grad", inputs)
    (loss,) = run_function(module, "main", inputs)
    np.testing.assert_array_equal(results[0], loss)
    for index, (grad, value) in enumerate(zip(results[1:], inputs, strict=True)):
        assert grad.dtype == value.dtype and grad.shape == value.shape
        expected = numeric_gradient(module, inputs, index)
        np.testing.assert_allclose(grad, expected, rtol=rtol, atol=ATOL, err_msg=f"arg {index}")


# --- elementwise --------------------------------------------------------------------

UNARY: list[tuple[str, Body, Callable[..., Array]]] = [
    ("neg", lambda x: -x, normal),
    ("reciprocal", lambda x: x.reciprocal(), positive),
    ("exp", lambda x: x.exp(), normal),
    ("log", lambda x: x.log(), positive),
    ("sqrt", lambda x: x.sqrt(), positive),
    ("rsqrt", lambda x: x.rsqrt(), positive),
    ("tanh", lambda x: x.tanh(), normal),
    ("erf", lambda x: x.erf(), normal),
    ("sigmoid", lambda x: x.sigmoid(), normal),
    ("floor", lambda x: x.floor(), normal),  # zero between integers
    ("ceil", lambda x: x.ceil(), normal),
    ("round", lambda x: x.round(), normal),
    ("sin", lambda x: x.sin(), normal),
    ("cos", lambda x: x.cos(), normal),
    ("relu", lambda x: x.relu(), away_from_zero),
    ("abs", abs, away_from_zero),
    ("square", lambda x: x.square(), normal),
    ("identity", lambda x: x.identity(), normal),
]


@pytest.mark.parametrize(
    ("body", "make"), [(b, m) for _, b, m in UNARY], ids=[n for n, *_ in UNARY]
)
def test_unary(body: Body, make: Callable[..., Array]) -> None:
    check_gradients(body, make(3, 4))


KINKS = [-1.5, -0.0, 0.0, 2.0]


@pytest.mark.parametrize(
    ("body", "slope"),
    [
        pytest.param(lambda x: x.relu(), lambda v: 1.0 if v > 0 else 0.0, id="relu"),
        pytest.param(abs, lambda v: -1.0 if v < 0 else 1.0, id="abs"),
    ],
)
def test_relu_and_abs_at_zero(body: Body, slope: Callable[[float], float]) -> None:
    """At their kink the rules pick one side: relu passes the gradient only where its
    input is positive (relu'(0) = 0, as TF and PyTorch), abs negates it only where its
    input is negative (abs'(0) = +1); -0.0 is zero, not negative."""
    x = np.array(KINKS)
    module = differentiate(loss_module(body, [x]), [0])
    _, grad = run_function(module, "main_grad", [x])
    weights = rng(99).uniform(-1.0, 1.0, len(KINKS))
    expected = [w * slope(v) for w, v in zip(weights, KINKS, strict=True)]
    np.testing.assert_array_equal(grad, expected)


BINARY: list[tuple[str, Body]] = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("maximum", lambda a, b: a.maximum(b)),
    ("minimum", lambda a, b: a.minimum(b)),
    ("pow", lambda a, b: a**b),
]
BROADCASTS = [((3, 4), (3, 4)), ((2, 1, 4), (3, 1)), ((4,), (2, 3, 4)), ((1, 3, 1), (2, 1, 4))]


def binary_inputs(name: str, shapes: tuple[tuple[int, ...], ...]) -> tuple[Array, Array]:
    lhs_shape, rhs_shape = shapes
    if name in ("div", "pow"):
        return normal(*lhs_shape, seed=1) ** 2 + 0.5, normal(*rhs_shape, seed=2)
    if name in ("maximum", "minimum"):  # distinct values: |a - b| >= 0.1 everywhere
        both = distinct(int(np.prod(lhs_shape)) + int(np.prod(rhs_shape)), seed=3)
        split = int(np.prod(lhs_shape))
        return both[:split].reshape(lhs_shape), both[split:].reshape(rhs_shape)
    return normal(*lhs_shape, seed=1), normal(*rhs_shape, seed=2)


@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize(("name", "body"), BINARY, ids=[n for n, _ in BINARY])
def test_binary(name: str, body: Body, shapes: tuple[tuple[int, ...], ...]) -> None:
    check_gradients(body, *binary_inputs(name, shapes))


def test_maximum_and_minimum_ties_go_to_lhs() -> None:
    x = np.array([1.0, 2.0, 3.0])
    module = differentiate(loss_module(lambda a, b: a.maximum(b) + a.minimum(b), [x, x]), [0, 1])
    _, ga, gb = run_function(module, "main_grad", [x, x])
    weights = rng(99).uniform(-1.0, 1.0, 3)
    np.testing.assert_allclose(ga, 2 * weights)
    np.testing.assert_allclose(gb, 0 * weights)


def test_select_and_comparisons() -> None:
    """The condition (a comparison of an argument) gets no gradient and no error."""

    def body(x: Tensor, t: Tensor, f: Tensor) -> Tensor:
        return select(x > 0.0, t * x, f)

    check_gradients(body, away_from_zero(3, 4), normal(1, 4, seed=1), normal(3, 1, seed=2))


def test_select_on_less_equal() -> None:
    def body(x: Tensor, t: Tensor) -> Tensor:
        return select(x <= 0.0, t, t * x)

    check_gradients(body, away_from_zero(2, 3), normal(3, seed=1))


def test_cast_f32_to_f64() -> None:
    x = normal(3, 4).astype(np.float32)
    check_gradients(lambda a: a.cast("f64").exp(), x, rtol=1e-4)


def test_cast_f64_to_f32_and_back() -> None:
    x = normal(2, 3) * 0.5
    module = differentiate(loss_module(lambda a: a.cast("f32").cast("f64").tanh(), [x]), [0])
    _, grad = run_function(module, "main_grad", [x])
    weights = rng(99).uniform(-1.0, 1.0, (2, 3))
    expected = weights * (1 - np.tanh(x.astype(np.float32).astype(np.float64)) ** 2)
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


def test_addn() -> None:
    check_gradients(
        lambda a, b, c: addn([a, b * a, c.exp()]), *(normal(2, 3, seed=s) for s in range(3))
    )


# --- contractions and windows ----------------------------------------------------


@pytest.mark.parametrize("batch", [(), (2,)], ids=["2d", "batched"])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("transpose_a", [False, True])
def test_matmul(transpose_a: bool, transpose_b: bool, batch: tuple[int, ...]) -> None:
    m, k, n = 3, 4, 5
    a = normal(*batch, *((k, m) if transpose_a else (m, k)), seed=1)
    b = normal(*batch, *((n, k) if transpose_b else (k, n)), seed=2)
    check_gradients(lambda x, y: x.matmul(y, transpose_a, transpose_b), a, b)


CONVS: list[dict[str, Any]] = [
    {},
    {"strides": (2, 1), "pads": (1, 0, 1, 2), "dilations": (1, 2)},
    {"strides": (2, 2), "pads": (0, 1, 1, 0)},  # strides that leave input rows unread
    {"dilations": (2, 1), "pads": (1, 1, 1, 1)},
]


@pytest.mark.parametrize("bias", [False, True], ids=["no_bias", "bias"])
@pytest.mark.parametrize("options", CONVS, ids=["plain", "strided_dilated", "uneven", "dilated"])
def test_conv2d(options: dict[str, Any], bias: bool) -> None:
    inputs = [normal(2, 2, 5, 6, seed=1), normal(3, 2, 2, 3, seed=2)]
    if bias:
        inputs.append(normal(3, seed=3))

    def body(x: Tensor, w: Tensor, b: Tensor | None = None) -> Tensor:
        return conv2d(x, w, b, **options)

    check_gradients(body, *inputs)


GROUPED_CONVS: dict[str, tuple[int, int, int]] = {
    "2_groups": (4, 6, 2),
    "4_groups": (4, 4, 4),
    "depthwise": (3, 3, 3),
    "depthwise_x2": (2, 4, 2),
}
"""Input channels, output channels and groups."""


@pytest.mark.parametrize("bias", [False, True], ids=["no_bias", "bias"])
@pytest.mark.parametrize("options", CONVS[:2], ids=["plain", "strided_dilated"])
@pytest.mark.parametrize("grouping", list(GROUPED_CONVS))
def test_grouped_conv2d(grouping: str, options: dict[str, Any], bias: bool) -> None:
    """The gradients of a grouped convolution (its gradient ops carry `groups`)."""
    channels, filters, groups = GROUPED_CONVS[grouping]
    inputs = [normal(2, channels, 5, 6, seed=1), normal(filters, channels // groups, 2, 3, seed=2)]
    if bias:
        inputs.append(normal(filters, seed=3))

    def body(x: Tensor, w: Tensor, b: Tensor | None = None) -> Tensor:
        return conv2d(x, w, b, groups=groups, **options)

    check_gradients(body, *inputs)


POOLS: list[dict[str, Any]] = [
    {"kernel": (2, 2), "strides": (2, 2)},
    {"kernel": (3, 2), "strides": (2, 1), "pads": (1, 0, 1, 1)},
    {"kernel": (2, 3), "strides": (1, 2), "pads": (0, 1, 1, 2)},
]


@pytest.mark.parametrize("options", POOLS, ids=["plain", "padded", "overlapping"])
@pytest.mark.parametrize("pool", [max_pool2d, avg_pool2d], ids=["max", "avg"])
def test_pool(pool: Callable[..., Tensor], options: dict[str, Any]) -> None:
    check_gradients(lambda x: pool(x, **options), distinct(2, 2, 5, 5))


# --- shapes and reductions --------------------------------------------------------

REDUCTIONS: list[tuple[Sequence[int] | None, bool]] = [
    (None, False),
    (None, True),
    ((1,), False),
    ((0, 2), True),
    ((-1,), False),
    ((-3, -1), True),
]


@pytest.mark.parametrize(("axes", "keepdims"), REDUCTIONS, ids=str)
@pytest.mark.parametrize("method", ["sum", "mean", "max"])
def test_reduce(method: str, axes: Sequence[int] | None, keepdims: bool) -> None:
    def body(x: Tensor) -> Tensor:
        return getattr(x, method)(axes, keepdims)

    check_gradients(body, distinct(2, 3, 4))


def test_reduce_max_splits_ties() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    module = differentiate(loss_module(lambda a: a.max([1]), [x]), [0])
    _, grad = run_function(module, "main_grad", [x])
    weights = rng(99).uniform(-1.0, 1.0, 2)
    expected = np.array([[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]) * weights[:, None]
    np.testing.assert_allclose(grad, expected)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax(axis: int) -> None:
    check_gradients(lambda x: x.softmax(axis), normal(2, 3, 4))


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)], ids=str)
def test_layer_norm(shape: tuple[int, ...]) -> None:
    """Of the input, the scale and the bias; rows of 1-D, 2-D and 3-D inputs."""
    n = shape[-1]
    check_gradients(
        lambda x, s, b: layer_norm(x, s, b, 1e-3),
        normal(*shape),
        normal(n, seed=1),
        normal(n, seed=2),
    )


def test_rem() -> None:
    """fmod's gradient away from its jumps: `a/b` in (2.2, 2.8), so trunc(a/b) = 2."""
    b = normal(3, 4, seed=1) ** 2 + 0.5
    a = b * rng(2).uniform(2.2, 2.8, (3, 4))
    check_gradients(rem, a, b)


SHAPE_OPS: list[tuple[str, Body, tuple[int, ...]]] = [
    ("reshape", lambda x: x.reshape((6, 4)), (2, 3, 4)),
    ("reshape_to_scalar", lambda x: x.reshape(()), (1, 1)),
    ("transpose", lambda x: x.transpose((2, 0, 1)), (2, 3, 4)),
    ("broadcast_to", lambda x: x.broadcast_to((2, 3, 4)), (3, 1)),
    ("broadcast_same_rank", lambda x: x.broadcast_to((2, 3)), (1, 3)),
    ("slice", lambda x: x[1:2, :, 1:3], (3, 3, 4)),
    ("slice_edges", lambda x: x[0:2, 2:4], (3, 4)),
    ("slice_all", lambda x: x[:, :], (2, 2)),
]


@pytest.mark.parametrize(
    ("body", "shape"), [(b, s) for _, b, s in SHAPE_OPS], ids=[n for n, *_ in SHAPE_OPS]
)
def test_shape_op(body: Body, shape: tuple[int, ...]) -> None:
    check_gradients(body, normal(*shape))


@pytest.mark.parametrize("axis", [1, -1, 0])
def test_concat(axis: int) -> None:
    shapes = {1: [(2, 1, 3), (2, 3, 3), (2, 2, 3)], -1: [(2, 2, 1), (2, 2, 2), (2, 2, 3)]}
    shapes[0] = [(1, 2, 3), (2, 2, 3), (3, 2, 3)]
    inputs = [normal(*s, seed=i) for i, s in enumerate(shapes[axis])]
    check_gradients(lambda *xs: concat(list(xs), axis), *inputs)


def test_max_pool_of_an_empty_plane_has_an_empty_gradient() -> None:
    """A plane of no element, padded into windows: the pool is all -inf and the
    input's gradient is empty (there is no index to keep)."""
    module = differentiate(
        loss_module(lambda x: max_pool2d(x, (2, 2), pads=(1, 0, 1, 0)), [normal(1, 2, 0, 3)]),
        [0],
    )
    names = {op.name for op in functions(module)["main_grad"].walk()}
    assert "df.max_pool2d_indices" not in names and "df.max_pool2d" in names
    _, grad = run_function(module, "main_grad", [normal(1, 2, 0, 3)])
    assert grad.shape == (1, 2, 0, 3)


def test_small_network() -> None:
    """A conv, pool, matmul and softmax chain: the rules compose."""

    def body(x: Tensor, w: Tensor, v: Tensor) -> Tensor:
        h = max_pool2d(conv2d(x, w, pads=(1, 1, 1, 1)).tanh(), (2, 2), (2, 2))
        return (h.reshape((2, 18)) @ v).softmax().log()

    check_gradients(body, normal(2, 1, 4, 6, seed=1), normal(3, 1, 3, 3, seed=2), normal(18, 5))


# --- the shape of @main_grad ------------------------------------------------------


def functions(module: ModuleOp) -> dict[str, FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}


MULTI = """
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>, %n: tensor<2xi32>)
    -> (tensor<f64>, tensor<3xf64>, tensor<2xi32>) {
  %0 = df.mul %x, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = df.add %0, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %2 = df.mul %1, %y : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %3 = df.reduce_sum %2 : (tensor<3xf64>) -> tensor<f64>
  func.return %3, %1, %n : tensor<f64>, tensor<3xf64>, tensor<2xi32>
}
"""
MULTI_INPUTS = [np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, -1.1]), np.array([4, 5], np.int32)]


def test_results_come_first_unchanged() -> None:
    module = differentiate(parse_module(MULTI, "multi"), [0])
    main = run_function(module, "main", MULTI_INPUTS)
    grad = run_function(module, "main_grad", MULTI_INPUTS)
    assert len(grad) == len(main) + 1
    for got, want in zip(grad[:3], main, strict=True):
        np.testing.assert_array_equal(got, want)
    main_type = functions(module)["main"].function_type
    grad_type = functions(module)["main_grad"].function_type
    assert grad_type.inputs == main_type.inputs
    assert grad_type.outputs.data[:3] == main_type.outputs.data
    assert grad_type.outputs.data[3] == main_type.inputs.data[0]


def test_gradients_in_the_order_given_and_accumulated() -> None:
    """wrt=1,0: d/dy first; x is used three times, summed by one df.addn."""
    module = differentiate(parse_module(MULTI, "multi"), [1, 0])
    _, _, _, gy, gx = run_function(module, "main_grad", MULTI_INPUTS)
    x, y, _ = MULTI_INPUTS
    np.testing.assert_allclose(gy, x * x + x)
    np.testing.assert_allclose(gx, (2 * x + 1) * y)
    addns = [op for op in functions(module)["main_grad"].walk() if isinstance(op, AddNOp)]
    assert len(addns) == 1 and len(addns[0].operands) == 3


def test_repeated_wrt_argument() -> None:
    module = differentiate(parse_module(MULTI, "multi"), [0, 0])
    *_, g1, g2 = run_function(module, "main_grad", MULTI_INPUTS)
    np.testing.assert_array_equal(g1, g2)


UNUSED = """
func.func @main(%x: tensor<2x2xf32>, %unused: tensor<3xf32>) -> tensor<f32> {
  %0 = df.reduce_mean %x : (tensor<2x2xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
"""


def test_unused_argument_gets_zeros() -> None:
    module = differentiate(parse_module(UNUSED, "unused"), [1, 0])
    inputs = [np.ones((2, 2), np.float32), np.ones(3, np.float32)]
    _, g_unused, g_x = run_function(module, "main_grad", inputs)
    assert g_unused.dtype == np.float32
    np.testing.assert_array_equal(g_unused, np.zeros(3))
    np.testing.assert_allclose(g_x, np.full((2, 2), 0.25))
    zeros = functions(module)["main_grad"].body.block.ops
    assert any(isinstance(op, ConstantOp) and op.result.type == inputs_type(module) for op in zeros)


def inputs_type(module: ModuleOp) -> Any:
    return functions(module)["main"].function_type.inputs.data[1]


def test_loss_without_path_gives_zero_gradients() -> None:
    text = """
func.func @main(%x: tensor<2xf64>, %y: tensor<2xf64>) -> tensor<f64> {
  %0 = df.reduce_sum %y : (tensor<2xf64>) -> tensor<f64>
  func.return %0 : tensor<f64>
}
"""
    module = differentiate(parse_module(text, "t"), [0])
    _, gx = run_function(module, "main_grad", [np.ones(2), np.ones(2)])
    np.testing.assert_array_equal(gx, np.zeros(2))


def test_loss_is_the_argument() -> None:
    text = """
func.func @main(%x: tensor<1x1xf64>) -> tensor<1x1xf64> {
  func.return %x : tensor<1x1xf64>
}
"""
    module = differentiate(parse_module(text, "t"), [0])
    _, gx = run_function(module, "main_grad", [np.full((1, 1), 3.0)])
    np.testing.assert_array_equal(gx, np.ones((1, 1)))


def test_backward_marks() -> None:
    """Cloned forward ops carry no df.backward; every op the pass adds carries it."""
    module = differentiate(
        loss_module(lambda a, b: (a @ b).relu(), [normal(2, 3), normal(3, 2)]), [0, 1]
    )
    main = functions(module)["main"]
    grad = functions(module)["main_grad"]
    forward = list(main.body.block.ops)[:-1]
    ops = list(grad.body.block.ops)[:-1]
    cloned, added = ops[: len(forward)], ops[len(forward) :]
    assert [op.name for op in cloned] == [op.name for op in forward]
    assert all(BACKWARD not in op.attributes for op in cloned)
    assert added and all(BACKWARD in op.attributes for op in added)
    assert all(BACKWARD not in op.attributes for op in main.walk())


def test_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    module = parse_module(MULTI, "multi")
    AutodiffPass(wrt=(0,), stats=True).apply(make_context(), module)
    assert "backward ops:" in capsys.readouterr().err


def test_pass_spec_parses_wrt_list() -> None:
    spec = parse_spec("df-autodiff{func=f wrt=0,2}")
    assert AutodiffPass.from_pass_spec(spec) == AutodiffPass(func="f", wrt=(0, 2))


# --- errors -----------------------------------------------------------------------

CALL = """
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<f32> {
  %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = df.reduce_sum %0 : (tensor<2xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}
"""
GRAD_OP = """
func.func @main(%g: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<f32> {
  %0 = df.conv2d_grad_input %g, %w
      : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %1 = df.reduce_sum %0 : (tensor<1x1x4x4xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}
"""
THROUGH_INT = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %0 = df.cast %y : (tensor<4xf32>) -> tensor<4xi32>
  %1 = df.cast %0 : (tensor<4xi32>) -> tensor<4xf32>
  %2 = df.add %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = df.reduce_sum %2 : (tensor<4xf32>) -> tensor<f32>
  func.return %3 : tensor<f32>
}
"""
VECTOR_LOSS = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
"""
INT_LOSS = """
func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<i32> {
  func.return %n : tensor<i32>
}
"""
NO_RESULTS = """
func.func @main(%x: tensor<4xf32>) {
  func.return
}
"""
INT_ARG = """
func.func @main(%x: tensor<4xf32>, %n: tensor<4xi32>) -> tensor<f32> {
  %0 = df.reduce_sum %x : (tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
"""
ALREADY = (
    INT_ARG
    + """
func.func @main_grad(%x: tensor<4xf32>) {
  func.return
}
"""
)
PREFIX = "df-autodiff: "
ERRORS: list[tuple[str, str, str, tuple[int, ...], str]] = [
    ("missing_function", INT_ARG, "train", (0,), "no function @train (functions: @main)"),
    (
        "wrt_out_of_range",
        INT_ARG,
        "main",
        (0, 2),
        "wrt argument 2 is out of range: @main has 2 arguments",
    ),
    (
        "wrt_negative",
        INT_ARG,
        "main",
        (-1,),
        "wrt argument -1 is out of range: @main has 2 arguments",
    ),
    (
        "wrt_integer",
        INT_ARG,
        "main",
        (1,),
        "argument 1 of @main has type tensor<4xi32>; only floating-point arguments can be "
        "differentiated",
    ),
    (
        "vector_loss",
        VECTOR_LOSS,
        "main",
        (0,),
        "the loss (result 0 of @main) must be a scalar, got tensor<4xf32>",
    ),
    (
        "integer_loss",
        INT_LOSS,
        "main",
        (0,),
        "the loss (result 0 of @main) must be a scalar, got tensor<i32>",
    ),
    (
        "no_results",
        NO_RESULTS,
        "main",
        (0,),
        "@main has no results; its result 0 must be the scalar loss",
    ),
    (
        "call",
        CALL,
        "main",
        (0,),
        "func.call has no gradient rule (on the path from argument 0 to the loss)",
    ),
    (
        "gradient_op",
        GRAD_OP,
        "main",
        (1, 0),
        "df.conv2d_grad_input has no gradient rule (on the path from argument 0 to the loss)",
    ),
    (
        "through_integers",
        THROUGH_INT,
        "main",
        (0, 1),
        "no gradient through df.cast from i32 (on the path from argument 1 to the loss)",
    ),
    ("already_exists", ALREADY, "main", (0,), "@main_grad already exists"),
]


@pytest.mark.parametrize(
    ("text", "func", "wrt", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_errors(text: str, func: str, wrt: tuple[int, ...], message: str) -> None:
    module = parse_module(text, "error")
    before = str(module)
    with pytest.raises(PassFailedException) as error:
        AutodiffPass(func=func, wrt=wrt).apply(make_context(), module)
    assert str(error.value) == PREFIX + message
    assert str(module) == before


def test_pow_with_zero_base_has_finite_gradients() -> None:
    """d(a^b)/db takes log(a) as 0 where a <= 0 (a zero base would give 0 * -inf)."""
    a, b = np.array([0.0, 2.0]), np.array([2.0, 3.0])
    module = differentiate(loss_module(lambda x, y: x**y, [a, b]), [0, 1])
    _, ga, gb = run_function(module, "main_grad", [a, b])
    weights = rng(99).uniform(-1.0, 1.0, 2)
    np.testing.assert_allclose(ga, weights * b * a ** (b - 1))
    np.testing.assert_allclose(gb, weights * np.array([0.0, 8 * np.log(2.0)]))
