"""The compile cache: one folder per compiled program and one per compiled CPU
kernel, private to its user, kept under a size bound.

Entries live under `$DFLOW_CACHE_DIR` (default `~/.cache/dflow`): a program's
folder is named after its key (the program's text, the options, the pipeline and
the compiler's fingerprint; `compiler.compiled_program`) and holds each device's
module; a kernel's folder, in `kernels/`, is named after its content and holds
numba's cache of its machine code (`dflow.runtime.kernel_cache`), which every
program containing that kernel uses; `roofline.json` holds this machine's measured
peaks (`dflow.runtime.roofline`, for `dflow run --profile`). The cache is private:
its folders are made `0700` and its files `0600` (whatever the umask), and an entry
another user could have written is never imported. It keeps under
`$DFLOW_CACHE_MAX_BYTES` (default 1 GiB): after writing a program's entry, the
least recently used others (programs and kernels) go until the rest fit.
`dflow cache info` and `dflow cache clear` report and empty it: everything dflow
made under the root (`dflow.runtime.cache_root` lists it), the root itself left.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dflow.driver.errors import DflowError
from dflow.runtime.cache_root import ROOFLINE, STORE, cache_root, not_a_folder, sources_digest
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
"""The file of an entry that holds its entry functions' signatures
(`dflow.driver.loading.arrays`)."""


def program_key(
    text: str,
    devices: str | None,
    parallel: bool,
    passes: str,
    part: str = "",
    target: str = "numba",
) -> str:
    """The key of a compiled program: its text, the options it was compiled with
    (`part`: which devices of it, for one MPI rank; `target`: the CPU target) and the
    compiler's fingerprint."""
    options = (text, devices or "", str(parallel), passes, part, target, compiler_fingerprint())
    return hashlib.sha256("\0".join(options).encode()).hexdigest()[:24]


@cache
def compiler_fingerprint() -> str:
    """A hash of the source of the whole `dflow` package (placement, the pipelines
    and the driver decide the emitted modules as much as the lowering and the
    runtime do) and of the BLAS library the CPU kernels link
    (`runtime/library/openblas.py`), so that a changed compiler or NumPy build
    recompiles (the package is hashed, not imported: 3 ms for its 120 files)."""
    package = Path(__file__).resolve().parents[2]  # dflow/driver/compilation/cache.py
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
    """One thing dflow made in the cache: a compiled program's or kernel's folder, or a
    file of the root (`roofline.json`); its bytes and last use."""

    path: Path
    bytes: int
    used: float

    @property
    def is_kernel(self) -> bool:
        return self.path.parent.name == STORE

    @property
    def is_file(self) -> bool:
        """A file of the root, not a compiled program or kernel (nor trimmed)."""
        return _is_made_file(self.path.name)


def entries(root: Path) -> list[Entry]:
    """What dflow made under `root`, least recently used first: programs and kernels
    (and scratch folders left by an interrupted write), and the files of the root
    (`roofline.json`, and its temporary copy where a write was interrupted)."""
    found: list[Entry] = []
    for parent in (root, root / STORE):
        if not parent.is_dir() or parent.is_symlink():
            continue
        for path in parent.iterdir():
            entry = _entry(path) if _is_ours(path, parent == root) else None
            if entry is not None:
                found.append(entry)
    return sorted(found, key=lambda entry: entry.used)


def _is_ours(path: Path, in_root: bool) -> bool:
    """Whether dflow made `path` (a folder of the root or of the store, or a file of
    the root): never a link, nor a name dflow does not write."""
    if path.is_symlink():
        return False
    if path.is_dir():
        return bool(ENTRY.fullmatch(path.name)) or path.name.startswith(SCRATCH_PREFIX)
    return in_root and path.is_file() and _is_made_file(path.name)


def _is_made_file(name: str) -> bool:
    """`roofline.json`, or the temporary file it is written to (`.roofline.json.*`)."""
    return name == ROOFLINE or name.startswith(f".{ROOFLINE}.")


