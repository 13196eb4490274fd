"""Where dflow keeps what it compiles, and how its entries are told apart: the
folder shared by the compile cache of programs (`dflow.driver.compilation.cache`) and the
kernel store (`runtime/kernel_cache.py`), and the hash of source files both
fingerprints are made of. Apart from both so that the cached `dflow run`, which
imports no numba until it loads a program, can find its entries.

What dflow puts under the root, every folder `0700` and every file `0600`:
a folder per compiled program (named after its key; `driver/compilation/compiler.py`), and
`.new-*` scratch folders while one is written; `kernels/` (`STORE`), a folder per
CPU kernel holding numba's cache of it (`runtime/kernel_cache.py`); and
`roofline.json` (`ROOFLINE`), this machine's measured peaks (`runtime/roofline.py`).
`dflow cache clear` removes all of them (`driver/compilation/cache.py`)."""

from __future__ import annotations

import hashlib
import os
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
