# pyright: basic, reportCallIssue=false
# (numba intrinsics are called without their typing context, which pyright cannot know)
"""Transcendental functions CPU kernels can vectorize: `exp`, `log` and `tanh` in
float32 and float64; and the conversions between float32 and the 16-bit floats
(f16, bf16) that kernels hold as their bits.

numba leaves `math.exp`, `math.log` and `math.tanh` as one libm call per element
(LLVM has no vector math library here), 5 to 50 times slower than NumPy's SIMD
loops. These are written as XLA's CPU backend and Eigen write theirs: a range
reduction, a polynomial or rational approximation, and a rescaling by a power of
two built from the exponent's bits, with no branch and no call, so a kernel's loop
around them vectorizes. Special values come out as IEEE 754 and NumPy have them:
NaN propagates, `exp(-inf) = 0`, `exp(inf) = inf` (and overflow to inf, underflow
through the subnormals to 0), `log(0) = -inf`, `log(x < 0) = NaN`, `log(inf) = inf`,
`tanh(±inf) = ±1`, and each keeps the sign of a zero.

Error bounds in ulps of the exact result (`ERROR_BOUNDS`), measured against the
float64 or long-double result over one in 257 of all float32 bit patterns and over
2^24 float64 values spread across each function's domain (`tests/test_vmath.py`;
`bench/vmath.py` times them against NumPy): `exp` ≤ 1.5 (float32) and ≤ 2
(float64), `log` ≤ 1, `tanh` ≤ 5 (float32: XLA's approximation, 4.3 measured) and
≤ 2 (float64). The coefficients are Cephes' (S. Moshier), fdlibm's (Sun) and
Eigen's, all public; the functions are dflow's.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

ERROR_BOUNDS = {
    ("exp", "float32"): 1.5,
    ("exp", "float64"): 2.0,
    ("log", "float32"): 1.0,
    ("log", "float64"): 1.0,
    ("tanh", "float32"): 5.0,
    ("tanh", "float64"): 2.0,
}
"""The largest error of each function, in ulps of the exact result."""

_vector = numba.njit(cache=True, error_model="numpy", fastmath={"contract"})
"""Each function is compiled apart with `a·b + c` contracted to one fused multiply-add
(`contract`, the only fast-math flag: no reassociation, NaN and inf kept); LLVM
inlines it into the kernel that calls it, flags and all, and vectorizes the loop."""

# ----------------------------------------------------------------------------- bits


def _bitcast(source: types.Type, target: types.Type):
    """An intrinsic reinterpreting a `source` scalar's bits as a `target` scalar of
    the same width (LLVM's `bitcast`, which vectorizes; numba has no scalar view)."""

    @intrinsic
    def cast(typingctx, value):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))

        return target(source), codegen

    return cast


_f32_from_bits = _bitcast(types.int32, types.float32)
_bits_of_f32 = _bitcast(types.float32, types.int32)
_f64_from_bits = _bitcast(types.int64, types.float64)
_bits_of_f64 = _bitcast(types.float64, types.int64)


@_vector
def _scale_f32(y, n):
    """`y · 2^n` for -150 ≤ n ≤ 128, in two factors that are normal numbers (so
    that the product overflows or underflows once, as the exact value would)."""
    half = n >> np.int32(1)
    rest = n - half
    first = _f32_from_bits(np.int32((half + np.int32(127)) << np.int32(23)))
    second = _f32_from_bits(np.int32((rest + np.int32(127)) << np.int32(23)))
    return y * first * second


@_vector
def _scale_f64(y, n):
    """`y · 2^n` for -1080 ≤ n ≤ 1025, in two normal factors."""
    half = n >> np.int64(1)
    rest = n - half
    first = _f64_from_bits(np.int64((half + np.int64(1023)) << np.int64(52)))
    second = _f64_from_bits(np.int64((rest + np.int64(1023)) << np.int64(52)))
    return y * first * second


# ----------------------------------------------------------------------------- halves


@intrinsic
def _f32_of_half_bits(typingctx, bits):
    """The float32 value of the IEEE half whose bits are `bits` (LLVM's `fpext half`:
    exact; F16C's `vcvtph2ps` on x86-64, which vectorizes)."""

    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())

    return types.float32(types.uint16), codegen


