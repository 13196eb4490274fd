"""ONNX reductions, the softmaxes, ArgMax/ArgMin, TopK and CumSum.

The reductions take `axes` as an attribute up to an opset (13 for `ReduceSum`, 18
for `ReduceMean` and `ReduceMax`) and as input 1 from it, where an empty list
reduces everything unless `noop_with_empty_axes`. Before opset 13 `Softmax` and
`LogSoftmax` flatten the input into 2-D at `axis` (default 1) and normalize each
row; from opset 13 they normalize along `axis` (default -1). `LogSoftmax` is
`x - max - log(sum(exp(x - max)))`, exact where `log(softmax(x))` underflows.
ArgMax and ArgMin are exact compositions of maxima and comparisons, TopK of ranks
counted by comparisons; CumSum is a
log-step scan of shifted adds.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import f64, i1, i32, i64

from dflow.dialects import df
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.types import FLOATS
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.ops.tensors import axes_operand, distinct_axes

AXES_INPUT_SINCE = {
    "ReduceSum": 13,
    "ReduceMean": 18,
    "ReduceMax": 18,
    "ReduceMin": 18,
    "ReduceL1": 18,
    "ReduceL2": 18,
    "ReduceSumSquare": 18,
    "ReduceLogSumExp": 18,
}
"""The opset from which each reduction takes `axes` as an input."""


@converter(*AXES_INPUT_SINCE, attributes={"axes", "keepdims", "noop_with_empty_axes"})
def reduce(node: Node) -> list[Tensor]:
    x = node.input(0)
    axes = axes_operand(node, AXES_INPUT_SINCE[node.op_type])
    keepdims = bool(node.int("keepdims", 1))
    if not axes:
        if node.int("noop_with_empty_axes", 0):
            return [x]
        axes = list(range(len(x.shape)))
    chosen = distinct_axes(node, len(x.shape), axes)
    if node.op_type == "ReduceMean":
        if node.element(x) in FLOATS:
            return [x.mean(chosen, keepdims)]
        return [x.cast(f64).mean(chosen, keepdims).cast(node.element(x))]
    if node.op_type in ("ReduceMax", "ReduceMin"):
        return [_extreme(node, x, chosen, keepdims)]
    if node.op_type in ("ReduceL2", "ReduceLogSumExp") and node.element(x) not in FLOATS:
        return [_SUMS[node.op_type](x.cast(f64), chosen, keepdims).cast(node.element(x))]
    return [_SUMS[node.op_type](x, chosen, keepdims)]


def _extreme(node: Node, x: Tensor, axes: list[int], keepdims: bool) -> Tensor:
    """The maximum, or the minimum as the maximum of the order reversed (`-x`, or
    `-1 - x` for integers, which cannot overflow); of booleans, any (all)."""
    if node.element(x) == i1:  # the maximum of booleans: whether any is true (none: false)
        count = x.cast(i32).sum(axes, keepdims)
        if node.op_type == "ReduceMin":  # all true
            return count.equal(math.prod(x.shape[a] for a in axes))
        return count > 0
    if node.op_type == "ReduceMax":
        return x.max(axes, keepdims)
    return _reversed(node, _reversed(node, x).max(axes, keepdims))


def _reversed(node: Node, x: Tensor) -> Tensor:
    """`x` in the reversed order, its own inverse: `-x` for floats, `-1 - x` for
    integers (which cannot overflow, unlike `-x` of the smallest)."""
    return -x if node.element(x) in FLOATS else node.scalar(-1, x) - x


def _log_sum_exp(x: Tensor, axes: list[int], keepdims: bool) -> Tensor:
    """`m + log(sum(exp(x - m)))` with `m` the maximum (where it is finite): no
    overflow for large `x`, exactly `-inf` over an axis of `-inf`s."""
    largest = x.max(axes, keepdims=True)
    finite = abs(largest) < math.inf
    zero = x.graph.constant(np.zeros((), numpy_dtype(x.type.element_type)))
    shift = x.graph.emit(df.SelectOp(finite.value, largest.value, zero.value))
    total = (x - shift).exp().sum(axes, keepdims=True).log() + shift
    return total if keepdims else total.reshape([d for i, d in enumerate(x.shape) if i not in axes])


Reducer = Callable[[Tensor, list[int], bool], Tensor]

_SUMS: dict[str, Reducer] = {
    "ReduceSum": lambda x, axes, keep: x.sum(axes, keep),
    "ReduceL1": lambda x, axes, keep: abs(x).sum(axes, keep),
    "ReduceL2": lambda x, axes, keep: (x * x).sum(axes, keep).sqrt(),
    "ReduceSumSquare": lambda x, axes, keep: (x * x).sum(axes, keep),
    "ReduceLogSumExp": _log_sum_exp,
}
"""The reductions that add (after a map)."""


def _rows(node: Node, x: Tensor) -> tuple[Tensor, int]:
    """The input and the axis to normalize along, by the opset's rules."""
    rank = len(x.shape)
    if node.opset >= 13:
        return x, node.axis(node.int("axis", -1), rank)
    axis = node.axis(node.int("axis", 1), rank)
    rows = x.reshape((math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))
    return rows, 1


