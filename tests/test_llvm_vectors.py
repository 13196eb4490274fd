"""Kernels with explicit vectors on the llvm target (`backend/llvm/vectors.py`), and
the product microkernel written with them (`backend/llvm/microkernels.py`).

The microkernel is checked against NumPy over tiles that fill the product exactly,
several tile shapes and inner lengths (1, odd, long); its printed IR holds one
`llvm.fma.v16f32` per accumulator per step, and after -O3 its accumulators stay
vectors. A kernel of the `vector` ops with a splat constant checks each op's
semantics; what is not printed (a 2-D vector, a constant of several values) is
refused in one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf, vector
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from dflow.backend.llvm.kernel import KernelPrinter
from dflow.backend.llvm.microkernels import gemm_microkernel, gemm_text
from dflow.backend.llvm.types import UnsupportedKernelError
from dflow.runtime import llvm_jit


def _module_text(kernel: FuncOp) -> str:
    declarations: set[str] = set()
    text = "\n".join(KernelPrinter(declarations).function(kernel))
    return text + "\n" + "\n".join(sorted(declarations)) + "\n"


def _function(kernel: FuncOp, arity: int) -> tuple[Any, Any]:
    machine = llvm_jit.target_machine()
    library = llvm_jit.library_of([llvm_jit.compile_object(_module_text(kernel), machine)], machine)
    return library, library.function(kernel.sym_name.data, arity)


@pytest.mark.parametrize(
    ("m", "n", "k", "rows", "lanes", "columns"),
    [(6, 32, 1, 6, 16, 2), (12, 64, 7, 6, 16, 2), (18, 96, 129, 6, 16, 2), (8, 24, 5, 4, 8, 3)],
)
def test_the_microkernel_computes_the_product(
    m: int, n: int, k: int, rows: int, lanes: int, columns: int
) -> None:
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    library, gemm = _function(gemm_microkernel(m, n, k, rows, lanes, columns), 3)
    assert library.engine
    gemm(a.ctypes.data, b.ctypes.data, c.ctypes.data)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5 * np.sqrt(k))


def test_the_microkernel_keeps_its_tile_in_vector_registers() -> None:
    kernel = gemm_microkernel(12, 64, 32)
    printed = _module_text(kernel)
    assert printed.count("call <16 x float> @llvm.fma.v16f32(") == 12
    assert printed.count("phi <16 x float>") == 12
    optimized = llvm_jit.optimized(printed, llvm_jit.target_machine())
    assert "<16 x float>" in optimized and "@llvm.fma.v16f32" in optimized


def test_a_tile_that_does_not_fill_the_product_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^gemm_text: 10x32 is not a whole number of 6x32 tiles$"):
        gemm_text(10, 32, 4)


VECTOR_OPS = """
func.func @k(%x: memref<2x16xf64>, %s: memref<2xf64>, %out: memref<2x16xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant dense<0.5> : vector<16xf64>
  %v = vector.load %x[%c1, %c0] : memref<2x16xf64>, vector<16xf64>
  %w = vector.load %x[%c0, %c0] : memref<2x16xf64>, vector<16xf64>
  %t = memref.load %s[%c1] : memref<2xf64>
  %b = vector.broadcast %t : f64 to vector<16xf64>
  %f = vector.fma %v, %b, %half : vector<16xf64>
  %g = arith.maximumf %f, %w : vector<16xf64>
  vector.store %g, %out[%c0, %c0] : memref<2x16xf64>, vector<16xf64>
  %h = arith.mulf %v, %half : vector<16xf64>
  vector.store %h, %out[%c1, %c0] : memref<2x16xf64>, vector<16xf64>
  func.return
}
"""


def _parsed(text: str) -> FuncOp:
    context = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, memref.MemRef, scf.Scf, vector.Vector):
        context.load_dialect(dialect)
    kernel = next(iter(Parser(context, text).parse_module().ops))
    assert isinstance(kernel, FuncOp)
    return kernel


def test_each_vector_op_computes_as_numpy() -> None:
    """Loads at an index of a 2-D buffer, a broadcast, an FMA with a splat constant,
    `arith` ops on vectors, stores."""
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((2, 16)), rng.standard_normal(2)
    out = np.zeros((2, 16))
    library, kernel = _function(_parsed(VECTOR_OPS), 3)
    assert library.engine
    kernel(x.ctypes.data, s.ctypes.data, out.ctypes.data)
    np.testing.assert_allclose(out[0], np.maximum(x[1] * s[1] + 0.5, x[0]), rtol=1e-15)
    np.testing.assert_array_equal(out[1], x[1] * 0.5)


@pytest.mark.parametrize(
    ("replace", "by", "message"),
    [
        ("dense<0.5> : vector<16xf64>", "dense<[0.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, "
         "0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]> : vector<16xf64>",
         "a vector constant of several values is not printed yet"),
        ("%h = arith.mulf %v, %half : vector<16xf64>",
         "%h = arith.mulf %v, %half : vector<16xf64>\n"
         "  %z = arith.constant dense<0.0> : vector<2x8xf64>",
         "vector<2x8xf64>: only 1-D vectors are printed"),
    ],
)  # fmt: skip
def test_what_is_not_printed_is_refused_naming_it(replace: str, by: str, message: str) -> None:
    with pytest.raises(UnsupportedKernelError, match=f"^{message}$"):
        _module_text(_parsed(VECTOR_OPS.replace(replace, by)))
