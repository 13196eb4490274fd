"""Elementwise ONNX ops: arithmetic, math functions, comparisons and logic, `Where`,
`Clip`, `Cast`, the float tests `IsNaN` and `IsInf`, and the activations composed of
df ops (`LeakyRelu`, `Gelu`, `HardSigmoid`, `HardSwish`).

Broadcasting is NumPy's in ONNX (opset 7 on) and in df alike. What df defines on
floats only is composed for integers as ONNX defines it: `Div` truncates toward
zero and `Pow` is exact, both through `f64` (exact below 2⁵³). `Mod` folds when both
operands are constants (NumPy's `mod` and `fmod`, which are ONNX's); on integers
computed at run time it is `a - q·b` with `q` estimated in `f64` and the remainder
corrected, exact for every integer type. On floats it is `df.rem` (C's `fmod`,
exact), moved by `b` for `fmod=0` where its sign is not `b`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import f64, i1, i64
from xdsl.ir import Attribute

from dflow.dialects import df
from dflow.dialects.df.arrays import element_type_of, numpy_dtype
from dflow.dialects.df.folding import FoldPolicy, constant_operand
from dflow.dialects.df.types import FLOATS, MINIFLOATS, f4e2m1fn, ui64
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.model import DTYPE_NAMES, DTYPES, dtype_name

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
    "Floor": df.FloorOp,
    "Ceil": df.CeilOp,
    "Round": df.RoundOp,
    "Sin": df.SinOp,
    "Cos": df.CosOp,
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


def float_input(node: Node, index: int = 0) -> Tensor:
    """Input `index`, which must be of a floating-point type (as the op's schema asks)."""
    x = node.input(index)
    if node.element(x) not in FLOATS:
        raise node.error(
            f"{node.op_type} takes floating-point input, got {node.element(x)} (input {index})"
        )
    return x


def _hard_sigmoid(x: Tensor, alpha: float, beta: float) -> Tensor:
    """`max(0, min(1, alpha·x + beta))` in `x`'s type (NaN stays NaN)."""
    return (x * alpha + beta).minimum(1).maximum(0)


@converter("HardSigmoid", attributes={"alpha", "beta"})
def hard_sigmoid(node: Node) -> list[Tensor]:
    x = float_input(node)
    return [_hard_sigmoid(x, node.float("alpha", 0.2), node.float("beta", 0.5))]


@converter("HardSwish")
def hard_swish(node: Node) -> list[Tensor]:
    """`x · HardSigmoid(x)` with `alpha = 1/6`, `beta = 0.5`."""
    x = float_input(node)
    return [x * _hard_sigmoid(x, 1 / 6, 0.5)]


@converter("IsNaN")
def is_nan(node: Node) -> list[Tensor]:
    """`not (x == x)`: NaN is the one value unequal to itself."""
    x = float_input(node)
    same = x.equal(x)
    return [same.equal(node.scalar(False, same))]


@converter("IsInf", attributes={"detect_negative", "detect_positive"})
def is_inf(node: Node) -> list[Tensor]:
    """`x == ±inf` for the signs asked (`|x| == inf` for both; all false for none)."""
    x = float_input(node)
    negative, positive = node.int("detect_negative", 1), node.int("detect_positive", 1)
    if negative and positive:
        return [abs(x).equal(math.inf)]
    if negative or positive:
        return [x.equal(-math.inf if negative else math.inf)]
    return [node.graph.constant(np.zeros(x.shape, dtype=np.bool_))]


@converter("Mod", attributes={"fmod"})
def mod(node: Node) -> list[Tensor]:
    """`a - floor(a/b)·b` (fmod=0, the sign of `b`) or `a - trunc(a/b)·b` (fmod=1, the
    sign of `a`): folded when both operands are constants, else computed exactly."""
    a, b = node.input(0), node.input(1)
    fmod = node.int("fmod", 0)
    element = node.element(a)
    if fmod not in (0, 1):
        raise node.error(f"fmod must be 0 or 1, got {fmod}")
    if node.element(b) != element or element == i1:
        raise node.error(
            f"operands of {element} and {node.element(b)}: Mod takes two numbers of one type"
        )
    if element in FLOATS and not fmod and node.opset < 28:
        raise node.error("fmod=0 on floating-point operands is defined from opset 28 on")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise node.error(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
    folded = _folded_mod(node, a, b, fmod)
    if folded is not None:
        return [folded]
    if element in FLOATS:
        return [_float_mod(node, a, b, fmod=bool(fmod))]
    return [_integer_mod(node, a, b, fmod=bool(fmod))]


def _float_mod(node: Node, a: Tensor, b: Tensor, fmod: bool) -> Tensor:
    """NumPy's `fmod` (fmod) or `mod`: `r = df.rem(a, b)`; for `mod`, `r + b` where
    `r` is non-zero and its sign is not `b`'s, and a zero with `b`'s sign (NumPy's
    `divmod` rule; `-5 mod inf` is `inf`, as in Python)."""
    r = node.emit(df.RemOp(a.value, b.value))
    if fmod:
        return r
    shifted = _where(node, (r < 0.0).equal(b < 0.0), r, r + b)
    signed_zero = _where(node, b < 0.0, node.scalar(-0.0, b), node.scalar(0.0, b))
    return _where(node, r.equal(0.0), signed_zero, shifted)


def _folded_mod(node: Node, a: Tensor, b: Tensor, fmod: int) -> Tensor | None:
    """Mod of two constants by NumPy (`fmod` or `mod`, which ONNX's reference uses),
    as a constant when the fold policy allows its size; else None."""
    lhs, rhs = constant_operand(a.value), constant_operand(b.value)
    if lhs is None or rhs is None:
        return None
    with np.errstate(all="ignore"):  # a zero divisor gives NaN (floats) or 0 (integers)
        result = np.asarray(np.fmod(lhs, rhs) if fmod else np.mod(lhs, rhs))
    if not FoldPolicy().allows([lhs, rhs], result):
        return None
    return node.graph.constant(result)


def _integer_mod(node: Node, a: Tensor, b: Tensor, fmod: bool) -> Tensor:
    """The remainder of integers, exact for all of `i32` and `i64`.

    `r = a - q·b` with `q = trunc(a/b)` computed in `f64`, which is exact below 2⁵³
    (every `i32`). For `i64` the estimate can be off by `|a/b|·2⁻⁵¹ + 1`, so that
    `|r| < |b| + 2¹²`; a second round on `r` brings it under `|b|` (wrapping integer
    arithmetic keeps `a - q·b` right even where `q·b` overflows). Last, a remainder
    of the wrong sign (`a`'s for fmod=1, `b`'s for fmod=0) moves by `±b`.
    """

    def rest(x: Tensor) -> Tensor:
        return x - _through_f64(node, x, b, lambda p, d: p / d) * b

    r = rest(a)
    if node.element(a) in (i64, ui64):
        r = rest(r)
    target = a if fmod else b
    negative, positive = r < 0, r > 0
    nowhere = node.scalar(False, negative)
    wrong = _where(node, negative, target > 0, _where(node, positive, target < 0, nowhere))
    step = _where(node, negative.equal(b < 0), -b, b)
    return _where(node, wrong, r + step, r)


def _where(node: Node, condition: Tensor, on_true: Tensor, on_false: Tensor) -> Tensor:
    return node.emit(df.SelectOp(condition.value, on_true.value, on_false.value))


@converter("Cast", attributes={"to", "saturate", "round_mode"})
def cast(node: Node) -> list[Tensor]:
    """`astype`: floats to integers truncate (and wrap to 2 or 4 bits), to BOOL means
    `!= 0`. To an 8-bit float, `saturate` (the default) first clamps to its largest
    finite value (infinities included; NaN stays NaN), as ONNX's reference does;
    without it, what overflows becomes infinity or NaN as the type has. `round_mode`
    concerns FLOAT8E8M0 only, which dflow has not."""
    x = node.input(0)
    to = node.int("to", 0)
    dtype = DTYPES.get(to)
    if dtype is None:
        raise node.error(f"Cast to {dtype_name(to)} is not supported: dflow has {DTYPE_NAMES}")
    target = element_type_of(dtype)
    if target == node.element(x):
        return [x]
    if target in FLOAT8S and node.int("saturate", 1):
        return [saturated(x, target).cast(target)]
    return [x.cast(target)]


FLOAT8S = MINIFLOATS - {f4e2m1fn}
"""The 8-bit floats, whose casts ONNX saturates by default (FLOAT4E2M1 always does)."""


def saturated(x: Tensor, element: Attribute) -> Tensor:
    """`x` clamped to the finite range of the float type `element` (NaN kept), as
    ONNX's saturating casts and quantizations to 8-bit floats do; integers clamped
    exactly in f64."""
    largest = float(ml_dtypes.finfo(numpy_dtype(element)).max)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    wide = x if x.type.element_type in FLOATS else x.cast(f64)
    return wide.maximum(-largest).minimum(largest)