@converter("Softmax", attributes={"axis"})
def softmax(node: Node) -> list[Tensor]:
    x = node.input(0)
    rows, axis = _rows(node, x)
    y = node.emit(df.SoftmaxOp(rows.value, axis))
    return [y.reshape(x.shape) if y.shape != x.shape else y]


@converter("LogSoftmax", attributes={"axis"})
def log_softmax(node: Node) -> list[Tensor]:
    x = node.input(0)
    rows, axis = _rows(node, x)
    shifted = rows - rows.max([axis], keepdims=True)
    y = shifted - shifted.exp().sum([axis], keepdims=True).log()
    return [y.reshape(x.shape) if y.shape != x.shape else y]


@converter("ArgMax", "ArgMin", attributes={"axis", "keepdims", "select_last_index"})
def arg_extreme(node: Node) -> list[Tensor]:
    """The index (int64) of the first (or, `select_last_index`, the last) largest or
    smallest element along `axis`, NaN counting as the largest as in NumPy: composed
    exactly of a `reduce_max`, an `equal` and a `reduce_max` of positions. ArgMin
    runs on the order reversed (`-x` for floats, `-1 - x` for integers: no overflow)."""
    x = node.input(0)
    rank = len(x.shape)
    axis = node.axis(node.int("axis", 0), rank)
    if not x.shape[axis]:
        raise node.error(f"axis {axis} is empty: it has no {node.op_type[3:].lower()}imum")
    if node.op_type == "ArgMin":
        x = _reversed(node, x)
    if node.element(x) == i1:
        x = x.cast(i32)
    largest = x.max([axis], keepdims=True)
    hits = x.equal(largest)
    if node.element(x) in FLOATS:  # a NaN is the maximum: where there is one, it wins
        ordered = largest.equal(largest)
        is_nan = x.equal(x).equal(ordered)  # where the largest is NaN: x != x
        hits = node.emit(df.SelectOp(ordered.value, hits.value, is_nan.value))
    size = x.shape[axis]
    positions = np.arange(size, dtype=np.int64).reshape(
        [size if k == axis else 1 for k in range(rank)]
    )
    last = bool(node.int("select_last_index", 0))
    ranks = node.graph.constant(positions if last else size - 1 - positions)
    never = node.graph.constant(np.array(-1, dtype=np.int64))
    found = node.emit(df.SelectOp(hits.value, ranks.value, never.value))
    index = found.max([axis], bool(node.int("keepdims", 1)))
    return [index if last else node.graph.constant(np.array(size - 1, dtype=np.int64)) - index]


