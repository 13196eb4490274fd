"""Gradient rules of the `df` ops, one per op family, for `df-autodiff`.

A rule receives the op, the adjoint `g` of its result (the result's exact type) and
which operands want a gradient; it returns one contribution per operand (None where
none is wanted), each of the operand's exact type. Every op a rule creates goes
through `Emitter.emit`, which verifies it and marks it `df.backward`, except the
forward ops a rule puts in place of its op to keep what the gradient needs
(`Emitter.replace_forward`: `df.max_pool2d`'s indices).

Rules are registered in a dict keyed by op class, like the reference semantics
(`dialects.df.semantics`). Ops without a rule (calls, the gradient ops themselves,
send/recv) stop the pass when they lie on the path from an argument to the loss.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any, TypeVar

import numpy as np
from xdsl.dialects.builtin import TensorType, UnitAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue

from dflow.dialects.df import annotations, indexing, nn
from dflow.dialects.df import elementwise as ew
from dflow.dialects.df import shape_ops as so
from dflow.dialects.df.arrays import from_array, numpy_dtype
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.types import element_of, flag, shape_of, static_tensor

OpT = TypeVar("OpT", bound=Operation)
Grads = list[SSAValue | None]
"""One gradient contribution per operand; None where the operand wants none."""
Rule = Callable[["Emitter", Any, SSAValue, Sequence[bool]], Grads]


@dataclass
class Emitter:
    """Creates the backward ops, in order, each verified and marked `df.backward`."""

    ops: list[Operation] = field(default_factory=list[Operation])
    _scalars: dict[tuple[float, Attribute], SSAValue] = field(
        default_factory=dict[tuple[float, Attribute], SSAValue]
    )

    def emit(self, op: Operation) -> SSAValue:
        """Verify and record `op`; return its single result."""
        op.attributes[annotations.BACKWARD] = UnitAttr()
        op.verify()
        self.ops.append(op)
        return op.results[0]

    def replace_forward(self, op: Operation, ops: Sequence[Operation]) -> None:
        """Put forward `ops` (verified, not marked) in `op`'s place, the last one's
        result in place of `op`'s: for a gradient that needs more of the forward pass
        than the op's result (`df.max_pool2d`'s indices)."""
        for new in ops:
            new.verify()
        block = op.parent_block()
        assert block is not None, f"{op.name} is not in a block"
        block.insert_ops_before(list(ops), op)
        op.results[0].replace_all_uses_with(ops[-1].results[0])
        op.detach()
        op.erase()

    def constant(self, value: float, type: TensorType[Attribute]) -> SSAValue:
        """A splat constant of `type`."""
        array = np.full(type.get_shape(), value, dtype=numpy_dtype(type.element_type))
        return self.emit(ConstantOp(from_array(array, type)))

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant with `like`'s element type (broadcasts against anything)."""
        element = element_of(like.type)
        key = (value, element)
        if key not in self._scalars:
            self._scalars[key] = self.constant(value, TensorType(element, []))
        return self._scalars[key]

    def zeros(self, type: Attribute) -> SSAValue:
        return self.constant(0.0, static_tensor(type))

    def mul(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.emit(ew.MulOp(lhs, rhs))

    def div(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.emit(ew.DivOp(lhs, rhs))

    def neg(self, value: SSAValue) -> SSAValue:
        return self.emit(ew.NegOp(value))

    def scale(self, value: SSAValue, factor: float) -> SSAValue:
        return self.mul(value, self.scalar(factor, value))

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        if shape_of(value.type) == tuple(shape):
            return value
        return self.emit(so.ReshapeOp(value, shape))

    def unbroadcast(self, g: SSAValue, type: Attribute) -> SSAValue:
        """Sum `g` down to `type`'s shape: over the leading axes `type` lacks and over
        the axes where `type` has size 1 and `g` does not; then reshape to `type`."""
        target = shape_of(type)
        source = shape_of(g.type)
        lead = len(source) - len(target)
        axes = [*range(lead)]
        axes += [lead + i for i, d in enumerate(target) if d == 1 and source[lead + i] != 1]
        if axes:
            g = self.emit(so.ReduceSumOp(g, axes, False))
        return self.reshape(g, target)


_RULES: dict[type[Operation], Rule] = {}


def gradient(
    *op_types: type[OpT],
) -> Callable[[Callable[[Emitter, OpT, SSAValue, Sequence[bool]], Grads]], None]:
    """Register the gradient rule of one or more op classes."""

    def register(rule: Callable[[Emitter, OpT, SSAValue, Sequence[bool]], Grads]) -> None:
        for op_type in op_types:
            _RULES[op_type] = rule

    return register


def rule_for(op: Operation) -> Rule | None:
    return _RULES.get(type(op))


NONDIFFERENTIABLE: dict[type[Operation], frozenset[int]] = {
    ew.SelectOp: frozenset({0}),
    indexing.GatherOp: frozenset({1}),
    indexing.GatherElementsOp: frozenset({1}),
    indexing.ScatterAddOp: frozenset({1}),
}
"""Operands that never get a gradient and may be of any type (select's condition, the
indices of a gather or scatter)."""


def differentiable(op: Operation, index: int) -> bool:
    return index not in NONDIFFERENTIABLE.get(type(op), frozenset())


# --- elementwise ------------------------------------------------------------------


def _relu(e: Emitter, a: SSAValue, y: SSAValue, g: SSAValue) -> SSAValue:
    positive = e.emit(ew.GreaterOp(a, e.scalar(0.0, a)))
    return e.emit(ew.SelectOp(positive, g, e.scalar(0.0, g)))


def _abs(e: Emitter, a: SSAValue, y: SSAValue, g: SSAValue) -> SSAValue:
    negative = e.emit(ew.LessOp(a, e.scalar(0.0, a)))
    return e.emit(ew.SelectOp(negative, e.neg(g), g))


def _one_minus(e: Emitter, value: SSAValue) -> SSAValue:
    return e.emit(ew.SubOp(e.scalar(1.0, value), value))


_UNARY: dict[
    type[ew.UnaryElementwiseOp], Callable[[Emitter, SSAValue, SSAValue, SSAValue], SSAValue]
] = {
    ew.NegOp: lambda e, a, y, g: e.neg(g),
    ew.IdentityOp: lambda e, a, y, g: g,
    ew.ReciprocalOp: lambda e, a, y, g: e.neg(e.mul(e.mul(g, y), y)),
    ew.ExpOp: lambda e, a, y, g: e.mul(g, y),
    ew.LogOp: lambda e, a, y, g: e.div(g, a),
    ew.SqrtOp: lambda e, a, y, g: e.div(e.scale(g, 0.5), y),
    ew.RsqrtOp: lambda e, a, y, g: e.mul(e.scale(g, -0.5), e.mul(e.emit(ew.SquareOp(y)), y)),
    ew.TanhOp: lambda e, a, y, g: e.mul(g, _one_minus(e, e.emit(ew.SquareOp(y)))),
    ew.ErfOp: lambda e, a, y, g: e.mul(
        e.scale(g, 2 / math.sqrt(math.pi)), e.emit(ew.ExpOp(e.neg(e.emit(ew.SquareOp(a)))))
    ),
    ew.SigmoidOp: lambda e, a, y, g: e.mul(e.mul(g, y), _one_minus(e, y)),
    ew.FloorOp: lambda e, a, y, g: e.zeros(a.type),
    ew.CeilOp: lambda e, a, y, g: e.zeros(a.type),
    ew.RoundOp: lambda e, a, y, g: e.zeros(a.type),
    ew.SinOp: lambda e, a, y, g: e.mul(g, e.emit(ew.CosOp(a))),
    ew.CosOp: lambda e, a, y, g: e.neg(e.mul(g, e.emit(ew.SinOp(a)))),
    ew.ReluOp: _relu,
    ew.AbsOp: _abs,
    ew.SquareOp: lambda e, a, y, g: e.scale(e.mul(g, a), 2.0),
}


@gradient(*_UNARY)
def _unary(e: Emitter, op: ew.UnaryElementwiseOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return [_UNARY[type(op)](e, op.input, op.result, g)]


def _pair(
    e: Emitter,
    op: ew.BinaryElementwiseOp,
    wanted: Sequence[bool],
    lhs: Callable[[], SSAValue],
    rhs: Callable[[], SSAValue],
) -> Grads:
    """Unbroadcast the wanted operands' contributions, each computed at the result shape."""
    return [
        e.unbroadcast(lhs(), op.lhs.type) if wanted[0] else None,
        e.unbroadcast(rhs(), op.rhs.type) if wanted[1] else None,
    ]


@gradient(ew.AddOp, ew.SubOp)
def _add_sub(e: Emitter, op: ew.AddOp | ew.SubOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return _pair(e, op, wanted, lambda: g, lambda: g if isinstance(op, ew.AddOp) else e.neg(g))


@gradient(ew.MulOp)
def _mul(e: Emitter, op: ew.MulOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return _pair(e, op, wanted, lambda: e.mul(g, op.rhs), lambda: e.mul(g, op.lhs))


@gradient(ew.DivOp)
def _div(e: Emitter, op: ew.DivOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """d(a/b) = g/b and -g*y/b."""
    return _pair(
        e, op, wanted, lambda: e.div(g, op.rhs), lambda: e.neg(e.div(e.mul(g, op.result), op.rhs))
    )


@gradient(ew.RemOp)
def _rem(e: Emitter, op: ew.RemOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """d fmod(a, b) = g and -g*trunc(a/b), with `trunc(q) = q - fmod(q, 1)` (exact)."""

    def rhs() -> SSAValue:
        q = e.div(op.lhs, op.rhs)
        whole = e.emit(ew.SubOp(q, e.emit(ew.RemOp(q, e.scalar(1.0, q)))))
        return e.neg(e.mul(g, whole))

    return _pair(e, op, wanted, lambda: g, rhs)


@gradient(ew.MaximumOp, ew.MinimumOp)
def _extremum(
    e: Emitter, op: ew.MaximumOp | ew.MinimumOp, g: SSAValue, wanted: Sequence[bool]
) -> Grads:
    """The gradient goes to the winner; ties go to the lhs."""
    compare = ew.GreaterEqualOp if isinstance(op, ew.MaximumOp) else ew.LessEqualOp
    lhs_wins = e.emit(compare(op.lhs, op.rhs))
    zero = e.scalar(0.0, g)
    return _pair(
        e,
        op,
        wanted,
        lambda: e.emit(ew.SelectOp(lhs_wins, g, zero)),
        lambda: e.emit(ew.SelectOp(lhs_wins, zero, g)),
    )


@gradient(ew.PowOp)
def _pow(e: Emitter, op: ew.PowOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """d(a^b) = g*b*a^(b-1) and g*y*log(a) (taking log(a) as 0 where a <= 0)."""

    def lhs() -> SSAValue:
        exponent = e.emit(ew.SubOp(op.rhs, e.scalar(1.0, op.rhs)))
        return e.mul(e.mul(g, op.rhs), e.emit(ew.PowOp(op.lhs, exponent)))

    def rhs() -> SSAValue:
        # log(a) where a > 0, else 0 (as TensorFlow): a zero base gives 0, not 0 * -inf.
        zero = e.scalar(0.0, op.lhs)
        positive = e.emit(ew.GreaterOp(op.lhs, zero))
        log = e.emit(ew.SelectOp(positive, e.emit(ew.LogOp(op.lhs)), zero))
        return e.mul(e.mul(g, op.result), log)

    return _pair(e, op, wanted, lhs, rhs)


@gradient(ew.SelectOp)
def _select(e: Emitter, op: ew.SelectOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    zero = e.scalar(0.0, g)
    on_true = e.emit(ew.SelectOp(op.condition, g, zero)) if wanted[1] else None
    on_false = e.emit(ew.SelectOp(op.condition, zero, g)) if wanted[2] else None
    return [
        None,
        None if on_true is None else e.unbroadcast(on_true, op.on_true.type),
        None if on_false is None else e.unbroadcast(on_false, op.on_false.type),
    ]


@gradient(ew.CastOp)
def _cast(e: Emitter, op: ew.CastOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return [e.emit(ew.CastOp(g, element_of(op.input.type)))]


@gradient(ew.AddNOp)
def _addn(e: Emitter, op: ew.AddNOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return [g if want else None for want in wanted]


@gradient(ConstantOp, ew.GreaterOp, ew.GreaterEqualOp, ew.LessOp, ew.LessEqualOp, ew.EqualOp)
def _nothing(e: Emitter, op: Operation, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """Constants and comparisons pass no gradient (a comparison's i1 result never gets
    an adjoint; the rule is here for completeness)."""
    return [None for _ in wanted]


# --- contractions and windows -----------------------------------------------------


def _matmul_grads(
    op: nn.MatmulOp, g: SSAValue
) -> tuple[tuple[SSAValue, SSAValue, bool, bool], tuple[SSAValue, SSAValue, bool, bool]]:
    """The two matmuls (lhs, rhs, transpose_a, transpose_b) giving gA and gB."""
    a, b = op.lhs, op.rhs
    ta, tb = flag(op.transpose_a), flag(op.transpose_b)
    if ta and tb:
        return (b, g, True, True), (g, a, True, True)
    if ta:
        return (b, g, False, True), (a, g, False, False)
    if tb:
        return (g, b, False, False), (g, a, True, False)
    return (g, b, False, True), (a, g, True, False)


@gradient(nn.MatmulOp)
def _matmul(e: Emitter, op: nn.MatmulOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return [
        e.emit(nn.MatmulOp(lhs, rhs, transpose_a=ta, transpose_b=tb)) if want else None
        for want, (lhs, rhs, ta, tb) in zip(wanted, _matmul_grads(op, g), strict=True)
    ]


@gradient(nn.Conv2DOp)
def _conv2d(e: Emitter, op: nn.Conv2DOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    window = op.window
    grads: Grads = [None] * len(wanted)
    if wanted[0]:
        input_type = static_tensor(op.input.type)
        grads[0] = e.emit(nn.Conv2DGradInputOp(g, op.filter, input_type, **window))
    if wanted[1]:
        filter_type = static_tensor(op.filter.type)
        grads[1] = e.emit(nn.Conv2DGradFilterOp(op.input, g, filter_type, **window))
    if len(wanted) > 2 and wanted[2]:
        grads[2] = e.emit(so.ReduceSumOp(g, [0, 2, 3], False))
    return grads


@gradient(nn.AvgPool2DOp)
def _avg_pool(e: Emitter, op: nn.AvgPool2DOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return [e.emit(nn.AvgPool2DGradOp(g, static_tensor(op.input.type), **op.window))]


@gradient(nn.MaxPool2DOp)
def _max_pool(e: Emitter, op: nn.MaxPool2DOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """Each window's gradient to where its maximum lies, as the forward pass found it:
    the pool becomes `df.max_pool2d_indices` and a read of the maxima there, and the
    backward pass adds g at the kept indices (no window searched twice). An input
    with an empty plane has an empty gradient."""
    input_type = static_tensor(op.input.type)
    n, c, height, width = input_type.get_shape()
    if height * width == 0:
        return [e.zeros(input_type)]
    indices = nn.MaxPool2DIndicesOp(op.input, **op.window)
    count = prod(shape_of(indices.result.type)[2:])
    planes = so.ReshapeOp(op.input, (n, c, height * width))
    flat = so.ReshapeOp(indices, (n, c, count))
    maxima = indexing.GatherElementsOp(planes, flat, 2)
    pooled = so.ReshapeOp(maxima, shape_of(op.result.type))
    e.replace_forward(op, [indices, planes, flat, maxima, pooled])
    gradient = nn.MaxPool2DGradIndicesOp(g, indices, input_type, **op.window)
    return [e.emit(gradient)]


# --- shapes and reductions --------------------------------------------------------


def _kept_shape(op: so.ReduceOp) -> tuple[int, ...]:
    """The reduction's result shape with keepdims: 1 at every reduced axis."""
    reduced = op.reduced_axes
    return tuple(1 if i in reduced else d for i, d in enumerate(shape_of(op.input.type)))


@gradient(so.ReduceSumOp, so.ReduceMeanOp)
def _reduce_sum(
    e: Emitter, op: so.ReduceSumOp | so.ReduceMeanOp, g: SSAValue, wanted: Sequence[bool]
) -> Grads:
    """Broadcast g back over the reduced axes (divided by their count for the mean)."""
    input_shape = shape_of(op.input.type)
    if isinstance(op, so.ReduceMeanOp):
        g = e.scale(g, 1.0 / prod(input_shape[axis] for axis in op.reduced_axes))
    kept = e.reshape(g, _kept_shape(op))
    if shape_of(kept.type) == input_shape:
        return [kept]
    return [e.emit(so.BroadcastToOp(kept, input_shape))]


@gradient(so.ReduceMaxOp)
def _reduce_max(e: Emitter, op: so.ReduceMaxOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """The gradient is split evenly among the positions holding the maximum (as TF)."""
    kept = _kept_shape(op)
    winners = e.emit(ew.EqualOp(op.input, e.reshape(op.result, kept)))
    mask = e.emit(ew.CastOp(winners, element_of(g.type)))
    ties = e.emit(so.ReduceSumOp(mask, op.reduced_axes, True))
    return [e.mul(mask, e.div(e.reshape(g, kept), ties))]


@gradient(so.SoftmaxOp)
def _softmax(e: Emitter, op: so.SoftmaxOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """y * (g - sum(g*y, axis))."""
    y = op.result
    total = e.emit(so.ReduceSumOp(e.mul(g, y), [op.axis_value], True))
    return [e.mul(y, e.emit(ew.SubOp(g, total)))]


@gradient(so.LayerNormOp)
def _layer_norm(e: Emitter, op: so.LayerNormOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """With `x̂ = (x - mean)·r`, `r = rsqrt(var + ε)` and `d = g·scale`: `dx = r·(d -
    mean(d) - x̂·mean(d·x̂))` along the last axis, `dscale = Σ g·x̂` and `dbias = Σ g`
    over the rows."""
    last = [len(shape_of(op.input.type)) - 1]
    centered = e.emit(ew.SubOp(op.input, e.emit(so.ReduceMeanOp(op.input, last, True))))
    variance = e.emit(so.ReduceMeanOp(e.mul(centered, centered), last, True))
    inverse = e.emit(ew.RsqrtOp(e.emit(ew.AddOp(variance, e.scalar(op.epsilon_value, g)))))
    normalized = e.mul(centered, inverse)

    def input_grad() -> SSAValue:
        d = e.mul(g, op.scale)
        d_mean = e.emit(so.ReduceMeanOp(d, last, True))
        projection = e.emit(so.ReduceMeanOp(e.mul(d, normalized), last, True))
        inner = e.emit(ew.SubOp(e.emit(ew.SubOp(d, d_mean)), e.mul(normalized, projection)))
        return e.mul(inverse, inner)

    makers = (input_grad, lambda: e.unbroadcast(e.mul(g, normalized), op.scale.type),
              lambda: e.unbroadcast(g, op.bias.type))  # fmt: skip
    return [make() if want else None for make, want in zip(makers, wanted, strict=True)]


@gradient(so.ReshapeOp)
def _reshape(e: Emitter, op: so.ReshapeOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return [e.reshape(g, shape_of(op.input.type))]


@gradient(so.TransposeOp)
def _transpose(e: Emitter, op: so.TransposeOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    inverse = [0] * len(op.perm_values)
    for position, axis in enumerate(op.perm_values):
        inverse[axis] = position
    return [e.emit(so.TransposeOp(g, inverse))]


@gradient(so.BroadcastToOp)
def _broadcast_to(e: Emitter, op: so.BroadcastToOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    return [e.unbroadcast(g, op.input.type)]


@gradient(so.ConcatOp)
def _concat(e: Emitter, op: so.ConcatOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """Each operand gets its slice of g along the axis."""
    axis = op.axis_value
    shape = shape_of(g.type)
    grads: Grads = []
    offset = 0
    for operand, want in zip(op.inputs, wanted, strict=True):
        size = shape_of(operand.type)[axis]
        if want:
            start = [offset if i == axis else 0 for i in range(len(shape))]
            limit = [offset + size if i == axis else d for i, d in enumerate(shape)]
            grads.append(e.emit(so.SliceOp(g, start, limit)))
        else:
            grads.append(None)
        offset += size
    return grads


def _pad_axis(e: Emitter, g: SSAValue, axis: int, before: int, after: int) -> SSAValue:
    """g with `before` zeros ahead of it and `after` zeros behind it along `axis`."""
    if not before and not after:
        return g

    def zeros(width: int) -> list[SSAValue]:
        shape = list(shape_of(g.type))
        shape[axis] = width
        return [e.zeros(TensorType(element_of(g.type), shape))] if width else []

    return e.emit(so.ConcatOp([*zeros(before), g, *zeros(after)], axis))


@gradient(so.SliceOp)
def _slice(e: Emitter, op: so.SliceOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """Pad g with zeros back to the input shape, one concat per sliced axis."""
    input_shape = shape_of(op.input.type)
    bounds = zip(op.start_values, op.limit_values, strict=True)
    for axis, (begin, end) in enumerate(bounds):
        g = _pad_axis(e, g, axis, begin, input_shape[axis] - end)
    return [g]


# --- indexing ---------------------------------------------------------------------


@gradient(indexing.GatherOp)
def _gather(e: Emitter, op: indexing.GatherOp, g: SSAValue, wanted: Sequence[bool]) -> Grads:
    """Each gathered slice's adjoint added back at its index: a scatter-add of g."""
    shape = shape_of(op.data.type)
    return [e.emit(indexing.ScatterAddOp(g, op.indices, shape, op.axis_value)), None]


@gradient(indexing.ScatterAddOp)
def _scatter_add(
    e: Emitter, op: indexing.ScatterAddOp, g: SSAValue, wanted: Sequence[bool]
) -> Grads:
    """Each update's adjoint is g at its index: a gather of g."""
    return [e.emit(indexing.GatherOp(g, op.indices, op.axis_value)), None]


@gradient(indexing.GatherElementsOp)
def _gather_elements(
    e: Emitter, op: indexing.GatherElementsOp, g: SSAValue, wanted: Sequence[bool]
) -> Grads:
    """A scatter-add of g into the flattened data at each element's position there:
    its index (counted from the end when negative: the forward op checked them all)
    times the axis' stride, plus the offset of its place on the other axes."""
    data_shape, index_shape = shape_of(op.data.type), shape_of(op.indices.type)
    axis, size = op.axis_value, shape_of(op.data.type)[op.axis_value]
    indices = e.emit(ew.CastOp(op.indices, i64))
    negative = e.emit(ew.LessOp(indices, e.scalar(0, indices)))
    wrapped = e.emit(
        ew.SelectOp(negative, e.emit(ew.AddOp(indices, e.scalar(size, indices))), indices)
    )
    strides = np.array([prod(data_shape[k + 1 :]) for k in range(len(data_shape))], np.int64)
    places = np.indices(index_shape, dtype=np.int64)
    places[axis] = 0
    offsets = (
        np.tensordot(strides, places, axes=1) if places.size else np.zeros(index_shape, np.int64)
    )
    offset = e.emit(ConstantOp(from_array(offsets, TensorType(i64, index_shape))))
    linear = e.emit(ew.AddOp(e.mul(wrapped, e.scalar(float(strides[axis]), wrapped)), offset))
    count = prod(index_shape)
    flat_g = e.emit(so.ReshapeOp(g, (count,)))
    flat = e.emit(so.ReshapeOp(linear, (count,)))
    total = e.emit(indexing.ScatterAddOp(flat_g, flat, (prod(data_shape),), 0))
    return [e.emit(so.ReshapeOp(total, data_shape)), None]
