"""Warm start: load a CPU module's cached kernels before their first call.

A numba dispatcher loads its machine code from the on-disk cache only when it is
first called, and that first load refreshes numba's whole compiler registry
(every typing and lowering table, which imports SciPy's linear algebra and cffi):
about 0.2 s of a 0.6 s start on this project's machines, spent only to *compile*
code, which a cached program never does. Here each kernel's cache entry is looked
up for the argument types the host function will pass (`KERNEL_ARGUMENTS`, which
the numba target writes: every CPU kernel takes C-contiguous arrays) and
installed on its dispatcher, as numba's `Dispatcher.compile` does after its own
cache hit, but with only what running needs set up first: the target context and
the reference-counting runtime (NRT) whose symbols the code links against.

This goes below numba's public API (a dispatcher's `_cache`, `add_overload`,
`rtsys`), so it is best effort: a kernel that is not cached yet, whose source
changed, or that anything here fails for, is left to numba's own lazy path on its
first call, which compiles or loads it as usual. `tests/test_warm_start.py`
checks in a fresh process that the registries stay unloaded, so a numba release
that changes these internals shows up as a failing test, not a silent slowdown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher, cpu_target
from numba.core.runtime.nrt import rtsys

KernelArguments = Mapping[str, Sequence[tuple[str, int]]]
"""Per CPU kernel, its arrays' (dtype, rank) (`KERNEL_ARGUMENTS`)."""
LibraryCalls = Mapping[str, Sequence[Sequence[tuple[str, int]]]]
"""Per library routine, the (dtype, rank) of its arguments in each call signature
(rank -1: a scalar; `LIBRARY_CALLS`)."""


def preload_kernels(module: ModuleType) -> int:
    """Install the cached machine code of `module`'s CPU kernels, and of the
    library routines it calls from Python (`LIBRARY_CALLS`), on their dispatchers;
    the number of kernels and routine signatures loaded (those left load lazily)."""
    wanted = [
        (getattr(module, name, None), parameters)
        for name, parameters in getattr(module, "KERNEL_ARGUMENTS", {}).items()
    ]
    library = getattr(module, "lib", None)
    calls: LibraryCalls = getattr(module, "LIBRARY_CALLS", {})
    wanted += [
        (getattr(library, routine, None), parameters)
        for routine, signatures in calls.items()
        for parameters in signatures
    ]
    if not wanted:
        return 0
    loaded = 0
    with global_compiler_lock:
        context = cpu_target.target_context
        rtsys.initialize(context)  # pyright: ignore[reportUnknownMemberType]
        for dispatcher, parameters in wanted:
            if isinstance(dispatcher, CPUDispatcher) and _load(dispatcher, parameters, context):
                loaded += 1
    return loaded


def _load(dispatcher: Any, parameters: Sequence[tuple[str, int]], context: Any) -> bool:
    """Whether the cache of `dispatcher` (a `CPUDispatcher`, typed `Any` for its
    private parts) held code for arrays of these (dtype, rank)."""
    signature = _signature(parameters)
    if signature in dispatcher.overloads:
        return True
    try:
        result = dispatcher._cache._load_overload(signature, context)
    except Exception:  # any failure leaves the kernel to numba's lazy path
        return False
    if result is None:
        return False
    context.insert_user_function(result.entry_point, result.fndesc, [result.library])
    dispatcher.add_overload(result)
    return True


def compile_kernels(
    module: ModuleType, before: Callable[[int, str], None] | None = None
) -> list[str]:
    """Compile (or load from numba's cache) every CPU kernel of `module` for the
    arrays its host function passes, now rather than at its first call; `before`
    is told each kernel's index and name first. The names of the kernels compiled;
    GPU kernels compile at their first launch."""
    return compile_named(module, list(getattr(module, "KERNEL_ARGUMENTS", {})), before)


def compile_named(
    module: ModuleType, names: Sequence[str], before: Callable[[int, str], None] | None = None
) -> list[str]:
    """`compile_kernels` of the CPU kernels `names` of `module` only."""
    arguments: KernelArguments = getattr(module, "KERNEL_ARGUMENTS", {})
    compiled: list[str] = []
    for index, name in enumerate(names):
        dispatcher = getattr(module, name, None)
        if not isinstance(dispatcher, CPUDispatcher):
            continue
        if before is not None:
            before(index, name)
        dispatcher.compile(_signature(arguments[name]))  # pyright: ignore[reportUnknownMemberType]
        compiled.append(name)
    return compiled


def _signature(parameters: Sequence[tuple[str, int]]) -> tuple[Any, ...]:
    """The numba argument types of C-contiguous arrays of these (dtype, rank), and
    of scalars of these dtypes where the rank is -1."""
    return tuple(
        numba.from_dtype(np.dtype(dtype))
        if rank < 0
        else types.Array(numba.from_dtype(np.dtype(dtype)), rank, "C")
        for dtype, rank in parameters
    )
