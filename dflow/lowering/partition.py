"""`df-partition`: split a placed module into one nested module per device.

As TensorFlow's graph partitioner. Every `df` op must carry `df.device` (run
`df-place-devices` first, or place by hand). The result holds one
`builtin.module attributes {df.device = "cpu:0"}` per device, sorted by device
name, each with that device's part of every function under the same symbol name:

- a value used on another device becomes `df.send` on the producer's device, right
  after the value exists, and `df.recv` on the consumer's, right before its first
  use there; one value sent to one device is received once there, whatever the
  number of its users. Keys are `<function>.k<N>`, numbered in program order.
- each part takes the function arguments it uses and returns the results whose
  values it holds; `df.arguments` and `df.results` (arrays of the original indices)
  say which, so the entry's results can be gathered in order, and
  `df.function_type` keeps the whole function's type. A result that is an
  argument passed straight through is returned by the first device using it (or
  the first device).

Each device's part runs its ops in the original order, which is topological, and
never blocks on a send (channels are buffered), so no device waits on a cycle.

    xdsl-opt placed.mlir -p df-partition
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from dflow.dialects.devices import DEFAULT_DEVICE, device_key
from dflow.dialects.df import annotations
from dflow.dialects.df.communication import RecvOp, SendOp
from dflow.dialects.df.fusion import FusedOp
from dflow.dialects.df.symbols import several_blocks
from dflow.dialects.df.types import i64_array, static_tensor
from dflow.passes.failures import pass_failure

_fail = pass_failure("df-partition")


def placed_device(op: Operation) -> str:
    """The `df.device` of a placed op, or a failure naming the unplaced op."""
    device = annotations.device_of(op)
    if device is None:
        name = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
        raise _fail(f"{op.name} {name} has no df.device; run df-place-devices first".strip())
    return device


@dataclass
class FunctionSplit:
    """Where every value of one function lives, and what must cross devices."""

    function: FuncOp
    body: list[Operation] = field(default_factory=list[Operation])
    ret: ReturnOp | None = None
    devices: list[str] = field(default_factory=list[str])
    home: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    """The device of each op result."""
    result_devices: list[str] = field(default_factory=list[str])

    @staticmethod
    def of(function: FuncOp, all_devices: Iterable[str]) -> FunctionSplit:
        split = FunctionSplit(function)
        *split.body, last = function.body.block.ops
        if not isinstance(last, ReturnOp):
            raise _fail(f"@{function.sym_name.data} must end with func.return")
        split.ret = last
        for op in split.body:
            if op.regions and not isinstance(op, FusedOp):
                raise _fail(f"{op.name} has regions; only straight-line functions split")
            for result in op.results:
                split.home[result] = placed_device(op)
        split.devices = sorted({*split.home.values(), *all_devices}, key=device_key)
        split.result_devices = [split.owner(value) for value in last.arguments]
        return split

    def owner(self, value: SSAValue) -> str:
        """The device returning `value`: its producer's, or for an argument the first
        device that uses it."""
        if value in self.home:
            return self.home[value]
        users = [
            self.home[op.results[0]] for op in self.body if value in op.operands and op.results
        ]
        return users[0] if users else self.devices[0]

    def uses_on(self, device: str) -> set[SSAValue]:
        """Every value an op on `device` reads."""
        return {
            operand for op in self.body if self.device_for(op) == device for operand in op.operands
        }

    def device_for(self, op: Operation) -> str:
        return self.home[op.results[0]] if op.results else placed_device(op)


@dataclass
class DevicePartBuilder:
    """Builds one device's part of one function."""

    split: FunctionSplit
    device: str
    keys: dict[tuple[SSAValue, str], str]
    mapping: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    block: Block = field(default_factory=Block)

    def build(self) -> FuncOp:
        function = self.split.function
        arguments = self._arguments()
        for op in self.split.body:
            if self.split.device_for(op) == self.device:
                self._receive_operands(op)
                clone = op.clone(value_mapper=self.mapping)
                self.block.add_op(clone)
                self.mapping.update(zip(op.results, clone.results, strict=True))
                self._send_results(op)
        assert self.split.ret is not None
        indices = [i for i, owner in enumerate(self.split.result_devices) if owner == self.device]
        values = [self._local(self.split.ret.arguments[i]) for i in indices]
        self.block.add_op(ReturnOp(*values))
        part = FuncOp(
            function.sym_name.data,
            ([a.type for a in self.block.args], [v.type for v in values]),
            Region(self.block),
            function.sym_visibility.data if function.sym_visibility else None,
        )
        part.attributes[annotations.ARGUMENTS] = i64_array(arguments)
        part.attributes[annotations.RESULTS] = i64_array(indices)
        part.attributes[annotations.FUNCTION_TYPE] = function.function_type
        return part

    def _arguments(self) -> list[int]:
        """Add the arguments this device reads or returns; their original indices."""
        needed = self.split.uses_on(self.device)
        assert self.split.ret is not None
        for value, owner in zip(self.split.ret.arguments, self.split.result_devices, strict=True):
            if owner == self.device:
                needed.add(value)
        indices: list[int] = []
        for argument in self.split.function.body.block.args:
            if argument in needed:
                local = self.block.insert_arg(argument.type, len(self.block.args))
                local.name_hint = argument.name_hint
                self.mapping[argument] = local
                indices.append(argument.index)
        return indices

    def _local(self, value: SSAValue) -> SSAValue:
        return self.mapping[value]

    def _receive_operands(self, op: Operation) -> None:
        for operand in op.operands:
            if operand in self.mapping or isinstance(operand, BlockArgument):
                continue
            source = self.split.home[operand]
            key = self.keys[(operand, self.device)]
            recv = RecvOp(static_tensor(operand.type), key, source, self.device)
            recv.attributes[annotations.DEVICE] = StringAttr(self.device)
            recv.result.name_hint = operand.name_hint
            self.block.add_op(recv)
            self.mapping[operand] = recv.result

    def _send_results(self, op: Operation) -> None:
        for result in op.results:
            for destination in self._destinations(result):
                key = self.keys[(result, destination)]
                send = SendOp(self.mapping[result], key, self.device, destination)
                send.attributes[annotations.DEVICE] = StringAttr(self.device)
                self.block.add_op(send)

    def _destinations(self, value: SSAValue) -> list[str]:
        return sorted(
            {d for (v, d) in self.keys if v is value and d != self.device}, key=device_key
        )


