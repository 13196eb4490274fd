"""Vector loads and stores of some lanes only, as LLVM: the masked memory access of a
generated convolution's edges (`convolution.py`, `depthwise.py`); and a float loaded
into every lane (a weight or a bias).

A lane outside `[first, end)` is neither read (it is zero) nor written, so a vector
may start before a buffer or run past its end; of all 16 lanes, a plain access. The
mask is a constant, which AVX-512 holds in a mask register.
"""

from __future__ import annotations

VECTOR = 16
"""Lanes of a vector: one AVX-512 register of float32."""

MASKED = (
    "declare <16 x float> @llvm.masked.load.v16f32.p0(ptr, i32, <16 x i1>, <16 x float>)",
    "declare void @llvm.masked.store.v16f32.p0(<16 x float>, ptr, i32, <16 x i1>)",
)
"""The intrinsics, declared once per module."""


def mask(first: int, end: int) -> str:
    """Lanes `[first, end)` as an LLVM `<16 x i1>` constant."""
    lanes = (f"i1 {'true' if first <= i < end else 'false'}" for i in range(VECTOR))
    return f"<{', '.join(lanes)}>"


def load(value: str, pointer: str, first: int = 0, end: int = VECTOR) -> str:
    """`value` loaded from `pointer`, lanes `[first, end)` (zeros elsewhere)."""
    if (first, end) == (0, VECTOR):
        return f"  {value} = load <16 x float>, ptr {pointer}, align 4"
    return (
        f"  {value} = call <16 x float> @llvm.masked.load.v16f32.p0(ptr {pointer}, i32 4, "
        f"<16 x i1> {mask(first, end)}, <16 x float> zeroinitializer)"
    )


def store(value: str, pointer: str, first: int = 0, end: int = VECTOR) -> str:
    """`value` stored to `pointer`, lanes `[first, end)` only."""
    if (first, end) == (0, VECTOR):
        return f"  store <16 x float> {value}, ptr {pointer}, align 4"
    return (
        f"  call void @llvm.masked.store.v16f32.p0(<16 x float> {value}, ptr {pointer}, "
        f"i32 4, <16 x i1> {mask(first, end)})"
    )


def splat(name: str, pointer: str) -> list[str]:
    """The float at `pointer` in every lane of vector `name` (`<name>.s` the float)."""
    return [
        f"  {name}.s = load float, ptr {pointer}",
        f"  {name}.0 = insertelement <16 x float> poison, float {name}.s, i64 0",
        f"  {name} = shufflevector <16 x float> {name}.0, <16 x float> poison, "
        "<16 x i32> zeroinitializer",
    ]
