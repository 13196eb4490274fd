"""The reference semantics of every `df` op, in NumPy: the oracle of all tests.

`evaluate(op, inputs)` computes an op's results from its operand arrays. The
interpreter, the constant folder and the tests all call it, so each op has one
definition. Results always carry the dtype and shape of the op's result type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import (
    AnyDenseElement,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    TensorType,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.hints import isa

from dflow.dialects.df import elementwise as ew
from dflow.dialects.df import nn, reference
from dflow.dialects.df import shape_ops as so
from dflow.dialects.df.leaves import ConstantOp
from dflow.dialects.df.types import flag, shape_of, static_tensor

Array = NDArray[Any]
OpT = TypeVar("OpT", bound=Operation)
Semantics = Callable[[Any, Sequence[Array]], Array]

_DTYPES: dict[Attribute, np.dtype[Any]] = {
    f32: np.dtype(np.float32),
    f64: np.dtype(np.float64),
    i32: np.dtype(np.int32),
    i64: np.dtype(np.int64),
    i1: np.dtype(np.bool_),
}


def numpy_dtype(element: Attribute) -> np.dtype[Any]:
    """The NumPy dtype holding a df element type."""
    return _DTYPES[element]


def element_type_of(dtype: np.dtype[Any]) -> Attribute:
    """The df element type of a NumPy dtype; KeyError when there is none."""
    return next(element for element, d in _DTYPES.items() if d == dtype)


def to_array(value: DenseIntOrFPElementsAttr) -> Array:
    """The elements of a dense attribute as a new NumPy array of its shape."""
    type = static_tensor(value.type)
    if type.element_type == i1:
        flat = np.frombuffer(value.data.data, dtype=np.int8) != 0
    else:
        flat = np.frombuffer(
            value.data.data, dtype=numpy_dtype(type.element_type).newbyteorder("<")
        )
    return flat.reshape(type.get_shape()).astype(numpy_dtype(type.element_type))


def from_array(array: Array, type: TensorType[Attribute]) -> DenseIntOrFPElementsAttr:
    """A dense attribute of `type` holding `array` (cast to the element type)."""
    values = np.asarray(array, dtype=numpy_dtype(type.element_type))
    if type.element_type == i1:  # xDSL stores i1 as one byte each, true as -1
        values = np.where(values, -1, 0).astype(np.int8)
    data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes()
    assert isa(type, TensorType[AnyDenseElement])
    return DenseIntOrFPElementsAttr(type, BytesAttr(data))


_SEMANTICS: dict[type[Operation], Semantics] = {}


def semantics(*op_types: type[OpT]) -> Callable[[Callable[[OpT, Sequence[Array]], Array]], None]:
    """Register the NumPy semantics of one or more op classes."""

    def register(function: Callable[[OpT, Sequence[Array]], Array]) -> None:
        for op_type in op_types:
            _SEMANTICS[op_type] = function

    return register


def has_semantics(op: Operation) -> bool:
    return type(op) in _SEMANTICS


def evaluate(op: Operation, inputs: Sequence[Array]) -> tuple[Array, ...]:
    """Run one op on NumPy arrays; IEEE special values (inf, NaN) are results, not errors."""
    function = _SEMANTICS.get(type(op))
    if function is None:
        raise KeyError(f"{op.name} has no reference semantics")
    with np.errstate(all="ignore"):
        value = function(op, inputs)
    result = static_tensor(op.results[0].type)
    return (np.asarray(value, dtype=numpy_dtype(result.element_type)).reshape(result.get_shape()),)


_UNARY: dict[type[Operation], Callable[[Array], Array]] = {
    ew.NegOp: np.negative,
    ew.AbsOp: np.abs,
    ew.SquareOp: np.square,
    ew.ReluOp: lambda x: np.maximum(x, np.zeros((), x.dtype)),
    ew.IdentityOp: np.copy,
    ew.ReciprocalOp: np.reciprocal,
    ew.ExpOp: np.exp,
    ew.LogOp: np.log,
    ew.SqrtOp: np.sqrt,
    ew.RsqrtOp: lambda x: np.reciprocal(np.sqrt(x)),
    ew.TanhOp: np.tanh,
    ew.SigmoidOp: reference.sigmoid,
}

_BINARY: dict[type[Operation], Callable[[Array, Array], Array]] = {
    ew.AddOp: np.add,
    ew.SubOp: np.subtract,
    ew.MulOp: np.multiply,
    ew.DivOp: np.divide,
    ew.MaximumOp: np.maximum,
    ew.MinimumOp: np.minimum,
    ew.PowOp: np.power,
    ew.GreaterOp: np.greater,
    ew.GreaterEqualOp: np.greater_equal,
    ew.LessOp: np.less,
    ew.LessEqualOp: np.less_equal,
    ew.EqualOp: np.equal,
}


def _unary(op: Operation, inputs: Sequence[Array]) -> Array:
    return _UNARY[type(op)](inputs[0])


def _binary(op: Operation, inputs: Sequence[Array]) -> Array:
    return _BINARY[type(op)](inputs[0], inputs[1])


semantics(*_UNARY)(_unary)
semantics(*_BINARY)(_binary)


@semantics(ConstantOp)
def _constant(op: ConstantOp, inputs: Sequence[Array]) -> Array:
    return to_array(op.value)


@semantics(ew.SelectOp)
def _select(op: ew.SelectOp, inputs: Sequence[Array]) -> Array:
    return np.where(inputs[0], inputs[1], inputs[2])


@semantics(ew.CastOp)
def _cast(op: ew.CastOp, inputs: Sequence[Array]) -> Array:
    """`astype`; to i1 means `!= 0`. NaN or out-of-range floats to integers are undefined."""
    target = static_tensor(op.result.type).element_type
    if target == i1:
        return inputs[0] != 0
    return inputs[0].astype(numpy_dtype(target))


@semantics(ew.AddNOp)
def _addn(op: ew.AddNOp, inputs: Sequence[Array]) -> Array:
    total = inputs[0].copy()
    for term in inputs[1:]:
        total += term
    return total


@semantics(nn.MatmulOp)
def _matmul(op: nn.MatmulOp, inputs: Sequence[Array]) -> Array:
    return reference.matmul(inputs[0], inputs[1], flag(op.transpose_a), flag(op.transpose_b))


def _spatial(type: Attribute) -> tuple[int, ...]:
    return shape_of(type)[2:]


@semantics(nn.Conv2DOp)
def _conv2d(op: nn.Conv2DOp, inputs: Sequence[Array]) -> Array:
    bias = inputs[2] if len(inputs) == 3 else None
    return reference.conv2d(
        inputs[0],
        inputs[1],
        bias,
        op.stride_values,
        op.pad_values,
        op.dilation_values,
        _spatial(op.result.type),
    )


_CONV2D_GRADIENTS: dict[type[Operation], Callable[..., Array]] = {
    nn.Conv2DGradInputOp: reference.conv2d_grad_input,
    nn.Conv2DGradFilterOp: reference.conv2d_grad_filter,
}


@semantics(nn.Conv2DGradInputOp, nn.Conv2DGradFilterOp)
def _conv2d_gradient(
    op: nn.Conv2DGradInputOp | nn.Conv2DGradFilterOp, inputs: Sequence[Array]
) -> Array:
    """Both conv2d gradients: two operands, and the result type gives the shape."""
    return _CONV2D_GRADIENTS[type(op)](
        inputs[0],
        inputs[1],
        shape_of(op.result.type),
        op.stride_values,
        op.pad_values,
        op.dilation_values,
    )


@semantics(nn.MaxPool2DOp)
def _max_pool2d(op: nn.MaxPool2DOp, inputs: Sequence[Array]) -> Array:
    return reference.max_pool2d(
        inputs[0], op.kernel_values, op.stride_values, op.pad_values, _spatial(op.result.type)
    )


@semantics(nn.AvgPool2DOp)
def _avg_pool2d(op: nn.AvgPool2DOp, inputs: Sequence[Array]) -> Array:
    return reference.avg_pool2d(
        inputs[0], op.kernel_values, op.stride_values, op.pad_values, _spatial(op.result.type)
    )


@semantics(nn.MaxPool2DGradOp)
def _max_pool2d_grad(op: nn.MaxPool2DGradOp, inputs: Sequence[Array]) -> Array:
    return reference.max_pool2d_grad(
        inputs[0], inputs[1], op.kernel_values, op.stride_values, op.pad_values
    )


@semantics(nn.AvgPool2DGradOp)
def _avg_pool2d_grad(op: nn.AvgPool2DGradOp, inputs: Sequence[Array]) -> Array:
    return reference.avg_pool2d_grad(
        inputs[0], shape_of(op.result.type), op.kernel_values, op.stride_values, op.pad_values
    )


@semantics(so.TransposeOp)
def _transpose(op: so.TransposeOp, inputs: Sequence[Array]) -> Array:
    return np.transpose(inputs[0], op.perm_values)


@semantics(so.ReshapeOp, so.BroadcastToOp)
def _to_result_shape(op: so.ReshapeOp | so.BroadcastToOp, inputs: Sequence[Array]) -> Array:
    """Reshape and broadcast_to: the result shape comes from the result type."""
    shape = shape_of(op.result.type)
    if isinstance(op, so.ReshapeOp):
        return inputs[0].reshape(shape)
    return np.broadcast_to(inputs[0], shape)


_REDUCTIONS: dict[type[Operation], Callable[..., Array]] = {
    so.ReduceSumOp: np.sum,
    so.ReduceMeanOp: np.mean,
    so.ReduceMaxOp: reference.reduce_max,
}


@semantics(so.ReduceSumOp, so.ReduceMeanOp, so.ReduceMaxOp)
def _reduce(op: so.ReduceOp, inputs: Sequence[Array]) -> Array:
    """Over an empty axis: sum 0, mean NaN (0 / 0), max the lowest value of the type."""
    return _REDUCTIONS[type(op)](inputs[0], op.reduced_axes, keepdims=flag(op.keepdims))


@semantics(so.SoftmaxOp)
def _softmax(op: so.SoftmaxOp, inputs: Sequence[Array]) -> Array:
    return reference.softmax(inputs[0], op.axis_value)


@semantics(so.ConcatOp)
def _concat(op: so.ConcatOp, inputs: Sequence[Array]) -> Array:
    return np.concatenate(inputs, axis=op.axis_value)


@semantics(so.SliceOp)
def _slice(op: so.SliceOp, inputs: Sequence[Array]) -> Array:
    index = tuple(slice(s, e) for s, e in zip(op.start_values, op.limit_values, strict=True))
    return inputs[0][index]


def registered_op_types() -> tuple[type[Operation], ...]:
    """Every op class that has reference semantics."""
    return tuple(_SEMANTICS)
