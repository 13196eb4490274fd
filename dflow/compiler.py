"""The compiled path: from a `df` module to loaded numba code, cached on disk.

`lower(module, devices)` runs the lowering pipeline (placement and partition
when several devices are asked for or the module is partitioned already, then
`LOWERING_PIPELINE`) and `compile_module` emits each device's Python module.
`compiled_program(text, module, ...)` keeps the emitted modules in a cache
directory keyed by the program text, the options and the compiler's own source,
so a second `dflow run` of the same file loads them (and numba's cached
machine code next to them) without lowering again.
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Generator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from dflow.errors import DflowError
from dflow.multidevice import is_partitioned, split_for_devices
from dflow.pipeline import apply_pipeline
from lowering.emit_numba import emit_modules, module_file_name
from runtime import Program, load_program
from runtime.library.openblas import numpy_openblas

LOWERING_PIPELINE = "df-inline,df-prune,df-fuse,df-bufferize,df-plan-buffers,df-lower-host"
"""From a (partitioned) graph to host functions and kernels."""

_COMPILER_PACKAGES = ("dialects", "lowering", "runtime")


def lower(module: ModuleOp, devices: str | None = None) -> ModuleOp:
    """`module` lowered to host functions and kernels, in place."""
    if devices is not None or is_partitioned(module):
        module = split_for_devices(module, devices)
    try:
        apply_pipeline(module, LOWERING_PIPELINE)
        module.verify()
    except DiagnosticException as error:
        raise DflowError(str(error).splitlines()[0]) from None
    return module


@contextmanager
def cyclic_gc_paused() -> Generator[None, None, None]:
    """Python's cycle collector paused while the compiler runs: IR is a web of
    cycles (ops, blocks, regions and uses point at each other) that the compiler
    keeps alive anyway, and collecting generations of it mid-pipeline took 20-35%
    of the lowering of large graphs. What becomes garbage is collected afterwards,
    at the next automatic collection."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def compile_module(
    module: ModuleOp, devices: str | None = None, parallel: bool = False
) -> dict[str, str]:
    """The Python source of each device's module, by file name (`cpu_0.py`)."""
    with cyclic_gc_paused():
        sources = emit_modules(lower(module, devices), parallel)
    return {module_file_name(device): source for device, source in sources.items()}


def write_modules(sources: dict[str, str], directory: Path) -> None:
    """Write each device's module into `directory` (stale device modules go), each
    stamped with the compiler's fingerprint. Numba's cache of a module's kernels
    holds the library routines they call, inlined, yet is checked against that one
    file only: the stamp makes a new compiler or runtime rewrite the file, so the
    cache is rebuilt instead of running old library code."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = f"# dflow compiler and runtime {_compiler_fingerprint()[:16]}\n"
    for stale in directory.glob("*_[0-9]*.py"):
        if stale.name not in sources:
            stale.unlink()
    for name, source in sources.items():
        path = directory / name
        stamped = stamp + source
        if not path.exists() or path.read_text() != stamped:
            path.write_text(stamped)


def cache_root() -> Path:
    """`$DFLOW_CACHE_DIR`, else `~/.cache/dflow`."""
    configured = os.environ.get("DFLOW_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "dflow"


@cache
def _compiler_fingerprint() -> str:
    """A hash of the compiler's and runtime's source and of the BLAS library the CPU
    kernels link (`runtime/library/openblas.py`), so that a changed compiler or
    NumPy build recompiles."""
    digest = hashlib.sha256(str(numpy_openblas()).encode())
    root = Path(__file__).resolve().parent.parent
    for package in _COMPILER_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def compiled_program(
    text: str, module: ModuleOp, devices: str | None = None, parallel: bool = False
) -> Program:
    """The loaded program of `text` (parsed as `module`), compiled once per cache key."""
    key = hashlib.sha256(
        "\0".join((text, devices or "", str(parallel), _compiler_fingerprint())).encode()
    ).hexdigest()[:24]
    directory = cache_root() / key
    if not any(directory.glob("*_[0-9]*.py")):
        write_modules(compile_module(module, devices, parallel), directory)
    return load_program(directory)
