"""Shape ops and reductions: transpose, reshape, broadcast_to, reduce_*, softmax,
layer_norm, concat and slice."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    f64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from dflow.dialects.df import reference, shapes
from dflow.dialects.df.base import FUNCTIONAL_SYNTAX, DfOp, require_elements, require_result
from dflow.dialects.df.elementwise import common_element
from dflow.dialects.df.reference import Array
from dflow.dialects.df.semantics import HasSemantics
from dflow.dialects.df.shapes import ShapeError, format_shape
from dflow.dialects.df.traits import CheapToRecompute, NarrowAsIs, Reduction, ViewLike
from dflow.dialects.df.types import (
    FLOATS,
    NUMBERS,
    bool_attr,
    element_of,
    flag,
    i64_array,
    i64_attr,
    shape_of,
)

Value = Operation | SSAValue


def _type(value: Value) -> Attribute:
    return SSAValue.get(value).type


class UnaryShapeOp(DfOp, HasSemantics, abc.ABC):
    """One tensor in, one out, of the operand's element type."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$input " + FUNCTIONAL_SYNTAX

    def require_same_element(self) -> None:
        if element_of(self.input.type) != element_of(self.result.type):
            raise ShapeError(
                f"result type {self.result.type} must keep the element type of {self.input.type}"
            )


@irdl_op_definition
class TransposeOp(UnaryShapeOp):
    """`numpy.transpose(x, perm)`."""

    name = "df.transpose"
    perm = prop_def(DenseArrayBase[IntegerType])
    traits = traits_def(CheapToRecompute())

    def __init__(self, input: Value, perm: Sequence[int]):
        input_type = _type(input)
        result = TensorType(element_of(input_type), shapes.transpose(shape_of(input_type), perm))
        super().__init__(
            operands=[input], result_types=[result], properties={"perm": i64_array(list(perm))}
        )

    @property
    def perm_values(self) -> tuple[int, ...]:
        return tuple(self.perm.get_values())

    def verify_types(self) -> None:
        shape = shapes.transpose(shape_of(self.input.type), self.perm_values)
        expected = TensorType(element_of(self.input.type), shape)
        require_result(self.result.type, expected, [self.input.type])

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return np.transpose(inputs[0], self.perm_values)


class ToShapeOp(UnaryShapeOp, abc.ABC):
    """The operand's elements under the shape its result type gives (the builder's
    `shape`), of the operand's element type."""

    def __init__(self, input: Value, shape: Sequence[int]):
        super().__init__(
            operands=[input], result_types=[TensorType(element_of(_type(input)), shape)]
        )

    def source_and_target(self) -> tuple[shapes.Shape, shapes.Shape]:
        """The operand's and the result's shapes, once the element type is checked."""
        self.require_same_element()
        return shape_of(self.input.type), shape_of(self.result.type)


@irdl_op_definition
class ReshapeOp(ToShapeOp):
    """The same elements in row-major order under the result type's shape."""

    name = "df.reshape"
    traits = traits_def(ViewLike(), NarrowAsIs(), CheapToRecompute())

    def verify_types(self) -> None:
        source, target = self.source_and_target()
        if shapes.num_elements(source) != shapes.num_elements(target):
            raise ShapeError(
                f"cannot reshape {format_shape(source)} ({shapes.num_elements(source)} elements) "
                f"to {format_shape(target)} ({shapes.num_elements(target)} elements)"
            )

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return inputs[0].reshape(shape_of(self.result.type))


@irdl_op_definition
class BroadcastToOp(ToShapeOp):
    """`numpy.broadcast_to(x, shape)`, the shape given by the result type."""

    name = "df.broadcast_to"
    traits = traits_def(CheapToRecompute())

    def verify_types(self) -> None:
        source, target = self.source_and_target()
        if not shapes.broadcasts_to(source, target):
            raise ShapeError(f"{format_shape(source)} does not broadcast to {format_shape(target)}")

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return np.broadcast_to(inputs[0], shape_of(self.result.type))


