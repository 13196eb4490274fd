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

import atexit
import gc
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from dflow.analysis.function_schedule import plan_entry
from dflow.backend.numba.module import emit_modules, module_file_name
from dflow.driver.errors import DflowError, first_line
from dflow.driver.multidevice import devices_for, is_partitioned, split_for_devices
from dflow.driver.pipeline import apply_pipeline
from dflow.runtime import Program, load_program
from dflow.runtime.library.openblas import numpy_openblas
from dflow.runtime.program import DEVICE_MODULE

LOWERING_PIPELINE = "df-inline,df-prune,df-fuse,df-bufferize,df-plan-buffers,df-lower-host"
"""From a (partitioned) graph to host functions and kernels."""


def lower(module: ModuleOp, devices: str | None = None) -> ModuleOp:
    """`module` lowered to host functions and kernels, in place, on `devices` (by
    default those its pins name, else cpu:0; see `devices_for`)."""
    devices = devices_for(module, devices)
    if devices is not None or is_partitioned(module):
        module = split_for_devices(module, devices)
    try:
        apply_pipeline(module, LOWERING_PIPELINE)
        module.verify()
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None
    return module


PLAN_FIGURES = ("arena_bytes", "lower_bound_bytes", "naive_bytes")
"""What `dflow plan` reports of each device's memory plan."""


def memory_figures(
    module: ModuleOp, entry: str, devices: str | None = None
) -> dict[str, dict[str, int]]:
    """Per device, the arena of `entry`, its lower bound and the naive size in bytes
    (`dflow plan`), once placed and partitioned on `devices`; `module` is changed."""
    module = split_for_devices(module, devices)
    try:
        plans = plan_entry(module, entry)
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None
    return {
        device: {name: getattr(memory, name) for name in PLAN_FIGURES}
        for device, memory in plans.items()
    }


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


def write_modules(sources: dict[str, str], directory: Path, *, private: bool = False) -> None:
    """Write each device's module into `directory` (stale device modules go), each
    stamped with the compiler's fingerprint. Numba's cache of a module's kernels
    holds the library routines they call, inlined, yet is checked against that one
    file only: the stamp makes a new compiler or runtime rewrite the file, so the
    cache is rebuilt instead of running old library code. `private`: the folder is
    made `0700` and the files `0600` (the modules hold the program's constants)."""
    try:
        directory.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    except FileExistsError:
        raise DflowError(f"cannot write modules into {directory}: it is a file") from None
    except OSError as error:
        raise DflowError(f"cannot write modules into {directory}: {error.strerror}") from None
    stamp = f"# dflow compiler and runtime {_compiler_fingerprint()[:16]}\n"
    for stale in directory.glob("*_[0-9]*.py"):
        if stale.name not in sources and _written_by_dflow(stale):
            stale.unlink()
    for name, source in sources.items():
        path = directory / name
        stamped = stamp + source
        if not path.exists() or path.read_text() != stamped:
            _write_text(path, stamped, 0o600 if private else 0o666)


def _written_by_dflow(path: Path) -> bool:
    """Whether `path` is a device module dflow wrote (`cpu_0.py`, headed by its stamp):
    a user's `train_2024.py` in the output folder is left alone."""
    if not DEVICE_MODULE.fullmatch(path.name):
        return False
    with path.open(errors="replace") as file:
        return file.readline().startswith("# dflow compiler and runtime ")


def _write_text(path: Path, text: str, mode: int) -> None:
    """Write `text` to `path`, created with `mode` (less the umask)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "w") as file:
        file.write(text)


def cache_root() -> Path:
    """`$DFLOW_CACHE_DIR`, else `~/.cache/dflow`."""
    configured = os.environ.get("DFLOW_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "dflow"


@cache
def _compiler_fingerprint() -> str:
    """A hash of the source of the whole `dflow` package (placement, the pipelines
    and the driver decide the emitted modules as much as the lowering and the
    runtime do) and of the BLAS library the CPU kernels link
    (`runtime/library/openblas.py`), so that a changed compiler or NumPy build
    recompiles."""
    digest = hashlib.sha256(str(numpy_openblas()).encode())
    package = Path(__file__).resolve().parent.parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def compiled_program(
    text: str,
    module: ModuleOp,
    devices: str | None = None,
    parallel: bool = False,
    *,
    passes: str = "",
) -> Program:
    """The loaded program of `text` (parsed as `module`, then run through `passes`),
    compiled once per cache key: the text, the options and the compiler's fingerprint.
    An entry appears whole or not at all: it is written into a private scratch folder
    of the cache root and renamed onto its key (a process that loses the race to
    another uses the winner's), so no run loads a half-written entry."""
    options = (text, devices or "", str(parallel), passes, _compiler_fingerprint())
    key = hashlib.sha256("\0".join(options).encode()).hexdigest()[:24]
    directory = private_cache_entry(key)
    if not directory.exists():
        scratch = Path(tempfile.mkdtemp(prefix=".new-", dir=directory.parent))
        write_modules(compile_module(module, devices, parallel), scratch, private=True)
        try:
            scratch.rename(directory)
        except OSError:  # another process renamed its entry there first
            shutil.rmtree(scratch, ignore_errors=True)
    return load_program(directory)


def private_cache_entry(key: str) -> Path:
    """The cache folder of `key`, under a root only this user can write; it may not
    exist yet. The root and the entry must be this user's and not group- or
    world-writable, and everything in the entry this user's (numba writes its cache
    files with the umask's modes, harmless inside a `0700` folder): an entry that
    another user could have written is never imported (its modules would run as this
    user) but removed, with a warning, and compiled afresh; under a root that others
    can write, in a private folder removed at exit."""
    root = _cache_root_made()
    directory = root / key
    foreign_root = _foreign(root)
    foreign = foreign_root or _foreign_entry(directory)
    if foreign is None:
        return directory
    print(
        f"dflow: warning: {foreign} could have been written by another user (not yours, or "
        "group- or world-writable); not importing it, compiling afresh",
        file=sys.stderr,
    )
    if foreign_root is None:
        shutil.rmtree(directory, ignore_errors=True)
        if not directory.exists():
            return directory
    scratch = Path(tempfile.mkdtemp(prefix="dflow-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    return scratch / key


def _cache_root_made() -> Path:
    """The cache root, made `0700` (and made so again if an older dflow left it open
    to reading; a root that is not this user's is left to `_foreign`)."""
    root = cache_root()
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        root = root.resolve()
        if root.stat().st_uid == os.getuid():
            root.chmod(0o700)
    except OSError as error:
        raise DflowError(
            f"cannot use the cache folder {root}: {error.strerror or error}; "
            "set DFLOW_CACHE_DIR to a folder you can write"
        ) from None
    if not root.is_dir():
        raise DflowError(f"cannot use the cache folder {root}: it is not a folder")
    return root


def _foreign_entry(directory: Path) -> Path | None:
    """The entry folder if others could write it, else the first thing in it that is
    a link or not this user's; None for an entry that does not exist."""
    if not directory.exists() and not directory.is_symlink():
        return None
    if _foreign(directory) is not None:
        return directory
    for path in sorted(directory.rglob("*")):
        if path.is_symlink() or path.lstat().st_uid != os.getuid():
            return path
    return None


def _foreign(path: Path) -> Path | None:
    """`path` if it is a link, not this user's, or writable by group or others."""
    status = path.lstat()
    if path.is_symlink() or status.st_uid != os.getuid() or status.st_mode & 0o022:
        return path
    return None
