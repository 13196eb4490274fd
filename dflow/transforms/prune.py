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
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

from dflow.dialects.df.canonicalization import EraseIdentity
from dflow.dialects.df.functions import function_named, function_names
from dflow.transforms.rewriting import apply_patterns
from dflow.transforms.statistics import PassStatistics


def find_function(module: ModuleOp, name: str, pass_name: str) -> FuncOp:
    """The `func.func` called `name`, or a pass failure naming what exists."""
    function = function_named(module, name)
    if function is None:
        known = function_names(module)
        raise PassFailedException(f"{pass_name}: no function @{name} (functions: {known})")
    return function


def keep_fetches(function: FuncOp, fetches: tuple[int, ...], pass_name: str) -> int:
    """Make `function` return only the results at `fetches`; returns how many it dropped."""
    results = function.function_type.outputs.data
    if function.is_declaration:
        raise PassFailedException(
            f"{pass_name}: @{function.sym_name.data} is a declaration: it has no body to prune"
        )
    for index in fetches:
        if not 0 <= index < len(results):
            raise PassFailedException(
                f"{pass_name}: fetch {index} is out of range: @{function.sym_name.data} "
                f"has {len(results)} results"
            )
    if len(set(fetches)) != len(fetches):
        raise PassFailedException(f"{pass_name}: fetches {list(fetches)} repeat a result")
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
            function = find_function(op, self.entry, self.name)
            if callers := _callers(op, self.entry):
                raise PassFailedException(
                    f"{self.name}: cannot drop results of @{self.entry}: "
                    f"it is called {len(callers)} time(s) in the module"
                )
            statistics.count("DroppedResults", keep_fetches(function, self.fetches, self.name))
        apply_patterns(op, [EraseIdentity()], statistics)
        for function in op.walk():
            if isinstance(function, FuncOp):
                region_dce(function.body)
        statistics.finish(op)
