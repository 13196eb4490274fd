"""`df-fold-constants`: replace ops whose operands are all constants by one constant.

As Grappler's constant folding: each op is evaluated through its reference
semantics (the same code the interpreter runs) and replaced by a `df.constant`.
Folding never grows the module past `max-bytes` of constants (counted with each
element type's width, a splat as one element), and a fold that would turn small
constants into a much larger one (a broadcast) is skipped unless its result is
small: such a constant costs memory and load time and saves almost no work.

    xdsl-opt prog.mlir -p 'df-fold-constants{max-bytes=1048576 stats=true}'
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from dflow.dialects.df.arrays import from_array, to_array
from dflow.dialects.df.base import DfOp
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.folding import (
    DEFAULT_MAX_BYTES,
    FoldPolicy,
    evaluate_constant_op,
    stored_bytes,
)
from dflow.dialects.df.types import static_tensor
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import ModuleSize, PassStatistics
from dflow.transforms.canonicalization_patterns.utils import replace_keeping_annotations
from dflow.transforms.rewriting import apply_patterns

_fail = pass_failure("df-fold-constants")


@dataclass
class ConstantBudget:
    """The bytes the module's constants hold, kept under `limit` by every fold."""

    used: int
    limit: int

    def admit(self, change: int) -> bool:
        """Take a fold changing the total by `change` bytes, unless it grows past the limit."""
        if change > 0 and self.used + change > self.limit:
            return False
        self.used += change
        return True


def _bytes_freed(op: Operation) -> int:
    """Bytes of the constant operands that die with `op` (it is their only user)."""
    freed = 0
    for operand in set(op.operands):
        owner = operand.owner
        if isinstance(owner, ConstantOp) and all(use.operation is op for use in operand.uses):
            freed += stored_bytes(to_array(owner.value))
    return freed


@dataclass
class FoldConstantOperands(RewritePattern):
    """op(c1, ..., cn) = c, the op evaluated on its constant operands."""

    policy: FoldPolicy
    budget: ConstantBudget

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, DfOp) or (evaluated := evaluate_constant_op(op)) is None:
            return
        inputs, result = evaluated
        if not self.policy.allows(inputs, result):
            return
        if not self.budget.admit(stored_bytes(result) - _bytes_freed(op)):
            return
        constant = ConstantOp(from_array(result, static_tensor(op.results[0].type)))
        replace_keeping_annotations(rewriter, op, [constant])


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Fold every op whose operands are all constants, within a byte budget."""

    name = "df-fold-constants"

    max_bytes: int = DEFAULT_MAX_BYTES
    """No fold makes the module's constants exceed this many bytes (10 MiB)."""

    stats: bool = False
    """Print how many ops were folded and the ops and bytes before and after."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_bytes < 0:
            raise _fail(f"max-bytes must be 0 or more, got {self.max_bytes}")
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        budget = ConstantBudget(ModuleSize.of(op).constant_bytes, self.max_bytes)
        pattern = FoldConstantOperands(FoldPolicy(self.max_bytes), budget)
        apply_patterns(op, [pattern], statistics)
        statistics.finish(op)
