"""ONNX reductions and the softmaxes.

The reductions take `axes` as an attribute up to an opset (13 for `ReduceSum`, 18
for `ReduceMean` and `ReduceMax`) and as input 1 from it, where an empty list
reduces everything unless `noop_with_empty_axes`. Before opset 13 `Softmax` and
`LogSoftmax` flatten the input into 2-D at `axis` (default 1) and normalize each
row; from opset 13 they normalize along `axis` (default -1). `LogSoftmax` is
`x - max - log(sum(exp(x - max)))`, exact where `log(softmax(x))` underflows.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import f64, i1, i32

from dflow.dialects import df
from dflow.dialects.df.types import FLOATS
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.ops.tensors import axes_operand, distinct_axes

AXES_INPUT_SINCE = {"ReduceSum": 13, "ReduceMean": 18, "ReduceMax": 18}
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
    if node.op_type == "ReduceSum":
        return [x.sum(chosen, keepdims)]
    if node.op_type == "ReduceMean":
        if node.element(x) in FLOATS:
            return [x.mean(chosen, keepdims)]
        return [x.cast(f64).mean(chosen, keepdims).cast(node.element(x))]
    if node.element(x) == i1:  # the maximum of booleans: whether any is true (none: false)
        return [x.cast(i32).sum(chosen, keepdims) > 0]
    return [x.max(chosen, keepdims)]


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
