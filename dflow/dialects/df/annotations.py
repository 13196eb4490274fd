"""Names of the discardable attributes that users and passes attach to `df` ops,
functions and modules, and the one reader of an op's placement."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

# Set by users and the graph passes.

DEVICE = "df.device"
"""String `cpu:N` or `gpu:N`, optionally `@RANK`: where the op runs (on a device module of a
partitioned module: the device it is for)."""
COLOCATE = "df.colocate"
"""String: ops with the same group name run on one device."""
RECOMPUTE = "df.recompute"
"""Unit: the op may be recomputed next to its backward users."""
BACKWARD = "df.backward"
"""Unit: the op belongs to a gradient computation."""
NAME = "df.name"
"""String, on a function argument: the name it had where the program came from (an
ONNX input's name, where that is no valid SSA name); feeds may use it."""
RECOMPUTED = "df.recomputed"
"""String: set by `df-recompute` on each clone, naming its recomputation group
(`<function>.r<N>`), so that `cse` never merges a clone back into its original."""

# Set by the lowering passes.

ARGUMENTS = "df.arguments"
"""On each device's part of a partitioned function (`df-partition`): the original
indices of the arguments it takes."""
RESULTS = "df.results"
"""On each device's part of a partitioned function: the original indices of the
results it returns."""
FUNCTION_TYPE = "df.function_type"
"""On each device's part of a partitioned function: the type of the whole function."""
KERNEL = "df.kernel"
"""On a kernel `func.func` (`df-bufferize`): unit. On a graph op: the symbol of the
kernel it runs."""
SOURCE = "df.source"
"""On a kernel `func.func` (`df-bufferize`): the names of the `df` ops it computes,
in order (`["df.matmul", "df.add"]`): what a trace or profile says it ran."""
WORK = "df.work"
"""On a kernel `func.func` (`df-bufferize`): `array<i64: flops, bytes>`, the cost
model's count of its floating-point operations and of the bytes it reads and writes
(its inputs and outputs: what a fused kernel keeps in registers is not counted)."""
VIEW = "df.view"
"""Unit, on a `df.concat` (`df-bufferize`): the memory plan writes each operand in place
into its slice of the result (`analysis/memory/concat_views.py`), so it copies nothing
and runs no kernel."""
OFFSET = "df.offset"
"""On an op (`df-plan-buffers`): the arena offset of each of its results, in bytes."""
ARENA_BYTES = "df.arena_bytes"
"""On a function, and on a device module: the bytes its arena needs."""


def device_of(op: Operation) -> str | None:
    """The device `op` is placed on (its `df.device`), or None when it has none."""
    device = op.attributes.get(DEVICE)
    return device.data if isinstance(device, StringAttr) else None
