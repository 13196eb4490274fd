"""Where NumPy's wheel keeps its OpenBLAS, found without importing numba.

`blas.py` links the CPU library's matrix products against it; the compiler
stamps the written modules with its path (`dflow.driver.compilation.compiler`), so that another
NumPy build recompiles them instead of loading cached kernels that call a
library no longer there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_PATTERNS = ("libscipy_openblas64_*.so", "libscipy_openblas64_*.dylib", "libscipy_openblas64_*.dll")


def numpy_openblas() -> Path | None:
    """The OpenBLAS library bundled with NumPy's wheel (beside the package on Linux
    and Windows, inside it on macOS), if any."""
    package = Path(np.__file__).resolve().parent
    for folder in (package.parent / "numpy.libs", package / ".dylibs"):
        for pattern in _PATTERNS:
            found = sorted(folder.glob(pattern))
            if found:
                return found[0]
    return None
