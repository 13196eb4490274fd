"""Quantization ONNX ops: QDQ models (`QuantizeLinear`, `DequantizeLinear`), dynamic
quantization (`DynamicQuantizeLinear`, `MatMulInteger`), `ConvInteger` and the
`QLinearMatMul`/`QLinearConv` of operator-form models.

Quantized values are df's own 2- to 16-bit integer tensors, or 8- and 4-bit float
ones (the zero point's type is the quantized type, UINT8 without one); each op is
composed exactly:
- quantize: `clip(round(x / scale) + zero_point)` to the type's range (`round` halves
  to even, as ONNX says), then cast to the type; to a float, `x / scale` cast (an
  8-bit float clamped first unless `saturate` is 0; FLOAT4E2M1 adds its zero point);
- dequantize: `(q - zero_point) · scale`, the difference exact in i32 (f32 for floats);
- integer products: the zero points subtracted in i32 and `df.matmul` on i32 (the sum
  of products of 8-bit values fits); integer convolutions in f64 (`df.conv2d` is for
  floats; products and sums of 8-bit values are exact in f64's 53 bits), back to i32;
- `QLinear*`: the i32 accumulator times `a_scale · b_scale / y_scale`, then quantized.
Per-axis scales and zero points (1-D, along `axis`) broadcast along their axis.
"""

from __future__ import annotations

import ml_dtypes
from xdsl.dialects.builtin import f32, f64, i8, i16, i32
from xdsl.ir import Attribute

from dflow.dialects import df
from dflow.dialects.df.arrays import element_type_of, numpy_dtype
from dflow.dialects.df.types import MINIFLOATS, f4e2m1fn, i2, i4, ui2, ui4, ui8, ui16
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.model import DTYPES, dtype_name
from dflow.frontend.onnx.ops.elementwise import saturated
from dflow.frontend.onnx.ops.nn import conv2d_of, numpy_matmul
from dflow.frontend.onnx.ops.windows import WINDOW_ATTRIBUTES


def _along(node: Node, value: Tensor, axis: int, rank: int) -> Tensor:
    """A scale or zero point shaped to broadcast against a tensor of `rank`: a scalar
    (or one element) as it is, a 1-D one along `axis`."""
    if len(value.shape) == 0 or value.shape == (1,):
        return value.reshape(())
    if len(value.shape) != 1:
        raise node.error(f"a scale or zero point of shape {list(value.shape)} needs "
                         "block_size (blocked quantization)")  # fmt: skip
    axis = node.axis(axis, rank)
    return value.reshape([value.shape[0] if k == axis else 1 for k in range(rank)])


