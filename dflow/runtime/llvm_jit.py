"""The llvm target's machine code: a device's LLVM module compiled, cached as object
files, and its segments handed to Python as `ctypes` callables.

An emitted module of the llvm target (`backend/llvm/program.py`) loads its LLVM IR,
`cpu_0.ll` beside it, with `load_llvm`. Each of its units (a kernel's, the host's) is
optimized at -O3 with LLVM's new pass manager for this machine's CPU and features,
and its object code (`TargetMachine.emit_object`) kept in the kernel store under a
folder named after the digest of the unit's IR, LLVM's version and this CPU
(`cache_root.store_folder`: private like the rest of the store; where it is not, the
code is compiled in memory only). A cache hit loads the object into the JIT without
parsing or optimizing again; the units of a module are linked in one MCJIT engine.
Segments are C functions of NumPy array objects (`ctypes` releases the GIL around
each call, so devices in threads run at once); the CBLAS routines of NumPy's OpenBLAS,
C's math library and POSIX threads resolve by name. Nothing here imports numba: a
program whose kernels are all LLVM's starts without it.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import llvmlite.binding
import numpy as np

from dflow.runtime.blas_threads import usable_cores
from dflow.runtime.cache_root import store_folder
from dflow.runtime.library.openblas import numpy_openblas

llvm: Any = llvmlite.binding  # untyped

OPTIMIZATION_LEVEL = 3
"""LLVM's speed level for every module (-O3)."""

LOOP_UNROLLING = False
"""Whether LLVM unrolls loops (besides the vectorizer's interleaving). Off: it halves
the MLP training step's compile (245 -> 131 ms for its 19 kernels) and the kernels
ran as fast within the machine's noise (chain, MLP step, conv net, softmax and
transcendental rows, 2026-11-28)."""

OBJECT_FILE = "module.o"
"""The object code's file in its store folder."""

UNIT = "; ===== unit "
"""The line that begins each unit of an emitted module (`backend/llvm/program.py`)."""

_lock = threading.Lock()
_engines: dict[str, LlvmLibrary] = {}
"""Each module loaded in this process, by digest: a program loaded twice shares it."""


@dataclass
class LlvmLibrary:
    """One module's machine code in this process, and its functions."""

    engine: Any
    functions: dict[str, Any] = field(default_factory=dict[str, Any])

    def set_threads(self, name: str) -> None:
        """Set the module's thread count, global `name` (an i64), to the cores this
        process may use (its affinity: `taskset` and cgroups' CPU sets count)."""
        address = self.engine.get_global_value_address(name)
        ctypes.c_int64.from_address(address).value = usable_cores()

    def function(self, name: str, arity: int) -> Any:
        """The C function `name` of `arity` pointer arguments, as a `ctypes` callable
        taking addresses (Python ints)."""
        return self._bound(name, arity, ctypes.c_void_p)

    def array_function(self, name: str, arity: int) -> Any:
        """The C function `name` of `arity` NumPy arrays, as a `ctypes` callable taking
        the arrays themselves: it receives each array object's address and reads its
        data pointer at `ARRAY_DATA_OFFSET` (NumPy's `PyArray_DATA`). A call costs half
        a microsecond, where taking three addresses with `.ctypes.data` costs three.
        (`ctypes` releases the GIL around the call; the caller holds the arrays.)"""
        return self._bound(name, arity, ctypes.py_object)

    def _bound(self, name: str, arity: int, parameter: Any) -> Any:
        key = f"{name}/{parameter.__name__}"
        found = self.functions.get(key)
        if found is None:
            address = self.engine.get_function_address(name)
            if not address:
                raise LookupError(f"the LLVM module has no function {name}")
            prototype = ctypes.CFUNCTYPE(None, *[parameter] * arity)
            found = self.functions[key] = prototype(address)
        return found


ARRAY_DATA_OFFSET = 16
"""The byte offset of the data pointer in a NumPy array object, after its header
(`ob_refcnt`, `ob_type`) as NumPy's C API lays out `PyArrayObject_fields` (stable
since NumPy 1.7), on a 64-bit platform; the llvm target's segments read it there
(`backend/llvm/program.py`'s `DATA_OFFSET`)."""


