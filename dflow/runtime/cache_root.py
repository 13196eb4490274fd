"""Where dflow keeps what it compiles, and how its entries are told apart: the
folder shared by the compile cache of programs (`dflow.driver.cache`) and the
kernel store (`runtime/kernel_cache.py`), and the hash of source files both
fingerprints are made of. Apart from both so that the cached `dflow run`, which
imports no numba until it loads a program, can find its entries."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STORE = "kernels"
"""The folder of the cache root that holds the compiled kernels."""


def cache_root() -> Path:
    """`$DFLOW_CACHE_DIR`, else `~/.cache/dflow`."""
    configured = os.environ.get("DFLOW_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "dflow"


def sources_digest(package: Path, *also: str) -> str:
    """A hash of `also` and of every Python file under `package` (path and bytes)."""
    digest = hashlib.sha256("\0".join(also).encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
