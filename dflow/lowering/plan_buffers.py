"""`df-plan-buffers`: place every op result at an offset of one arena per device.

The plan is `analysis.memory.function_schedule`'s (liveness, in-place writes, reshape
views, the best packing; see there); this pass writes it into the IR:

- each op with a result in the arena gets `df.offset = array<i64: N>` (bytes from
  the arena's start, one per result), each function `df.arena_bytes`, and each
  device module of a partitioned module `df.arena_bytes` too, the largest of its
  functions' (a device runs one function at a time, so they share the arena).

Offsets are multiples of `liveness.ALIGNMENT` (64 bytes).

- a kernel that writes its result over an input (in place) reads that input
  through its result's argument: both are one buffer, and a loop that reads and
  writes through one array is vectorized by LLVM, while two arrays that overlap
  fail its run-time overlap check and run its scalar loop (a `select` over 512K
  elements written in place took 1.6 ms that way, 0.04 ms through one argument).

    xdsl-opt placed.mlir -p 'df-partition,df-plan-buffers{stats=true}'
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, SymbolRefAttr, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from dflow.analysis.memory.function_schedule import FunctionSchedule, plan_function
from dflow.analysis.memory.liveness import PlanError
from dflow.analysis.memory.memory_plan import MemoryPlan
from dflow.dialects.df.annotations import ARENA_BYTES, KERNEL, OFFSET
from dflow.dialects.df.fusion import FusedOp
from dflow.dialects.df.symbols import device_scopes, graph_functions
from dflow.dialects.df.types import i64_array
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import PassStatistics


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


def read_in_place(schedule: FunctionSchedule, memory: MemoryPlan, scope: ModuleOp) -> None:
    """Make each kernel that writes its result over an input of the same type read
    that input through the result's argument (see the module's docstring). A fused
    kernel never writes in place, and a returned result, which the plan places over
    its input, is written into an output array of its own on a CPU
    (`df-lower-host`): its kernel keeps two arguments."""
    for source_index, result_index in memory.inplace_pairs:
        source, result = schedule.values[source_index], schedule.values[result_index]
        op = result.owner
        if not isinstance(op, Operation) or isinstance(op, FusedOp):
            continue
        if any(isinstance(use.operation, ReturnOp) for use in result.uses):
            continue
        reference = op.attributes.get(KERNEL)
        kernel = (
            SymbolTable.lookup_symbol(scope, reference)
            if isinstance(reference, SymbolRefAttr)
            else None
        )
        if not isinstance(kernel, FuncOp):
            continue
        output = kernel.args[len(op.operands) + op.results.index(result)]
        for position, operand in enumerate(op.operands):
            if operand is source and kernel.args[position].type == output.type:
                kernel.args[position].replace_all_uses_with(output)


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

    hold_sends: bool = False
    """Keep each sent value's buffer to the end of its function: a transport between
    processes then sends straight out of the arena, without a copy (`dflow run --mpi`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        for device, scope in device_scopes(op):
            arena = 0
            for function in graph_functions(scope):
                schedule, memory = self.plan(function)
                annotate(schedule, memory)
                read_in_place(schedule, memory, scope)
                arena = max(arena, memory.arena_bytes)
                where = f"@{function.sym_name.data}" + (f" on {device}" if device else "")
                _record(statistics, where, memory)
            if device is not None:
                scope.attributes[ARENA_BYTES] = IntegerAttr(arena, i64)
        statistics.finish(op)

    def plan(self, function: FuncOp) -> tuple[FunctionSchedule, MemoryPlan]:
        """`function`'s schedule and plan; what the planner cannot plan fails as this
        pass (`df-plan-buffers: cpu:1: @main holds func.call: ...`)."""
        try:
            return plan_function(function, hold_sends=self.hold_sends)
        except PlanError as error:
            raise pass_failure(self.name)(str(error)) from None
