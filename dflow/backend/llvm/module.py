"""`-t df-llvm`: each CPU device's LLVM module, as the llvm target compiles it.

`emit_llvm_modules` prints, per CPU device of a lowered module, the LLVM module that
`program.py` writes beside the device's Python module: every kernel the printer
handles (`kernel.py`), the host segments that launch them, the declarations of the
intrinsics and library functions they call, and a comment naming each kernel left to
the numba target and why. GPU devices stay the numba target's: they get a comment.
`-t 'df-llvm{parallel=true}'` prints them as `--parallel` compiles them: the outer
parallel loop of each kernel of enough work split over threads (`threads.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from dflow.backend.llvm.program import LlvmProgramPrinter
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df.symbols import device_scopes


def emit_llvm_modules(module: ModuleOp, parallel: bool = False) -> dict[str, str]:
    """The LLVM IR of each device's program, by device (`parallel`: as `--parallel`
    compiles it)."""
    return {
        device or DEFAULT_DEVICE: module_text(device or DEFAULT_DEVICE, scope, parallel)
        for device, scope in device_scopes(module)
    }


def module_text(device: str, scope: ModuleOp, parallel: bool = False) -> str:
    """One device's LLVM module (a comment for a GPU device)."""
    if not device.startswith("cpu"):
        return f"; dflow: {device}'s kernels are the numba target's (CUDA)\n"
    unlowered = next((op for op in scope.walk() if op.name.startswith("df.")), None)
    if unlowered is not None:
        raise ValueError(f"the df-llvm target cannot print {unlowered.name}")
    printer = LlvmProgramPrinter(scope, parallel)
    printer.print()
    return printer.llvm()


@dataclass(frozen=True)
class LlvmTarget(Target):
    """`xdsl-opt -t df-llvm`: every device's LLVM module, each headed by a comment
    line naming its device (`llvm` is xDSL's own target, of its `llvm` dialect)."""

    name = "df-llvm"

    parallel: bool = False
    """Print the modules as `--parallel` compiles them (outer loops over threads)."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        for device, text in emit_llvm_modules(module, self.parallel).items():
            output.write(f"; ----- {device} -----\n")
            output.write(text)
