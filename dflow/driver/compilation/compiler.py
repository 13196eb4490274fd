"""The compiled path: from a `df` module to loaded numba code, cached on disk.

`lower(module, devices)` runs the lowering pipeline (placement and partition
when several devices are asked for or the module is partitioned already, then
`LOWERING_PIPELINE`) and `compile_module` emits each device's Python module.
`compiled_program(text, module, ...)` keeps the emitted modules in a cache
directory keyed by the program text, the options and the compiler's own source,
so a second `dflow run` of the same file loads them (and numba's cached
machine code next to them) without lowering again.

The lowered module is verified only where `DFLOW_VERIFY=1` (the test suite sets
it): the kernel builders make ops with `create`, skipping xDSL's constructor
checks, so this is the one check of what they built, but it checks the compiler,
not the user's program (verified when parsed), and took 30% of the lowering
(xDSL's IRDL verifier, 25 us per lowered op).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import tempfile
from collections.abc import Collection, Generator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from dflow.backend.llvm.program import LLVM_SUFFIX, llvm_program_files
from dflow.backend.numba.module import CONSTANTS_SUFFIX, emit_module_files
from dflow.dialects.devices import DeviceList
from dflow.dialects.df.symbols import device_modules
from dflow.driver.compilation.cache import (
    SCRATCH_PREFIX,
    SIGNATURES,
    compiler_fingerprint,
    mark_used,
    private_cache_entry,
    program_key,
    stored_signatures,
    trim,
)
from dflow.driver.compilation.devices import devices_for, split_for_devices
from dflow.driver.compilation.timing import Progress, Timings, maybe
from dflow.driver.errors import DflowError, first_line
from dflow.driver.loading import feeds
from dflow.driver.loading.partitioned import entry_names, is_partitioned, whole_entry
from dflow.driver.loading.pipeline import parsed_pipeline
from dflow.driver.loading.source import make_context
from dflow.driver.loading.targets import cpu_target
from dflow.lowering.bufferize import BufferizePass
from dflow.lowering.collapse_loops import CollapseLoopsPass
from dflow.lowering.fuse import FusePass
from dflow.lowering.inline import InlinePass
from dflow.lowering.kernels.loops import LANES
from dflow.lowering.layout import LayoutPass
from dflow.lowering.lower_host import LowerHostPass
from dflow.lowering.plan_buffers import PlanBuffersPass
from dflow.lowering.widen import WidenPass
from dflow.runtime import LoadedProgram, load_program
from dflow.runtime.program import DEVICE_MODULE, uses_numba
from dflow.transforms.prune import PrunePass
from dflow.transforms.schedule import SchedulePass

VERIFY_VARIABLE = "DFLOW_VERIFY"

"""Set to 1, the lowered module is verified before emission (a check of dflow)."""


def lowering_pipeline(schedule: str = "best", mpi: bool = False, target: str = "llvm") -> str:
    """From a (partitioned) graph to host functions and kernels, the ops ordered by
    `df-schedule{strategy=schedule}`. `mpi`: the lowering of a rank's devices under MPI,
    where a sent buffer is kept to the end of its function, so MPI sends straight out of
    the arena (`runtime/mpi.py`), and orders are judged so. `target`: the CPU target,
    whose kernels fold rows in one accumulator (llvm) or in `LANES` (numba); the llvm
    target's convolutions run in NCHWc (`df-layout`), which it generates."""
    hold = ["hold-sends=true"] if mpi else []
    order = [f"strategy={schedule}"] if schedule != "best" else []
    lanes = [f"lanes={LANES}"] if target == "numba" else []
    layout = [LayoutPass.name] if target == "llvm" else []
    return ",".join(
        (
            InlinePass.name,
            PrunePass.name,
            *layout,
            WidenPass.name,
            FusePass.name,
            BufferizePass.name + _options(lanes),
            SchedulePass.name + _options(order + hold),
            PlanBuffersPass.name + _options(hold),
            CollapseLoopsPass.name,
            LowerHostPass.name,
        )
    )


def _options(options: list[str]) -> str:
    return "{" + " ".join(options) + "}" if options else ""


LOWERING_PIPELINE = lowering_pipeline()
"""The default lowering."""


def lower(
    module: ModuleOp,
    devices: DeviceList | None = None,
    timings: Timings | None = None,
    only: Collection[str] | None = None,
    schedule: str = "best",
    target: str = "llvm",
) -> ModuleOp:
    """`module` lowered to host functions and kernels, in place, on `devices` as
    `devices_for` resolved them (None: one device, unless the module is partitioned
    already; `compile_module` resolves a program's pins), its ops ordered by
    the `df-schedule` strategy `schedule`; each step timed into `timings` when given;
    verified where `DFLOW_VERIFY=1`. With `only` (a rank's devices under MPI), the
    other devices' parts are dropped once partitioned and the rest lowered for MPI
    (`lowering_pipeline`)."""
    if devices is not None or is_partitioned(module):
        with maybe(
            timings, "placement and partition (df-inline, df-prune, df-place-devices, df-partition)"
        ):
            module = split_for_devices(module, devices)
    if only is not None:
        keep_parts(module, only)
    context = make_context()
    pipeline = lowering_pipeline(schedule, mpi=only is not None, target=target)
    try:
        for lowering in parsed_pipeline(pipeline).passes:
            with maybe(timings, lowering.name):
                lowering.apply(context, module)
        if os.environ.get(VERIFY_VARIABLE) == "1":
            with maybe(timings, "verify the lowered module"):
                module.verify()
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None
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


