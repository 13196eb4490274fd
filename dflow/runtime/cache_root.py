"""Where dflow keeps what it compiles, and how its entries are told apart: the
folder shared by the compile cache of programs (`dflow.driver.compilation.cache`) and the
kernel store (`runtime/kernel_cache.py`), and the hash of source files both
fingerprints are made of. Apart from both so that the cached `dflow run`, which
imports no numba until it loads a program, can find its entries.

What dflow puts under the root, every folder `0700` and every file `0600`:
a folder per compiled program (named after its key; `driver/compilation/compiler.py`), and
`.new-*` scratch folders while one is written; `kernels/` (`STORE`), a folder per
CPU kernel holding numba's cache of it (`runtime/kernel_cache.py`) and a folder per
llvm target module holding its object code (`runtime/llvm_jit.py`), each named by
`store_folder`; and
`roofline.json` (`ROOFLINE`), this machine's measured peaks (`runtime/roofline.py`).
`dflow cache clear` removes all of them (`driver/compilation/cache.py`)."""

from __future__ import annotations

import hashlib
import os
import sys
from functools import cache
from pathlib import Path

STORE = "kernels"
"""The folder of the cache root that holds the compiled kernels."""
ROOFLINE = "roofline.json"
"""The file of the cache root that holds this machine's measured roofline."""


def cache_root() -> Path:
    """`$DFLOW_CACHE_DIR`, else `~/.cache/dflow`."""
    configured = os.environ.get("DFLOW_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "dflow"


def not_a_folder(root: Path) -> str | None:
    """Why `root` cannot be the cache folder where it, or a folder above it, is a
    file (`mkdir` says only `File exists` or `Not a directory`); else None."""
    for path in (root, *root.parents):
        if path.is_dir():
            return None
        if path.exists():
            where = "it" if path == root else str(path)
            return f"{where} is a file, not a folder"
    return None


def sources_digest(package: Path, *also: str) -> str:
    """A hash of `also` and of every Python file under `package` (path and bytes)."""
    digest = hashlib.sha256("\0".join(also).encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def store_folder(key: str) -> Path | None:
    """The kernel store's folder for `key` (what it holds and the runtime that made
    it; it may not exist yet), or None where the store or that folder is not private
    to this user."""
    store = private_store(cache_root() / STORE)
    if store is None:
        return None
    folder = store / hashlib.sha256(key.encode()).hexdigest()[:24]
    if foreign(folder):
        warn_once(folder)
        return None
    return folder


@cache
def private_store(store: Path) -> Path | None:
    """`store`, made `0700` (None, after a warning, where that fails or it is a
    link, not this user's, or writable by others)."""
    try:
        store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the cache root
        store.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        warn_once(store)
        return None
    if foreign(store):
        warn_once(store)
        return None
    return store


def foreign(path: Path) -> bool:
    """Whether `path` exists and is a link, not this user's, or writable by group or
    others."""
    try:
        status = path.lstat()
    except FileNotFoundError:
        return False
    return path.is_symlink() or status.st_uid != os.getuid() or bool(status.st_mode & 0o022)


@cache
def warn_once(path: Path) -> None:
    print(
        f"dflow: warning: not caching kernels in {path}: it could have been written by "
        "another user or cannot be made; compiling them in memory",
        file=sys.stderr,
    )