@intrinsic
def _half_bits_of_f32(typingctx, x):
    """The bits of `x` rounded to an IEEE half (LLVM's `fptrunc`: to nearest even,
    overflow to infinity, subnormals kept; F16C's `vcvtps2ph`)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return types.uint16(types.float32), codegen


@_vector
def f16_to_f32(bits):
    """The f16 held as `bits` (uint16), exactly, as float32."""
    return _f32_of_half_bits(np.uint16(bits))


@_vector
def f32_to_f16(x):
    """`x` rounded to f16 as NumPy's `astype(float16)`, as its bits."""
    return _half_bits_of_f32(np.float32(x))


@_vector
def bf16_to_f32(bits):
    """The bf16 held as `bits`: the top half of a float32's bits."""
    return _f32_from_bits(np.int32(np.uint32(bits) << np.uint32(16)))


@_vector
def f32_to_bf16(x):
    """`x` rounded to bf16 (to nearest even on the bits, carrying into the exponent:
    overflow to infinity), as its bits; NaN stays a quiet NaN of its sign."""
    bits = np.uint32(_bits_of_f32(np.float32(x)))
    if math.isnan(x):
        return np.uint16((bits >> np.uint32(16)) | np.uint32(0x40))
    rounded = bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    return np.uint16(rounded >> np.uint32(16))


# ----------------------------------------------------------------------------- exp


@_vector
def exp_f32(x):
    """`e^x`: `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2` (n rounded by adding and
    subtracting 1.5·2^23, ln 2 in two parts), Cephes' degree-7 polynomial for
    `e^r`, times `2^n`. Inputs are clamped to [-104, 89], past which the result is
    0 or inf anyway; a NaN fails both comparisons and passes through."""
    x = np.float32(89.0) if x > np.float32(89.0) else x
    x = np.float32(-104.0) if x < np.float32(-104.0) else x
    n = (x * np.float32(1.44269504088896341) + np.float32(12582912.0)) - np.float32(12582912.0)
    r = x - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    y = p * r * r + r + np.float32(1.0)
    return _scale_f32(y, np.int32(n))


@_vector
def exp_f64(x):
    """`e^x`: the same reduction (1.5·2^52), Cephes' rational approximation
    `1 + 2·P(r²)·r / (Q(r²) - P(r²)·r)`, times `2^n`; clamped to [-746, 710]."""
    x = 710.0 if x > 710.0 else x
    x = -746.0 if x < -746.0 else x
    n = (x * 1.4426950408889634073599 + 6755399441055744.0) - 6755399441055744.0
    r = x - n * 6.93145751953125e-1 - n * 1.42860682030941723212e-6
    z = r * r
    p = ((1.26177193074810590878e-4 * z + 3.02994407707441961300e-2) * z + 1.0) * r
    q = (3.00198505138664455042e-6 * z + 2.52448340349684104192e-3) * z
    q = (q + 2.27265548208155028766e-1) * z + 2.0
    y = 1.0 + 2.0 * (p / (q - p))
    return _scale_f64(y, np.int64(n))


# ----------------------------------------------------------------------------- log


