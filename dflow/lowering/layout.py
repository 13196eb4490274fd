"""`df-layout`: convolutions and the chains after them in the blocked channel layout
NCHWc, reordered only at the chain's edges.

    xdsl-opt resnet.mlir -p 'df-layout{block=16}'

A `df.conv2d` that `analysis/layout.py` finds convertible (float32, one group,
dilation 1, a constant filter, output channels multiples of the block, on a CPU)
becomes a `df.conv2d_nchwc` of its input reordered into `[N, C/b, H, W, b]` and its
filter packed at compile time into `[O/b, C/b, KH, KW, b, b]` (a new constant, never
a reorder per call); an input whose channels are not a multiple of the block (an
image's 3) is read as `[N, C, H, W, 1]`, a reshape, and the filter packed as `[O/b,
C, KH, KW, 1, b]`. The elementwise ops, channel concatenations and pools after it
follow on the 5-D values (`df.max_pool2d_nchwc`, `df.avg_pool2d_nchwc`); a constant
operand is packed at compile time, one broadcast along
the channels reshaped, any other 4-D operand reordered. A blocked value read by an
op that stays NCHW, or returned, is reordered back once, where it is made. A reorder
is `df.reshape` and `df.transpose`:

    NCHW → NCHWc:  transpose(reshape(x, [N, C/b, b, H, W]), [0, 1, 3, 4, 2])
    NCHWc → NCHW:  reshape(transpose(y, [0, 1, 4, 2, 3]), [N, C, H, W])

So the output is plain `df` that the interpreter runs: each decision is checked
against the program before it. The block is 16, one AVX-512 vector of float32: the
generated convolution (`backend/llvm/nchwc.py`) holds output channels in lanes and
broadcasts inputs, so that a 7x7 plane wastes no lane.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dflow.analysis.layout import Layout, OperandKind, choose_layout, input_block
from dflow.dialects.df.arrays import from_array, to_array
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.nn import (
    AvgPool2DNchwcOp,
    AvgPool2DOp,
    Conv2DNchwcOp,
    Conv2DOp,
    MaxPool2DNchwcOp,
    MaxPool2DOp,
)
from dflow.dialects.df.reference import to_nchwc, to_oihw_io
from dflow.dialects.df.shape_ops import ConcatOp, ReshapeOp, TransposeOp
from dflow.dialects.df.types import shape_of, static_tensor
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import PassStatistics

_fail = pass_failure("df-layout")

TO_NCHWC = (0, 1, 3, 4, 2)
"""The transpose of `[N, C/b, b, H, W]` into NCHWc."""
FROM_NCHWC = (0, 1, 4, 2, 3)
"""The transpose of NCHWc into `[N, C/b, b, H, W]`."""


def blocked_shape(shape: Sequence[int], block: int) -> tuple[int, ...]:
    n, c, h, w = shape
    return (n, c // block, h, w, block)


def _constant(array: np.ndarray, like: Attribute) -> ConstantOp:
    """A constant of `array`, of the element type of `like`."""
    tensor = TensorType(static_tensor(like).element_type, array.shape)
    return ConstantOp(from_array(array, tensor))


def _constant_array(value: SSAValue) -> np.ndarray:
    owner = value.owner
    assert isinstance(owner, ConstantOp)
    return to_array(owner.value)


@dataclass
class _Rewrite:
    """One block's rewrite: each blocked value's NCHWc twin, each operand's reorder."""

    layout: Layout
    statistics: PassStatistics
    twins: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    reordered: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    @property
    def block(self) -> int:
        return self.layout.block

    def insert(self, op: Operation, before: Operation) -> SSAValue:
        Rewriter.insert_op(op, InsertPoint.before(before))
        return op.results[0]

    def to_blocked(self, value: SSAValue, user: Operation) -> SSAValue:
        """`value` in NCHWc (`OperandKind`), made before `user` the first time."""
        kind = self.layout.operand_kind(value)
        if kind is OperandKind.BLOCKED:
            return self.twins[value]
        if value in self.reordered:
            return self.reordered[value]
        shape = shape_of(value.type)
        if kind is OperandKind.CHANNEL_BROADCAST:
            if not shape:
                return value
            full = (1,) * (4 - len(shape)) + tuple(shape)
            made = self.insert(ReshapeOp(value, (*full[:2], *full[2:], 1)), user)
        elif kind is OperandKind.PACKED_CONSTANT:
            array = _constant_array(value)
            full = array.reshape((1,) * (4 - array.ndim) + array.shape)
            made = self.insert(_constant(to_nchwc(full, self.block), value.type), user)
            self.statistics.count("PackedConstants")
        else:
            made = self.reorder_in(value, user)
        self.reordered[value] = made
        return made

    def reorder_in(self, value: SSAValue, user: Operation) -> SSAValue:
        n, c, h, w = shape_of(value.type)
        split = self.insert(ReshapeOp(value, (n, c // self.block, self.block, h, w)), user)
        self.statistics.count("ReordersIn")
        return self.insert(TransposeOp(split, TO_NCHWC), user)

    def reorder_out(self, twin: SSAValue, value: SSAValue) -> SSAValue:
        """`twin` back in NCHW, right after it is made."""
        owner = twin.owner
        assert isinstance(owner, Operation)
        swapped = TransposeOp(twin, FROM_NCHWC)
        joined = ReshapeOp(swapped, shape_of(value.type))
        Rewriter.insert_op([swapped, joined], InsertPoint.after(owner))
        self.statistics.count("ReordersOut")
        return joined.result

    def blocked_op(self, op: Operation) -> Operation:
        """`op`'s NCHWc twin, built from its operands' blocked values."""
        if isinstance(op, Conv2DOp):
            return self.blocked_conv(op)
        if isinstance(op, MaxPool2DOp | AvgPool2DOp):
            pool = MaxPool2DNchwcOp if isinstance(op, MaxPool2DOp) else AvgPool2DNchwcOp
            return pool(self.twins[op.input], **op.window)
        operands = [self.to_blocked(v, op) for v in op.operands]
        result = static_tensor(op.results[0].type)
        if isinstance(op, ConcatOp):
            return ConcatOp(operands, 1)
        return type(op).create(
            operands=operands,
            result_types=[
                TensorType(result.element_type, blocked_shape(shape_of(result), self.block))
            ],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )

    def blocked_conv(self, op: Conv2DOp) -> Conv2DNchwcOp:
        lanes = input_block(op, self.block)
        input = self.twins.get(op.input) or self.reordered.get(op.input)
        if lanes == 1:
            input = self.insert(ReshapeOp(op.input, (*shape_of(op.input.type), 1)), op)
        elif input is None:
            input = self.reordered[op.input] = self.reorder_in(op.input, op)
        filter = to_oihw_io(_constant_array(op.filter), self.block, lanes)
        packed = self.insert(_constant(filter, op.filter.type), op)
        self.statistics.count("BlockedConvolutions")
        conv = Conv2DNchwcOp(
            input,
            packed,
            op.bias,
            strides=op.stride_values,
            pads=op.pad_values,
            groups=op.group_count,
        )
        conv.attributes.update(op.attributes)
        return conv

    def rewrite(self, op: Operation) -> None:
        twin = self.blocked_op(op)
        Rewriter.insert_op(twin, InsertPoint.before(op))
        result = op.results[0]
        self.twins[result] = twin.results[0]
        if any(use.operation not in self.layout.ops for use in result.uses):
            plain = self.reorder_out(twin.results[0], result)
            result.replace_uses_with_if(plain, lambda use: use.operation not in self.layout.ops)


def apply_layout(block: Block, size: int, statistics: PassStatistics) -> int:
    """Rewrite the ops of `block` that compute in NCHWc of `size`; returns how many."""
    layout = choose_layout(list(block.ops), size)
    rewrite = _Rewrite(layout, statistics)
    for op in layout.ops:
        rewrite.rewrite(op)
    for op in reversed(layout.ops):
        constants = [v.owner for v in op.operands if isinstance(v.owner, ConstantOp)]
        Rewriter.erase_op(op)
        for constant in constants:
            if not constant.result.uses:
                Rewriter.erase_op(constant)
    return len(layout.ops)


@dataclass(frozen=True)
class LayoutPass(ModulePass):
    """Convolutions and their elementwise chains in NCHWc, weights packed once."""

    name = "df-layout"

    block: int = 16
    """Channels per block: float32 lanes of the CPU's vectors (16 for AVX-512)."""

    stats: bool = False
    """Print what was rewritten: convolutions, reorders and packed constants."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.block < 1:
            raise _fail(f"block {self.block} must be at least 1")
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        for function in list(op.walk()):
            if isinstance(function, FuncOp) and not function.is_declaration:
                for block in function.body.blocks:
                    apply_layout(block, self.block, statistics)
        statistics.finish(op)
