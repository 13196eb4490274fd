"""`df-lower-host`: each planned graph function becomes a host function in `dfrt` (level 5).

    xdsl-opt fused.mlir -p 'df-bufferize,df-plan-buffers,df-lower-host'

Needs `df-bufferize` (each computing op names its kernel in `df.kernel`) and
`df-plan-buffers` (`df.offset` on each op with results in the arena,
`df.arena_bytes` on the function). The graph function is replaced by one of
the same name over memrefs, keeping its other attributes (`df.arguments`,
`df.results`, `df.function_type` of a partitioned module), whose body:

1. takes the arena: `dfrt.arena` of the function's `df.arena_bytes`;
2. on a GPU device, copies each argument to the device (`dfrt.to_device`);
3. for each op in order: a `df.constant` becomes a `memref.global` of the module
   read with `memref.get_global` (and copied to a GPU); a computing op takes a
   `dfrt.view` for each result at its planned offset and launches its kernel on
   its operands and those views (a view, a reshape of its input or a concatenation
   marked `df.view`, takes its view at its planned offset and launches nothing); `df.send` becomes
   `dfrt.send`, `df.recv` a view and `dfrt.recv` into it;
4. returns each result: on a CPU, a value computed here is written straight into a
   `dfrt.output` buffer (outside the arena; the planner's block for it stays unused)
   and returned as is; anything else (on a GPU, or an argument or a constant) goes
   through `dfrt.fetch`, a copy the next call cannot overwrite.

The module's device is its `df.device` (a device module of a partitioned
module); an unpartitioned module runs on `cpu:0`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from dflow.analysis.memory.function_schedule import is_view
from dflow.dialects import dfrt
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df.annotations import ARENA_BYTES, KERNEL, OFFSET
from dflow.dialects.df.communication import RecvOp, SendOp
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.symbols import device_scopes, graph_functions, several_blocks
from dflow.lowering.bufferize import BufferizePass
from dflow.lowering.kernels.builder import buffer_type
from dflow.lowering.plan_buffers import PlanBuffersPass
from dflow.passes.failures import pass_failure

_fail = pass_failure("df-lower-host")


@dataclass
class HostBuilder:
    """Builds one host function from a planned graph function."""

    function: func.FuncOp
    device: str
    globals: list[memref.GlobalOp]
    block: Block = field(init=False)
    values: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    arena: SSAValue | None = None
    returned: set[SSAValue] = field(init=False)
    """Graph values the function returns: on a CPU, computed into outputs."""

    def __post_init__(self) -> None:
        types = [buffer_type(t) for t in self.function.function_type.inputs]
        self.block = Block(arg_types=types)
        terminator = self.function.body.block.last_op
        operands = terminator.operands if isinstance(terminator, func.ReturnOp) else ()
        self.returned = set() if self.on_gpu else set(operands)

    @property
    def on_gpu(self) -> bool:
        return self.device.startswith("gpu")

    def emit(self, op: Operation) -> SSAValue:
        """Append an op with one result; return the result."""
        self.block.add_op(op)
        return op.results[0]

    def build(self) -> func.FuncOp:
        name = self.function.sym_name.data
        arena_bytes = self.function.attributes.get(ARENA_BYTES)
        if not isinstance(arena_bytes, IntegerAttr):
            raise _fail(f"@{name} has no {ARENA_BYTES}: run {PlanBuffersPass.name} first")
        self.arena = self.emit(dfrt.ArenaOp(arena_bytes.value.data))
        for graph_arg, host_arg in zip(self.function.args, self.block.args, strict=True):
            host_arg.name_hint = graph_arg.name_hint
            self.values[graph_arg] = (
                self.emit(dfrt.ToDeviceOp(host_arg)) if self.on_gpu else host_arg
            )
        for op in self.function.body.block.ops:
            self.lower(op)
        outputs = [buffer_type(t) for t in self.function.function_type.outputs]
        host = func.FuncOp(name, (list(self.block.arg_types), outputs), Region(self.block))
        for key, value in self.function.attributes.items():
            if key not in ("sym_name", "function_type", "sym_visibility"):
                host.attributes[key] = value
        return host

    def lower(self, op: Operation) -> None:
        match op:
            case ConstantOp():
                self.constant(op)
            case SendOp():
                self.block.add_op(
                    dfrt.SendOp(self.values[op.input], op.key.data, op.destination.data)
                )
            case RecvOp():
                view = self.views(op)[0]
                self.block.add_op(dfrt.RecvOp(view, op.key.data, op.source.data))
            case func.ReturnOp():
                self.block.add_op(func.ReturnOp(*(self.result(v) for v in op.operands)))
            case _ if is_view(op):
                self.views(op)
            case _:
                self.launch(op)

    def result(self, value: SSAValue) -> SSAValue:
        """What the host function returns for `value`: its output, or a fetched copy."""
        host = self.values[value]
        if isinstance(host.owner, dfrt.OutputOp):
            return host
        return self.emit(dfrt.FetchOp(host))

    def constant(self, op: ConstantOp) -> None:
        name = f"{self.function.sym_name.data}_cst{len(self.globals)}"
        type = buffer_type(op.result.type)
        self.globals.append(
            memref.GlobalOp.get(StringAttr(name), type, op.value, constant=UnitAttr())
        )
        value = self.emit(memref.GetGlobalOp(name, type))
        self.values[op.result] = self.emit(dfrt.ToDeviceOp(value)) if self.on_gpu else value

    def views(self, op: Operation) -> list[SSAValue]:
        offsets = op.attributes.get(OFFSET)
        if not isinstance(offsets, DenseArrayBase) or self.arena is None:
            raise _fail(f"{op.name} has no {OFFSET}: run {PlanBuffersPass.name} first")
        views: list[SSAValue] = []
        for result, offset in zip(op.results, offsets.get_values(), strict=True):
            type = buffer_type(result.type)
            view = self.emit(
                dfrt.OutputOp(type)
                if result in self.returned
                else dfrt.ViewOp(self.arena, int(offset), type)
            )
            view.name_hint = result.name_hint
            self.values[result] = view
            views.append(view)
        return views

    def launch(self, op: Operation) -> None:
        kernel = op.attributes.get(KERNEL)
        if not isinstance(kernel, SymbolRefAttr):
            raise _fail(f"{op.name} has no kernel: run {BufferizePass.name} first")
        operands = [self.values[v] for v in op.operands]
        views = self.views(op)
        self.block.add_op(dfrt.LaunchOp(kernel.root_reference.data, [*operands, *views]))


def lower_scope(scope: ModuleOp, device: str) -> None:
    globals: list[memref.GlobalOp] = []
    for function in graph_functions(scope):
        if (branched := several_blocks(function)) is not None:
            raise _fail(branched)
        if any(isinstance(op, dfrt.ArenaOp) for op in function.body.block.ops):
            raise _fail(
                f"@{function.sym_name.data} is already a host function: the module is lowered"
            )
        host = HostBuilder(function, device, globals).build()
        function.detach()
        function.erase()
        scope.body.block.add_op(host)
    first = scope.body.block.first_op
    for constant in globals:
        if first is None:
            scope.body.block.add_op(constant)
        else:
            scope.body.block.insert_op_before(constant, first)


@dataclass(frozen=True)
class LowerHostPass(ModulePass):
    """Turn each planned graph function into a `dfrt` host function."""

    name = "df-lower-host"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for device, scope in device_scopes(op):
            lower_scope(scope, device or DEFAULT_DEVICE)
