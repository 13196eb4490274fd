"""`df-bufferize`: outline every fusion group and computing op into a kernel (level 4).

    xdsl-opt fused.mlir -p 'df-bufferize'

For each graph function (of each device module, once partitioned), every
`df.fused` and every other computing op (all but `df.constant`, `df.send`,
`df.recv` and the terminator) gets a kernel, but a reshape the planner makes a
view of its input (`plan_buffers.reshape_view_source`): a private `func.func` of
the same module over memrefs, named after the group (`fused_add_0`) or the op
(`matmul_3`), built by `lowering/kernels.py`. The graph op stays, on tensors,
and records its kernel in `df.kernel = @name`, so the graph is still the
program the interpreter runs, and `df-plan-buffers` then `df-lower-host` turn
it into host calls. The library routines the kernels call are declared once per
module (`func.func private @dflow_matmul_f32(...)`). Kernels carry the unit
attribute `df.kernel`; graph passes leave them alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from dflow.dialects.df.fusion import FusedOp
from dflow.lowering.kernels import (
    KERNEL,
    Group,
    Library,
    build_kernel,
    graph_functions,
    is_kernel_op,
)
from dflow.lowering.plan_buffers import arena_scopes, reshape_view_source
from dflow.transforms.statistics import PassStatistics


@dataclass
class KernelNames:
    """Unique kernel names within a module: `fused_add_0` as `df-fuse` named it, else
    the op's name and a number."""

    taken: set[str]
    count: int = 0

    def name(self, op: Operation) -> str:
        if isinstance(op, FusedOp):
            base = op.kernel_name.data
        else:
            base = f"{re.sub(r'[^A-Za-z0-9_]', '_', op.name.removeprefix('df.'))}_{self.count}"
            self.count += 1
        name, n = base, 1
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name


def bufferize_scope(scope: ModuleOp, statistics: PassStatistics) -> None:
    library = Library()
    names = KernelNames({f.sym_name.data for f in scope.ops if isinstance(f, FuncOp)})
    kernels: list[FuncOp] = []
    for function in graph_functions(scope):
        for op in function.body.walk():
            if op.parent_op() is not function or not is_kernel_op(op):
                continue
            if reshape_view_source(op) is not None:
                statistics.count("ReshapeViews")
                continue
            if KERNEL in op.attributes:
                raise PassFailedException(
                    f"df-bufferize: {op.name} already runs a kernel: the module is bufferized"
                )
            group = Group.of(op, names.name(op))
            kernels.append(build_kernel(group, library))
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        for _, scope in arena_scopes(op):
            bufferize_scope(scope, statistics)
        statistics.finish(op)
