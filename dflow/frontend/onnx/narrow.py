"""Where a quantized model's narrow integers (INT8, UINT8, INT16, UINT16) may flow.

dflow has no 8- or 16-bit tensors; a quantized model's narrow values are held as
`i32` (their values in their type's range), which is exact as long as nothing does
arithmetic on them that would wrap at 8 or 16 bits. So the importer follows them:
they come from initializers, `Constant`s and the quantizing ops, pass through the ops
that only move data, and may be read only by the ops that dequantize or multiply
them into 32 bits (`ops/quantization.py`). Any other reader is refused in one line,
as is a graph output of a narrow type: never a silently widened result.
"""

from __future__ import annotations

from collections.abc import Mapping

from onnx import NodeProto, TensorProto, helper

from dflow.frontend.onnx.model import NARROW

MOVERS = frozenset(
    {"Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Slice",
     "Concat", "Split", "Expand", "Gather"}
)  # fmt: skip
"""Ops whose outputs hold values of their input 0, moved: narrow in, narrow out."""

READERS: dict[str, frozenset[int]] = {
    "DequantizeLinear": frozenset({0, 2}),
    "QuantizeLinear": frozenset({2}),
    "MatMulInteger": frozenset({0, 1, 2, 3}),
    "ConvInteger": frozenset({0, 1, 2, 3}),
    "QLinearMatMul": frozenset({0, 2, 3, 5, 7}),
    "QLinearConv": frozenset({0, 2, 3, 5, 7}),
    **{mover: frozenset({0}) for mover in MOVERS},
}
"""The inputs each op may take narrow."""

_QUANTIZED_OUTPUT = {"QuantizeLinear": 2, "QLinearMatMul": 7, "QLinearConv": 7}
"""Ops whose output 0 has the type of their zero point (this input)."""


def name(data_type: int) -> str:
    return TensorProto.DataType.Name(data_type)


def refused_input(node: NodeProto, narrow: Mapping[str, int]) -> str | None:
    """Why `node` cannot read one of its narrow inputs, or None when it can."""
    allowed = READERS.get(node.op_type, frozenset())
    for index, value in enumerate(node.input):
        if value in narrow and index not in allowed:
            return (
                f"input {index} ({value!r}) holds {name(narrow[value])} values, which dflow "
                "keeps only between the quantization ops that read them (DequantizeLinear, "
                "MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv) and ops that move data"
            )
    return None


def output_types(node: NodeProto, narrow: Mapping[str, int]) -> dict[int, int]:
    """The narrow type of each output of `node` that has one."""
    if node.op_type in _QUANTIZED_OUTPUT:
        index = _QUANTIZED_OUTPUT[node.op_type]
        point = node.input[index] if index < len(node.input) else ""
        return {0: narrow.get(point, TensorProto.UINT8) if point else TensorProto.UINT8}
    if node.op_type == "DynamicQuantizeLinear":
        return {0: TensorProto.UINT8, 2: TensorProto.UINT8}
    if node.op_type in MOVERS and node.input and node.input[0] in narrow:
        return dict.fromkeys(range(len(node.output)), narrow[node.input[0]])
    if node.op_type == "Constant":
        for attribute in node.attribute:
            if attribute.name == "value":
                value = helper.get_attribute_value(attribute)
                if value.data_type in NARROW_TYPES:
                    return {0: value.data_type}
    return {}


NARROW_TYPES = frozenset(NARROW)
"""The narrow integer types (held as i32)."""

RANGES: dict[int, tuple[int, int]] = {
    TensorProto.INT8: (-128, 127),
    TensorProto.UINT8: (0, 255),
    TensorProto.INT16: (-32768, 32767),
    TensorProto.UINT16: (0, 65535),
}
"""The values each narrow type holds."""