class ReduceOp(UnaryShapeOp, abc.ABC):
    """Reduce over `axes` (all axes when absent; negative axes count from the end)."""

    ELEMENTS: ClassVar[frozenset[Attribute]] = NUMBERS
    NUMPY: ClassVar[Callable[..., Any]]
    """The op's semantics: the NumPy reduction (`axis`, `keepdims`) computing it."""
    axes = opt_prop_def(DenseArrayBase[IntegerType])
    keepdims = prop_def(BoolAttr, default_value=bool_attr(False))
    traits = traits_def(Reduction())

    def __init__(self, input: Value, axes: Sequence[int] | None = None, keepdims: bool = False):
        input_type = _type(input)
        shape = shapes.reduce(shape_of(input_type), axes, keepdims)
        properties: dict[str, Attribute] = {"keepdims": bool_attr(keepdims)}
        if axes is not None:
            properties["axes"] = i64_array(list(axes))
        super().__init__(
            operands=[input],
            result_types=[TensorType(element_of(input_type), shape)],
            properties=properties,
        )

    @property
    def axes_values(self) -> tuple[int, ...] | None:
        """The axes as given (possibly negative), or None for all axes."""
        return None if self.axes is None else tuple(self.axes.get_values())

    @property
    def reduced_axes(self) -> tuple[int, ...]:
        """The reduced axes, normalized and sorted."""
        rank = len(shape_of(self.input.type))
        if self.axes_values is None:
            return tuple(range(rank))
        return tuple(sorted(shapes.normalize_axes(self.axes_values, rank)))

    def verify_types(self) -> None:
        require_elements("operand", element_of(self.input.type), self.ELEMENTS)
        shape = shapes.reduce(shape_of(self.input.type), self.axes_values, flag(self.keepdims))
        expected = TensorType(element_of(self.input.type), shape)
        require_result(self.result.type, expected, [self.input.type])

    def semantics(self, inputs: Sequence[Array]) -> Array:
        """Over an empty axis: sum 0, mean NaN (0 / 0), max the lowest value of the type."""
        return self.NUMPY(inputs[0], self.reduced_axes, keepdims=flag(self.keepdims))


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "df.reduce_sum"
    NUMPY = staticmethod(np.sum)


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "df.reduce_mean"
    NUMPY = staticmethod(np.mean)
    ELEMENTS: ClassVar[frozenset[Attribute]] = FLOATS


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "df.reduce_max"
    NUMPY = staticmethod(reference.reduce_max)


@irdl_op_definition
class SoftmaxOp(UnaryShapeOp):
    """`exp(x - max) / sum(exp(x - max))` along `axis`, numerically stable."""

    name = "df.softmax"
    axis = prop_def(IntegerAttr[IntegerType], default_value=i64_attr(-1))
    traits = traits_def(Reduction(flops=4))

    def __init__(self, input: Value, axis: int = -1):
        super().__init__(
            operands=[input], result_types=[_type(input)], properties={"axis": i64_attr(axis)}
        )

    @property
    def axis_value(self) -> int:
        """The axis, normalized into [0, rank)."""
        return shapes.normalize_axis(self.axis.value.data, len(shape_of(self.input.type)))

    def verify_types(self) -> None:
        require_elements("operand", element_of(self.input.type), FLOATS)
        shapes.normalize_axis(self.axis.value.data, len(shape_of(self.input.type)))
        require_result(
            self.result.type,
            TensorType(element_of(self.input.type), shape_of(self.input.type)),
            [self.input.type],
        )

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return reference.softmax(inputs[0], self.axis_value)


