"""`df-optimize`: constant folding, arithmetic simplification, CSE and pruning,
repeated until the module stops changing (at most `max-iterations` rounds).

One round applies the folding pattern of `df-fold-constants` and every pattern of
`df-simplify-arith` together (one worklist: a fold exposes a simplification and
the other way round), then upstream `cse`, then removes dead ops as `df-prune`
does (it never drops results: there are no `fetches` here).

    xdsl-opt prog.mlir -p 'df-optimize{max-iterations=8 fastmath=false stats=true}'
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce

from dflow.dialects.df.folding import DEFAULT_MAX_BYTES, FoldPolicy
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import ModuleSize, PassStatistics
from dflow.transforms.fold_constants import ConstantBudget, FoldConstantOperands
from dflow.transforms.rewriting import apply_patterns
from dflow.transforms.simplify_arith import arith_patterns

_fail = pass_failure("df-optimize")


@dataclass(frozen=True)
class OptimizePass(ModulePass):
    """Fold, simplify, CSE and prune to a fixed point."""

    name = "df-optimize"

    max_iterations: int = 10
    """Stop after this many rounds even if the module still changes."""

    fastmath: bool = False
    """As `df-simplify-arith`: also rewrite where NaN or ±Inf would change a result."""

    max_bytes: int = DEFAULT_MAX_BYTES
    """As `df-fold-constants`: no fold makes the module's constants exceed this."""

    stats: bool = False
    """Print the rewrites of all rounds, the rounds run, and ops and bytes before and after."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_iterations < 1:
            raise _fail(f"max-iterations must be at least 1, got {self.max_iterations}")
        if self.max_bytes < 0:
            raise _fail(f"max-bytes must be 0 or more, got {self.max_bytes}")
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        rounds = 0
        while rounds < self.max_iterations:
            rounds += 1
            if not self.round(op, statistics):
                break
        statistics.record("rounds", rounds)
        statistics.finish(op)

    def round(self, module: ModuleOp, statistics: PassStatistics) -> bool:
        """One round of every transform; returns whether the module changed."""
        before = module.clone()
        budget = ConstantBudget(ModuleSize.of(module).constant_bytes, self.max_bytes)
        fold = FoldConstantOperands(FoldPolicy(self.max_bytes), budget)
        apply_patterns(module, [fold, *arith_patterns(self.fastmath)], statistics)
        ops_before_cse = ModuleSize.of(module).ops
        cse(module)
        statistics.count("CommonSubexpressions", ops_before_cse - ModuleSize.of(module).ops)
        for function in module.walk():
            if isinstance(function, FuncOp):
                region_dce(function.body)
        return not module.is_structurally_equivalent(before)