def keep_parts(module: ModuleOp, only: Collection[str]) -> None:
    """Drop the device modules of a partitioned `module` that are not for `only`."""
    for device, part in device_modules(module):
        if device not in only:
            part.detach()
            part.erase()


def compile_module(
    module: ModuleOp,
    devices: DeviceList | None = None,
    parallel: bool = False,
    timings: Timings | None = None,
    schedule: str = "best",
    target: str | None = None,
) -> dict[str, str | bytes]:
    """The files of each device's module (the ops ordered by `schedule`: `lower`), by
    name: its Python source (`cpu_0.py`), the binary file of its large constants
    (`cpu_0.bin`) where it has some, and for the llvm `target` its LLVM module
    (`cpu_0.ll`). `devices`: as `devices_for` takes them (None: the program's pins
    decide)."""
    return emitted(
        module, devices_for(module, devices), parallel, timings, schedule=schedule, target=target
    )


def emitted(
    module: ModuleOp,
    devices: DeviceList | None,
    parallel: bool = False,
    timings: Timings | None = None,
    only: Collection[str] | None = None,
    schedule: str = "best",
    target: str | None = None,
) -> dict[str, str | bytes]:
    """`compile_module` for devices resolved already (`devices_for`, once per
    command), of `only` those devices under MPI, for the CPU `target` (`cpu_target`)."""
    target = cpu_target(target)
    with cyclic_gc_paused():
        lowered = lower(module, devices, timings, only, schedule, target)
        if target == "llvm":
            with maybe(timings, "emit LLVM IR and Python (the llvm target)"):
                return llvm_program_files(lowered, parallel)
        with maybe(timings, "emit Python (-t numba)"):
            return emit_module_files(lowered, parallel)


def write_modules(
    sources: Mapping[str, str | bytes], directory: Path, *, private: bool = False
) -> None:
    """Write each device's module into `directory` (its source, and the binary file
    of its large constants and its LLVM module where it has them; stale device
    modules and the files beside them go), each source stamped with the compiler's
    fingerprint (an LLVM module in a `;` comment). Numba's cache of a module's
    kernels holds the library routines they call, inlined, yet is checked against
    that one file only: the stamp makes a new compiler or runtime rewrite the file,
    so the cache is rebuilt instead of running old library code. `private`: the
    folder is made `0700` and the files `0600` (the modules hold the program's
    constants)."""
    try:
        directory.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    except FileExistsError:
        raise DflowError(f"cannot write modules into {directory}: it is a file") from None
    except OSError as error:
        raise DflowError(f"cannot write modules into {directory}: {error.strerror}") from None
    _remove_stale(sources, directory)
    stamp = f"dflow compiler and runtime {compiler_fingerprint()[:16]}\n"
    mode = 0o600 if private else 0o666
    for name, content in sources.items():
        path = directory / name
        if isinstance(content, bytes):
            _write(path, content, mode)
            continue
        stamped = ("; " if name.endswith(LLVM_SUFFIX) else "# ") + stamp + content
        if not path.exists() or path.read_text() != stamped:
            _write(path, stamped.encode(), mode)


def _remove_stale(sources: Mapping[str, str | bytes], directory: Path) -> None:
    """Remove the device modules dflow wrote into `directory` before that `sources`
    lacks, and the files beside them."""
    for module in directory.glob("*_[0-9]*.py"):
        if not _written_by_dflow(module):
            continue
        for beside in (module.with_suffix(CONSTANTS_SUFFIX), module.with_suffix(LLVM_SUFFIX)):
            if beside.name not in sources:
                beside.unlink(missing_ok=True)
        if module.name not in sources:
            module.unlink()


def _written_by_dflow(path: Path) -> bool:
    """Whether `path` is a device module dflow wrote (`cpu_0.py`, headed by its stamp):
    a user's `train_2024.py` in the output folder is left alone."""
    if not DEVICE_MODULE.fullmatch(path.name):
        return False
    with path.open(errors="replace") as file:
        return file.readline().startswith("# dflow compiler and runtime ")


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to `path`, created with `mode` (less the umask)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


