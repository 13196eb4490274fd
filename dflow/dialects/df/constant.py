"""`df.constant`: a tensor literal, and how folded values become one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import AnyDenseElement, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_op_definition,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.hints import isa

from dflow.dialects.df.arrays import to_array
from dflow.dialects.df.base import DfOp
from dflow.dialects.df.reference import Array
from dflow.dialects.df.semantics import HasSemantics
from dflow.dialects.df.traits import NarrowAsIs


@irdl_op_definition
class ConstantOp(DfOp, HasSemantics):
    """A dense tensor literal; its type is the value's type.

    `%c = df.constant dense<[1.0, 2.0]> : tensor<2xf32>`, or a splat `dense<0.0>`.
    """

    name = "df.constant"

    T: ClassVar = VarConstraint("T", base(TensorType))
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr())))
    result = result_def(T)

    traits = traits_def(Pure(), ConstantLike(), NarrowAsIs())
    assembly_format = "attr-dict $value"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def verify_types(self) -> None:
        """The value's type is the result type, checked by the shared constraint."""

    def fold(self) -> Sequence[Attribute]:
        """A constant folds to its value (so `ConstantLike.get_constant_value` reads
        it); upstream folding never replaces a constant by itself."""
        return (self.value,)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return to_array(self.value)


class DfConstantMaterialization(ConstantMaterializationInterface):
    """Builds `df.constant` for folded values, so upstream folding can use `df` folds."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if isa(value, DenseIntOrFPElementsAttr[AnyDenseElement]) and value.type == type:
            return ConstantOp(value)
        return None
