"""Looking up a module's functions by name, through xDSL's symbol table.

Only the functions directly in `scope` count: in a partitioned module every device
module holds its own `@main`, so a name is looked up in one scope at a time.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.traits import SymbolTable


def function_named(scope: ModuleOp, name: str) -> FuncOp | None:
    """The `func.func @name` of `scope`, or None."""
    found = SymbolTable.lookup_symbol(scope, name)
    return found if isinstance(found, FuncOp) else None


def function_names(scope: ModuleOp) -> str:
    """`@a, @b` for an error message (or `none`)."""
    names = [f"@{op.sym_name.data}" for op in scope.ops if isinstance(op, FuncOp)]
    return ", ".join(names) or "none"
