"""`df-plan-buffers`: place every op result at an offset of one arena per device.

As NNVM's PlanMemory: the schedule is each function's op order (each device's
part of it, once partitioned); `lowering/memory_plan.py` computes liveness,
in-place sharing and the packing, and this module adapts the IR to it and writes
the plan back:

- every op result is a buffer of `elements * element width` bytes (`i1` takes a
  byte); `df.recv` writes one, `df.send` and `func.return` only read;
- function arguments and `df.constant` results are not in the arena (the caller's
  data and static data): they get no offset and are never overwritten;
- an elementwise op (unary, binary and comparisons, `select`, `addn`, and `cast`
  between types of one width) may write its result over an operand of exactly the
  result's type (shape and element; for `cast`, shape and width) that dies there,
  so broadcast operands never qualify; returned values live to the end;
- a `df.reshape` of a value in the arena is a view of it (`reshape_view_source`):
  the same bytes, so the same offset, held until both are dead; its kernel is
  never built. A reshape of an argument or a constant, or whose input or result
  is returned (a result is the caller's own array, not arena bytes), copies;
- each op with a result in the arena gets `df.offset = array<i64: N>` (bytes from
  the arena's start, one per result), each function `df.arena_bytes`, and each
  device module of a partitioned module `df.arena_bytes` too, the largest of its
  functions' (a device runs one function at a time, so they share the arena).

Functions must be straight-line `df` code ending in `func.return`: calls and ops
with regions are refused (a callee would need its own part of the arena), except
`df.fused`, which is one step: its results get blocks, the values inside its body
live in the kernel's registers and get none. A fused kernel never writes in place.
Offsets are multiples of `memory_plan.ALIGNMENT` (64 bytes).

    xdsl-opt placed.mlir -p 'df-partition,df-plan-buffers{stats=true}'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from dflow.dialects.df import annotations
from dflow.dialects.df.elementwise import (
    AddNOp,
    BinaryElementwiseOp,
    CastOp,
    SelectOp,
    UnaryElementwiseOp,
)
from dflow.dialects.df.functions import function_named
from dflow.dialects.df.fusion import FusedOp
from dflow.dialects.df.leaves import ConstantOp
from dflow.dialects.df.semantics import numpy_dtype
from dflow.dialects.df.shape_ops import ReshapeOp
from dflow.dialects.df.types import i64_array, static_tensor
from dflow.lowering.kernels import graph_functions
from dflow.lowering.memory_plan import MemoryPlan, PlanError, Schedule, Step, Value, plan
from dflow.transforms.statistics import PassStatistics

OFFSET = "df.offset"
"""On an op: the arena offset of each of its results, in bytes."""
ARENA_BYTES = "df.arena_bytes"
"""On a function, and on a device module: the bytes its arena needs."""
DEFAULT_DEVICE = "cpu:0"
"""The device an unpartitioned module runs on, in reports."""

_SAME_TYPE_INPLACE = (UnaryElementwiseOp, BinaryElementwiseOp, SelectOp, AddNOp)


def _fail(message: str) -> PassFailedException:
    return PassFailedException(f"df-plan-buffers: {message}")


def byte_size(type: Attribute) -> int:
    """The bytes of a statically shaped df tensor (`i1` elements take one byte)."""
    tensor = static_tensor(type)
    return prod(tensor.get_shape()) * numpy_dtype(tensor.element_type).itemsize


def _width(type: Attribute) -> int:
    return numpy_dtype(static_tensor(type).element_type).itemsize


def inplace_operands(op: Operation) -> list[SSAValue]:
    """The operands `op` may overwrite with its result, element for element: those of
    an elementwise op with exactly the result's type, or a cast's operand of the
    result's width."""
    result = op.results[0] if len(op.results) == 1 else None
    if result is None:
        return []
    if isinstance(op, CastOp):
        same_width = _width(op.input.type) == _width(result.type)
        return [op.input] if same_width else []
    if isinstance(op, _SAME_TYPE_INPLACE):
        return [operand for operand in op.operands if operand.type == result.type]
    return []


def reshape_view_source(op: Operation) -> SSAValue | None:
    """The arena value `op` is a view of, when `op` is a reshape that needs no copy:
    its input is an op's result in the arena (not an argument or a constant), and
    neither input nor result is returned (a returned value lives in its own array)."""
    if not isinstance(op, ReshapeOp):
        return None
    source = op.input
    if not isinstance(source.owner, Operation) or isinstance(source.owner, ConstantOp):
        return None
    if _returned(source) or _returned(op.result):
        return None
    return source


def _returned(value: SSAValue) -> bool:
    return any(isinstance(use.operation, ReturnOp) for use in value.uses)


def _check_op(function: FuncOp, op: Operation) -> None:
    if op.regions and not isinstance(op, FusedOp):
        raise _fail(f"@{function.sym_name.data}: {op.name} has regions; only straight-line code")
    if not op.name.startswith("df.") and not isinstance(op, ReturnOp):
        raise _fail(
            f"@{function.sym_name.data} holds {op.name}: only df ops are planned "
            "(a callee would need its own part of the arena)"
        )


