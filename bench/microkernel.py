"""The llvm target's room for microkernels: a product written with explicit vectors
(`dflow/backend/llvm/microkernels.py`: 6 rows x 2 vectors of 16 floats of C in 12
vector accumulators, one FMA per accumulator per step) against NumPy's SGEMM
(OpenBLAS, one thread) on the same shapes in the same run, in GFLOP/s.

    taskset -c 0 python bench/microkernel.py [--rounds 7]

The kernel is printed by the llvm target's kernel printer, optimized at -O3 for this
CPU and JIT-compiled (`runtime/llvm_jit.py`), and checked against NumPy first.
OpenBLAS is asked for its AVX-512 kernels where the CPU has them (`blas_choice.py`,
as `bench/kernels.py`). The kernel packs nothing and blocks no cache level (B is read
in place, a row of 32 floats per step), which is what keeps it below OpenBLAS once
B outgrows the L2 cache: the starting point of the next issue's generated
convolutions, not a BLAS.
"""

from __future__ import annotations

import argparse
import os
import time

from blas_choice import prefer_avx512_blas

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
BLAS_CHOICE = prefer_avx512_blas()  # before NumPy loads OpenBLAS

import numpy as np  # noqa: E402

from dflow.backend.llvm.kernel import KernelPrinter  # noqa: E402
from dflow.backend.llvm.microkernels import gemm_microkernel  # noqa: E402
from dflow.runtime import llvm_jit  # noqa: E402

SHAPES = [(192, 256, 256), (384, 512, 512), (768, 1024, 1024), (1536, 64, 1024)]
"""(m, n, k): m a multiple of 6, n of 32."""


def compiled(m: int, n: int, k: int):
    declarations: set[str] = set()
    text = "\n".join(KernelPrinter(declarations).function(gemm_microkernel(m, n, k)))
    text += "\n" + "\n".join(sorted(declarations)) + "\n"
    machine = llvm_jit.target_machine()
    library = llvm_jit.library_of([llvm_jit.compile_object(text, machine)], machine)
    return library, library.function("gemm", 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    rng = np.random.default_rng(0)
    print(BLAS_CHOICE)
    print("gemm microkernel (llvm target, explicit vectors) against NumPy's SGEMM, one core")
    for m, n, k in SHAPES:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        c, expected = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
        library, gemm = compiled(m, n, k)
        gemm(a.ctypes.data, b.ctypes.data, c.ctypes.data)
        np.dot(a, b, out=expected)
        np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-3)
        best = {"microkernel": float("inf"), "SGEMM": float("inf")}
        for _ in range(rounds):  # interleaved
            started = time.perf_counter()
            gemm(a.ctypes.data, b.ctypes.data, c.ctypes.data)
            best["microkernel"] = min(best["microkernel"], time.perf_counter() - started)
            started = time.perf_counter()
            np.dot(a, b, out=expected)
            best["SGEMM"] = min(best["SGEMM"], time.perf_counter() - started)
        flops = 2 * m * n * k
        rates = {name: flops / seconds / 1e9 for name, seconds in best.items()}
        ratio = rates["microkernel"] / rates["SGEMM"]
        print(
            f"  {m:5d}x{n:<5d}x{k:<5d} microkernel {rates['microkernel']:6.1f} GFLOP/s, "
            f"SGEMM {rates['SGEMM']:6.1f} GFLOP/s: {ratio:.0%} of SGEMM"
        )
        del library


if __name__ == "__main__":
    main()
