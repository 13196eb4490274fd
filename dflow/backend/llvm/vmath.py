"""`exp`, `log`, `tanh` and `erf` (of float) as LLVM functions a kernel's loop
vectorizes.

LLVM has no vector math library here: `llvm.exp.f32` in a loop becomes one `expf`
call per element and keeps the loop scalar. The kernels call these instead, internal
`alwaysinline` functions of straight-line code (selects, no branch, no call): the
algorithms and coefficients of the numba target's `runtime/library/vmath.py` (Cephes,
fdlibm, Eigen), with its error bounds (`ERROR_BOUNDS` there, checked for both targets
by `tests/test_vmath.py`) and its special values. As there, `a·b + c` may contract to
a fused multiply-add (the `contract` flag; no other fast-math flag).

`FUNCTIONS[(name, type)]` is the function's LLVM text; a kernel printer asks for the
ones it calls and the module defines each once.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

FLAGS = "contract"
"""The fast-math flags of every float operation: contraction to FMA only."""


def _hex(value: float, type: str) -> str:
    """A constant as LLVM writes it: the double's hex, rounded to float first."""
    if type == "float":
        value = float(struct.unpack("<f", struct.pack("<f", value))[0])
    return "0x" + struct.pack(">d", value).hex().upper()


@dataclass
class Body:
    """Straight-line LLVM code over one float type, one value a line."""

    type: str
    lines: list[str] = field(default_factory=list[str])
    count: int = 0

    @property
    def int(self) -> str:
        return "i32" if self.type == "float" else "i64"

    def let(self, expression: str) -> str:
        self.count += 1
        name = f"%t{self.count}"
        self.lines.append(f"  {name} = {expression}")
        return name

    def c(self, value: float) -> str:
        return _hex(value, self.type)

    def op(self, kind: str, a: str, b: str) -> str:
        return self.let(f"{kind} {FLAGS} {self.type} {a}, {b}")

    def mul(self, a: str, b: str) -> str:
        return self.op("fmul", a, b)

    def add(self, a: str, b: str) -> str:
        return self.op("fadd", a, b)

    def sub(self, a: str, b: str) -> str:
        return self.op("fsub", a, b)

    def div(self, a: str, b: str) -> str:
        return self.op("fdiv", a, b)

    def horner(self, x: str, coefficients: Sequence[float]) -> str:
        """`((c0·x + c1)·x + c2)...`."""
        p = self.c(coefficients[0])
        for coefficient in coefficients[1:]:
            p = self.add(self.mul(p, x), self.c(coefficient))
        return p

    def compare(self, predicate: str, a: str, b: str) -> str:
        return self.let(f"fcmp {predicate} {self.type} {a}, {b}")

    def select(self, condition: str, a: str, b: str, type: str | None = None) -> str:
        ty = type or self.type
        return self.let(f"select i1 {condition}, {ty} {a}, {ty} {b}")

    def to_bits(self, x: str) -> str:
        return self.let(f"bitcast {self.type} {x} to {self.int}")

    def from_bits(self, bits: str) -> str:
        return self.let(f"bitcast {self.int} {bits} to {self.type}")

    def integer(self, kind: str, a: str, b: str | int) -> str:
        return self.let(f"{kind} {self.int} {a}, {b}")

    def function(self, name: str, result: str) -> str:
        head = f"define internal {self.type} @{name}({self.type} %x) alwaysinline {{"
        return "\n".join([head, "entry:", *self.lines, f"  ret {self.type} {result}", "}"])


def _scale(b: Body, y: str, n: str) -> str:
    """`y · 2^n` in two normal factors, so the product over- or underflows once."""
    bias, shift = (127, 23) if b.type == "float" else (1023, 52)
    half = b.integer("ashr", n, 1)
    rest = b.integer("sub", n, half)
    factors: list[str] = []
    for part in (half, rest):
        biased = b.integer("add", part, bias)
        factors.append(b.from_bits(b.integer("shl", biased, shift)))
    return b.mul(b.mul(y, factors[0]), factors[1])


def _clamp(b: Body, x: str, low: float, high: float) -> str:
    """`x` clamped to [low, high]; a NaN fails both tests and passes through."""
    above = b.compare("ogt", x, b.c(high))
    x = b.select(above, b.c(high), x)
    below = b.compare("olt", x, b.c(low))
    return b.select(below, b.c(low), x)


def _reduced(b: Body, x: str, shifter: float, parts: tuple[float, float]) -> tuple[str, str]:
    """`x = n·ln 2 + r`: n rounded by adding and subtracting `shifter`."""
    n = b.sub(b.add(b.mul(x, b.c(1.4426950408889634073599)), b.c(shifter)), b.c(shifter))
    r = b.sub(b.sub(x, b.mul(n, b.c(parts[0]))), b.mul(n, b.c(parts[1])))
    return n, r


