"""`dflow/runtime/library/vmath.py` against NumPy: each function within its stated
error bound in ulps, IEEE special values exactly as NumPy gives them, and loops that
vectorize.

The reference is independent of the code under test: NumPy's result in a wider type
(float64 for float32 inputs, long double for float64), whose error is far below one
ulp of the narrower type. float32 inputs are one in 4099 of all 2^32 bit patterns
(every exponent, both signs, NaN and inf payloads included); float64 inputs are
2^20 values spread over the scales each function meets plus random bit patterns.
`bench/vmath.py --exhaustive` checks every float32.
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pytest
from numpy.typing import NDArray

from dflow.backend.llvm import vmath as llvm_vmath
from dflow.runtime import llvm_jit
from dflow.runtime.library import vmath

Array = NDArray[Any]
NUMPY = {"exp": np.exp, "log": np.log, "tanh": np.tanh}
CASES = sorted(vmath.ERROR_BOUNDS)
TARGETS = ("numba", "llvm")


def kernel(name: str, dtype: str, target: str = "numba") -> Callable[[Array, Array], None]:
    """A loop over `vm.<name>_<f32|f64>`, as the CPU kernels write it (on the llvm
    target: over the function `backend/llvm/vmath.py` prints)."""
    if target == "llvm":
        return llvm_loop(name, dtype)[0]
    function = getattr(vmath, f"{name}_f{np.dtype(dtype).itemsize * 8}")

    @numba.njit(error_model="numpy")
    def loop(x: Array, out: Array) -> None:
        for i in range(x.size):
            out[i] = function(x[i])

    return loop


def llvm_loop(name: str, dtype: str) -> tuple[Callable[[Array, Array], None], str]:
    """A loop over the llvm target's `<name>` as a kernel calls it, optimized as the
    target optimizes its modules; and the optimized IR."""
    ty = "float" if dtype == "float32" else "double"
    loop = f"""
