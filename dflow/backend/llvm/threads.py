"""`--parallel` on the llvm target: a kernel's outer parallel loop split over threads.

As numba's `parallel=True` runs the outer loop of each `scf.parallel` nest as a
`prange`, the llvm target outlines that loop's body into a *chunk* function,
`@<kernel>.chunk<N>(ctx, begin, end)`, that runs the iterations `[begin, end)`; the
kernel stores the values the body uses from before the loop (buffers, hoisted loads,
sizes) into a context on its stack and calls `@dflow.parallel_for`, which cuts the
iterations into one contiguous range per thread, starts a POSIX thread for each
range but the first, runs the first itself and joins the others. The iterations of
an `scf.parallel` are independent, so no two threads write the same element.

Threads cost tens of microseconds to start, so only kernels whose work (the cost
model's `df.work`: flops and bytes) reaches `PARALLEL_MIN_WORK` are split; and only
loops of more than one trip, as numba's. How many threads: `@dflow.threads`, which
the runtime sets to the cores this process may use when it loads the module
(`runtime/llvm_jit.py`; 1, the loop run in order, until then).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import SSAValue

from dflow.backend.llvm.types import llvm_type

if TYPE_CHECKING:
    from dflow.backend.llvm.kernel import KernelPrinter

PARALLEL_MIN_WORK = 1 << 18
"""The least flops plus bytes of a kernel split over threads (a quarter million: a
few hundred microseconds of work, against tens to start the threads)."""

MAX_THREADS = 64
"""The most threads one loop is split over (the dispatcher's arrays on its stack)."""

THREADS_GLOBAL = "dflow.threads"
"""The global the runtime sets to the number of threads."""

_REGISTER = re.compile(r"%[A-Za-z_][\w.]*")

THREADS_DEFINITION = f'@"{THREADS_GLOBAL}" = global i64 1'
"""The thread count's definition, in the host unit (each kernel's unit declares it)."""

PARALLEL_FOR = f"""
@"{THREADS_GLOBAL}" = external global i64

define internal ptr @dflow.run_task(ptr %task) {{
entry:
  %fn = load ptr, ptr %task
  %pctx = getelementptr i8, ptr %task, i64 8
  %ctx = load ptr, ptr %pctx
  %pbegin = getelementptr i8, ptr %task, i64 16
  %begin = load i64, ptr %pbegin
  %pend = getelementptr i8, ptr %task, i64 24
  %end = load i64, ptr %pend
  call void %fn(ptr %ctx, i64 %begin, i64 %end)
  ret ptr null
}}

define internal void @dflow.task(ptr %tasks, i64 %i, ptr %fn, ptr %ctx, i64 %lb, i64 %step,
                                 i64 %trips, i64 %threads) {{
entry:
  %task = getelementptr [4 x i64], ptr %tasks, i64 %i
  store ptr %fn, ptr %task
  %pctx = getelementptr i8, ptr %task, i64 8
  store ptr %ctx, ptr %pctx
  %first = mul i64 %trips, %i
  %from = udiv i64 %first, %threads
  %i1 = add i64 %i, 1
  %last = mul i64 %trips, %i1
  %to = udiv i64 %last, %threads
  %fromstep = mul i64 %from, %step
  %begin = add i64 %lb, %fromstep
  %tostep = mul i64 %to, %step
  %end = add i64 %lb, %tostep
  %pbegin = getelementptr i8, ptr %task, i64 16
  store i64 %begin, ptr %pbegin
  %pend = getelementptr i8, ptr %task, i64 24
  store i64 %end, ptr %pend
  ret void
}}

define internal void @dflow.parallel_for(ptr %fn, ptr %ctx, i64 %lb, i64 %ub, i64 %step) {{
entry:
  %tasks = alloca [{MAX_THREADS} x [4 x i64]]
  %handles = alloca [{MAX_THREADS} x i64]
  %span = sub i64 %ub, %lb
  %rounded = add i64 %span, %step
  %rounded1 = sub i64 %rounded, 1
  %trips = sdiv i64 %rounded1, %step
  %asked = load i64, ptr @"{THREADS_GLOBAL}"
  %capped = call i64 @llvm.smin.i64(i64 %asked, i64 {MAX_THREADS})
  %fewer = call i64 @llvm.smin.i64(i64 %capped, i64 %trips)
  %threads = call i64 @llvm.smax.i64(i64 %fewer, i64 1)
  br label %spawn
spawn:
  %i = phi i64 [ 1, %entry ], [ %next, %start ]
  %more = icmp slt i64 %i, %threads
  br i1 %more, label %start, label %own
start:
  call void @dflow.task(ptr %tasks, i64 %i, ptr %fn, ptr %ctx, i64 %lb, i64 %step,
                        i64 %trips, i64 %threads)
  %task = getelementptr [4 x i64], ptr %tasks, i64 %i
  %handle = getelementptr i64, ptr %handles, i64 %i
  %created = call i32 @pthread_create(ptr %handle, ptr null, ptr @dflow.run_task, ptr %task)
  %next = add i64 %i, 1
  br label %spawn
own:
  call void @dflow.task(ptr %tasks, i64 0, ptr %fn, ptr %ctx, i64 %lb, i64 %step,
                        i64 %trips, i64 %threads)
  %ran = call ptr @dflow.run_task(ptr %tasks)
  br label %join
join:
  %j = phi i64 [ 1, %own ], [ %after, %wait ]
  %waiting = icmp slt i64 %j, %threads
  br i1 %waiting, label %wait, label %done
wait:
  %joined = getelementptr i64, ptr %handles, i64 %j
  %thread = load i64, ptr %joined
  %status = call i32 @pthread_join(i64 %thread, ptr null)
  %after = add i64 %j, 1
  br label %join
done:
  ret void
}}

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)
declare i64 @llvm.smin.i64(i64, i64)
declare i64 @llvm.smax.i64(i64, i64)
""".strip()
"""The dispatcher every module of split kernels defines once (`declarations`)."""


def splits(op: scf.ParallelOp) -> bool:
    """Whether the outer loop of `op` may be split: it lies directly in the kernel's
    body (not inside another loop) and runs more than one trip."""
    parent = op.parent_op()
    if parent is None or parent.name != "func.func":
        return False
    lb, ub, step = op.lowerBound[0], op.upperBound[0], op.step[0]
    first, end, stride = (_constant(v) for v in (lb, ub, step))
    return first is not None and end is not None and stride is not None and end - first > stride


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return int(owner.value.value.data)
    return None


def outline(printer: KernelPrinter, op: scf.ParallelOp, kernel: str) -> None:
    """`op` as a call of the dispatcher on a chunk function of its outer loop."""
    known = {name: _type(value) for value, name in printer.names.items() if name.startswith("%")}
    outer_lines, outer_block = printer.lines, printer.block
    printer.lines = []
    printer.label("entry")
    lb, ub, step = (printer.value(v) for v in (op.lowerBound[0], op.upperBound[0], op.step[0]))
    printer.chunk_loop(op, ("%begin", "%end", step))
    printer.emit("ret void")
    body = printer.lines
    printer.lines, printer.block = outer_lines, outer_block
    used = sorted({r for line in body for r in _REGISTER.findall(line)} & known.keys())
    chunk = f'"{kernel}.chunk{printer.counter}"'
    printer.counter += 1
    context = printer.fresh("ctx")
    printer.emit(f"{context} = alloca [{max(1, len(used))} x i64]")
    loads: list[str] = []
    for slot, name in enumerate(used):
        pointer = printer.fresh("slot")
        printer.emit(f"{pointer} = getelementptr i64, ptr {context}, i64 {slot}")
        printer.emit(f"store {known[name]} {name}, ptr {pointer}")
        loads.append(f"  {name}.slot = getelementptr i64, ptr %ctx, i64 {slot}")
        loads.append(f"  {name} = load {known[name]}, ptr {name}.slot")
    printer.emit(
        f"call void @dflow.parallel_for(ptr @{chunk}, ptr {context}, i64 {lb}, i64 {ub}, "
        f"i64 {step})"
    )
    head = f"define internal void @{chunk}(ptr %ctx, i64 %begin, i64 %end) {{"
    printer.chunks.append([head, body[0], *loads, *body[1:], "}"])
    printer.declarations.add(PARALLEL_FOR)


def _type(value: SSAValue) -> str:
    if isinstance(value.type, MemRefType):
        return "ptr"
    return llvm_type(value.type)