def _integer(b: Body, n: str) -> str:
    """The whole float `n` (of a clamped argument: far inside the integer's range) as
    an integer: `fptosi`, one vector instruction. Not `llvm.fptosi.sat`, which x86
    makes a scalar conversion and two compares per lane (exp of float took 3x as
    long); a NaN's conversion (poison) is frozen to some integer, and the result it
    scales is NaN whatever it is."""
    return b.let(f"freeze {b.int} {b.let(f'fptosi {b.type} {n} to {b.int}')}")


def exp_f32(b: Body) -> str:
    x = _clamp(b, "%x", -104.0, 89.0)
    n, r = _reduced(b, x, 12582912.0, (0.693359375, -2.12194440e-4))
    p = b.horner(r, [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                     1.6666665459e-1, 5.0000001201e-1])  # fmt: skip
    y = b.add(b.add(b.mul(b.mul(p, r), r), r), b.c(1.0))
    return _scale(b, y, _integer(b, n))


def exp_f64(b: Body) -> str:
    x = _clamp(b, "%x", -746.0, 710.0)
    n, r = _reduced(b, x, 6755399441055744.0, (6.93145751953125e-1, 1.42860682030941723212e-6))
    z = b.mul(r, r)
    p = b.mul(b.horner(z, [1.26177193074810590878e-4, 3.02994407707441961300e-2, 1.0]), r)
    q = b.horner(z, [3.00198505138664455042e-6, 2.52448340349684104192e-3,
                     2.27265548208155028766e-1, 2.0])  # fmt: skip
    y = b.add(b.c(1.0), b.mul(b.c(2.0), b.div(p, b.sub(q, p))))
    return _scale(b, y, _integer(b, n))


def _special_log(b: Body, result: str) -> str:
    """NaN below 0 and for NaN, -inf at ±0, inf at inf."""
    result = b.select(b.compare("oeq", "%x", "0x7FF0000000000000"), "0x7FF0000000000000", result)
    result = b.select(b.compare("oeq", "%x", b.c(0.0)), "0xFFF0000000000000", result)
    result = b.select(b.compare("uno", "%x", "%x"), "%x", result)
    return b.select(b.compare("olt", "%x", b.c(0.0)), "0x7FF8000000000000", result)


def _mantissa(b: Body, tiny: float, scale: float, shift: int, exponent: tuple[int, int, int]):
    """`x = m·2^e`, `√½ ≤ m < √2`, from the bits (subnormals scaled first); returns
    `(f, e as float)` with `f = m - 1` (or `2m - 1` below √½)."""
    mask, bias, half_bits = exponent
    small = b.compare("olt", "%x", b.c(tiny))
    scaled = b.select(small, b.mul("%x", b.c(scale)), "%x")
    bits = b.to_bits(scaled)
    raw = b.integer("and", b.integer("ashr", bits, shift), mask)
    e = b.integer("sub", raw, bias)
    e = b.select(small, b.integer("sub", e, {23: 23, 52: 54}[shift]), e, b.int)
    fraction = b.integer("and", bits, (1 << shift) - 1)
    m = b.from_bits(b.integer("or", fraction, half_bits))
    below = b.compare("olt", m, b.c(0.70710678118654752440))
    e = b.select(below, b.integer("sub", e, 1), e, b.int)
    f = b.select(below, b.sub(b.add(m, m), b.c(1.0)), b.sub(m, b.c(1.0)))
    return f, b.let(f"sitofp {b.int} {e} to {b.type}")


def log_f32(b: Body) -> str:
    m, ef = _mantissa(b, 1.17549435e-38, 8388608.0, 23, (0xFF, 126, 0x3F000000))
    z = b.mul(m, m)
    y = b.horner(m, [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                     1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                     3.3333331174e-1])  # fmt: skip
    y = b.mul(b.mul(y, m), z)
    y = b.sub(b.add(y, b.mul(b.c(-2.12194440e-4), ef)), b.mul(b.c(0.5), z))
    result = b.add(b.add(m, y), b.mul(b.c(0.693359375), ef))
    return _special_log(b, result)


def log_f64(b: Body) -> str:
    f, k = _mantissa(
        b, 2.2250738585072014e-308, 18014398509481984.0, 52, (0x7FF, 1022, 0x3FE0000000000000)
    )
    s = b.div(f, b.add(b.c(2.0), f))
    z = b.mul(s, s)
    w = b.mul(z, z)
    even = b.mul(b.horner(w, [1.531383769920937332e-01, 2.222219843214978396e-01]), w)
    even = b.mul(b.add(even, b.c(3.999999999940941908e-01)), w)
    odd = b.mul(b.horner(w, [1.479819860511658591e-01, 1.818357216161805012e-01]), w)
    odd = b.mul(b.add(b.mul(b.add(odd, b.c(2.857142874366239149e-01)), w),
                      b.c(6.666666666666735130e-01)), z)  # fmt: skip
    r = b.add(odd, even)
    half_square = b.mul(b.mul(b.c(0.5), f), f)
    inner = b.add(b.mul(s, b.add(half_square, r)), b.mul(k, b.c(1.90821492927058770002e-10)))
    result = b.sub(b.mul(k, b.c(6.93147180369123816490e-01)), b.sub(b.sub(half_square, inner), f))
    return _special_log(b, result)


