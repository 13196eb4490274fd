"""What the `df` rewrite patterns share: replacing an op while keeping result types
and the ops' discardable attributes (placement, hints, backward marks)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter


def forward(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> bool:
    """Replace `op`'s single result by `value` when the types agree exactly."""
    if value.type != op.results[0].type:
        return False
    rewriter.replace(op, [], [value])
    return True


def replace_keeping_annotations(
    rewriter: PatternRewriter, op: Operation, new_ops: Sequence[Operation]
) -> bool:
    """Replace `op` by `new_ops` (the last gives the result) when its result has the
    exact type of `op`'s; the new ops inherit `op`'s discardable attributes
    (placement, hints, backward marks). Returns whether it replaced."""
    if new_ops[-1].results[0].type != op.results[0].type:
        return False
    for new_op in new_ops:
        for name, value in op.attributes.items():
            new_op.attributes.setdefault(name, value)
    rewriter.replace(op, new_ops)
    return True


def producer(value: SSAValue, kind: type[Operation]) -> Operation | None:
    owner = value.owner
    return owner if isinstance(owner, kind) else None
