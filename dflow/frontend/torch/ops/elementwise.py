"""Elementwise ATen ops: the unary math, arithmetic with tensors and Python numbers,
comparisons and logic, `where`, `clamp`, and the activations Core ATen keeps
(`gelu`, `hardtanh`, `leaky_relu`).

Arithmetic computes in the dtype PyTorch's promotion gives the result (its
operands cast to it, Python numbers made constants of it), so `int32 * 2.5` is
float32 as in PyTorch; comparisons compute in their operands' promoted dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from dflow.dialects import df
from dflow.frontend import ops
from dflow.frontend.builder import Tensor, unary
from dflow.frontend.torch.call import DTYPES, Call, converter

_TORCH_DTYPES = {name: dtype for dtype, name in DTYPES.items()}

_UNARY: dict[str, type[df.UnaryElementwiseOp]] = {
    "relu": df.ReluOp,
    "sigmoid": df.SigmoidOp,
    "tanh": df.TanhOp,
    "exp": df.ExpOp,
    "log": df.LogOp,
    "neg": df.NegOp,
    "abs": df.AbsOp,
    "rsqrt": df.RsqrtOp,
    "sqrt": df.SqrtOp,
    "erf": df.ErfOp,
    "sin": df.SinOp,
    "cos": df.CosOp,
    "reciprocal": df.ReciprocalOp,
    "floor": df.FloorOp,
    "ceil": df.CeilOp,
    "round": df.RoundOp,
}


def _unary_converter(op_type: type[df.UnaryElementwiseOp]) -> Callable[[Call], Tensor]:
    def convert(call: Call) -> Tensor:
        return unary(op_type, call.cast(call.tensor("self")))

    return convert


for _name, _op in _UNARY.items():
    converter(f"{_name}.default")(_unary_converter(_op))


@converter("expm1.default")
def expm1(call: Call) -> Tensor:
    return call.cast(call.tensor("self")).exp() - call.scalar(1)


@converter("log1p.default")
def log1p(call: Call) -> Tensor:
    return (call.cast(call.tensor("self")) + call.scalar(1)).log()


@converter("logical_not.default", "bitwise_not.default")
def logical_not(call: Call) -> Tensor:
    x = call.tensor("self")
    if "bitwise" in str(call.node.target) and call.dtype != torch.bool:
        raise call.error("bitwise_not of integers is not supported")
    return x.equal(call.operand(0, _dtype_of(x)))


# ----------------------------------------------------------------------------- arithmetic


def _binary(call: Call, op: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    return op(call.operand(call["self"]), call.operand(call["other"]))


def _alpha(call: Call, b: Any) -> Any:
    alpha = call.arguments.get("alpha", 1)
    if alpha in (1, None):
        return b
    return call.operand(b) * call.scalar(alpha)


@converter("add.Tensor", "add.Scalar")
def add(call: Call) -> Tensor:
    a, b = call.operand(call["self"]), call.operand(_alpha(call, call["other"]))
    return a + b


@converter("sub.Tensor", "sub.Scalar")
def sub(call: Call) -> Tensor:
    a, b = call.operand(call["self"]), call.operand(_alpha(call, call["other"]))
    return a - b


@converter("rsub.Scalar", "rsub.Tensor")
def rsub(call: Call) -> Tensor:
    """`other - alpha · self`."""
    a, b = call.operand(_alpha(call, call["self"])), call.operand(call["other"])
    return b - a


@converter("mul.Tensor", "mul.Scalar")
def mul(call: Call) -> Tensor:
    return _binary(call, lambda a, b: a * b)


@converter("div.Tensor", "div.Scalar", "div.Tensor_mode", "div.Scalar_mode")
def div(call: Call) -> Tensor:
    mode = call.arguments.get("rounding_mode")
    a, b = call["self"], call["other"]
    if mode is None:
        return call.operand(a) / call.operand(b)
    wide = torch.float64
    quotient = call.operand(a, wide) / call.operand(b, wide)
    rounded = quotient.floor() if mode == "floor" else _trunc(call, quotient, wide)
    return call.cast(rounded)


def _trunc(call: Call, x: Tensor, dtype: torch.dtype) -> Tensor:
    zero = call.scalar(0, dtype)
    return ops.select(x < zero, x.ceil(), x.floor())


@converter("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")
def pow_(call: Call) -> Tensor:
    base, exponent = call["self"], call["exponent"]
    if isinstance(exponent, int | float) and exponent in (2, 0.5):
        return call.operand(base).square() if exponent == 2 else call.operand(base).sqrt()
    return call.operand(base) ** call.operand(exponent)


@converter("maximum.default")
def maximum(call: Call) -> Tensor:
    return _binary(call, lambda a, b: a.maximum(b))


@converter("minimum.default")
def minimum(call: Call) -> Tensor:
    return _binary(call, lambda a, b: a.minimum(b))


@converter("fmod.Scalar", "fmod.Tensor")
def fmod(call: Call) -> Tensor:
    """C's `fmod`, the remainder with the dividend's sign (`df.rem`; of integers in
    float64, exact below 2**53)."""
    if call.dtype.is_floating_point:
        return _binary(call, ops.rem)
    wide = torch.float64
    return call.cast(ops.rem(call.operand(call["self"], wide), call.operand(call["other"], wide)))


@converter("remainder.Scalar", "remainder.Tensor")
def remainder(call: Call) -> Tensor:
    """Python's `%`, the remainder with the divisor's sign: `fmod`, plus the divisor
    where the two signs differ and the remainder is not 0."""
    dtype = call.dtype if call.dtype.is_floating_point else torch.float64
    a, b = call.operand(call["self"], dtype), call.operand(call["other"], dtype)
    r = ops.rem(a, b)
    zero = call.scalar(0, dtype)
    differ = (r < zero).equal(b < zero).equal(call.operand(False, torch.bool))
    fix = ops.select(differ, ops.select(r.equal(zero), zero, b), zero)
    return r + fix


# ----------------------------------------------------------------------------- comparisons

_COMPARISONS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "eq": lambda a, b: a.equal(b),
    "ne": lambda a, b: a.equal(b).equal(_false(a)),
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def _false(like: Tensor) -> Tensor:
    return like.graph.constant(False)


def _dtype_of(tensor: Tensor) -> torch.dtype:
    return _TORCH_DTYPES[str(tensor.type.element_type)]


def _promoted(a: Any, b: Any) -> torch.dtype:
    """The dtype PyTorch computes `a op b` in (a tensor's rank matters: a 0-d one
    promotes as a number of its category does)."""

    def probe(value: Any) -> Any:
        if isinstance(value, Tensor):
            return torch.empty((0,) * min(len(value.shape), 1), dtype=_dtype_of(value))
        return value

    return torch.result_type(probe(a), probe(b))


def _comparison(name: str) -> Callable[[Call], Tensor]:
    compare = _COMPARISONS[name]

    def convert(call: Call) -> Tensor:
        a, b = call["self"], call["other"]
        dtype = _promoted(a, b)
        return compare(call.operand(a, dtype), call.operand(b, dtype))

    return convert


for _name in _COMPARISONS:
    converter(f"{_name}.Scalar", f"{_name}.Tensor")(_comparison(_name))


def _logical(call: Call, op: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    a, b = (call.operand(call[n], torch.bool) for n in ("self", "other"))
    return op(a, b)


@converter("logical_and.default", "bitwise_and.Tensor")
def logical_and(call: Call) -> Tensor:
    _only_booleans(call)
    return _logical(call, lambda a, b: ops.select(a, b, _false(a)))


@converter("logical_or.default", "bitwise_or.Tensor")
def logical_or(call: Call) -> Tensor:
    _only_booleans(call)
    return _logical(call, lambda a, b: ops.select(a, a, b))


@converter("logical_xor.default", "bitwise_xor.Tensor")
def logical_xor(call: Call) -> Tensor:
    _only_booleans(call)
    return _logical(call, lambda a, b: a.equal(b).equal(_false(a)))


def _only_booleans(call: Call) -> None:
    if "bitwise" in str(call.node.target) and call.dtype != torch.bool:
        raise call.error("bitwise operations on integers are not supported")


@converter("where.self", "where.ScalarSelf", "where.ScalarOther", "where.Scalar")
def where(call: Call) -> Tensor:
    condition = call.operand(call["condition"], torch.bool)
    return ops.select(condition, call.operand(call["self"]), call.operand(call["other"]))


# ----------------------------------------------------------------------------- activations


@converter("clamp.default", "clamp.Tensor", "clamp_min.default", "clamp_max.default")
def clamp(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    low = call.arguments.get("min")
    high = call.arguments.get("max")
    if low is not None:
        x = x.maximum(call.operand(low))
    if high is not None:
        x = x.minimum(call.operand(high))
    return x


@converter("hardtanh.default")
def hardtanh(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    return x.maximum(call.scalar(call["min_val"])).minimum(call.scalar(call["max_val"]))


@converter("gelu.default")
def gelu(call: Call) -> Tensor:
    """`x · Φ(x)`: exactly by `erf`, or by PyTorch's `tanh` approximation."""
    x = call.cast(call.tensor("self"))
    half = call.scalar(0.5)
    if call["approximate"] == "tanh":
        cube = x * x * x * call.scalar(0.044715)
        inner = (x + cube) * call.scalar(math.sqrt(2 / math.pi))
        return half * x * (call.scalar(1) + inner.tanh())
    return half * x * (call.scalar(1) + (x * call.scalar(1 / math.sqrt(2))).erf())


