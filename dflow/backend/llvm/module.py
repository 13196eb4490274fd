"""Each CPU device's kernels as one LLVM module, in LLVM's textual IR.

`emit_llvm_modules` prints every kernel `df-bufferize` outlined (`kernel.py`), then
the declarations of the intrinsics and C library functions they call, once per
module. GPU devices stay the numba target's: their modules are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from dflow.backend.llvm.kernel import KernelPrinter, UnsupportedKernelError
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df.symbols import device_scopes, kernel_functions


def emit_llvm_modules(module: ModuleOp) -> dict[str, str]:
    """The LLVM IR of each device's kernels, by device."""
    return {
        device or DEFAULT_DEVICE: module_text(device or DEFAULT_DEVICE, scope)
        for device, scope in device_scopes(module)
    }


def module_text(device: str, scope: ModuleOp) -> str:
    """One device's kernels as an LLVM module."""
    if not device.startswith("cpu"):
        raise UnsupportedKernelError(f"the llvm target prints CPU kernels; {device}'s stay numba's")
    unlowered = next((op for op in scope.walk() if op.name.startswith("df.")), None)
    if unlowered is not None:
        raise ValueError(f"the df-llvm target cannot print {unlowered.name}")
    declarations: set[str] = set()
    lines = [f"; dflow: the kernels of device {device} (emitted by the df-llvm target)"]
    for kernel in kernel_functions(scope):
        lines.append("")
        lines.extend(KernelPrinter(declarations).function(kernel))
    if declarations:
        lines.append("")
        lines.extend(sorted(declarations))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class LlvmTarget(Target):
    """`xdsl-opt -t df-llvm`: every CPU device's kernels as an LLVM module, each headed
    by a comment line naming its device (`llvm` is xDSL's own target, of its `llvm`
    dialect)."""

    name = "df-llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        for device, text in emit_llvm_modules(module).items():
            output.write(f"; ----- {device} -----\n")
            output.write(text)
