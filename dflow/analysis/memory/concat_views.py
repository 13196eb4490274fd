"""Concatenations without copies: which `df.concat`s the memory plan makes views.

A concatenation along an axis with only size-1 axes before it lays each operand
out as one contiguous run of its result's bytes. When every operand is written by
a step of the function's own (a kernel's result, not an argument, a constant, a
received value or a view of another value), the plan can place each operand at its
offset in the result (`liveness`'s slices), so the producers write straight into
the result and the concatenation copies nothing and runs no kernel (DenseNet's
blocks, Inception's and GoogLeNet's branches, SqueezeNet's fire modules).

`concat_views` chooses them, the latest first: DenseNet's layer `k` reads the
concatenation of the block's features before it, a prefix of the block's last
concatenation, so once the last one has placed every feature each earlier one is
a view of its prefix. A concatenation is left to copy where its operands repeat,
one is returned (on a CPU a result is written into an output array of its own),
its result is, an operand already has a place that contradicts this one, two
written operands would overlap, or an offset is off the plan's alignment.
`df-bufferize` marks each chosen one with `df.view`; `df-plan-buffers` and
`df-lower-host` read the mark, so the choice is made once, before `df-schedule`
reorders the ops.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

from dflow.analysis.memory.function_schedule import concat_parts, returned, view_source
from dflow.analysis.memory.liveness import ALIGNMENT
from dflow.analysis.memory.slices import Slices
from dflow.dialects.df.communication import RecvOp
from dflow.dialects.df.shape_ops import ConcatOp
from dflow.dialects.df.traits import has_trait
from dflow.dialects.df.types import shape_of, tensor_bytes


def contiguous(op: ConcatOp) -> bool:
    """Whether each operand is one contiguous run of the result's bytes (only size-1
    axes before the concatenation's)."""
    return prod(shape_of(op.result.type)[: op.axis_value]) == 1


def writable(value: SSAValue) -> bool:
    """Whether `value` is written by a step that may write it anywhere: an op's result,
    not a constant's, a receive's, a view's, nor returned, and not empty."""
    owner = value.owner
    if not isinstance(owner, Operation) or has_trait(owner, ConstantLike):
        return False
    if isinstance(owner, RecvOp) or view_source(owner) is not None:
        return False
    return not returned(value) and tensor_bytes(value.type) > 0


def viewable(op: ConcatOp) -> bool:
    """Whether `op` may be a view of its operands, before their places are asked."""
    operands = list(op.operands)
    return (
        contiguous(op)
        and not returned(op.result)
        and len(set(operands)) == len(operands)
        and all(writable(v) for v in operands)
        and all(at % ALIGNMENT == 0 for _, at in concat_parts(op))
    )


def concat_views(function: FuncOp) -> list[ConcatOp]:
    """The concatenations of `function`'s body whose operands can all be written in
    place into their slices of the result, consistently with each other."""
    index: dict[SSAValue, int] = {}
    sizes: list[int] = []

    def number(value: SSAValue) -> int:
        """`value`'s index, its size appended to `sizes` (which `slices` reads) once."""
        if value not in index:
            index[value] = len(sizes)
            sizes.append(tensor_bytes(value.type))
        return index[value]

    slices = Slices(sizes)
    chosen: list[ConcatOp] = []
    for op in reversed(list(function.body.block.ops)):
        if not isinstance(op, ConcatOp) or not viewable(op):
            continue
        parts = [(number(value), at) for value, at in concat_parts(op)]
        if slices.place(number(op.result), parts):
            chosen.append(op)
    return chosen[::-1]