@converter("leaky_relu.default")
def leaky_relu(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    zero = call.scalar(0)
    return ops.select(x > zero, x, x * call.scalar(call["negative_slope"]))


@converter("elu.default")
def elu(call: Call) -> Tensor:
    """`scale · x` above 0, `scale · alpha · (exp(input_scale · x) - 1)` below."""
    x = call.cast(call.tensor("self"))
    scale = call.scalar(call["scale"])
    below = ((x * call.scalar(call["input_scale"])).exp() - call.scalar(1)) * call.scalar(
        call["alpha"]
    )
    return ops.select(x > call.scalar(0), x, below) * scale


@converter("sign.default")
def sign(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    zero = call.scalar(0)
    positive = ops.select(x > zero, call.scalar(1), zero)
    return ops.select(x < zero, call.scalar(-1), positive)


@converter("_to_copy.default", "clone.default", "alias.default", "detach.default",
           "lift_fresh_copy.default", "contiguous.default")  # fmt: skip
def copy_of(call: Call) -> Tensor:
    """A copy (functional graphs never write it), in the recorded dtype."""
    return call.cast(call.tensor("self"))


@converter("copy.default")
def copy(call: Call) -> Tensor:
    """`self` replaced by `src` broadcast to its shape, in its dtype."""
    source = call.cast(call.tensor("src"))
    return source if source.shape == call.shape else ops.broadcast_to(source, call.shape)
