"""Finding the parts of a `df` module: functions by name, the graph functions (not
the kernels the lowering outlines), and the device modules of a partitioned module.

A name is looked up in one scope at a time, through xDSL's symbol table: in a
partitioned module every device module holds its own `@main`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.traits import SymbolTable

from dflow.dialects.df import annotations


def function_named(scope: ModuleOp, name: str) -> FuncOp | None:
    """The `func.func @name` of `scope`, or None."""
    found = SymbolTable.lookup_symbol(scope, name)
    return found if isinstance(found, FuncOp) else None


def function_names(scope: ModuleOp) -> str:
    """`@a, @b` for an error message (or `none`)."""
    names = [f"@{op.sym_name.data}" for op in scope.ops if isinstance(op, FuncOp)]
    return ", ".join(names) or "none"


def require_function(
    scope: ModuleOp, name: str, error: Callable[[str], Exception], purpose: str = ""
) -> FuncOp:
    """The `func.func @name` of `scope`; else raises `error("no function @name
    <purpose> (functions: @a, @b)")`, in the caller's error type (a pass failure, a
    user's error)."""
    function = function_named(scope, name)
    if function is None:
        wanted = f"@{name} {purpose}".rstrip()
        raise error(f"no function {wanted} (functions: {function_names(scope)})")
    return function


def graph_functions(scope: ModuleOp) -> list[FuncOp]:
    """The defined functions of `scope` that are graphs (the kernels `df-bufferize`
    outlines, marked `df.kernel`, are not)."""
    return [
        op
        for op in scope.ops
        if isinstance(op, FuncOp)
        and not op.is_declaration
        and annotations.KERNEL not in op.attributes
    ]


def kernel_functions(scope: ModuleOp) -> list[FuncOp]:
    """The kernels `df-bufferize` outlined into `scope` (marked `df.kernel`)."""
    return [
        op for op in scope.ops if isinstance(op, FuncOp) and annotations.KERNEL in op.attributes
    ]


def device_modules(module: ModuleOp) -> list[tuple[str, ModuleOp]]:
    """The (device, nested module) pairs of a partitioned module, in order; none for
    a module that is not partitioned."""
    parts: list[tuple[str, ModuleOp]] = []
    for op in module.ops:
        device = annotations.device_of(op)
        if isinstance(op, ModuleOp) and device is not None:
            parts.append((device, op))
    return parts


def device_scopes(module: ModuleOp) -> list[tuple[str | None, ModuleOp]]:
    """What runs on one device each: the device modules of a partitioned module with
    their devices, else the module itself (device None)."""
    return [*device_modules(module)] or [(None, module)]


def several_blocks(function: FuncOp, label: str | None = None) -> str | None:
    """Why the lowering cannot take `function` as straight-line code (`@f has several
    blocks; ...`: a branch, which `dflow opt` parses), or None when it has one block.
    `label` names the function (by default `@f`)."""
    if len(function.body.blocks) <= 1:
        return None
    name = label or f"@{function.sym_name.data}"
    return f"{name} has several blocks; only straight-line code"
