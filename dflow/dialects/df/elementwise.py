"""Elementwise ops: unary, binary with NumPy broadcasting, comparisons, select,
cast and addn."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Commutative, Pure

from dflow.dialects.df import reference, shapes
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.base import FUNCTIONAL_SYNTAX, DfOp, require_elements, require_result
from dflow.dialects.df.reference import Array
from dflow.dialects.df.semantics import HasSemantics
from dflow.dialects.df.shapes import ShapeError
from dflow.dialects.df.traits import (
    CheapToRecompute,
    Elementwise,
    FlopPerAddedOperand,
    FlopsPerElement,
    InPlace,
    InPlaceOfSameWidth,
    NarrowAsIs,
)
from dflow.dialects.df.types import (
    ALL_ELEMENTS,
    FLOATS,
    NUMBERS,
    element_of,
    shape_of,
    static_tensor,
)

Value = Operation | SSAValue


class UnaryElementwiseOp(DfOp, HasSemantics, abc.ABC):
    """`f(x)` elementwise; the result has the operand's type."""

    ELEMENTS: ClassVar[frozenset[Attribute]] = NUMBERS
    NUMPY: ClassVar[Callable[..., Any]]
    """The op's semantics: the NumPy function computing it."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), Elementwise(), InPlace(), CheapToRecompute())
    assembly_format = "$input " + FUNCTIONAL_SYNTAX

    def __init__(self, input: Value, attributes: dict[str, Attribute] | None = None):
        super().__init__(
            operands=[input], result_types=[SSAValue.get(input).type], attributes=attributes
        )

    def verify_types(self) -> None:
        require_elements("operand", element_of(self.input.type), self.ELEMENTS)
        require_result(self.result.type, static_tensor(self.input.type), [self.input.type])

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return self.NUMPY(inputs[0])


class FloatUnaryOp(UnaryElementwiseOp, abc.ABC):
    """A unary op defined on real numbers only."""

    ELEMENTS: ClassVar[frozenset[Attribute]] = FLOATS


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    """`-x`."""

    name = "df.neg"
    NUMPY = staticmethod(np.negative)


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    """`|x|`."""

    name = "df.abs"
    NUMPY = staticmethod(np.abs)


@irdl_op_definition
class SquareOp(UnaryElementwiseOp):
    """`x * x`."""

    name = "df.square"
    NUMPY = staticmethod(np.square)


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """`max(x, 0)`; NaN stays NaN."""

    name = "df.relu"
    NUMPY = staticmethod(reference.relu)


@irdl_op_definition
class IdentityOp(UnaryElementwiseOp):
    """`x`, a copy (one that pins a value to another device survives `df-prune`)."""

    name = "df.identity"
    NUMPY = staticmethod(np.copy)
    ELEMENTS: ClassVar[frozenset[Attribute]] = ALL_ELEMENTS


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    """`1 / x`."""

    name = "df.reciprocal"
    NUMPY = staticmethod(np.reciprocal)
    traits = traits_def(FlopsPerElement(4))


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """`e ** x`."""

    name = "df.exp"
    NUMPY = staticmethod(np.exp)
    traits = traits_def(FlopsPerElement(8))


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """The natural logarithm."""

    name = "df.log"
    NUMPY = staticmethod(np.log)
    traits = traits_def(FlopsPerElement(8))


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """`√x`."""

    name = "df.sqrt"
    NUMPY = staticmethod(np.sqrt)
    traits = traits_def(FlopsPerElement(4))


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """`1 / √x`."""

    name = "df.rsqrt"
    NUMPY = staticmethod(reference.rsqrt)
    traits = traits_def(FlopsPerElement(4))


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """The hyperbolic tangent."""

    name = "df.tanh"
    NUMPY = staticmethod(np.tanh)
    traits = traits_def(FlopsPerElement(8))


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """The error function `2/√π ∫₀ˣ e^(-t²) dt` (libm's `erf`)."""

    name = "df.erf"
    NUMPY = staticmethod(reference.erf)
    traits = traits_def(FlopsPerElement(8))


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """The largest integer not above `x` (`-0.0`, ±inf and NaN stay as they are)."""

    name = "df.floor"
    NUMPY = staticmethod(np.floor)


@irdl_op_definition
class CeilOp(FloatUnaryOp):
    """The smallest integer not below `x` (`-0.5` gives `-0.0`)."""

    name = "df.ceil"
    NUMPY = staticmethod(np.ceil)


@irdl_op_definition
class RoundOp(FloatUnaryOp):
    """`x` rounded to the nearest integer, halves to even (ONNX Round, `np.rint`)."""

    name = "df.round"
    NUMPY = staticmethod(np.rint)


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """The sine of `x` radians."""

    name = "df.sin"
    NUMPY = staticmethod(np.sin)
    traits = traits_def(FlopsPerElement(8))


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """The cosine of `x` radians."""

    name = "df.cos"
    NUMPY = staticmethod(np.cos)
    traits = traits_def(FlopsPerElement(8))


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`1 / (1 + e ** -x)`, without overflow."""

    name = "df.sigmoid"
    NUMPY = staticmethod(reference.sigmoid)
    traits = traits_def(FlopsPerElement(8))


def broadcast_type(element: Attribute, *operands: Attribute) -> TensorType:
    """The tensor type of `element` over the broadcast of the operands' shapes."""
    return tensor_type(element, tuple(shapes.broadcast(*(shape_of(t) for t in operands))))


@lru_cache(maxsize=4096)
def tensor_type(element: Attribute, shape: tuple[int, ...]) -> TensorType:
    """`TensorType(element, shape)`, made once per element and shape: xDSL verifies a
    new type's every parameter (0.1-0.2 ms), and every elementwise op built or
    verified infers its result type (DenseNet-201's ONNX import made 3,808)."""
    return TensorType(element, shape)


def common_element(operands: Sequence[Attribute]) -> Attribute:
    """The one element type all operands share, or a ShapeError naming them."""
    elements = {element_of(t) for t in operands}
    if len(elements) != 1:
        shown = ", ".join(str(t) for t in operands)
        raise ShapeError(f"operands {shown} must have the same element type")
    return elements.pop()


class BinaryElementwiseOp(DfOp, HasSemantics, abc.ABC):
    """`f(x, y)` elementwise with NumPy broadcasting; both operands share an element type."""

    ELEMENTS: ClassVar[frozenset[Attribute]] = NUMBERS
    NUMPY: ClassVar[Callable[..., Any]]
    """The op's semantics: the NumPy function computing it, broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), Elementwise(), InPlace(), CheapToRecompute())
    assembly_format = "$lhs `,` $rhs " + FUNCTIONAL_SYNTAX

    def __init__(self, lhs: Value, rhs: Value, attributes: dict[str, Attribute] | None = None):
        types = (SSAValue.get(lhs).type, SSAValue.get(rhs).type)
        super().__init__(
            operands=[lhs, rhs], result_types=[self.infer_type(*types)], attributes=attributes
        )

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return operand_element

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute) -> TensorType:
        element = common_element((lhs, rhs))
        require_elements("operands", element, cls.ELEMENTS)
        return broadcast_type(cls.result_element(element), lhs, rhs)

    def verify_types(self) -> None:
        operands = (self.lhs.type, self.rhs.type)
        require_result(self.result.type, self.infer_type(*operands), operands)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return self.NUMPY(inputs[0], inputs[1])


class FloatBinaryOp(BinaryElementwiseOp, abc.ABC):
    ELEMENTS: ClassVar[frozenset[Attribute]] = FLOATS


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """`x + y`."""

    name = "df.add"
    NUMPY = staticmethod(np.add)
    traits = traits_def(Commutative())


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """`x - y`."""

    name = "df.sub"
    NUMPY = staticmethod(np.subtract)


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    """`x * y`."""

    name = "df.mul"
    NUMPY = staticmethod(np.multiply)
    traits = traits_def(Commutative())


@irdl_op_definition
class MaximumOp(BinaryElementwiseOp):
    """The larger of `x` and `y`; NaN wins, as in `np.maximum`."""

    name = "df.maximum"
    NUMPY = staticmethod(np.maximum)
    traits = traits_def(Commutative())


@irdl_op_definition
class MinimumOp(BinaryElementwiseOp):
    """The smaller of `x` and `y`; NaN wins, as in `np.minimum`."""

    name = "df.minimum"
    NUMPY = staticmethod(np.minimum)
    traits = traits_def(Commutative())


@irdl_op_definition
class DivOp(FloatBinaryOp):
    """`x / y`."""

    name = "df.div"
    NUMPY = staticmethod(np.divide)
    traits = traits_def(FlopsPerElement(4))


@irdl_op_definition
class PowOp(FloatBinaryOp):
    """`x ** y`."""

    name = "df.pow"
    NUMPY = staticmethod(np.power)
    traits = traits_def(FlopsPerElement(8))


@irdl_op_definition
class RemOp(FloatBinaryOp):
    """`fmod(x, y)`: `x - trunc(x / y)·y`, exactly (the sign of `x`; NaN where `y` is 0
    or `x` infinite; `x` where `y` is infinite and `x` finite), as C's `fmod`,
    `np.fmod` and MLIR's `arith.remf`. ONNX's `Mod` of floats is made of it."""

    name = "df.rem"
    NUMPY = staticmethod(np.fmod)
    traits = traits_def(FlopsPerElement(8))


class CompareOp(BinaryElementwiseOp, abc.ABC):
    """Elementwise comparison; the result is `i1` of the broadcast shape."""

    ELEMENTS: ClassVar[frozenset[Attribute]] = ALL_ELEMENTS

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return i1


@irdl_op_definition
class GreaterOp(CompareOp):
    """`x > y`."""

    name = "df.greater"
    NUMPY = staticmethod(np.greater)


@irdl_op_definition
class GreaterEqualOp(CompareOp):
    """`x >= y`."""

    name = "df.greater_equal"
    NUMPY = staticmethod(np.greater_equal)


@irdl_op_definition
class LessOp(CompareOp):
    """`x < y`."""

    name = "df.less"
    NUMPY = staticmethod(np.less)


@irdl_op_definition
class LessEqualOp(CompareOp):
    """`x <= y`."""

    name = "df.less_equal"
    NUMPY = staticmethod(np.less_equal)


@irdl_op_definition
class EqualOp(CompareOp):
    """`x == y` (false on NaN)."""

    name = "df.equal"
    NUMPY = staticmethod(np.equal)
    traits = traits_def(Commutative())


@irdl_op_definition
class SelectOp(DfOp, HasSemantics):
    """`where(condition, on_true, on_false)` with all three broadcast together."""

    name = "df.select"

    condition = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), Elementwise(), InPlace(), CheapToRecompute())
    assembly_format = "$condition `,` $on_true `,` $on_false " + FUNCTIONAL_SYNTAX

    def __init__(self, condition: Value, on_true: Value, on_false: Value):
        types = [SSAValue.get(v).type for v in (condition, on_true, on_false)]
        super().__init__(
            operands=[condition, on_true, on_false], result_types=[self.infer_type(*types)]
        )

    @staticmethod
    def infer_type(condition: Attribute, on_true: Attribute, on_false: Attribute) -> TensorType:
        if element_of(condition) != i1:
            raise ShapeError(f"condition {condition} must have element type i1")
        element = common_element((on_true, on_false))
        return broadcast_type(element, condition, on_true, on_false)

    def verify_types(self) -> None:
        operands = (self.condition.type, self.on_true.type, self.on_false.type)
        require_result(self.result.type, self.infer_type(*operands), operands)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return np.where(inputs[0], inputs[1], inputs[2])


@irdl_op_definition
class CastOp(DfOp, HasSemantics):
    """Element type conversion (NumPy `astype`); the shape is kept."""

    name = "df.cast"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(
        Pure(), Elementwise(), InPlaceOfSameWidth(), NarrowAsIs(), CheapToRecompute()
    )
    assembly_format = "$input " + FUNCTIONAL_SYNTAX

    def __init__(self, input: Value, element: Attribute):
        shape = shape_of(SSAValue.get(input).type)
        super().__init__(operands=[input], result_types=[TensorType(element, shape)])

    def verify_types(self) -> None:
        if shape_of(self.input.type) != shape_of(self.result.type):
            raise ShapeError(
                f"result type {self.result.type} must have the shape of the operand "
                f"{self.input.type}"
            )

    def semantics(self, inputs: Sequence[Array]) -> Array:
        """`astype`; to i1 means `!= 0`. NaN or out-of-range floats to integers are
        undefined."""
        target = element_of(self.result.type)
        if target == i1:
            return inputs[0] != 0
        return inputs[0].astype(numpy_dtype(target))


@irdl_op_definition
class AddNOp(DfOp, HasSemantics):
    """The sum of one or more tensors of one type."""

    name = "df.addn"

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(
        Pure(),
        Commutative(),
        Elementwise(),
        FlopPerAddedOperand(),
        InPlace(),
        CheapToRecompute(),
    )
    assembly_format = "$inputs " + FUNCTIONAL_SYNTAX

    def __init__(self, inputs: Sequence[Value]):
        super().__init__(operands=[inputs], result_types=[SSAValue.get(inputs[0]).type])

    def verify_types(self) -> None:
        if not self.inputs:
            raise ShapeError("needs at least one operand")
        require_elements("operands", element_of(self.result.type), NUMBERS)
        for operand in self.inputs:
            if operand.type != self.result.type:
                raise ShapeError(
                    f"operand type {operand.type} differs from result type {self.result.type}"
                )

    def semantics(self, inputs: Sequence[Array]) -> Array:
        """The operands summed left to right."""
        total = inputs[0].copy()
        for term in inputs[1:]:
            total += term
        return total
