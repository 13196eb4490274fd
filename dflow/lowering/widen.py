"""`df-widen`: every op on narrow values (f16, bf16, 8- and 16-bit integers, ui32)
computes in the wider type of `COMPUTE_TYPES`, between casts.

    xdsl-opt half.mlir -p 'df-widen'

    %y = df.exp %x : (tensor<4xf16>) -> tensor<4xf16>
becomes
    %w = df.cast %x : (tensor<4xf16>) -> tensor<4xf32>
    %e = df.exp %w : (tensor<4xf32>) -> tensor<4xf32>
    %y = df.cast %e : (tensor<4xf32>) -> tensor<4xf16>

This is the reference semantics of narrow values spelt out (`semantics.evaluate`
computes so), so the kernels after it compute in f32, i32 and i64 only: numba has
no float16 arithmetic on CPUs, and the library routines (products, convolutions,
gathers) exist for those types alone. Narrow values stay narrow in memory: the
casts fuse into the kernels beside them (`df-fuse`), which load and store 16 bits.
Ops that are `NarrowAsIs` (cast, constant, reshape) stay as they are; a narrow
constant read by a widened op is widened where it stands (exactly).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from dflow.dialects.df.annotations import DEVICE
from dflow.dialects.df.arrays import from_array, numpy_dtype, to_array
from dflow.dialects.df.base import DfOp
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.elementwise import CastOp
from dflow.dialects.df.semantics import has_semantics
from dflow.dialects.df.traits import NarrowAsIs, has_trait
from dflow.dialects.df.types import COMPUTE_TYPES, static_tensor


def wide_type(type: Attribute) -> Attribute:
    """`type` with its element type widened to its compute type (itself when wide)."""
    tensor = static_tensor(type)
    wide = COMPUTE_TYPES.get(tensor.element_type)
    return type if wide is None else TensorType(wide, tensor.get_shape())


def computes_narrow(op: Operation) -> bool:
    """Whether `op` computes on or into narrow values, so `df-widen` rewrites it."""
    if not has_semantics(op) or has_trait(op, NarrowAsIs):
        return False
    values = (*op.operands, *op.results)
    return any(wide_type(value.type) != value.type for value in values)


class WidenNarrowOp(RewritePattern):
    """`op(narrow...) -> narrow` = `cast(op(cast(narrow)...) -> wide)`: the op on
    the exactly widened operands, its results rounded (or wrapped) back."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DfOp, rewriter: PatternRewriter) -> None:
        if not computes_narrow(op):
            return
        widened: dict[SSAValue, SSAValue] = {}
        for value in op.operands:
            if value not in widened:
                widened[value] = _widened(value, op, rewriter)
        operands = [widened[value] for value in op.operands]
        wide = type(op).create(
            operands=operands,
            result_types=[wide_type(result.type) for result in op.results],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        rewriter.insert(wide, InsertPoint.before(op))
        narrowed = [
            _cast(value, result.type, op, rewriter)
            for value, result in zip(wide.results, op.results, strict=True)
        ]
        rewriter.replace(op, [], narrowed)
        for value in widened:
            if isinstance(value.owner, ConstantOp) and not value.uses:
                rewriter.erase(value.owner)  # its wide copy took its place


def _widened(value: SSAValue, user: Operation, rewriter: PatternRewriter) -> SSAValue:
    """`value` in its compute type: a new constant when it is one, else a cast."""
    wide = wide_type(value.type)
    if wide == value.type:
        return value
    if isinstance(value.owner, ConstantOp):
        array = to_array(value.owner.value).astype(numpy_dtype(static_tensor(wide).element_type))
        constant = ConstantOp(from_array(array, static_tensor(wide)))
        _place_beside(constant, user)
        rewriter.insert(constant, InsertPoint.before(user))
        return constant.result
    return _cast(value, wide, user, rewriter)


def _cast(value: SSAValue, type: Attribute, user: Operation, rewriter: PatternRewriter) -> SSAValue:
    if value.type == type:
        return value
    cast = CastOp(value, static_tensor(type).element_type)
    _place_beside(cast, user)
    rewriter.insert(cast, InsertPoint.before(user))
    return cast.result


def _place_beside(new: Operation, op: Operation) -> None:
    """`new` on the device `op` is placed on (its `df.device`), if it has one."""
    if DEVICE in op.attributes:
        new.attributes[DEVICE] = op.attributes[DEVICE]


@dataclass(frozen=True)
class WidenPass(ModulePass):
    """Compute every op on narrow values in its wider type (`WidenNarrowOp`)."""

    name = "df-widen"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(WidenNarrowOp(), apply_recursively=False).rewrite_module(op)