def _parameter(node: Node, value: Tensor, axis: int, like: Tensor) -> Tensor:
    """A scale or zero point for `like`: per tensor or per axis (`_along`), or, with
    `block_size`, one per block of that many elements along `axis`, repeated over
    its block (the last block may be short)."""
    block = node.int("block_size", 0)
    if not block:
        return _along(node, value, axis, len(like.shape))
    axis = node.axis(axis, len(like.shape))
    length = like.shape[axis]
    blocks = -(-length // block)
    wanted = [blocks if k == axis else n for k, n in enumerate(like.shape)]
    if block < 0 or list(value.shape) != wanted:
        raise node.error(
            f"block_size {block} along axis {axis} of a tensor of shape {list(like.shape)} "
            f"takes a scale and zero point of shape {wanted}, got {list(value.shape)}"
        )
    split = [*like.shape[:axis], blocks, 1, *like.shape[axis + 1 :]]
    spread = [*like.shape[:axis], blocks, block, *like.shape[axis + 1 :]]
    repeated = value.reshape(split).broadcast_to(spread)
    whole = repeated.reshape([blocks * block if k == axis else n for k, n in enumerate(wanted)])
    if blocks * block == length:
        return whole
    limit = tuple(length if k == axis else n for k, n in enumerate(like.shape))
    return node.emit(df.SliceOp(whole.value, (0,) * len(limit), limit))


def _zero_point(node: Node, index: int, like: Tensor, axis: int) -> Tensor | None:
    point = node.optional(index)
    return None if point is None else _parameter(node, point, axis, like)


QUANTIZED_INTEGERS: frozenset[Attribute] = frozenset({i2, i4, i8, i16, ui2, ui4, ui8, ui16})
QUANTIZED: frozenset[Attribute] = QUANTIZED_INTEGERS | MINIFLOATS
"""The types values are quantized to."""


def quantized(
    x: Tensor, scale: Tensor | None, point: Tensor | None, element: Attribute, saturate: bool = True
) -> Tensor:
    """`clip(round(x / scale) + point, low, high)` in `element`, computed in `x`'s
    float type (`x` scaled already where `scale` is None); to a float type, see
    `_float_quantized`."""
    scaled = x if scale is None else x / scale
    if element in MINIFLOATS:
        return _float_quantized(scaled, point, element, saturate)
    info = ml_dtypes.iinfo(numpy_dtype(element))
    q = scaled.round()
    if point is not None:
        q = q + point.cast(x.type.element_type)
    return q.maximum(float(info.min)).minimum(float(info.max)).cast(element)


def _float_quantized(
    scaled: Tensor, point: Tensor | None, element: Attribute, saturate: bool
) -> Tensor:
    """`scaled` cast to an 8- or 4-bit float as ONNX's reference does: an 8-bit one
    clamped to its largest finite value first when `saturate` (its zero point, zero by
    the spec, unused: `-0 + 0` would lose the sign), FLOAT4E2M1 plus its zero point
    (its cast saturates on its own)."""
    if element == f4e2m1fn:
        if point is not None:
            scaled = scaled + point.cast(scaled.type.element_type)
        return scaled.cast(element)
    return (saturated(scaled, element) if saturate else scaled).cast(element)


def _wide(value: Tensor) -> Tensor:
    """A quantized (or i32) value in i32, where differences and sums are exact; a
    quantized float in f32 (exact)."""
    wide = f32 if value.type.element_type in MINIFLOATS else i32
    return value if value.type.element_type == wide else value.cast(wide)


def _quantized_type(node: Node, point: Tensor | None, what: str) -> Attribute:
    """The type a quantizing op's output has: its zero point's (without one, its
    `output_dtype`, UINT8 by default)."""
    if point is None:
        return _output_dtype(node)
    if point.type.element_type not in QUANTIZED:
        raise node.error(
            f"{what} must be INT2, INT4, INT8, INT16, UINT2, UINT4, UINT8, UINT16, "
            "a FLOAT8 type or FLOAT4E2M1"
        )
    return point.type.element_type


def _output_dtype(node: Node) -> Attribute:
    """`output_dtype` (opset 21), one of the quantized types; UINT8 when absent."""
    data_type = node.int("output_dtype", 0)
    if not data_type:
        return ui8
    dtype = DTYPES.get(data_type)
    element = None if dtype is None else element_type_of(dtype)
    if element not in QUANTIZED:
        raise node.error(f"output_dtype {dtype_name(data_type)} is not a quantized type")
    return element


@converter("QuantizeLinear", attributes={"axis", "saturate", "block_size", "output_dtype"})
def quantize_linear(node: Node) -> list[Tensor]:
    x = node.input(0)
    if x.type.element_type not in (f32, f64):
        raise node.error(f"x must be float or double, got {x.type.element_type}")
    axis = node.int("axis", 1)
    scale = _parameter(node, node.input(1), axis, x)
    point = _zero_point(node, 2, x, axis)
    element = _quantized_type(node, point, "y_zero_point")
    saturate = bool(node.int("saturate", 1))
    return [quantized(x, scale.cast(x.type.element_type), point, element, saturate)]


@converter("DequantizeLinear", attributes={"axis", "block_size"})
def dequantize_linear(node: Node) -> list[Tensor]:
    q = node.input(0)
    axis = node.int("axis", 1)
    scale = _parameter(node, node.input(1), axis, q)
    point = _zero_point(node, 2, q, axis)
    shifted = _wide(q) if point is None else _wide(q) - _wide(point)
    return [shifted.cast(scale.type.element_type) * scale]


@converter("DynamicQuantizeLinear")
def dynamic_quantize_linear(node: Node) -> list[Tensor]:
    """UINT8 with `scale = (max(0, max x) - min(0, min x)) / 255` and the zero point
    `clip(round(-min / scale))`, as ONNX defines it (a scale of 0, all zeros, taken as 1)."""
    x = node.input(0)
    if x.type.element_type != f32:
        raise node.error(f"x must be float, got {x.type.element_type}")
    axes = list(range(len(x.shape)))
    largest = x.max(axes).maximum(0.0)
    smallest = (-(-x).max(axes)).minimum(0.0)
    scale = (largest - smallest) / 255.0
    scale = node.emit(df.SelectOp(scale.equal(0.0).value, node.scalar(1.0, x).value, scale.value))
    point = (-smallest / scale).round().maximum(0.0).minimum(255.0).cast(ui8)
    return [quantized(x, scale, point, ui8), scale, point]


def _integer_operand(node: Node, index: int, point_index: int, axis: int) -> Tensor:
    """Input `index` minus its zero point (input `point_index`, per `axis` when 1-D)."""
    value = node.input(index)
    point = _zero_point(node, point_index, value, axis)
    return _wide(value) if point is None else _wide(value) - _wide(point)


@converter("MatMulInteger")
def matmul_integer(node: Node) -> list[Tensor]:
    """`(A - a_zero_point) @ (B - b_zero_point)` in i32; A's zero point per row, B's
    per column when 1-D."""
    a = _integer_operand(node, 0, 2, max(0, len(node.input(0).shape) - 2))
    b = _integer_operand(node, 1, 3, len(node.input(1).shape) - 1)
    return [numpy_matmul(node, a, b)]


@converter("ConvInteger", attributes=WINDOW_ATTRIBUTES | {"group"})
def conv_integer(node: Node) -> list[Tensor]:
    """`(x - x_zero_point) ⊛ (w - w_zero_point)` (w's zero point per output channel
    when 1-D), convolved in f64 (exact) and returned as i32 (ONNX's INT32 output)."""
    x = _integer_operand(node, 0, 2, 1).cast(f64)
    w = _integer_operand(node, 1, 3, 0).cast(f64)
    return [conv2d_of(node, x, w, None).cast(i32)]


@converter("QLinearMatMul")
def qlinear_matmul(node: Node) -> list[Tensor]:
    """The i32 product of the zero-point-shifted operands, requantized by
    `a_scale · b_scale / y_scale` to `y_zero_point`'s type."""
    a = _integer_operand(node, 0, 2, max(0, len(node.input(0).shape) - 2))
    b = _integer_operand(node, 3, 5, len(node.input(3).shape) - 1)
    accumulated = numpy_matmul(node, a, b).cast(f32)
    scale = node.input(1).reshape(()) * _along(node, node.input(4), len(b.shape) - 1, len(b.shape))
    return [_requantized(node, accumulated * (scale / node.input(6).reshape(())), 7)]


@converter("QLinearConv", attributes=WINDOW_ATTRIBUTES | {"group"})
def qlinear_conv(node: Node) -> list[Tensor]:
    """The convolution of the shifted operands (in f64, exact) plus the i32 bias,
    requantized by `x_scale · w_scale / y_scale` to `y_zero_point`'s type."""
    x = _integer_operand(node, 0, 2, 1).cast(f64)
    w = _integer_operand(node, 3, 5, 0).cast(f64)
    accumulated = conv2d_of(node, x, w, None)
    bias = node.optional(8)
    if bias is not None:
        accumulated = accumulated + bias.cast(f64).reshape((bias.shape[0], 1, 1))
    w_scale = _along(node, node.input(4), 1, 4).cast(f64)
    scale = node.input(1).reshape(()).cast(f64) * w_scale / node.input(6).reshape(()).cast(f64)
    return [_requantized(node, (accumulated * scale).cast(f32), 7)]


def _requantized(node: Node, value: Tensor, point_index: int) -> Tensor:
    point = _zero_point(node, point_index, value, 1)
    return quantized(value, None, point, _quantized_type(node, point, "y_zero_point"))
