"""Elementwise ONNX ops: arithmetic, math functions, comparisons and logic, `Where`,
`Clip`, `Cast`, and the activations composed of df ops (`LeakyRelu`, `Gelu`).

Broadcasting is NumPy's in ONNX (opset 7 on) and in df alike. What df defines on
floats only is composed for integers as ONNX defines it: `Div` truncates toward
zero and `Pow` is exact, both through `f64` (exact below 2⁵³).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import f64

from dflow.dialects import df
from dflow.dialects.df.arrays import element_type_of
from dflow.dialects.df.types import FLOATS
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.model import DTYPES, dtype_name

UNARY: dict[str, type[df.UnaryElementwiseOp]] = {
    "Neg": df.NegOp,
    "Abs": df.AbsOp,
    "Reciprocal": df.ReciprocalOp,
    "Sqrt": df.SqrtOp,
    "Exp": df.ExpOp,
    "Log": df.LogOp,
    "Tanh": df.TanhOp,
    "Sigmoid": df.SigmoidOp,
    "Relu": df.ReluOp,
    "Erf": df.ErfOp,
}

BINARY: dict[str, type[df.BinaryElementwiseOp]] = {
    "Add": df.AddOp,
    "Sub": df.SubOp,
    "Mul": df.MulOp,
    "Greater": df.GreaterOp,
    "Less": df.LessOp,
    "Equal": df.EqualOp,
    "GreaterOrEqual": df.GreaterEqualOp,
    "LessOrEqual": df.LessEqualOp,
}

VARIADIC: dict[str, type[df.BinaryElementwiseOp]] = {
    "Max": df.MaximumOp,
    "Min": df.MinimumOp,
    "Sum": df.AddOp,
}


@converter(*UNARY)
def unary(node: Node) -> list[Tensor]:
    return [node.emit(UNARY[node.op_type](node.input(0).value))]


@converter("Identity")
def identity(node: Node) -> list[Tensor]:
    return [node.input(0)]


@converter(*BINARY)
def binary(node: Node) -> list[Tensor]:
    lhs, rhs = node.input(0), node.input(1)
    return [node.emit(BINARY[node.op_type](lhs.value, rhs.value))]


def _fold(node: Node, combine: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    """`combine` over all inputs, left to right (each pair broadcast)."""
    terms = [node.input(i) for i in range(len(node.inputs))]
    if not terms:
        raise node.error("it has no inputs")
    result = terms[0]
    for term in terms[1:]:
        result = combine(result, term)
    return result


@converter(*VARIADIC)
def variadic(node: Node) -> list[Tensor]:
    op_type = VARIADIC[node.op_type]
    result = _fold(node, lambda a, b: node.emit(op_type(a.value, b.value)))
    return [result]


@converter("Mean")
def mean(node: Node) -> list[Tensor]:
    total = _fold(node, lambda a, b: a + b)
    return [total / node.scalar(len(node.inputs), total)]


def _through_f64(
    node: Node, lhs: Tensor, rhs: Tensor, op: Callable[[Tensor, Tensor], Tensor]
) -> Tensor:
    """`op` of two integer tensors computed in f64 and truncated back to `lhs`'s type."""
    result = op(lhs.cast(f64), rhs.cast(f64))
    return result.cast(node.element(lhs))


@converter("Div")
def div(node: Node) -> list[Tensor]:
    lhs, rhs = node.input(0), node.input(1)
    if node.element(lhs) in FLOATS:
        return [node.emit(df.DivOp(lhs.value, rhs.value))]
    return [_through_f64(node, lhs, rhs, lambda a, b: a / b)]


@converter("Pow")
def pow(node: Node) -> list[Tensor]:
    """`x ** y`; the exponent may have another type than the base (opset 12 on)."""
    base, exponent = node.input(0), node.input(1)
    if node.element(base) in FLOATS:
        if node.element(exponent) != node.element(base):
            exponent = exponent.cast(node.element(base))
        return [node.emit(df.PowOp(base.value, exponent.value))]
    return [_through_f64(node, base, exponent, lambda a, b: a**b)]


@converter("Not")
def logical_not(node: Node) -> list[Tensor]:
    x = node.input(0)
    return [x.equal(node.scalar(False, x))]


@converter("And")
def logical_and(node: Node) -> list[Tensor]:
    lhs, rhs = node.input(0), node.input(1)
    return [node.emit(df.SelectOp(lhs.value, rhs.value, node.scalar(False, rhs).value))]


@converter("Or")
def logical_or(node: Node) -> list[Tensor]:
    lhs, rhs = node.input(0), node.input(1)
    return [node.emit(df.SelectOp(lhs.value, node.scalar(True, rhs).value, rhs.value))]


@converter("Where")
def where(node: Node) -> list[Tensor]:
    condition, on_true, on_false = node.input(0), node.input(1), node.input(2)
    return [node.emit(df.SelectOp(condition.value, on_true.value, on_false.value))]


@converter("LeakyRelu", attributes={"alpha"})
def leaky_relu(node: Node) -> list[Tensor]:
    """`x` where `x >= 0`, else `alpha * x`."""
    x = node.input(0)
    alpha = node.float("alpha", 0.01)
    negative = x < node.scalar(0, x)
    return [node.emit(df.SelectOp(negative.value, (x * alpha).value, x.value))]


@converter("Clip")
def clip(node: Node) -> list[Tensor]:
    """`min(max(x, low), high)` with optional bounds (inputs, opset 11 on); where
    `low > high` the result is `high`, as in `numpy.clip`."""
    x = node.input(0)
    low, high = node.optional(1), node.optional(2)
    if low is not None:
        x = x.maximum(low)
    if high is not None:
        x = x.minimum(high)
    return [x]


@converter("Gelu", attributes={"approximate"})
def gelu(node: Node) -> list[Tensor]:
    """`x · Φ(x) = x/2 · (1 + erf(x/√2))`, or with `approximate="tanh"`
    `x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))`."""
    x = node.input(0)
    approximate = node.string("approximate", "none")
    if approximate == "none":
        inner = (x * (1 / math.sqrt(2))).erf()
    elif approximate == "tanh":
        inner = ((x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)).tanh()
    else:
        raise node.error(f"approximate={approximate!r} is not supported (none or tanh)")
    return [x * 0.5 * (inner + 1)]


@converter("Cast", attributes={"to", "saturate", "round_mode"})
def cast(node: Node) -> list[Tensor]:
    """`astype`: floats to integers truncate, to BOOL means `!= 0`. `saturate` and
    `round_mode` concern 8-bit floats only, which dflow has not."""
    x = node.input(0)
    to = node.int("to", 0)
    dtype = DTYPES.get(to)
    if dtype is None:
        raise node.error(
            f"Cast to {dtype_name(to)} is not supported: dflow has FLOAT, DOUBLE, INT32, "
            "INT64 and BOOL"
        )
    target = element_type_of(dtype)
    if target == node.element(x):
        return [x]
    return [x.cast(target)]
