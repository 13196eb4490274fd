"""The kernel store: CPU kernels cached by what they are, not by the program they
came from.

An emitted module decorates each CPU kernel with `@_kernel("<digest>")`
(`kernel` here), where the digest, the compiler's (`backend/numba/cpu_kernel.py`),
hashes the kernel's own text (its arguments, body and numba options; not its
name) with the module header and scalar helpers it can call. Its machine code is
kept by numba's cache in a folder of the store named after that digest and the
runtime's fingerprint (`runtime_fingerprint`: the library code that numba compiles
into a kernel, numba's and Python's versions, the BLAS library). So a kernel
compiled once serves every program that contains it: in this process the same
dispatcher is handed out again, in a later one its code is loaded from the store;
and editing one op of a program recompiles only the kernels the edit changed.

The store is `$DFLOW_CACHE_DIR/kernels` (default `~/.cache/dflow/kernels`) and is
private like the compile cache (`dflow.driver.compilation.cache`): its folders are made
`0700` and its files `0600`, and a store or kernel folder another user could have
written is never read (numba unpickles what it finds there, so its code would run
as this user): such a kernel is compiled in memory only, after one warning.

numba writes its index (`.nbi`) and code (`.nbc`) files with `open()`, so with the
umask's modes (`0644` under the usual `0022`). They are made `0600` as they are
created, by numba's own hook for it (`IndexDataCacheFile._open_for_write`, whose
temporary file `_PrivateCacheFile` opens with mode `0600`), not by setting the
umask around numba's writes: the umask is the whole process's, and the devices of a
run compile in threads of their own, so another thread creating a file meanwhile
(a user's, a trace) would get the narrowed umask too, or restore the wide one in the
middle of a write here; and not by a chmod after the write, which would leave the
file readable by others for a moment under its final name.

numba's `FunctionCache` is told where to keep a kernel by subclassing its private
`CompileResultCacheImpl` and `_CacheLocator` (checked with numba 0.68 by
`tests/test_kernel_cache.py`), as `runtime/warm_start.py` goes below its public
API to load cached code.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import uuid
from collections.abc import Callable, Generator
from functools import cache
from pathlib import Path
from types import FunctionType
from typing import Any, BinaryIO

import numba
from numba.core import caching

from dflow.runtime.cache_root import sources_digest, store_folder
from dflow.runtime.library.openblas import numpy_openblas

_numba_caching: Any = caching  # untyped, and what is used of it is private

KERNEL_OPTIONS: dict[str, Any] = {
    "error_model": "numpy",
    "nogil": True,
    "no_cfunc_wrapper": True,
}
"""numba's options for every CPU kernel: NumPy's floating-point error model (a
division by zero gives inf, not an exception), the GIL released while it runs
(devices run in threads), and no C callback wrapper (a kernel is called from Python
only; the wrapper cost 4 ms of the 40 ms numba spends on the smallest kernel)."""

_dispatchers: dict[str, Any] = {}
"""The dispatcher of each kernel digest made in this process."""


@cache
def runtime_fingerprint() -> str:
    """A hash of what a kernel's machine code holds besides its own text: the
    runtime's source (its library is compiled into the kernels that call it), the
    versions of numba and Python, and the BLAS library the matrix products link."""
    package = Path(__file__).resolve().parent
    return sources_digest(package, numba.__version__, sys.version, str(numpy_openblas()))


def kernel(digest: str, **options: Any) -> Callable[[FunctionType], Any]:
    """The decorator of the CPU kernel whose text hashes to `digest`: a numba
    dispatcher (`KERNEL_OPTIONS` and `options`, e.g. `parallel=True`) cached in the
    store, or the one this process made already for the same digest."""

    def decorate(function: FunctionType) -> Any:
        found = _dispatchers.get(digest)
        if found is not None:
            return found
        # numba's cached code names the module of its function, and imports it when
        # loaded: a program's module has a name of its own, this one every process has.
        function.__module__ = __name__
        dispatcher: Any = numba.njit(**KERNEL_OPTIONS, **options)(function)
        folder = kernel_folder(digest)
        if folder is not None:
            dispatcher._cache = _KernelCache(function, folder)  # what `cache=True` sets
        _dispatchers[digest] = dispatcher
        return dispatcher

    return decorate


def kernel_folder(digest: str) -> Path | None:
    """The store's folder for the kernel of `digest` under this runtime (it may not
    exist yet), or None where the store or that folder is not private to this user."""
    return store_folder(f"{digest}\0{runtime_fingerprint()}")


class _StoreLocator(_numba_caching._CacheLocator):
    """numba's cache of one kernel: its folder in the store, whose name is the
    kernel's content, so it is its source stamp too."""

    def __init__(self, folder: Path):
        self.folder = folder

    def ensure_cache_path(self) -> None:
        """The kernel's folder, `0700`, and the store and the cache root again where
        `dflow cache clear` removed them while this process ran."""
        for folder in (self.folder.parent.parent, self.folder.parent, self.folder):
            folder.mkdir(mode=0o700, exist_ok=True)

    def get_cache_path(self) -> str:
        return str(self.folder)

    def get_source_stamp(self) -> str:
        return self.folder.name

    def get_disambiguator(self) -> str:
        return ""

    @classmethod
    def from_function(cls, py_func: Any, py_file: Any) -> None:
        """Never picked by numba's search for the locator of other functions."""


class _KernelCacheImpl(_numba_caching.CompileResultCacheImpl):
    """numba's compile-result caching with its files named `kernel-*` in the kernel's
    folder, instead of after the function and source file it finds."""

    def __init__(self, py_func: FunctionType, folder: Path):  # no super(): it searches
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _StoreLocator(folder)
        self._filename_base = self.get_filename_base("kernel", getattr(sys, "abiflags", ""))


class _PrivateCacheFile(_numba_caching.IndexDataCacheFile):
    """numba's index and code files of a kernel, each created `0600` (numba's own
    `open()` leaves them to the umask)."""

    @contextlib.contextmanager
    def _open_for_write(self, filepath: str) -> Generator[BinaryIO]:
        """numba's write: a temporary file beside `filepath`, renamed onto it once
        written (another process may read the old one meanwhile), but opened with
        mode `0600` whatever the umask."""
        temporary = f"{filepath}.tmp.{uuid.uuid4().hex[:16]}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as file:
                yield file
            Path(temporary).replace(filepath)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


class _KernelCache(_numba_caching.FunctionCache):
    """numba's function cache of a kernel, kept in its store folder, its files
    private; a load that finds code marks the folder used (for the cache's
    least-recently-used trim)."""

    def __init__(self, py_func: FunctionType, folder: Path):
        self._impl_class = functools.partial(_KernelCacheImpl, folder=folder)
        self.folder = folder
        super().__init__(py_func)  # pyright: ignore[reportUnknownMemberType]
        self._cache_file = _PrivateCacheFile(
            cache_path=str(folder),
            filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp(),
        )

    def _load_overload(self, sig: Any, target_context: Any) -> Any:
        found = _numba_caching.FunctionCache._load_overload(self, sig, target_context)
        if found is not None:
            with contextlib.suppress(OSError):
                os.utime(self.folder)
        return found
