"""`df.send` and `df.recv`: a value crossing from one device to another.

`df-partition` makes them; a send and its receives are matched by `key`.
Both have effects (they are not `Pure`), so DCE and CSE leave them alone.
"""

from __future__ import annotations

import abc

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.devices import DEVICE_FORM, DEVICE_PATTERN
from dflow.dialects.df.base import DfOp


class TransferOp(DfOp, abc.ABC):
    """Shared properties: the channel key and the two devices."""

    key = prop_def(StringAttr)
    source = prop_def(StringAttr, prop_name="from")
    destination = prop_def(StringAttr, prop_name="to")

    @staticmethod
    def transfer_properties(key: str, source: str, destination: str) -> dict[str, Attribute]:
        return {"key": StringAttr(key), "from": StringAttr(source), "to": StringAttr(destination)}

    def verify_types(self) -> None:
        for device in (self.source.data, self.destination.data):
            if not DEVICE_PATTERN.fullmatch(device):
                raise VerifyException(f"device {device!r} is not of the form {DEVICE_FORM}")
        if self.source == self.destination:
            raise VerifyException(f"sends from {self.source.data} to itself")


@irdl_op_definition
class SendOp(TransferOp):
    """`df.send %v {key = "k3", from = "cpu:0", to = "gpu:0"} : (tensor<4xf32>) -> ()`"""

    name = "df.send"
    input = operand_def(TensorType)
    assembly_format = "$input attr-dict `:` `(` type($input) `)` `->` `(` `)`"

    def __init__(self, input: Operation | SSAValue, key: str, source: str, destination: str):
        super().__init__(
            operands=[input], properties=self.transfer_properties(key, source, destination)
        )


@irdl_op_definition
class RecvOp(TransferOp):
    """`%v = df.recv {key = "k3", from = "cpu:0", to = "gpu:0"} : () -> tensor<4xf32>`"""

    name = "df.recv"
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` `(` `)` `->` type($result)"

    def __init__(self, result_type: TensorType, key: str, source: str, destination: str):
        super().__init__(
            result_types=[result_type],
            properties=self.transfer_properties(key, source, destination),
        )
