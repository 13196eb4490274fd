# pyright: basic
"""NumPy's own OpenBLAS, for the CPU library's matrix products.

numba's `np.dot` reaches BLAS through SciPy (`scipy.linalg.cython_blas`), which
bundles another OpenBLAS build: on this project's machines its SGEMM is about 5%
slower than NumPy's, and importing SciPy's linear algebra costs 0.1 s at a
process's first product. NumPy's wheels bundle OpenBLAS as `scipy_openblas64_`
(64-bit integers, symbols `scipy_cblas_sgemm64_`, ...). When that library is
found, it is loaded into LLVM's symbol table and its `cblas_?gemm` declared for
numba as external functions: called by name, so the kernels calling them stay
cacheable. Elsewhere (another NumPy build) `SGEMM` and `DGEMM` are None and the
library falls back to `np.dot`.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
from numba.core import types

from dflow.runtime.library.openblas import numpy_openblas

ROW_MAJOR, NO_TRANSPOSE, TRANSPOSE = 101, 111, 112
"""The CBLAS enumerations (`CblasRowMajor`, `CblasNoTrans`, `CblasTrans`)."""


def _declare(name: str, scalar: types.Type) -> types.ExternalFunction:
    """`cblas_?gemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`."""
    index, enum, pointer = types.int64, types.int32, types.voidptr
    signature = types.void(
        enum, enum, enum, index, index, index, scalar, pointer, index, pointer, index, scalar,
        pointer, index,
    )  # fmt: skip
    return types.ExternalFunction(name, signature)


def _load() -> tuple[Any, Any]:
    """The external `sgemm` and `dgemm`, or Nones; typed `Any`, as numba calls them."""
    library = numpy_openblas()
    if library is None:
        return None, None
    try:
        llvm.load_library_permanently(str(library))
    except RuntimeError:
        return None, None
    names = ("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_")
    if not all(llvm.address_of_symbol(name) for name in names):
        return None, None
    return _declare(names[0], types.float32), _declare(names[1], types.float64)


SGEMM, DGEMM = _load()
