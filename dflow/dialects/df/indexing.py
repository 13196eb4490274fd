"""Indexing ops: elements moved by indices that are tensors, read at run time.

`df.gather` is `numpy.take(data, indices, axis)` (an embedding lookup, ONNX's
`Gather`); `df.gather_elements` is `take_along_axis` (ONNX's `GatherElements`);
`df.scatter_add` is the adjoint of a gather, the sum of slices into zeros at their
indices (the gradient of a gather with respect to its data). The shapes are
static; only the indices' values come at run time, so each index is checked when
it is read: negative ones count from the end, and one out of range is an error
naming the op, the index and the axis (`reference.checked_indices`, and the same
message from the compiled kernels), never a read or write outside the tensor.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, IntegerType, TensorType, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df import reference, shapes
from dflow.dialects.df.base import FUNCTIONAL_SYNTAX, DfOp, require_elements, require_result
from dflow.dialects.df.reference import Array
from dflow.dialects.df.semantics import HasSemantics
from dflow.dialects.df.types import NUMBERS, element_of, i64_attr, shape_of

Value = Operation | SSAValue

INDEX_ELEMENTS: frozenset[Attribute] = frozenset({i32, i64})
"""Element types of index tensors."""


def _require_indices(indices: Attribute) -> None:
    element = element_of(indices)
    if element not in INDEX_ELEMENTS:
        raise VerifyException(f"indices must have an i32 or i64 element type, got {element}")


class IndexingOp(DfOp, HasSemantics, abc.ABC):
    """Base of the ops reading an `indices` tensor: the position along `axis` of the
    indexed tensor (the gathered data, the scattered result) of each slice."""

    axis = prop_def(IntegerAttr[IntegerType], default_value=i64_attr(0))

    traits = traits_def(Pure())

    @property
    @abc.abstractmethod
    def indexed_shape(self) -> shapes.Shape:
        """The shape of the tensor the indices point into."""

    @property
    def index_element(self) -> Attribute:
        """The element type of the indices (operand 1 of every indexing op)."""
        return element_of(self.operands[1].type)

    @property
    def axis_value(self) -> int:
        """The axis, normalized into [0, rank) of the indexed tensor."""
        return shapes.normalize_axis(self.axis.value.data, len(self.indexed_shape))

    def sliced_shape(self, indices: Attribute) -> shapes.Shape:
        """The shape of the slices taken at `indices`: the indexed shape with the
        indices' shape in place of the axis."""
        return shapes.gather(self.indexed_shape, shape_of(indices), self.axis.value.data)


class TakeOp(IndexingOp, abc.ABC):
    """Base of the ops reading `data` at `indices` along `axis`, the result of `data`'s
    element type and of the shape their rule (`SHAPE`) gives."""

    SHAPE: ClassVar[Callable[..., shapes.Shape]]
    """The result's shape from the data's and the indices' shapes and the axis."""

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$data `,` $indices " + FUNCTIONAL_SYNTAX

    def __init__(self, data: Value, indices: Value, axis: int = 0):
        data_type = SSAValue.get(data).type
        shape = self.SHAPE(shape_of(data_type), shape_of(SSAValue.get(indices).type), axis)
        super().__init__(
            operands=[data, indices],
            result_types=[TensorType(element_of(data_type), shape)],
            properties={"axis": i64_attr(axis)},
        )

    @property
    def indexed_shape(self) -> shapes.Shape:
        return shape_of(self.data.type)

    def verify_types(self) -> None:
        _require_indices(self.indices.type)
        data, indices = shape_of(self.data.type), shape_of(self.indices.type)
        expected = TensorType(
            element_of(self.data.type), self.SHAPE(data, indices, self.axis.value.data)
        )
        require_result(self.result.type, expected, [self.data.type, self.indices.type])


@irdl_op_definition
class GatherOp(TakeOp):
    """`numpy.take(data, indices, axis)`, each index checked at run time."""

    name = "df.gather"
    SHAPE = staticmethod(shapes.gather)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        data, indices = inputs
        axis = self.axis_value
        taken = reference.checked_indices(self.name, indices, data.shape[axis], axis)
        return data.take(taken, axis=axis)


@irdl_op_definition
class ScatterAddOp(IndexingOp):
    """Zeros of the result's shape, each slice of `updates` added at its index along
    `axis` (repeated indices add up): the adjoint of `df.gather`."""

    name = "df.scatter_add"
    updates = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$updates `,` $indices " + FUNCTIONAL_SYNTAX

    def __init__(self, updates: Value, indices: Value, shape: Sequence[int], axis: int = 0):
        element = element_of(SSAValue.get(updates).type)
        super().__init__(
            operands=[updates, indices],
            result_types=[TensorType(element, tuple(shape))],
            properties={"axis": i64_attr(axis)},
        )

    @property
    def indexed_shape(self) -> shapes.Shape:
        return shape_of(self.result.type)

    def verify_types(self) -> None:
        _require_indices(self.indices.type)
        require_elements("updates", element_of(self.updates.type), NUMBERS)
        if element_of(self.result.type) != element_of(self.updates.type):
            raise VerifyException(
                f"result type {self.result.type} must keep the element type of {self.updates.type}"
            )
        expected = self.sliced_shape(self.indices.type)
        if shape_of(self.updates.type) != expected:
            indices = shapes.format_shape(shape_of(self.indices.type))
            raise shapes.ShapeError(
                f"updates {self.updates.type} must have shape {shapes.format_shape(expected)}: "
                f"the result's with the indices' shape {indices} in place of axis {self.axis_value}"
            )

    def semantics(self, inputs: Sequence[Array]) -> Array:
        updates, indices = inputs
        return reference.scatter_add(updates, indices, shape_of(self.result.type), self.axis_value)


@irdl_op_definition
class GatherElementsOp(TakeOp):
    """ONNX's `GatherElements`: each element of `indices` picks, along `axis`, the
    element of `data` at its own position on the other axes (`take_along_axis`)."""

    name = "df.gather_elements"
    SHAPE = staticmethod(shapes.gather_elements)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return reference.gather_elements(inputs[0], inputs[1], self.axis_value)