@converter("CumSum", attributes={"exclusive", "reverse"})
def cumulative_sum(node: Node) -> list[Tensor]:
    """Running sums along `axis` (input 1, known at import time) by a log-step scan:
    `log2(n)` rounds each adding the sums `2^k` places back (exact on integers; floats
    add in another order than one by one, within their rounding). `reverse` runs from
    the end, `exclusive` shifts the sums by one."""
    x = node.input(0)
    axis_value = node.ints_input(1, "axis")
    if axis_value is None or len(axis_value) != 1:
        raise node.error("axis (input 1) must be one integer")
    axis = node.axis(axis_value[0], len(x.shape))
    reverse = bool(node.int("reverse", 0))
    if reverse:
        x = _flipped(x, axis)
    total, step = x, 1
    while step < x.shape[axis]:
        total = total + _shifted(total, axis, step)
        step *= 2
    if node.int("exclusive", 0):
        total = _shifted(total, axis, 1)
    return [_flipped(total, axis) if reverse else total]


def _shifted(x: Tensor, axis: int, count: int) -> Tensor:
    """`x` moved `count` places up `axis`, zeros coming in: `y[i] = x[i - count]`."""
    size = x.shape[axis]
    count = min(count, size)
    kept = x[
        tuple(slice(0, size - count) if k == axis else slice(None) for k in range(len(x.shape)))
    ]
    shape = tuple(count if k == axis else d for k, d in enumerate(x.shape))
    zeros = x.graph.constant(np.zeros(shape, dtype=numpy_dtype(x.type.element_type)))
    pieces = [p for p in (zeros, kept) if p.shape[axis]]
    return (
        x.graph.emit(df.ConcatOp([p.value for p in pieces], axis)) if len(pieces) > 1 else pieces[0]
    )


def _flipped(x: Tensor, axis: int) -> Tensor:
    """`x` in reverse order along `axis` (a gather of constant indices)."""
    indices = x.graph.constant(np.arange(x.shape[axis] - 1, -1, -1, dtype=np.int64))
    return x.graph.emit(df.GatherOp(x.value, indices.value, axis))


@converter("TopK", attributes={"axis", "largest", "sorted"})
def top_k(node: Node) -> list[Tensor]:
    """The `k` largest (`largest=0`: smallest) elements along `axis` and their int64
    indices, in order, an earlier element first among equals, as ONNX defines it:
    composed exactly from each element's rank (how many elements come before it:
    larger, or equal and earlier), the position of each rank `r < k` (the sum of
    positions whose rank is `r`) and a `df.gather_elements` of the values. The ranks
    compare every pair along the axis (`n²` per row: for the short axes of models,
    not a vocabulary)."""
    x = node.input(0)
    k = _k(node)
    rank = len(x.shape)
    axis = node.axis(node.int("axis", -1), rank)
    n = x.shape[axis]
    if not 0 <= k <= n:
        raise node.error(f"K = {k} is outside [0, {n}], the size of axis {axis}")
    order = [*(a for a in range(rank) if a != axis), axis]
    last = x.transpose(order) if axis != rank - 1 else x
    mine, theirs = last.reshape((*last.shape, 1)), last.reshape((*last.shape[:-1], 1, n))
    ahead = theirs > mine if node.int("largest", 1) else theirs < mine
    earlier = np.tril(np.ones((n, n), np.int64), -1)  # [i, j]: j < i
    ties = mine.equal(theirs).cast(i64) * x.graph.constant(earlier)
    ranks = (ahead.cast(i64) + ties).sum([rank])
    places = x.graph.constant(np.arange(k, dtype=np.int64).reshape(k, 1))
    hit = ranks.reshape((*ranks.shape[:-1], 1, n)).equal(places).cast(i64)
    indices = (hit * x.graph.constant(np.arange(n, dtype=np.int64))).sum([rank])
    values = x.graph.emit(df.GatherElementsOp(last.value, indices.value, rank - 1))
    back = [order.index(a) for a in range(rank)]
    if axis == rank - 1:
        return [values, indices]
    return [values.transpose(back), indices.transpose(back)]


def _k(node: Node) -> int:
    known = node.ints_input(1, "K")
    if known is None or len(known) != 1:
        raise node.error("K (input 1) must be one integer known at import time")
    return known[0]
