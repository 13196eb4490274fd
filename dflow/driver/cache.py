"""The compile cache: one folder per compiled program and one per compiled CPU
kernel, private to its user, kept under a size bound.

Entries live under `$DFLOW_CACHE_DIR` (default `~/.cache/dflow`): a program's
folder is named after its key (the program's text, the options, the pipeline and
the compiler's fingerprint; `compiler.compiled_program`) and holds each device's
module; a kernel's folder, in `kernels/`, is named after its content and holds
numba's cache of its machine code (`dflow.runtime.kernel_cache`), which every
program containing that kernel uses. The cache is private: its folders are made `0700`
and an entry another user could have written is never imported. It keeps under
`$DFLOW_CACHE_MAX_BYTES` (default 1 GiB): after writing a program's entry, the
least recently used others (programs and kernels) go until the rest fit.
`dflow cache info` and `dflow cache clear` report and empty it.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dflow.driver.errors import DflowError
from dflow.runtime.cache_root import STORE, cache_root, sources_digest
from dflow.runtime.library.openblas import numpy_openblas

DEFAULT_BOUND = 1 << 30
"""Bytes the cache keeps under when `$DFLOW_CACHE_MAX_BYTES` is not set."""
SCRATCH_PREFIX = ".new-"
"""Entries are written into `.new-*` folders, then renamed onto their key."""
SCRATCH_GRACE_S = 3600.0
"""A scratch folder this recent may be another process's compile in progress."""
ENTRY = re.compile(r"[0-9a-f]{24}")
"""The folder name of an entry: its key."""
SIGNATURES = "signatures.json"
"""The file of an entry that holds its entry functions' signatures (`dflow.driver.arrays`)."""


def program_key(text: str, devices: str | None, parallel: bool, passes: str, part: str = "") -> str:
    """The key of a compiled program: its text, the options it was compiled with
    (`part`: which devices of it, for one MPI rank) and the compiler's fingerprint."""
    options = (text, devices or "", str(parallel), passes, part, compiler_fingerprint())
    return hashlib.sha256("\0".join(options).encode()).hexdigest()[:24]


@cache
def compiler_fingerprint() -> str:
    """A hash of the source of the whole `dflow` package (placement, the pipelines
    and the driver decide the emitted modules as much as the lowering and the
    runtime do) and of the BLAS library the CPU kernels link
    (`runtime/library/openblas.py`), so that a changed compiler or NumPy build
    recompiles (the package is hashed, not imported: 3 ms for its 120 files)."""
    package = Path(__file__).resolve().parent.parent
    return sources_digest(package, str(numpy_openblas()))


def bound() -> int:
    """`$DFLOW_CACHE_MAX_BYTES`, else `DEFAULT_BOUND`."""
    configured = os.environ.get("DFLOW_CACHE_MAX_BYTES", "")
    try:
        return int(configured) if configured else DEFAULT_BOUND
    except ValueError:
        raise DflowError(f"DFLOW_CACHE_MAX_BYTES={configured!r} is not a number of bytes") from None


@dataclass(frozen=True)
class Entry:
    """One compiled program or kernel in the cache: its folder, bytes and last use."""

    path: Path
    bytes: int
    used: float

    @property
    def is_kernel(self) -> bool:
        return self.path.parent.name == STORE


def entries(root: Path) -> list[Entry]:
    """The entries under `root`, programs and kernels (and scratch folders left by
    an interrupted write), least recently used first."""
    found: list[Entry] = []
    for parent in (root, root / STORE):
        if not parent.is_dir() or parent.is_symlink():
            continue
        for folder in parent.iterdir():
            if folder.is_dir() and not folder.is_symlink() and _is_ours(folder.name):
                entry = _entry(folder)
                if entry is not None:
                    found.append(entry)
    return sorted(found, key=lambda entry: entry.used)


def _entry(folder: Path) -> Entry | None:
    """The entry in `folder`; None when another process renames or removes it while
    it is measured (its scratch folder becoming an entry, a trim of its own)."""
    try:
        size = sum(f.lstat().st_size for f in folder.rglob("*") if f.is_file())
        return Entry(folder, size, folder.stat().st_mtime)
    except OSError:
        return None


def _in_progress(entry: Entry) -> bool:
    """A scratch folder written to in the last `SCRATCH_GRACE_S` seconds: another
    process may be compiling into it."""
    scratch = entry.path.name.startswith(SCRATCH_PREFIX)
    return scratch and time.time() - entry.used < SCRATCH_GRACE_S


def _is_ours(name: str) -> bool:
    return bool(ENTRY.fullmatch(name)) or name.startswith(SCRATCH_PREFIX)


def mark_used(directory: Path) -> None:
    """Note that the entry was just used (its folder's time), for `trim`."""
    with contextlib.suppress(OSError):  # a cache others keep: their times stay
        os.utime(directory)


def trim(keep: Path) -> None:
    """Remove the least recently used entries until the cache fits its bound; never
    `keep` (the entry just written), nor a scratch folder another process may still
    be writing (left ones go once `SCRATCH_GRACE_S` old)."""
    found = [e for e in entries(keep.parent) if e.path != keep and not _in_progress(e)]
    total = sum(entry.bytes for entry in found) + sum(
        f.lstat().st_size for f in keep.rglob("*") if f.is_file()
    )
    for entry in found:
        if total <= bound():
            return
        shutil.rmtree(entry.path, ignore_errors=True)
        total -= entry.bytes


def clear(root: Path) -> list[Entry]:
    """Remove every entry under `root`; those removed."""
    found = entries(root)
    for entry in found:
        shutil.rmtree(entry.path, ignore_errors=True)
    return found


def summary(found: list[Entry]) -> str:
    """`3 programs, 12 kernels, 1.2 MiB`."""
    kernels = sum(entry.is_kernel for entry in found)
    size = size_text(sum(entry.bytes for entry in found))
    return f"{len(found) - kernels} programs, {kernels} kernels, {size}"


def size_text(count: int) -> str:
    """`34.5 MiB`."""
    value = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def private_cache_entry(key: str) -> Path:
    """The cache folder of `key`, under a root only this user can write; it may not
    exist yet. The root and the entry must be this user's and not group- or
    world-writable, and everything in the entry this user's (numba writes its cache
    files with the umask's modes, harmless inside a `0700` folder): an entry that
    another user could have written is never imported (its modules would run as this
    user) but removed, with a warning, and compiled afresh; under a root that others
    can write, in a private folder removed at exit."""
    root = made_root()
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


def made_root() -> Path:
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
