"""Which values of a function `df-layout` holds in the blocked channel layout NCHWc.

A value `[N, C, H, W]` in NCHWc with block `b` is `[N, C/b, H, W, b]`: each pixel's
channels in vectors of `b`. A convolution whose input and output channels are
multiples of `b` and whose filter is a constant (`convertible_conv`), larger than 1x1
or of a blocked input, computes in it from its (reordered) input; an elementwise op
with a blocked operand stays in it when each other operand can follow
(`operand_kind`): blocked itself, a constant (packed at compile time), broadcast
along the channels (reshaped, no copy), or a 4-D value with the channels (reordered
once); a channel concatenation of blocked values, and a max or average pool of
one, too. The choice goes forward in
program order, so a value is blocked only where a blocked producer feeds it: the
reorders are at the edges of each chain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum, auto

from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, SSAValue

from dflow.dialects.df.annotations import DEVICE
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.nn import AvgPool2DOp, Conv2DOp, MaxPool2DOp
from dflow.dialects.df.shape_ops import ConcatOp
from dflow.dialects.df.traits import Elementwise, has_trait
from dflow.dialects.df.types import shape_of, static_tensor

TILE_BLOCKS = 4
"""Blocks of output channels a generated NCHWc tile holds (`backend/llvm/nchwc.py`)."""


class OperandKind(Enum):
    """How an operand of a blocked op reaches the blocked layout."""

    BLOCKED = auto()
    """Already blocked: the blocked value itself."""
    PACKED_CONSTANT = auto()
    """A constant with the channels: packed at compile time."""
    CHANNEL_BROADCAST = auto()
    """One channel or fewer axes than the channel's (`[1, 1, H, W]`, `[W]`, a scalar):
    the same elements as a 5-D `[N', 1, H', W', 1]`, a reshape."""
    REORDERED = auto()
    """Any other 4-D value with the channels (the result's shape, or `[1, C, 1, 1]`
    computed): reordered into NCHWc."""


def _is_nchw(value: SSAValue, block: int) -> bool:
    """A non-empty float32 4-D tensor whose channels are a multiple of `block`."""
    tensor = static_tensor(value.type)
    shape = shape_of(tensor)
    nonempty = len(shape) == 4 and all(size > 0 for size in shape)
    return nonempty and tensor.element_type == f32 and shape[1] % block == 0


def on_gpu(op: Operation) -> bool:
    """Whether `op` runs on a GPU: its own `df.device`, or its module's."""
    at: Operation | None = op
    while at is not None:
        device = at.attributes.get(DEVICE)
        if device is not None:
            return str(device).strip('"').startswith("gpu")
        at = at.parent_op()
    return False


def _whole_groups(conv: Conv2DOp, block: int) -> bool:
    """One group, or groups of whole blocks that a generated tile serves: one output
    block each (RegNet's groups of 16 channels), or whole tiles of
    `TILE_BLOCKS` (`backend/llvm/nchwc.py`'s `supported`)."""
    filter = shape_of(conv.filter.type)
    per_group = filter[0] // conv.group_count
    tiles = per_group == block or per_group % (TILE_BLOCKS * block) == 0
    return conv.group_count == 1 or (filter[1] % block == 0 and tiles)


def convertible_conv(op: Operation, block: int) -> bool:
    """A float32 `df.conv2d` of dilation 1 with a constant filter, on a CPU, whose
    output channels are multiples of `block` (its input's are, or the input is read
    as NCHW: `input_block`), in one group or groups of whole blocks."""
    if not isinstance(op, Conv2DOp) or on_gpu(op):
        return False
    plain = _whole_groups(op, block) and op.dilation_values == (1, 1)
    constant = isinstance(op.filter.owner, ConstantOp)
    return plain and constant and _is_nchw(op.input, 1) and _is_nchw(op.result, block)


def input_block(conv: Conv2DOp, block: int) -> int:
    """The input block of a convertible convolution: `block`, or 1 where its channels
    are not a multiple of it (a network's first convolution, of 3 channels: NCHW is
    NCHWc of block 1, a reshape; one group)."""
    return block if shape_of(conv.input.type)[1] % block == 0 else 1


def _channel_broadcast(shape: tuple[int, ...]) -> bool:
    return len(shape) < 3 or shape[-3] == 1


@dataclass
class Layout:
    """The ops of a function `df-layout` rewrites into NCHWc (in program order), and
    the values they make blocked."""

    block: int
    ops: list[Operation] = field(default_factory=list[Operation])
    blocked: set[SSAValue] = field(default_factory=set[SSAValue])

    def operand_kind(self, value: SSAValue) -> OperandKind | None:
        """How `value`, an operand of an elementwise op of an NCHW result, becomes
        blocked; None when it cannot."""
        shape = shape_of(value.type)
        if value in self.blocked:
            return OperandKind.BLOCKED
        if len(shape) > 4:
            return None
        if _channel_broadcast(shape):
            return OperandKind.CHANNEL_BROADCAST
        if isinstance(value.owner, ConstantOp):
            return OperandKind.PACKED_CONSTANT
        if len(shape) == 4 and shape[1] % self.block == 0:
            return OperandKind.REORDERED
        return None

    def follows(self, op: Operation) -> bool:
        """Whether `op` computes in NCHWc: a convertible convolution (a 1x1 one only of
        a blocked input), an elementwise op of a blocked operand whose others can
        follow, a channel concatenation of blocked values, or a pool of one.

        A 1x1 convolution does 2 C flops per output element, so reorders around it
        cost as much as the layout gains: blocking MobileNet-V2's and
        EfficientNet-B0's (between depthwise convolutions, which stay NCHW) took them
        from 1.14x and 1.26x ONNX Runtime's time to 1.40x and 1.34x (one core,
        2026-11-29). A 3x3 one does 18 C; it starts a chain when it has the
        `TILE_BLOCKS` blocks of output channels a generated tile holds: DenseNet-121's
        3x3 convolutions of 32 outputs, each between reorders, took it from 1.09x to
        1.19x."""
        if convertible_conv(op, self.block):
            assert isinstance(op, Conv2DOp)
            filter = shape_of(op.filter.type)
            starts = filter[2:] != (1, 1) and filter[0] >= TILE_BLOCKS * self.block
            return starts or op.input in self.blocked
        if on_gpu(op) or len(op.results) != 1 or not _is_nchw(op.results[0], self.block):
            return False
        if isinstance(op, ConcatOp):
            return op.axis_value == 1 and all(v in self.blocked for v in op.operands)
        if isinstance(op, MaxPool2DOp | AvgPool2DOp):
            return op.input in self.blocked
        return has_trait(op, Elementwise) and self.elementwise_follows(op)

    def elementwise_follows(self, op: Operation) -> bool:
        """An elementwise op with a blocked operand, whose others can follow."""
        if not any(v in self.blocked for v in op.operands):
            return False
        return all(self.operand_kind(v) is not None for v in op.operands)


def choose_layout(ops: Iterable[Operation], block: int) -> Layout:
    """The ops of a block (in program order) that compute in NCHWc of `block`."""
    layout = Layout(block)
    for op in ops:
        if layout.follows(op):
            layout.ops.append(op)
            layout.blocked.add(op.results[0])
    return layout
