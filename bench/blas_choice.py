"""The OpenBLAS kernels a benchmark runs with, chosen before NumPy loads.

OpenBLAS (NumPy's, SciPy's, which numba's `np.dot` calls, and the SGEMM that
dflow's products and convolutions call) picks its kernels by `OPENBLAS_CORETYPE`.
This project's machines set it to Haswell (AVX2), which on their AVX-512 CPU halves
SGEMM's speed, while the peers' own kernels (XLA's, ONNX Runtime's MLAS, PyTorch's
oneDNN) detect AVX-512 themselves. So the benchmarks ask for SKYLAKEX where the CPU
has AVX-512, for every contender alike; `--blas-as-is` keeps the environment's
choice. Import this module before NumPy.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def prefer_avx512_blas() -> str:
    """Set `OPENBLAS_CORETYPE=SKYLAKEX` on an AVX-512 CPU unless `--blas-as-is` is
    among the arguments (then removed from them); the setting in force, to print."""
    cpuinfo = Path("/proc/cpuinfo")
    if "--blas-as-is" in sys.argv:
        sys.argv.remove("--blas-as-is")
    elif cpuinfo.exists() and " avx512f " in cpuinfo.read_text():
        os.environ["OPENBLAS_CORETYPE"] = "SKYLAKEX"
    return f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}"