def _entry(path: Path) -> Entry | None:
    """The entry at `path`; None when another process renames or removes it while
    it is measured (its scratch folder becoming an entry, a trim of its own)."""
    try:
        files = path.rglob("*") if path.is_dir() else [path]
        size = sum(f.lstat().st_size for f in files if f.is_file())
        return Entry(path, size, path.stat().st_mtime)
    except OSError:
        return None


def _in_progress(entry: Entry) -> bool:
    """A scratch folder written to in the last `SCRATCH_GRACE_S` seconds: another
    process may be compiling into it."""
    scratch = entry.path.name.startswith(SCRATCH_PREFIX)
    return scratch and time.time() - entry.used < SCRATCH_GRACE_S


def stored_signatures(directory: Path) -> dict[str, Any]:
    """The signatures of the entry functions a cache entry keeps (`SIGNATURES`, as
    JSON, by entry name); empty where there is no entry, or one written before
    signatures were kept."""
    try:
        stored: dict[str, Any] = json.loads((directory / SIGNATURES).read_text())
    except (OSError, ValueError):
        return {}
    return stored


def mark_used(directory: Path) -> None:
    """Note that the entry was just used (its folder's time), for `trim`."""
    with contextlib.suppress(OSError):  # a cache others keep: their times stay
        os.utime(directory)


def trim(keep: Path) -> None:
    """Remove the least recently used entries until the cache fits its bound; never
    `keep` (the entry just written), nor a scratch folder another process may still
    be writing (left ones go once `SCRATCH_GRACE_S` old)."""
    found = [
        e for e in entries(keep.parent) if e.path != keep and not e.is_file and not _in_progress(e)
    ]
    total = sum(entry.bytes for entry in found) + sum(
        f.lstat().st_size for f in keep.rglob("*") if f.is_file()
    )
    for entry in found:
        if total <= bound():
            return
        shutil.rmtree(entry.path, ignore_errors=True)
        total -= entry.bytes


def clear(root: Path) -> list[Entry]:
    """Remove everything dflow made under `root` (`entries`, and the kernel store's
    folder once empty), leaving the root itself and anything else in it; what was
    removed. A process that compiles meanwhile makes the store again
    (`runtime/kernel_cache.py`)."""
    found = entries(root)
    for entry in found:
        if entry.is_file:
            entry.path.unlink(missing_ok=True)
        else:
            shutil.rmtree(entry.path, ignore_errors=True)
    store = root / STORE
    if store.is_dir() and not store.is_symlink():
        with contextlib.suppress(OSError):  # not empty: a kernel compiled meanwhile
            store.rmdir()
    return found


def summary(found: list[Entry]) -> str:
    """`3 programs, 12 kernels, roofline.json, 1.2 MiB` (the files of the root by name)."""
    kernels = sum(entry.is_kernel for entry in found)
    made_files = sum(entry.is_file for entry in found)
    files = [ROOFLINE] if made_files else []
    programs = len(found) - kernels - made_files
    size = size_text(sum(entry.bytes for entry in found))
    return ", ".join([f"{programs} programs", f"{kernels} kernels", *files, size])


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
    world-writable, and everything in the entry this user's (its modes are not
    checked: numba's cache of a GPU kernel there follows the umask): an entry that
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


def made_root(*, make: bool = True) -> Path:
    """The cache root, made `0700` (and made so again if an older dflow left it open
    to reading; a root that is not this user's is left to `_foreign`); with `make`
    false only checked (`dflow cache info` makes nothing). A one-line error where it
    cannot be a folder: a file, under a file, not writable."""
    root = cache_root()
    problem = not_a_folder(root)
    try:
        if problem is None and make:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            root = root.resolve()
            if root.stat().st_uid == os.getuid():
                root.chmod(0o700)
    except OSError as error:
        problem = error.strerror or str(error)
    if problem is not None:
        raise DflowError(
            f"cannot use the cache folder {root}: {problem}; "
            "set DFLOW_CACHE_DIR to a folder you can write"
        )
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
