"""The CPU targets a program compiles for, and which one a command or call means.

`llvm` (the default) compiles one LLVM module per CPU device
(`dflow/backend/llvm/program.py`); `numba` prints numba kernels. GPU devices are
numba's either way. A command's `--target`, or `target=` of `dflow.compile` and
`dflow.jit`, chooses; where neither is given, `$DFLOW_TARGET` does (so a whole test
suite or script runs on the other target unchanged). llvm is the default since it
compiled 4-6x faster than numba and ran as fast or faster on every benchmark of
`bench/kernels.py` and `bench/zoo.py` measured (README, "Compiling to LLVM"). No
xDSL here: `dflow run`'s cached path reads it.
"""

from __future__ import annotations

import os

from dflow.driver.errors import DflowError

CPU_TARGETS = ("numba", "llvm")
"""The targets of CPU devices."""

DEFAULT_CPU_TARGET = "llvm"
"""The target where neither the command, the call nor `$DFLOW_TARGET` names one."""

TARGET_VARIABLE = "DFLOW_TARGET"
"""The environment variable naming the target where a command or call does not."""


def cpu_target(target: str | None = None) -> str:
    """`target`, else `$DFLOW_TARGET`, else `DEFAULT_CPU_TARGET`; one of `CPU_TARGETS`
    or a one-line error naming where the wrong name came from."""
    where = "target"
    if target is None:
        target = os.environ.get(TARGET_VARIABLE) or DEFAULT_CPU_TARGET
        where = TARGET_VARIABLE
    if target not in CPU_TARGETS:
        choices = " or ".join(CPU_TARGETS)
        raise DflowError(f"{where}={target}: the CPU targets are {choices}")
    return target