def compiled_program(
    text: str,
    module: ModuleOp,
    devices: DeviceList | None = None,
    parallel: bool = False,
    *,
    passes: str = "",
    only: Collection[str] | None = None,
    request: str | None = None,
    target: str | None = None,
) -> LoadedProgram:
    """The loaded program of `text` (parsed as `module`, then run through `passes`),
    compiled once per cache key: the text, the options and the compiler's fingerprint.
    An entry appears whole or not at all: it is written into a private scratch folder
    of the cache root and renamed onto its key (a process that loses the race to
    another uses the winner's), so no run loads a half-written entry, and a compile
    that fails (placement, lowering) removes its scratch folder. Its folders are
    `0700` and its files `0600`: `__pycache__` is made beforehand, or Python's
    bytecode and numba's cache of GPU kernels would make it with the umask's. Beside the
    modules, the signatures of its entry functions (`SIGNATURES`), with which a later
    `dflow run` of the same text runs it without parsing (`dflow.driver.frontdoors.cached_run`).
    The CPU kernels the kernel store lacks are compiled now, in a process per usable
    core (`runtime/parallel_compile.py`; on one core they compile at first call).
    `only`: the devices of this rank, under MPI (`lower`); none, an empty program.
    `devices`: as `devices_for` resolved them; `target`: the CPU target
    (`cpu_target`: None is `$DFLOW_TARGET`'s, else llvm). `request`: the key of a `dflow run`
    (`run_options.request_key`: the text and the devices as asked for, which decide
    `devices`), so that the run's cache entry is found from its options alone."""
    if only is not None and not only:
        return LoadedProgram([])
    part = "" if only is None else "mpi:" + ",".join(sorted(only))
    target = cpu_target(target)
    asked = None if devices is None else str(devices)
    keyed = (text, asked) if request is None else (request, None)
    directory = private_cache_entry(program_key(*keyed, parallel, passes, part, target))
    if directory.exists():
        mark_used(directory)
    else:
        scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=directory.parent))
        try:
            signatures = json.dumps(_entry_signatures(module))
            sources = emitted(module, devices, parallel, only=only, target=target)
            write_modules(sources, scratch, private=True)
            _write(scratch / SIGNATURES, signatures.encode(), 0o600)
            (scratch / "__pycache__").mkdir(mode=0o700)  # else made with the umask's mode
            with contextlib.suppress(OSError):  # another process renamed its entry there first
                scratch.rename(directory)
        finally:  # gone once renamed; removed when the compile failed or lost the race
            shutil.rmtree(scratch, ignore_errors=True)
        trim(keep=directory)
    return _loaded(directory)


def cached_program(
    request: str, parallel: bool, passes: str, target: str | None
) -> tuple[LoadedProgram, dict[str, Any]] | None:
    """The loaded program of a compile asked for by `request` (`run_options.request_key`)
    and the signatures of its entries, when its cache entry exists: what a second
    `dflow.compile` of an ONNX model needs, without importing the model again; None
    where there is no such entry."""
    target = cpu_target(target)
    directory = private_cache_entry(program_key(request, None, parallel, passes, "", target))
    signatures = stored_signatures(directory)
    if not signatures:
        return None
    mark_used(directory)
    return _loaded(directory), signatures


def _loaded(directory: Path) -> LoadedProgram:
    """The program of the cache entry `directory`, its numba kernels that the kernel
    store lacks compiled (in a process per usable core)."""
    program = load_program(directory)
    numba_parts = [p for p in program.parts if p.device.startswith("cpu") and uses_numba(p.module)]
    if numba_parts:  # numba is imported only for them (0.2 s of an llvm target's start)
        from dflow.runtime.parallel_compile import compile_in_parallel  # noqa: PLC0415

        for part in numba_parts:
            compile_in_parallel(part.module)
    return program


def _entry_signatures(module: ModuleOp) -> dict[str, Any]:
    """The signature of each function a run can start at, by name (for a partitioned
    module, each whole function its parts make up): those with a body and tensor
    arguments of static shapes, which a later `dflow run` can feed without parsing."""
    found: dict[str, Any] = {}
    for name in entry_names(module):
        try:
            found[name] = feeds.signature(whole_entry(module, name)).to_json()
        except DflowError:  # a declaration, or an argument no run can feed
            continue
    return found


def compile_kernels(directory: Path, timings: Timings) -> None:
    """numba's compile of the CPU kernels of the modules in `directory`, now rather
    than at their first call, timed per device into `timings`, with a progress line
    when it runs longer than a second; on the llvm target, LLVM's optimization and
    code generation of each device's module first (which importing it would do)."""
    for module in sorted(directory.glob(f"*{LLVM_SUFFIX}")):
        from dflow.runtime.llvm_jit import load_llvm  # noqa: PLC0415 (loads LLVM)

        with timings.measure(f"LLVM: optimize and compile {module.name}"):
            load_llvm(module)
    with timings.measure("import the modules"):
        program = load_program(directory, warm_start=False)
    for part in program.parts:
        if part.device.startswith("gpu"):
            continue  # each @cuda.jit grid compiles at its first launch
        if not uses_numba(part.module):
            continue
        count = len(getattr(part.module, "KERNEL_ARGUMENTS", {}))
        from dflow.runtime.warm_start import compile_kernels  # noqa: PLC0415 (imports numba)

        progress = Progress(count, f"numba: compiling on {part.device}")
        with timings.measure(f"numba: compile {count} CPU kernels of {part.device}"):
            compile_kernels(part.module, progress.before)
        progress.close()
