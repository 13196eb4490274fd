"""GPU kernels, for CUDA: a host-side launcher per kernel, each top-level
`scf.parallel` of it a `@cuda.jit` kernel of one thread per iteration.

The thread's index is recovered from `cuda.grid(1)`; library routines (matrix
products, convolutions, pools) are launches of their own (`runtime/library/gpu.py`).
(No module of this package may be named `cuda*`: numba-cuda's import redirector
takes any module name containing `numba.cuda` for its own and recurses.)
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import func, memref, scf
from xdsl.ir import Operation

from dflow.backend.numba.kernel import KernelPrinter, static_values
from dflow.backend.numba.names import Names, dtype_of
from dflow.backend.numba.printer import Lines, dispatch_on_op

GPU_THREADS = 256
"""Threads per block of a GPU grid kernel (`THREADS` in the emitted module)."""
GPU_HEADER = f"""import math

import numba
import numpy as np
from numba import cuda

from dflow.runtime.library import gpu as lib

_inline = cuda.jit(device=True, inline="always")
THREADS = {GPU_THREADS}
"""


class GpuKernelPrinter(KernelPrinter):
    """Kernels for CUDA: a host-side launcher per kernel; each top-level
    `scf.parallel` becomes a `@cuda.jit` kernel of one thread per iteration."""

    def __init__(self, out: Lines, names: Names, kernel_name: str, arguments: list[str]):
        super().__init__(out, names)
        self.kernel_name = kernel_name
        self.arguments = arguments
        self.grids: list[Lines] = []

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        super().print_op(op)

    @print_op.register
    def _(self, op: memref.AllocOp) -> None:
        shape = tuple(op.memref.type.get_shape())
        self.assign(op, f"cuda.device_array({shape}, {dtype_of(op.memref.type)})", "scratch")
        self.arguments.append(self.value(op.memref))

    @print_op.register
    def _(self, op: scf.ParallelOp) -> None:
        lows, highs, steps = (
            static_values(iter(values)) for values in (op.lowerBound, op.upperBound, op.step)
        )
        extents = [
            max(0, -(-(high - low) // step))
            for low, high, step in zip(lows, highs, steps, strict=True)
        ]
        total = int(np.prod(extents))
        if total == 0:
            return
        grid = Lines()
        name = f"{self.kernel_name}_grid{len(self.grids)}"
        grid("@cuda.jit(cache=True)")
        grid(f"def {name}({', '.join(self.arguments)}):")
        with grid.indented():
            grid("thread = cuda.grid(1)")
            grid(f"if thread >= {total}:")
            with grid.indented():
                grid("return")
            stride = total
            for axis, (iv, low, step, extent) in enumerate(
                zip(op.body.block.args, lows, steps, extents, strict=True)
            ):
                stride //= extent
                position = f"thread // {stride}" if stride > 1 else "thread"
                if axis > 0:
                    position = f"{position} % {extent}" if stride > 1 else f"thread % {extent}"
                scaled = f"{position} * {step}" if step != 1 else position
                index = f"{low} + {scaled}" if low else scaled
                grid(f"{self.names.define(iv, 'i')} = {index}")
            KernelPrinter(grid, self.names).block(op.body.block)
        self.grids.append(grid)
        blocks = -(-total // GPU_THREADS)
        self.out(f"{name}[{blocks}, THREADS]({', '.join(self.arguments)})")


def print_gpu_kernel(out: Lines, kernel: func.FuncOp, names: Names, name: str) -> None:
    """`kernel`'s grid kernels (`<name>_grid<n>`), then its launcher `name`."""
    arguments = [names.define(a, f"arg{i}") for i, a in enumerate(kernel.args)]
    body = Lines(out.depth + 1)
    printer = GpuKernelPrinter(body, names, name, arguments)
    printer.block(kernel.body.block)
    for grid in printer.grids:
        out.extend(grid)
        out("")
        out("")
    out(f"def {name}({', '.join(arguments[: len(kernel.args)])}):")
    if not body.lines:
        body("pass")
    out.extend(body)