def tanh_f32(b: Body) -> str:
    bound = 7.90531110763549805
    c = _clamp(b, "%x", -bound, bound)
    z = b.mul(c, c)
    p = b.horner(z, [-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                     5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                     4.89352455891786e-03])  # fmt: skip
    q = b.horner(z, [1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                     4.89352518554385e-03])  # fmt: skip
    result = b.div(b.mul(p, c), q)
    magnitude = b.let("call float @llvm.fabs.f32(float %x)")
    return b.select(b.compare("olt", magnitude, b.c(0.0004)), "%x", result)


def tanh_f64(b: Body) -> str:
    a = b.let("call double @llvm.fabs.f64(double %x)")
    z = b.mul("%x", "%x")
    p = b.sub(b.mul(b.c(-9.64399179425052238628e-1), z), b.c(9.92877231001918586564e1))
    p = b.sub(b.mul(p, z), b.c(1.61468768441708447952e3))
    q = b.mul(b.horner(z, [1.0, 1.12811678491632931402e2, 2.23548839060100448583e3]), z)
    q = b.add(q, b.c(4.84406305325125486048e3))
    near = b.add("%x", b.mul(b.mul("%x", z), b.div(p, q)))
    near = b.select(b.compare("oeq", z, b.c(0.0)), "%x", near)
    twice = b.let(f"call double @{NAMES['exp', 'double']}(double {b.add(a, a)})")
    far = b.sub(b.c(1.0), b.div(b.c(2.0), b.add(twice, b.c(1.0))))
    far = b.select(b.compare("olt", "%x", b.c(0.0)), b.let(f"fneg double {far}"), far)
    return b.select(b.compare("olt", a, b.c(0.625)), near, far)


def erf_f32(b: Body) -> str:
    """erf of float (N. Juffa's minimax fits, about 1 ulp): `x · P(x²)` for |x| up to
    0.927734375, else `±(1 - exp(Q(|x|)))`; both computed, one selected."""
    a = b.let("call float @llvm.fabs.f32(float %x)")
    s = b.mul("%x", "%x")
    r = b.add(b.mul(b.c(-1.72853470e-5), a), b.c(3.83197126e-4))
    u = b.add(b.mul(b.c(-3.88396438e-3), a), b.c(2.42546219e-2))
    r = b.add(b.mul(r, s), u)
    for coefficient in (-1.06777877e-1, -6.34846687e-1, -1.28717512e-1):
        r = b.add(b.mul(r, a), b.c(coefficient))
    r = b.sub(b.mul(r, a), a)
    tail = b.let(f"call float @{NAMES['exp', 'float']}(float {r})")
    far = b.let(f"call float @llvm.copysign.f32(float {b.sub(b.c(1.0), tail)}, float %x)")
    p = b.horner(s, [-5.96761703e-4, 4.99119423e-3, -2.67681349e-2, 1.12819925e-1,
                     -3.76125336e-1, 1.28379166e-1])  # fmt: skip
    near = b.add(b.mul(p, "%x"), "%x")
    return b.select(b.compare("ogt", a, b.c(0.927734375)), far, near)


NAMES = {
    **{
        (name, type): f"dflow.{name}.{suffix}"
        for name in ("exp", "log", "tanh")
        for type, suffix in (("float", "f32"), ("double", "f64"))
    },
    ("erf", "float"): "dflow.erf.f32",
}
"""The LLVM name of each function, by (name, LLVM type)."""

_BUILDERS: dict[tuple[str, str], Callable[[Body], str]] = {
    ("exp", "float"): exp_f32,
    ("exp", "double"): exp_f64,
    ("log", "float"): log_f32,
    ("log", "double"): log_f64,
    ("tanh", "float"): tanh_f32,
    ("tanh", "double"): tanh_f64,
    ("erf", "float"): erf_f32,
}


def definitions(name: str, type: str) -> list[str]:
    """The LLVM text of function `(name, type)` and of what it calls (tanh and erf
    take the absolute value by `llvm.fabs`; tanh of double and erf call exp)."""
    body = Body(type)
    result = _BUILDERS[name, type](body)
    found = [body.function(NAMES[name, type], result)]
    suffix = "f32" if type == "float" else "f64"
    if name in ("tanh", "erf"):
        found.append(f"declare {type} @llvm.fabs.{suffix}({type})")
    if name == "erf":
        found.append(f"declare {type} @llvm.copysign.{suffix}({type}, {type})")
    if (name, type) in (("tanh", "double"), ("erf", "float")):
        found += definitions("exp", type)
    return found