def _check_array_layout() -> None:
    """Fail loudly, not by reading wrong data, where arrays are laid out otherwise."""
    probe = np.empty(3, np.float64)
    if ctypes.c_void_p.from_address(id(probe) + ARRAY_DATA_OFFSET).value != probe.ctypes.data:
        raise RuntimeError(
            "dflow: the llvm target needs NumPy's array layout of 64-bit platforms "
            f"(the data pointer at byte {ARRAY_DATA_OFFSET}); use --target numba"
        )


_check_array_layout()


def target_machine() -> Any:
    """The host's target machine at `OPTIMIZATION_LEVEL` (LLVM initialized once)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    features = llvm.get_host_cpu_features().flatten()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=features, opt=OPTIMIZATION_LEVEL, jit=True
    )


def machine_digest(text: str) -> str:
    """What the object code of `text` depends on: the IR, LLVM's version, this CPU and
    its features, and the optimization level."""
    host = (llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
    level = f"{OPTIMIZATION_LEVEL}{'u' if LOOP_UNROLLING else ''}"
    parts = (text, ".".join(map(str, llvm.llvm_version_info)), *host, level)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _optimized_module(text: str, machine: Any) -> Any:
    module = llvm.parse_assembly(text)
    module.verify()
    module.triple, module.data_layout = machine.triple, str(machine.target_data)
    tuning = llvm.create_pipeline_tuning_options(speed_level=OPTIMIZATION_LEVEL)
    tuning.loop_unrolling = LOOP_UNROLLING
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    return module


def optimized(text: str, machine: Any) -> str:
    """`text` as LLVM optimizes it for `machine` (to see what it made of a loop)."""
    return str(_optimized_module(text, machine))


def compile_object(text: str, machine: Any) -> bytes:
    """`text` parsed, verified, optimized for `machine` and compiled to object code."""
    return machine.emit_object(_optimized_module(text, machine))


def _object_path(text: str) -> Path | None:
    """Where the store keeps the object code of `text` (None: not in a private store)."""
    folder = store_folder("llvm\0" + machine_digest(text))
    return None if folder is None else folder / OBJECT_FILE


def _stored_object(text: str) -> bytes | None:
    """The object code of `text` from the store, marked used, or None."""
    path = _object_path(text)
    if path is None or not path.is_file():
        return None
    with contextlib.suppress(OSError):
        os.utime(path.parent)  # used: the cache's trim keeps it longer
    return path.read_bytes()


def _new_object(text: str, machine: Any) -> bytes:
    """`text` compiled and stored (written `0600` under a temporary name and renamed,
    so no process reads half of it)."""
    code = compile_object(text, machine)
    path = _object_path(text)
    if path is not None:
        _store(path, code)
    return code


def _store(path: Path, code: bytes) -> None:
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        scratch = path.with_name(f".{os.getpid()}-{threading.get_ident()}.o")
        descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(code)
        scratch.replace(path)
    except OSError:
        pass  # an unwritable store: the code stays in memory, as for a foreign one


@cache
def _link_openblas() -> None:
    """NumPy's OpenBLAS in LLVM's symbols, where NumPy has one (else a module
    calling a product fails to load, naming the symbol)."""
    library = numpy_openblas()
    if library is not None:
        llvm.load_library_permanently(str(library))


def load_llvm(path: str | Path) -> LlvmLibrary:
    """The machine code of the LLVM module at `path` (an emitted `cpu_0.ll`)."""
    text = Path(path).read_text()
    digest = hashlib.sha256(text.encode()).hexdigest()
    with _lock:
        found = _engines.get(digest)
        if found is None:
            found = _engines[digest] = _loaded(text)
        return found


def units(text: str) -> list[str]:
    """The units of an emitted module (each begun by a `UNIT` line), which compile
    apart; the whole text where it has none."""
    parts = text.split("\n" + UNIT)
    if len(parts) == 1:
        return [text]
    return [part.partition("\n")[2] for part in parts[1:]]


def _loaded(text: str) -> LlvmLibrary:
    """Each unit's object code, from the store or compiled now (and stored), all linked
    into one JIT: an edit of a program recompiles only the kernels it changed.
    (llvmlite serializes its calls, so compiling units in threads gains nothing.)"""
    machine = target_machine()
    codes = [_stored_object(unit) or _new_object(unit, machine) for unit in units(text)]
    return library_of(codes, machine)


def library_of(codes: list[bytes], machine: Any) -> LlvmLibrary:
    """Object codes for `machine`, loaded into a JIT of their own and linked to each
    other, C's math library and NumPy's OpenBLAS, by name."""
    _link_openblas()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    for code in codes:
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    return LlvmLibrary(engine)