@_vector
def log_f32(x):
    """`ln x`: `x = m·2^e` with `√½ ≤ m < √2` from the bits (subnormals scaled by
    2^23 first), Cephes' degree-9 polynomial for `ln m`, plus `e·ln 2` in two
    parts; NaN below 0, -inf at ±0, inf at inf."""
    small = x < np.float32(1.17549435e-38)
    scaled = x * np.float32(8388608.0) if small else x
    bits = _bits_of_f32(scaled)
    e = ((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(126)
    e = e - np.int32(23) if small else e
    m = _f32_from_bits((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000))
    below = m < np.float32(0.707106781186547524)
    e = e - np.int32(1) if below else e
    m = (m + m - np.float32(1.0)) if below else (m - np.float32(1.0))
    ef = np.float32(e)
    z = m * m
    y = np.float32(7.0376836292e-2)
    y = y * m - np.float32(1.1514610310e-1)
    y = y * m + np.float32(1.1676998740e-1)
    y = y * m - np.float32(1.2420140846e-1)
    y = y * m + np.float32(1.4249322787e-1)
    y = y * m - np.float32(1.6668057665e-1)
    y = y * m + np.float32(2.0000714765e-1)
    y = y * m - np.float32(2.4999993993e-1)
    y = y * m + np.float32(3.3333331174e-1)
    y = y * m * z
    y = y + np.float32(-2.12194440e-4) * ef - np.float32(0.5) * z
    result = m + y + np.float32(0.693359375) * ef
    result = np.float32(np.inf) if x == np.float32(np.inf) else result
    result = np.float32(-np.inf) if x == np.float32(0.0) else result
    result = x if math.isnan(x) else result
    return np.float32(np.nan) if x < np.float32(0.0) else result


@_vector
def log_f64(x):
    """`ln x`: `x = m·2^e` with `√½ ≤ m < √2` (subnormals scaled by 2^54 first),
    fdlibm's `ln(1+f) = f - f²/2 + s·(f²/2 + R(s²))` with `s = f/(2+f)` and its
    degree-14 polynomial R, plus `e·ln 2` in two parts; the same special values."""
    small = x < 2.2250738585072014e-308
    scaled = x * 18014398509481984.0 if small else x
    bits = _bits_of_f64(scaled)
    e = ((bits >> np.int64(52)) & np.int64(0x7FF)) - np.int64(1022)
    e = e - np.int64(54) if small else e
    m = _f64_from_bits((bits & np.int64(0x000FFFFFFFFFFFFF)) | np.int64(0x3FE0000000000000))
    below = m < 0.70710678118654752440
    e = e - np.int64(1) if below else e
    f = (m + m - 1.0) if below else (m - 1.0)
    k = np.float64(e)
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    even = (1.531383769920937332e-01 * w + 2.222219843214978396e-01) * w
    even = (even + 3.999999999940941908e-01) * w
    odd = (1.479819860511658591e-01 * w + 1.818357216161805012e-01) * w
    odd = ((odd + 2.857142874366239149e-01) * w + 6.666666666666735130e-01) * z
    r = odd + even
    half_square = 0.5 * f * f
    result = k * 6.93147180369123816490e-01 - (
        (half_square - (s * (half_square + r) + k * 1.90821492927058770002e-10)) - f
    )
    result = np.inf if x == np.inf else result
    result = -np.inf if x == 0.0 else result
    result = x if math.isnan(x) else result
    return np.nan if x < 0.0 else result


# ----------------------------------------------------------------------------- tanh


@_vector
def tanh_f32(x):
    """`tanh x`: Eigen's and XLA's rational approximation `x·P(x²)/Q(x²)` (degrees 13
    and 6) on x clamped to ±7.9053111 (where tanh rounds to ±1), and x itself below
    |x| = 0.0004; one division, no exponential."""
    bound = np.float32(7.90531110763549805)
    c = bound if x > bound else x
    c = -bound if c < -bound else c
    z = c * c
    p = np.float32(-2.76076847742355e-16)
    p = p * z + np.float32(2.00018790482477e-13)
    p = p * z + np.float32(-8.60467152213735e-11)
    p = p * z + np.float32(5.12229709037114e-08)
    p = p * z + np.float32(1.48572235717979e-05)
    p = p * z + np.float32(6.37261928875436e-04)
    p = p * z + np.float32(4.89352455891786e-03)
    q = np.float32(1.19825839466702e-06)
    q = q * z + np.float32(1.18534705686654e-04)
    q = q * z + np.float32(2.26843463243900e-03)
    q = q * z + np.float32(4.89352518554385e-03)
    result = p * c / q
    return x if abs(x) < np.float32(0.0004) else result


@_vector
def tanh_f64(x):
    """`tanh x`: below |x| = 0.625 Cephes' rational `x + x³·P(x²)/Q(x²)`, above it
    `sign(x)·(1 - 2/(e^{2|x|} + 1))` with `exp_f64`."""
    a = abs(x)
    z = x * x
    p = (-9.64399179425052238628e-1 * z - 9.92877231001918586564e1) * z - 1.61468768441708447952e3
    q = ((z + 1.12811678491632931402e2) * z + 2.23548839060100448583e3) * z
    q = q + 4.84406305325125486048e3
    near = x + x * z * (p / q)
    near = x if z == 0.0 else near  # ±0 and the smallest subnormals keep their sign
    far = 1.0 - 2.0 / (exp_f64(a + a) + 1.0)
    far = -far if x < 0.0 else far
    return near if a < 0.625 else far
