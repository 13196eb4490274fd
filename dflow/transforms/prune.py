"""`df-prune`: remove identities and dead ops; optionally keep only chosen fetches.

As TensorFlow's RemoveIdentityNodes and PruneForTargets: every `df.identity` is
replaced by its input (unless it pins a copy onto another device), and every
op without an effect whose results are unused is erased. With `fetches=0,2`,
the entry function (`entry`, default `main`) returns only those results, in
that order, and everything only the others needed goes away (a partial run).
Effects (`df.send`, `df.recv`) always stay.

    xdsl-opt prog.mlir -p 'df-prune{fetches=0 entry=main stats=true}'
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from dflow.dialects.df.elementwise import IdentityOp
from dflow.dialects.df.symbols import require_function
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import PassStatistics
from dflow.transforms.canonicalization_patterns.df import EraseIdentity

_fail = pass_failure("df-prune")


def keep_fetches(function: FuncOp, fetches: tuple[int, ...]) -> int:
    """Make `function` return only the results at `fetches`; returns how many it dropped."""
    results = function.function_type.outputs.data
    if function.is_declaration:
        raise _fail(f"@{function.sym_name.data} is a declaration: it has no body to prune")
    for index in fetches:
        if not 0 <= index < len(results):
            raise _fail(
                f"fetch {index} is out of range: @{function.sym_name.data} "
                f"has {len(results)} results"
            )
    if len(set(fetches)) != len(fetches):
        raise _fail(f"fetches {list(fetches)} repeat a result")
    for block in function.body.blocks:
        terminator = block.last_op
        if isinstance(terminator, ReturnOp):
            kept = [terminator.arguments[index] for index in fetches]
            Rewriter.replace_op(terminator, ReturnOp(*kept))
    inputs = function.function_type.inputs.data
    function.update_function_type()
    assert function.function_type.inputs.data == inputs
    return len(results) - len(fetches)


def _callers(module: ModuleOp, name: str) -> list[CallOp]:
    return [
        op for op in module.walk() if isinstance(op, CallOp) and op.callee == SymbolRefAttr(name)
    ]


@dataclass(frozen=True)
class PrunePass(ModulePass):
    """Remove identities and unused ops; with `fetches`, keep only those results."""

    name = "df-prune"

    fetches: tuple[int, ...] | None = None
    """Indices of the entry function's results to keep, in order (all when unset)."""

    entry: str = "main"
    """The function whose results `fetches` chooses."""

    stats: bool = False
    """Print what was removed: identities, results, ops and bytes."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        if self.fetches is not None:
            function = require_function(op, self.entry, _fail)
            if callers := _callers(op, self.entry):
                raise _fail(
                    f"cannot drop results of @{self.entry}: "
                    f"it is called {len(callers)} time(s) in the module"
                )
            statistics.count("DroppedResults", keep_fetches(function, self.fetches))
        # Each identity once, directly: a greedy walk over every op, trying the one
        # pattern and whether each op is dead, took as long again as `region_dce`.
        (erase,) = statistics.counting([EraseIdentity()])
        for identity in [o for o in op.walk() if isinstance(o, IdentityOp)]:
            erase.match_and_rewrite(identity, PatternRewriter(identity))
        for function in op.walk():
            if isinstance(function, FuncOp):
                region_dce(function.body)
        statistics.finish(op)
