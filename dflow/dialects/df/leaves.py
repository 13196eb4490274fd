"""`df.constant`: a tensor literal."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
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

from dflow.dialects.df.base import DfOp


@irdl_op_definition
class ConstantOp(DfOp):
    """A dense tensor literal; its type is the value's type.

    `%c = df.constant dense<[1.0, 2.0]> : tensor<2xf32>`, or a splat `dense<0.0>`.
    """

    name = "df.constant"

    T: ClassVar = VarConstraint("T", base(TensorType))
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr())))
    result = result_def(T)

    traits = traits_def(Pure(), ConstantLike())
    assembly_format = "attr-dict $value"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def verify_types(self) -> None:
        """The value's type is the result type, checked by the shared constraint."""