def channel_keys(split: FunctionSplit) -> dict[tuple[SSAValue, str], str]:
    """One key per (value, destination device) that crosses devices, in program order."""
    keys: dict[tuple[SSAValue, str], str] = {}
    prefix = split.function.sym_name.data
    consumers = [(op, split.device_for(op)) for op in split.body]
    for op, device in consumers:
        for operand in op.operands:
            source = split.home.get(operand)
            if source is not None and source != device and (operand, device) not in keys:
                keys[(operand, device)] = f"{prefix}.k{len(keys)}"
    return keys


def partition_module(module: ModuleOp) -> dict[str, list[FuncOp]]:
    """Each device's parts of every top-level function, by device."""
    if any(isinstance(op, ModuleOp) for op in module.ops):
        raise _fail("the module is already partitioned (it holds nested modules)")
    functions = [op for op in module.ops if isinstance(op, FuncOp) and not op.is_declaration]
    declarations = [op for op in module.ops if isinstance(op, FuncOp) and op.is_declaration]
    for function in functions:
        if (branched := several_blocks(function)) is not None:
            raise _fail(branched)
    placed = {placed_device(op) for f in functions for op in f.body.block.ops if _is_df(op)}
    devices = sorted(placed, key=device_key) or [DEFAULT_DEVICE]
    parts = {device: [d.clone() for d in declarations] for device in devices}
    for function in functions:
        split = FunctionSplit.of(function, devices)
        keys = channel_keys(split)
        for device in devices:
            parts[device].append(DevicePartBuilder(split, device, keys).build())
    return parts


def _is_df(op: Operation) -> bool:
    return op.name.startswith("df.")


@dataclass(frozen=True)
class PartitionPass(ModulePass):
    """Split a placed module into one nested module per device, with send/recv."""

    name = "df-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        parts = partition_module(op)
        for child in list(op.ops):
            child.detach()
            child.erase()
        for device, functions in parts.items():
            nested = ModuleOp(functions)
            nested.attributes[annotations.DEVICE] = StringAttr(device)
            op.body.block.add_op(nested)
