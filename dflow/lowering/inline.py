"""`df-inline`: replace every `func.call` of a defined function by the callee's body.

    xdsl-opt calls.mlir -p 'df-inline'

The lowering plans one arena per function and runs straight-line code, so calls
are inlined first (innermost first, as deep as they go). A recursive call
cannot be inlined and is an error naming the cycle; a call of a declaration is
left for the later passes to refuse.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from dflow.passes.failures import pass_failure

_fail = pass_failure("df-inline")


def _inline_call(call: CallOp, callee: FuncOp) -> None:
    mapping: dict[SSAValue, SSAValue] = dict(zip(callee.args, call.arguments, strict=True))
    returned: list[SSAValue] = []
    for op in callee.body.block.ops:
        if isinstance(op, ReturnOp):
            returned = [mapping.get(v, v) for v in op.operands]
            break
        Rewriter.insert_op(op.clone(value_mapper=mapping), InsertPoint.before(call))
    for result, value in zip(call.results, returned, strict=True):
        result.replace_all_uses_with(value)
    call.detach()
    call.erase()


def inline_calls(function: FuncOp, module: ModuleOp, stack: tuple[str, ...] = ()) -> None:
    """Inline the calls of `function`, after inlining the callees' own calls."""
    name = function.sym_name.data
    if name in stack:
        raise _fail(f"recursive calls {' -> '.join((*stack, name))}")
    for op in list(function.body.walk()):
        if not isinstance(op, CallOp):
            continue
        callee = SymbolTable.lookup_symbol(module, op.callee)
        if not isinstance(callee, FuncOp) or callee.is_declaration:
            continue
        inline_calls(callee, module, (*stack, name))
        _inline_call(op, callee)


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inline every call of a defined function."""

    name = "df-inline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.walk() if isinstance(f, FuncOp)]:
            scope = function.parent_op()
            if isinstance(scope, ModuleOp) and not function.is_declaration:
                inline_calls(function, scope)
