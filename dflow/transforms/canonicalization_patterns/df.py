"""Canonical forms of `df` ops: the exact rewrites upstream `canonicalize` applies.

Each pattern is one identity that holds bit for bit, for every input including NaN
and ±Inf, and keeps the result's exact type. The ops offer them through xDSL's
canonicalization interface (`DfOp.get_canonicalization_patterns` looks them up
here, as xDSL's own ops import theirs); the arithmetic optimizer
(`df-simplify-arith`) runs them too and adds rewrites that look at constants.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from dflow.dialects.df import annotations
from dflow.dialects.df import elementwise as ew
from dflow.dialects.df import shape_ops as so
from dflow.dialects.df.types import shape_of
from dflow.transforms.canonicalization_patterns.utils import (
    forward,
    producer,
    replace_keeping_annotations,
)


class EraseIdentity(RewritePattern):
    """identity(x) = x, unless the identity pins a copy to another device."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.IdentityOp, rewriter: PatternRewriter) -> None:
        device = op.attributes.get(annotations.DEVICE)
        source = op.input.owner
        if device is not None and not (
            isinstance(source, Operation) and source.attributes.get(annotations.DEVICE) == device
        ):
            return
        forward(rewriter, op, op.input)


class CancelDoubleNegation(RewritePattern):
    """neg(neg(x)) = x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.NegOp, rewriter: PatternRewriter) -> None:
        if inner := producer(op.input, ew.NegOp):
            forward(rewriter, op, inner.operands[0])


class CollapseRepeatedRelu(RewritePattern):
    """relu(relu(x)) = relu(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.ReluOp, rewriter: PatternRewriter) -> None:
        if producer(op.input, ew.ReluOp):
            forward(rewriter, op, op.input)


class CollapseRepeatedAbs(RewritePattern):
    """abs(abs(x)) = abs(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.AbsOp, rewriter: PatternRewriter) -> None:
        if producer(op.input, ew.AbsOp):
            forward(rewriter, op, op.input)


class DropNegationUnderEvenFunction(RewritePattern):
    """abs(neg(x)) = abs(x) and square(neg(x)) = square(x)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ew.AbsOp | ew.SquareOp):
            return
        if inner := producer(op.input, ew.NegOp):
            replace_keeping_annotations(rewriter, op, [type(op)(inner.operands[0])])


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) = transpose(x, p∘q), or x when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = producer(op.input, so.TransposeOp)
        if not isinstance(inner, so.TransposeOp):
            return
        composed = [inner.perm_values[axis] for axis in op.perm_values]
        if composed == sorted(composed):
            forward(rewriter, op, inner.input)
            return
        replace_keeping_annotations(rewriter, op, [so.TransposeOp(inner.input, composed)])


class RemoveIdentityTranspose(RewritePattern):
    """transpose(x, [0, 1, ..., n-1]) = x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.TransposeOp, rewriter: PatternRewriter) -> None:
        if list(op.perm_values) == list(range(len(op.perm_values))):
            forward(rewriter, op, op.input)


class ComposeReshapes(RewritePattern):
    """reshape(reshape(x)) = reshape(x): only the last shape matters."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.ReshapeOp, rewriter: PatternRewriter) -> None:
        if inner := producer(op.input, so.ReshapeOp):
            new_op = so.ReshapeOp(inner.operands[0], shape_of(op.result.type))
            replace_keeping_annotations(rewriter, op, [new_op])


class ComposeBroadcasts(RewritePattern):
    """broadcast_to(broadcast_to(x, s), t) = broadcast_to(x, t)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.BroadcastToOp, rewriter: PatternRewriter) -> None:
        if inner := producer(op.input, so.BroadcastToOp):
            new_op = so.BroadcastToOp(inner.operands[0], shape_of(op.result.type))
            replace_keeping_annotations(rewriter, op, [new_op])


class RemoveNoopReshape(RewritePattern):
    """reshape(x) = x when the result type is x's type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.ReshapeOp, rewriter: PatternRewriter) -> None:
        forward(rewriter, op, op.input)


class RemoveNoopBroadcast(RewritePattern):
    """broadcast_to(x) = x when the result type is x's type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: so.BroadcastToOp, rewriter: PatternRewriter) -> None:
        forward(rewriter, op, op.input)


class RemoveNoopCast(RewritePattern):
    """cast(x) = x when the result type is x's type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.CastOp, rewriter: PatternRewriter) -> None:
        forward(rewriter, op, op.input)


_PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {
    ew.IdentityOp: (EraseIdentity(),),
    ew.NegOp: (CancelDoubleNegation(),),
    ew.ReluOp: (CollapseRepeatedRelu(),),
    ew.AbsOp: (CollapseRepeatedAbs(), DropNegationUnderEvenFunction()),
    ew.SquareOp: (DropNegationUnderEvenFunction(),),
    ew.CastOp: (RemoveNoopCast(),),
    so.TransposeOp: (RemoveIdentityTranspose(), ComposeTransposes()),
    so.ReshapeOp: (RemoveNoopReshape(), ComposeReshapes()),
    so.BroadcastToOp: (RemoveNoopBroadcast(), ComposeBroadcasts()),
}


def canonicalization_patterns(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonical-form patterns of one op class (none for most)."""
    return _PATTERNS.get(op_type, ())


def all_canonicalization_patterns() -> tuple[RewritePattern, ...]:
    """Every canonical-form pattern of the dialect, once each."""
    unique = {type(pattern): pattern for group in _PATTERNS.values() for pattern in group}
    return tuple(unique.values())