@dataclass
class FunctionSchedule:
    """A function as a `Schedule`: its values numbered, one step per op."""

    function: FuncOp
    ops: list[Operation] = field(default_factory=list[Operation])
    values: list[SSAValue] = field(default_factory=list[SSAValue])
    index: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    sizes: list[Value] = field(default_factory=list[Value])

    @staticmethod
    def of(function: FuncOp) -> FunctionSchedule:
        schedule = FunctionSchedule(function)
        for argument in function.args:
            schedule.add(argument, in_arena=False)
        for op in function.body.block.ops:
            _check_op(function, op)
            schedule.ops.append(op)
            for result in op.results:
                schedule.add(result, in_arena=not isinstance(op, ConstantOp))
        return schedule

    def add(self, value: SSAValue, in_arena: bool) -> None:
        try:
            size = byte_size(value.type)
        except VerifyException as error:
            raise _fail(f"@{self.function.sym_name.data}: {error}") from None
        self.index[value] = len(self.values)
        self.values.append(value)
        self.sizes.append(Value(size, in_arena, value.name_hint or ""))

    def step(self, op: Operation) -> Step:
        writes = tuple(self.index[r] for r in op.results)
        pairs = tuple((writes[0], self.index[v]) for v in inplace_operands(op))
        source = reshape_view_source(op)
        alias = ((writes[0], self.index[source]),) if source is not None else ()
        return Step(tuple(self.index[v] for v in op.operands), writes, pairs, alias)

    def schedule(self) -> Schedule:
        return Schedule(tuple(self.sizes), tuple(self.step(op) for op in self.ops))


def plan_function(
    function: FuncOp, every_packer: bool = False
) -> tuple[FunctionSchedule, MemoryPlan]:
    """The schedule of `function` and its plan (`every_packer`: see `memory_plan.plan`);
    a pass failure for what cannot be planned."""
    if function.is_declaration:
        raise _fail(f"@{function.sym_name.data} is a declaration: it has no body to plan")
    if len(function.body.blocks) != 1:
        raise _fail(f"@{function.sym_name.data} has several blocks; only straight-line code")
    schedule = FunctionSchedule.of(function)
    try:
        return schedule, plan(schedule.schedule(), every_packer)
    except PlanError as error:
        raise _fail(f"@{function.sym_name.data}: {error}") from None


def annotate(schedule: FunctionSchedule, memory: MemoryPlan) -> None:
    """Write `df.offset` on every op with results in the arena, `df.arena_bytes` on the
    function; stale offsets on other ops go."""
    offsets = memory.value_offsets()
    for op in schedule.ops:
        placed = [offsets[schedule.index[r]] for r in op.results if schedule.index[r] in offsets]
        if placed:
            op.attributes[OFFSET] = i64_array(placed)
        else:
            op.attributes.pop(OFFSET, None)
    schedule.function.attributes[ARENA_BYTES] = IntegerAttr(memory.arena_bytes, i64)


def arena_scopes(module: ModuleOp) -> list[tuple[str | None, ModuleOp]]:
    """Each device module of a partitioned module with its device, else the module
    itself (device None)."""
    scopes: list[tuple[str | None, ModuleOp]] = []
    for op in module.ops:
        device = op.attributes.get(annotations.DEVICE)
        if isinstance(op, ModuleOp) and isinstance(device, StringAttr):
            scopes.append((device.data, op))
    return scopes or [(None, module)]


def defined_functions(scope: ModuleOp) -> list[FuncOp]:
    """The graph functions to plan (kernels made by `df-bufferize` are not)."""
    return graph_functions(scope)


def plan_entry(module: ModuleOp, entry: str, every_packer: bool = False) -> dict[str, MemoryPlan]:
    """The plan of function `entry` on each device (an unpartitioned module is one
    device, `DEFAULT_DEVICE`), without changing the module."""
    plans: dict[str, MemoryPlan] = {}
    for device, scope in arena_scopes(module):
        function = function_named(scope, entry)
        if function is None:
            raise _fail(f"no function @{entry}")
        plans[device or DEFAULT_DEVICE] = plan_function(function, every_packer)[1]
    return plans


def _record(statistics: PassStatistics, where: str, memory: MemoryPlan) -> None:
    statistics.count("InPlace", len(memory.inplace_pairs))
    statistics.record(f"{where} arena_bytes", memory.arena_bytes)
    statistics.record(f"{where} lower_bound_bytes", memory.lower_bound_bytes)
    statistics.record(f"{where} naive_bytes", memory.naive_bytes)


@dataclass(frozen=True)
class PlanBuffersPass(ModulePass):
    """Plan every op result into one arena per device: `df.offset`, `df.arena_bytes`."""

    name = "df-plan-buffers"

    stats: bool = False
    """Print, per function, how many results were written in place and the arena, its
    lower bound and the naive size (every result apart, views excepted), in bytes."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        for device, scope in arena_scopes(op):
            arena = 0
            for function in defined_functions(scope):
                schedule, memory = plan_function(function)
                annotate(schedule, memory)
                arena = max(arena, memory.arena_bytes)
                where = f"@{function.sym_name.data}" + (f" on {device}" if device else "")
                _record(statistics, where, memory)
            if device is not None:
                scope.attributes[ARENA_BYTES] = IntegerAttr(arena, i64)
        statistics.finish(op)
