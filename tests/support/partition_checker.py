"""An independent checker of partitioned modules (written apart from dflow.lowering/).

For every function of a module made by `df-partition` it checks that:
- each device module holds only ops placed on that device, sends from it and
  receives to it;
- each key is sent exactly once and received exactly once, at the send's `to`
  device, with the same tensor type on both sides;
- no value is sent twice to one device (one receive per value and destination);
- the graph of program order on each device plus send -> receive edges is acyclic,
  so running every device's part in order cannot deadlock.
"""

from __future__ import annotations

from collections import defaultdict
from graphlib import CycleError, TopologicalSorter

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from dflow.dialects.df import RecvOp, SendOp


def _device_functions(module: ModuleOp) -> dict[str, dict[str, FuncOp]]:
    parts: dict[str, dict[str, FuncOp]] = {}
    for nested in module.ops:
        assert isinstance(nested, ModuleOp), f"top level holds {nested.name}, not a module"
        device = nested.attributes["df.device"]
        assert isinstance(device, StringAttr)
        parts[device.data] = {f.sym_name.data: f for f in nested.ops if isinstance(f, FuncOp)}
    return parts


def _check_placement(device: str, function: FuncOp) -> None:
    for op in function.body.walk():
        if op.name.startswith("df."):
            placed = op.attributes.get("df.device")
            assert placed == StringAttr(device), f"{op.name} in {device}'s module is on {placed}"
        if isinstance(op, SendOp):
            assert op.source.data == device, f"send {op.key.data} from {op.source.data} in {device}"
        if isinstance(op, RecvOp):
            assert op.destination.data == device, f"recv {op.key.data} to another device"


def check_function(parts: dict[str, FuncOp]) -> int:
    """Check one function's parts; returns the number of channels."""
    sends: dict[str, SendOp] = {}
    recvs: dict[str, list[RecvOp]] = defaultdict(list)
    graph: dict[Operation, set[Operation]] = {}
    for device, function in parts.items():
        _check_placement(device, function)
        previous: Operation | None = None
        sent: set[tuple[int, str]] = set()
        for op in function.body.block.ops:
            graph[op] = set() if previous is None else {previous}
            previous = op
            if isinstance(op, SendOp):
                assert op.key.data not in sends, f"key {op.key.data} sent twice"
                sends[op.key.data] = op
                channel = (id(op.input), op.destination.data)
                assert channel not in sent, f"one value sent twice to {op.destination.data}"
                sent.add(channel)
            elif isinstance(op, RecvOp):
                recvs[op.key.data].append(op)
    assert set(sends) == set(recvs), f"unmatched keys {set(sends) ^ set(recvs)}"
    for key, send in sends.items():
        [recv] = recvs[key]  # received exactly once
        assert (send.source, send.destination) == (recv.source, recv.destination), key
        assert send.input.type == recv.result.type, (
            f"{key}: {send.input.type} vs {recv.result.type}"
        )
        graph[recv].add(send)
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise AssertionError(f"cross-device dependencies form a cycle: {error.args[1]}") from None
    return len(sends)


def check_partitioned(module: ModuleOp) -> int:
    """Check every function of a partitioned module; returns the number of channels."""
    parts = _device_functions(module)
    names = {name for functions in parts.values() for name in functions}
    for functions in parts.values():
        assert set(functions) == names, "every device holds a part of every function"
    return sum(check_function({d: parts[d][name] for d in parts}) for name in sorted(names))
