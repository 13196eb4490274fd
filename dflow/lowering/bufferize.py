"""`df-bufferize`: outline every fusion group and computing op into a kernel (level 4).

    xdsl-opt fused.mlir -p 'df-bufferize'

Unlike MLIR's one-shot bufferization, which rewrites tensor ops into memref ops in
place, this pass *outlines*: the buffer form of each computation is a new kernel
function, and the graph stays on tensors beside it. For each graph function (of
each device module, once partitioned), every `df.fused` and every other computing
op (all but `df.constant`, `df.send`, `df.recv` and the terminator) gets a kernel,
but a view the planner makes (`function_schedule.is_view`: a reshape of its input,
or a concatenation whose operands are written in place into it, which this pass
marks `df.view` where `analysis/memory/concat_views.py` finds it can): a
private `func.func` of the same module over memrefs, named after the group
(`fused_add_0`) or the op (`matmul_3`), built by `lowering/kernels/`. The graph op
stays, on tensors,
and records its kernel in `df.kernel = @name`, so the graph is still the
program the interpreter runs, and `df-plan-buffers` then `df-lower-host` turn
it into host calls. The library routines the kernels call are declared once per
module (`func.func private @dflow_matmul_f32(...)`). Kernels carry the unit
attribute `df.kernel`; graph passes leave them alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from dflow.analysis.memory.concat_views import concat_views
from dflow.analysis.memory.function_schedule import is_view
from dflow.dialects.devices import kind_of
from dflow.dialects.df.annotations import KERNEL, VIEW
from dflow.dialects.df.fusion import FusedOp
from dflow.dialects.df.symbols import device_scopes, graph_functions
from dflow.lowering.kernels.builder import Group, Library, build_kernel, is_kernel_op
from dflow.lowering.kernels.loops import LANES
from dflow.lowering.kernels.names import KernelNames
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import PassStatistics

_fail = pass_failure("df-bufferize")


def kernel_name(op: Operation, names: KernelNames) -> str:
    """`fused_add_0` as `df-fuse` named the group, else the op's name and a number."""
    if isinstance(op, FusedOp):
        return names.keep(op.kernel_name.data)
    return names.numbered(op.name.removeprefix("df."))


def bufferize_scope(scope: ModuleOp, statistics: PassStatistics, lanes: int = 1) -> None:
    library = Library()
    names = KernelNames({f.sym_name.data for f in scope.ops if isinstance(f, FuncOp)})
    kernels: list[FuncOp] = []
    for function in graph_functions(scope):
        for concat in concat_views(function):
            concat.attributes[VIEW] = UnitAttr()
        for op in function.body.walk():
            if op.parent_op() is not function or not is_kernel_op(op):
                continue
            if is_view(op):
                statistics.count("ConcatViews" if VIEW in op.attributes else "ReshapeViews")
                continue
            if KERNEL in op.attributes:
                raise _fail(f"{op.name} already runs a kernel: the module is bufferized")
            group = Group.of(op, kernel_name(op, names))
            kernels.append(build_kernel(group, library, lanes))
            op.attributes[KERNEL] = SymbolRefAttr(group.name)
            statistics.count("Kernels")
    for declaration in library.declarations.values():
        scope.body.block.add_op(declaration)
    for kernel in kernels:
        scope.body.block.add_op(kernel)


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    """Outline each fusion group and computing op into a kernel over memrefs."""

    name = "df-bufferize"

    stats: bool = False
    """Print the number of kernels made."""

    lanes: int = 1
    """The independent accumulators of each row fold (a softmax's maximum and sum, a
    layer norm's) of CPU kernels: 1 for the llvm target, whose loop vectorizer folds
    in vector lanes given the combine's fast-math flags; `LANES` (8) for numba, which
    has no per-op fast-math, so its folds run at the adder's throughput. GPU kernels
    always take `LANES`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.lanes < 1:
            raise _fail(f"lanes must be at least 1, not {self.lanes}")
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        for device, scope in device_scopes(op):
            on_gpu = device is not None and kind_of(device) == "gpu"
            bufferize_scope(scope, statistics, LANES if on_gpu else self.lanes)
        statistics.finish(op)
