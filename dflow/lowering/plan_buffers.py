"""`df-plan-buffers`: place every op result at an offset of one arena per device.

The plan is `analysis.function_schedule`'s (liveness, in-place writes, reshape
views, the best packing; see there); this pass writes it into the IR:

- each op with a result in the arena gets `df.offset = array<i64: N>` (bytes from
  the arena's start, one per result), each function `df.arena_bytes`, and each
  device module of a partitioned module `df.arena_bytes` too, the largest of its
  functions' (a device runs one function at a time, so they share the arena).

Offsets are multiples of `liveness.ALIGNMENT` (64 bytes).

    xdsl-opt placed.mlir -p 'df-partition,df-plan-buffers{stats=true}'
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from dflow.analysis.function_schedule import FunctionSchedule, plan_function
from dflow.analysis.memory_plan import MemoryPlan
from dflow.analysis.statistics import PassStatistics
from dflow.dialects.df.annotations import ARENA_BYTES, OFFSET
from dflow.dialects.df.symbols import device_scopes, graph_functions
from dflow.dialects.df.types import i64_array


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
        for device, scope in device_scopes(op):
            arena = 0
            for function in graph_functions(scope):
                schedule, memory = plan_function(function)
                annotate(schedule, memory)
                arena = max(arena, memory.arena_bytes)
                where = f"@{function.sym_name.data}" + (f" on {device}" if device else "")
                _record(statistics, where, memory)
            if device is not None:
                scope.attributes[ARENA_BYTES] = IntegerAttr(arena, i64)
        statistics.finish(op)