@irdl_op_definition
class LayerNormOp(DfOp, HasSemantics):
    """`(x - mean) / sqrt(var + epsilon) · scale + bias` along the last axis, the mean
    and the (population) variance of each row computed once: ONNX's and PyTorch's
    layer normalization of the last axis (of several trailing axes, as one after a
    reshape). `scale` and `bias` are of the last axis's length."""

    name = "df.layer_norm"

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr, default_value=FloatAttr(1e-5, f64))

    traits = traits_def(Pure(), Reduction(flops=8))
    assembly_format = "$input `,` $scale `,` $bias " + FUNCTIONAL_SYNTAX

    def __init__(self, input: Value, scale: Value, bias: Value, epsilon: float = 1e-5):
        super().__init__(
            operands=[input, scale, bias],
            result_types=[_type(input)],
            properties={"epsilon": FloatAttr(epsilon, f64)},
        )

    @property
    def epsilon_value(self) -> float:
        return float(self.epsilon.value.data)

    def verify_types(self) -> None:
        element = element_of(self.input.type)
        require_elements("operand", element, FLOATS)
        shape = shape_of(self.input.type)
        if not shape:
            raise ShapeError(f"the input {self.input.type} has no axis to normalize")
        row = TensorType(element, shape[-1:])
        for name, value in (("scale", self.scale), ("bias", self.bias)):
            if value.type != row:
                raise ShapeError(
                    f"{name} must be {row} (the last axis of {self.input.type}), got {value.type}"
                )
        if self.epsilon_value < 0:
            raise ShapeError(f"epsilon must not be negative, got {self.epsilon_value}")
        require_result(self.result.type, TensorType(element, shape), [self.input.type])

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return reference.layer_norm(inputs[0], inputs[1], inputs[2], self.epsilon_value)


@irdl_op_definition
class ConcatOp(DfOp, HasSemantics):
    """`numpy.concatenate(inputs, axis)`."""

    name = "df.concat"

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])

    traits = traits_def(Pure())
    assembly_format = "$inputs " + FUNCTIONAL_SYNTAX

    def __init__(self, inputs: Sequence[Value], axis: int):
        result = self.infer_type([_type(v) for v in inputs], axis)
        super().__init__(
            operands=[inputs], result_types=[result], properties={"axis": i64_attr(axis)}
        )

    @staticmethod
    def infer_type(inputs: Sequence[Attribute], axis: int) -> TensorType:
        if not inputs:
            raise ShapeError("needs at least one operand")
        element = common_element(inputs)
        return TensorType(element, shapes.concat([shape_of(t) for t in inputs], axis))

    @property
    def axis_value(self) -> int:
        """The axis, normalized into [0, rank)."""
        return shapes.normalize_axis(self.axis.value.data, len(shape_of(self.result.type)))

    def verify_types(self) -> None:
        operands = [v.type for v in self.inputs]
        require_result(self.result.type, self.infer_type(operands, self.axis.value.data), operands)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return np.concatenate(inputs, axis=self.axis_value)


@irdl_op_definition
class SliceOp(UnaryShapeOp):
    """`x[start:limit]` along every axis, with 0 <= start <= limit <= dim."""

    name = "df.slice"
    start = prop_def(DenseArrayBase[IntegerType])
    limit = prop_def(DenseArrayBase[IntegerType])

    def __init__(self, input: Value, start: Sequence[int], limit: Sequence[int]):
        input_type = _type(input)
        shape = shapes.slice_(shape_of(input_type), start, limit)
        super().__init__(
            operands=[input],
            result_types=[TensorType(element_of(input_type), shape)],
            properties={"start": i64_array(list(start)), "limit": i64_array(list(limit))},
        )

    @property
    def start_values(self) -> tuple[int, ...]:
        return tuple(self.start.get_values())

    @property
    def limit_values(self) -> tuple[int, ...]:
        return tuple(self.limit.get_values())

    def verify_types(self) -> None:
        shape = shapes.slice_(shape_of(self.input.type), self.start_values, self.limit_values)
        expected = TensorType(element_of(self.input.type), shape)
        require_result(self.result.type, expected, [self.input.type])

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return inputs[0][tuple(map(slice, self.start_values, self.limit_values))]
