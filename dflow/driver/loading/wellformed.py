"""What a program must satisfy beyond xDSL's verifier before dflow compiles or runs it.

xDSL's `verify` checks each op's types but not the order of definitions: a value
used before the op that defines it parses and verifies, then makes the interpreter
fail with a `KeyError` and the partitioner see a cycle. Recursive `func.call`
chains verify too, and make inlining and interpretation recurse without end. MLIR
rejects the first in its verifier (dominance); dflow's lowering inlines every call,
so it rejects the second. `check_runnable` adds what only running needs.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Block, Operation, OpResult

from dflow.dialects.df.communication import RecvOp, SendOp

Failure = tuple[Operation, str]
"""The op at fault and the message that says why."""


def check_wellformed(module: ModuleOp) -> Failure | None:
    """The first use before definition, else the first recursive call, else None."""
    return _first_use_before_definition(module) or _first_recursive_call(module)


def _first_use_before_definition(module: ModuleOp) -> Failure | None:
    positions: dict[Block, dict[Operation, int]] = {}
    for op in module.walk():
        for operand in op.operands:
            if not isinstance(operand, OpResult):
                continue
            definer = operand.op
            block = definer.parent_block()
            if block is None:
                continue
            user = block.find_ancestor_op_in_block(op)
            if user is None:
                return op, f"{op.name} uses a value defined in another region, by {definer.name}"
            order = positions.get(block)
            if order is None:
                order = positions[block] = {o: i for i, o in enumerate(block.ops)}
            if order[user] <= order[definer]:
                return op, _before_message(op, definer)
    return None


def _before_message(user: Operation, definer: Operation) -> str:
    if user is definer:
        return f"{user.name} uses its own result"
    location = definer.location
    where = f" on line {location.line.data}" if isinstance(location, FileLineColLoc) else ""
    return f"{user.name} uses a value before its definition ({definer.name}{where})"


def _first_recursive_call(module: ModuleOp) -> Failure | None:
    """A call on a cycle of the call graph of `module`'s top-level functions."""
    calls: dict[str, list[CallOp]] = {
        function.sym_name.data: [op for op in function.walk() if isinstance(op, CallOp)]
        for function in module.ops
        if isinstance(function, FuncOp)
    }
    state: dict[str, bool] = {}  # True while on the current path, False once done
    for name in calls:
        cycle = None if name in state else _cycle_from(name, calls, state)
        if cycle is not None:
            call, path = cycle
            chain = " -> ".join(f"@{step}" for step in path)
            return call, f"recursive call ({chain}): dflow inlines calls, so none may recurse"
    return None


def _cycle_from(
    root: str, calls: dict[str, list[CallOp]], state: dict[str, bool]
) -> tuple[CallOp, list[str]] | None:
    """Depth-first from `root`, with a stack of its own (a chain of thousands of calls
    is a valid program): the call that closes a cycle and the cycle, else None."""
    path = [root]
    pending = [iter(calls.get(root, []))]
    state[root] = True
    while pending:
        call = next(pending[-1], None)
        if call is None:
            state[path.pop()] = False
            pending.pop()
            continue
        callee = call.callee.root_reference.data
        if state.get(callee):
            return call, [*path[path.index(callee) :], callee]
        if callee not in state:
            state[callee] = True
            path.append(callee)
            pending.append(iter(calls.get(callee, [])))
    return None


def check_runnable(module: ModuleOp) -> Failure | None:
    """What running a well-formed program needs besides: functions of one block
    (straight-line code: the lowering has no branches), no call to a declaration
    (there is no body to run) and a `df.send` for every `df.recv` (else the receive
    waits out the timeout)."""
    return (
        _first_function_of_blocks(module)
        or _first_call_to_declaration(module)
        or _first_unmatched_recv(module)
    )


def _first_function_of_blocks(module: ModuleOp) -> Failure | None:
    for op in module.walk():
        if isinstance(op, FuncOp) and len(op.body.blocks) > 1:
            return op, (
                f"@{op.sym_name.data} has {len(op.body.blocks)} blocks: dflow runs functions "
                "of one block of straight-line code (no branches)"
            )
    return None


def _first_call_to_declaration(module: ModuleOp) -> Failure | None:
    declared = {
        op.sym_name.data for op in module.walk() if isinstance(op, FuncOp) and op.is_declaration
    }
    for op in module.walk():
        if isinstance(op, CallOp) and op.callee.root_reference.data in declared:
            name = op.callee.root_reference.data
            return op, f"func.call of @{name}, a declaration without a body: nothing to run"
    return None


def _first_unmatched_recv(module: ModuleOp) -> Failure | None:
    sent = {_channel(op) for op in module.walk() if isinstance(op, SendOp)}
    for op in module.walk():
        if isinstance(op, RecvOp) and _channel(op) not in sent:
            key, source, destination = _channel(op)
            return op, (
                f"df.recv of key {key!r} from {source} to {destination} has no df.send of "
                "that key between those devices: it would wait for ever"
            )
    return None


def _channel(op: SendOp | RecvOp) -> tuple[str, str, str]:
    return op.key.data, op.source.data, op.destination.data