define void @loop(ptr %x, ptr %out, i64 %n) {{
entry:
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %next, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %done
body:
  %p = getelementptr {ty}, ptr %x, i64 %i
  %v = load {ty}, ptr %p
  %r = call {ty} @{llvm_vmath.NAMES[name, ty]}({ty} %v)
  %q = getelementptr {ty}, ptr %out, i64 %i
  store {ty} %r, ptr %q
  %next = add i64 %i, 1
  br label %head
done:
  ret void
}}
"""
    text = loop + "\n".join(sorted(set(llvm_vmath.definitions(name, ty))))
    machine = llvm_jit.target_machine()
    code = llvm_jit.compile_object(text, machine)
    library = llvm_jit.library_of([code], machine)
    function = library.function("loop", 3)

    def run(x: Array, out: Array) -> None:
        assert library.engine  # the machine code lives as long as its engine
        function(x.ctypes.data, out.ctypes.data, ctypes.c_void_p(x.size))

    return run, llvm_jit.optimized(text, machine)


def float32_inputs() -> Array:
    bits = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32)
    return bits.view(np.float32)


def float64_inputs() -> Array:
    rng = np.random.default_rng(0)
    scales = [rng.standard_normal(2**17) * s for s in (1e-300, 1e-8, 0.3, 3, 30, 300)]
    logs = [np.exp(rng.uniform(-745, 709, 2**17))]
    bits = [np.frombuffer(rng.bytes(8 * 2**17), np.float64)]
    return np.concatenate([*scales, *logs, *bits])


def ulp_errors(got: Array, x: Array, name: str) -> Array:
    """|got - exact| in ulps of the exact result rounded to got's type, where both
    are finite and the exact result is not 0."""
    wide = np.float64 if got.dtype == np.float32 else np.longdouble
    with np.errstate(all="ignore"):
        exact = NUMPY[name](x.astype(wide))
    rounded = exact.astype(got.dtype)
    keep = np.isfinite(rounded) & np.isfinite(got) & (rounded != 0)
    spacing = np.spacing(np.abs(rounded[keep])).astype(wide)
    return (np.abs(got[keep].astype(wide) - exact[keep]) / spacing).astype(np.float64)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_within_the_stated_bound(name: str, dtype: str, target: str) -> None:
    x = float32_inputs() if dtype == "float32" else float64_inputs()
    out = np.empty_like(x)
    kernel(name, dtype, target)(x, out)
    with np.errstate(all="ignore"):
        expected = NUMPY[name](x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(expected))
    errors = ulp_errors(out, x, name)
    assert errors.size > x.size // 3
    worst = int(np.argmax(errors))
    bound = vmath.ERROR_BOUNDS[(name, dtype)]
    assert errors[worst] <= bound, f"{errors[worst]:.3f} ulp (bound {bound})"


SPECIAL = [
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    1e-45,
    -1e-45,
    1e-40,
    5e-324,
    1e-310,
    1.0,
    -1.0,
    88.72,
    88.73,
    -87.3,
    -103.9,
    -104.0,
    709.78,
    709.79,
    -745.1,
    -745.2,
    3.4e38,
    1.7e308,
    1e-4,
    -3e-4,
    9.0,
    -20.0,
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_special_values_are_numpys(name: str, dtype: str, target: str) -> None:
    """NaN, ±inf, ±0, subnormals, the thresholds of overflow and underflow: where
    NumPy's result is not finite or is zero, the same value; the same sign always
    (but a NaN's); otherwise within a few ulps."""
    with np.errstate(all="ignore"):
        x = np.array(SPECIAL, dtype)
        expected = NUMPY[name](x)
    out = np.empty_like(x)
    kernel(name, dtype, target)(x, out)
    exact = ~np.isfinite(expected) | (expected == 0)
    np.testing.assert_array_equal(out[exact], expected[exact])
    signed = ~np.isnan(expected)  # a NaN's sign means nothing (IEEE 754 leaves it open)
    np.testing.assert_array_equal(np.signbit(out[signed]), np.signbit(expected[signed]))
    np.testing.assert_allclose(out[~exact], expected[~exact], rtol=8 * np.finfo(dtype).eps)


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_the_loop_vectorizes(name: str, dtype: str) -> None:
    """The whole point: LLVM turns the loop into vector instructions (a libm call
    would keep it scalar)."""
    loop = kernel(name, dtype)
    x = np.ones(16, dtype)
    loop(x, np.empty_like(x))
    (llvm,) = loop.inspect_llvm().values()
    element = "float" if dtype == "float32" else "double"
    assert f"x {element}>" in llvm
    assert f"@{name}f(" not in llvm and f"@{name}(" not in llvm


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_the_llvm_targets_loop_vectorizes(name: str, dtype: str) -> None:
    """The same of the llvm target's functions, in its optimized IR: vector
    operations, and no call left in the loop (every function inlined)."""
    _, optimized = llvm_loop(name, dtype)
    element = "float" if dtype == "float32" else "double"
    assert f"x {element}>" in optimized
    loop = optimized[optimized.index("define void @loop") :]
    assert not re.search(r"call [^@]*@(?!llvm\.)", loop), loop  # intrinsics are instructions


ERF_F32_BOUND = 1.5
"""The llvm target's erf of float (`backend/llvm/vmath.py`, N. Juffa's fits), in
ulps: 0.96 measured over the float32 sample; the numba target calls `math.erf`."""


def test_llvm_erf_of_float_within_its_bound_and_at_special_values() -> None:
    """Against `math.erf` in float64 (independent of the code: the C library's
    double), over one in 4099 float32 bit patterns and the special values: NaN, ±inf
    (±1), ±0 (signed), subnormals (2/√π · x)."""
    x = np.concatenate([float32_inputs(), np.array(SPECIAL, np.float32)])
    out = np.empty_like(x)
    llvm_loop("erf", "float32")[0](x, out)
    exact = np.array([math.erf(v) for v in x.astype(np.float64)])
    np.testing.assert_array_equal(np.isnan(out), np.isnan(exact))
    finite = ~np.isnan(exact)
    np.testing.assert_array_equal(np.signbit(out[finite]), np.signbit(exact[finite]))
    rounded = exact.astype(np.float32)
    keep = finite & (rounded != 0)
    spacing = np.spacing(np.abs(rounded[keep])).astype(np.float64)
    errors = np.abs(out[keep].astype(np.float64) - exact[keep]) / spacing
    assert errors.max() <= ERF_F32_BOUND, f"{errors.max():.3f} ulp at {x[keep][errors.argmax()]}"
    assert np.array_equal(out[x == 0], x[x == 0])  # erf(±0) = ±0


def test_the_llvm_targets_erf_loop_vectorizes() -> None:
    _, optimized = llvm_loop("erf", "float32")
    assert "x float>" in optimized
    loop = optimized[optimized.index("define void @loop") :]
    assert not re.search(r"call [^@]*@(?!llvm\.)", loop), loop
