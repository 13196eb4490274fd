"""The CPU targets a program compiles for, and which one a command or call means.

`numba` (the default) prints numba kernels; `llvm` one LLVM module per CPU device
(`dflow/backend/llvm/program.py`). GPU devices are numba's either way. A command's
`--target`, or `target=` of `dflow.compile` and `dflow.jit`, chooses; where neither
is given, `$DFLOW_TARGET` does (so a whole test suite or script runs on the llvm
target unchanged). No xDSL here: `dflow run`'s cached path reads it.
"""

from __future__ import annotations

import os

from dflow.driver.errors import DflowError

CPU_TARGETS = ("numba", "llvm")
"""The targets of CPU devices, the default first."""

TARGET_VARIABLE = "DFLOW_TARGET"
"""The environment variable naming the target where a command or call does not."""


def cpu_target(target: str | None = None) -> str:
    """`target`, else `$DFLOW_TARGET`, else numba; one of `CPU_TARGETS` or a one-line
    error naming where the wrong name came from."""
    where = "target"
    if target is None:
        target, where = os.environ.get(TARGET_VARIABLE) or CPU_TARGETS[0], TARGET_VARIABLE
    if target not in CPU_TARGETS:
        choices = " or ".join(CPU_TARGETS)
        raise DflowError(f"{where}={target}: the CPU targets are {choices}")
    return target
