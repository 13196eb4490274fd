"""Running a set of patterns over a module to a fixed point, with statistics."""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)

from dflow.passes.statistics import PassStatistics


def apply_patterns(
    module: ModuleOp, patterns: Iterable[RewritePattern], statistics: PassStatistics
) -> bool:
    """Apply `patterns` greedily until none fires; unused pure ops are erased on the way.
    Returns whether the module changed."""
    applier = GreedyRewritePatternApplier(statistics.counting(patterns))
    return PatternRewriteWalker(applier).rewrite_module(module)
