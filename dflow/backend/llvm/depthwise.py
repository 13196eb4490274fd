"""Per-channel convolutions as LLVM: a depthwise convolution of stride 1 (each output
channel reading one input channel), generated row by row, with no copy of its input
or of its output.

A depthwise convolution does `kh * kw` FMAs per output where a dense one does
`c * kh * kw`, so the dense scheme's copies (`convolution.py`: the input into a padded
buffer, the output out of a scratch) cost as much as its arithmetic. Here each output
row is computed in vectors of 16 columns straight from the input: tap `(i, j)` of the
vector of columns `[16 s, 16 s + 16)` reads input row `oh + i - top` from column
`16 s + j - left` on, a masked load (`masks.py`) whose mask, a constant for each
vector and tap column, drops the lanes past either edge as the zero padding would; a
row past the top or bottom edge is read from a row of zeros. The accumulators start
from the bias, the row is stored with its last vector masked, and the elementwise
rest (`epilogue.py`) runs on the plane once it is written, still in the cache (on
each row as it is written, of a plane too large: `WHOLE_REST_MAX`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dflow.backend.llvm import masks
from dflow.backend.llvm.masks import VECTOR

if TYPE_CHECKING:
    from dflow.backend.llvm.convolution import DirectConv

ZERO_MARGIN = 2 * VECTOR
"""Zeros before the row of zeros a row past the edges reads, and (with a row's width)
after it: its masked loads' lanes stay inside it, dropped or not. A masked-off lane
on a page not mapped costs the load a fault assist: a 7x7 depthwise convolution
whose row of zeros was just 7 floats long ran 30x slower at some placements."""


def _zero_row(conv: DirectConv) -> str:
    """The row of zeros, `ZERO_MARGIN` floats into its constant."""
    size = conv.w + ZERO_MARGIN * 3
    return (
        f'getelementptr inbounds ([{size} x float], ptr @"{conv.name}.zeros", i64 0, '
        f"i64 {ZERO_MARGIN})"
    )


def per_channel_lines(conv: DirectConv, signature: str) -> list[str]:
    """The function of a per-channel convolution (`DirectConv.per_channel`): a loop
    over the output planes (image and channel), in it one over their rows."""
    oh, ow = conv.out
    plane = conv.whole_rest
    return [
        f'@"{conv.name}.zeros" = internal constant [{conv.w + ZERO_MARGIN * 3} x float] '
        "zeroinitializer",
        signature,
        "entry:",
        "  br label %plane",
        *_plane(conv),
        "  br label %row",
        "row:",
        "  %oh = phi i64 [ 0, %plane ], [ %oh.next, %row ]",
        *_input_rows(conv),
        *(line for s in range(-(-ow // VECTOR)) for line in _vector(conv, s)),
        *(() if plane else _row_rest(conv)),
        "  %oh.next = add i64 %oh, 1",
        f"  %oh.more = icmp ult i64 %oh.next, {oh}",
        "  br i1 %oh.more, label %row, label %plane.done",
        "plane.done:",
        *(conv.elementwise_call("%q.yat", oh * ow) if plane else ()),
        "  %q.next = add i64 %q, 1",
        f"  %q.more = icmp ult i64 %q.next, {conv.n * conv.k}",
        "  br i1 %q.more, label %plane, label %end",
        "end:",
        "  ret void",
        "}",
    ]


def _row_rest(conv: DirectConv) -> list[str]:
    """The fused rest on row `%oh` just stored (a plane too large for `whole_rest`)."""
    ow = conv.out[1]
    return [
        f"  %row.at = mul i64 %oh, {ow}",
        "  %row.f = add i64 %q.yat, %row.at",
        *conv.elementwise_call("%row.f", ow),
    ]


def _plane(conv: DirectConv) -> list[str]:
    """Plane `%q` (image `q / k`, output channel `q % k`): its input channel's plane
    `%xc`, its output plane `%yc`, its taps' weights `%w<t>` and its bias `%b`, as
    vectors of one value."""
    oh, ow = conv.out
    taps = conv.kh * conv.kw
    lines = [
        "plane:",
        "  %q = phi i64 [ 0, %entry ], [ %q.next, %plane.done ]",
        f"  %q.n = udiv i64 %q, {conv.k}",
        f"  %q.k = urem i64 %q, {conv.k}",
        f"  %q.c = udiv i64 %q.k, {conv.k // conv.c}",
        f"  %q.nc = mul i64 %q.n, {conv.c}",
        "  %q.in = add i64 %q.nc, %q.c",
        f"  %q.xat = mul i64 %q.in, {conv.h * conv.w}",
        "  %xc = getelementptr float, ptr %x, i64 %q.xat",
        f"  %q.yat = mul i64 %q, {oh * ow}",
        "  %yc = getelementptr float, ptr %y, i64 %q.yat",
        f"  %q.wat = mul i64 %q.k, {taps}",
    ]
    for t in range(taps):
        lines += [
            f"  %w{t}.i = add i64 %q.wat, {t}",
            f"  %w{t}.p = getelementptr float, ptr %w, i64 %w{t}.i",
            *masks.splat(f"%w{t}", f"%w{t}.p"),
        ]
    if conv.bias:
        lines += ["  %b.p = getelementptr float, ptr %bias, i64 %q.k", *masks.splat("%b", "%b.p")]
    return lines


def _input_rows(conv: DirectConv) -> list[str]:
    """`%rp<i>`: where input row `oh + i - top` begins, or the row of zeros past the
    top or bottom edge."""
    lines: list[str] = []
    for i in range(conv.kh):
        r = f"%rp{i}"
        lines += [
            f"  {r}.oh = mul i64 %oh, {conv.sh}",
            f"  {r}.ih = add i64 {r}.oh, {i - conv.top}",
            f"  {r}.ok = icmp ult i64 {r}.ih, {conv.h}",
            f"  {r}.at = mul i64 {r}.ih, {conv.w}",
            f"  {r}.in = getelementptr float, ptr %xc, i64 {r}.at",
            f"  {r} = select i1 {r}.ok, ptr {r}.in, ptr {_zero_row(conv)}",
        ]
    return lines


def _vector(conv: DirectConv, s: int) -> list[str]:
    """Output columns `[16 s, 16 s + 16)` of row `%oh`: each tap's input and FMA, from
    the bias, then the store of the columns that exist."""
    _, ow = conv.out
    column = s * VECTOR
    acc = "%b" if conv.bias else "zeroinitializer"
    lines: list[str] = []
    for i in range(conv.kh):
        taps = _unit_stride(conv, s, i) if conv.sw == 1 else _stride_two(conv, s, i)
        for j, x, loads in taps:
            t = f"%v{s}.{i}.{j}"
            lines += [
                *loads,
                f"  {t} = call <16 x float> @llvm.fma.v16f32(<16 x float> %w{i * conv.kw + j}, "
                f"<16 x float> {x}, <16 x float> {acc})",
            ]
            acc = t
    return [
        *lines,
        f"  %y{s}.r = mul i64 %oh, {ow}",
        f"  %y{s}.at = add i64 %y{s}.r, {column}",
        f"  %y{s}.p = getelementptr float, ptr %yc, i64 %y{s}.at",
        masks.store(acc, f"%y{s}.p", 0, min(VECTOR, ow - column)),
    ]


def _unit_stride(conv: DirectConv, s: int, i: int) -> list[tuple[int, str, list[str]]]:
    """Of stride 1, the input of each tap `(i, j)` of vector `s` that reads any column:
    one masked load (its name, and the lines that load it)."""
    _, ow = conv.out
    column = s * VECTOR
    taps: list[tuple[int, str, list[str]]] = []
    for j in range(conv.kw):
        shift = column + j - conv.left
        first, end = max(0, -shift), min(VECTOR, conv.w - shift, ow - column)
        if first < end:
            x = f"%x{s}.{i}.{j}"
            pointer = f"  {x}.p = getelementptr float, ptr %rp{i}, i64 {shift}"
            taps.append((j, x, [pointer, masks.load(x, f"{x}.p", first, end)]))
    return taps


def _stride_two(conv: DirectConv, s: int, i: int) -> list[tuple[int, str, list[str]]]:
    """Of column stride 2, the inputs of taps `(i, j)` and `(i, j + 1)` of vector `s`
    (`j` even) are the even and odd lanes of the 32 columns from `2 (16 s) + j - left`:
    two masked loads, and a shuffle for each tap."""
    _, ow = conv.out
    column = s * VECTOR
    taps: list[tuple[int, str, list[str]]] = []
    for j in range(0, conv.kw, 2):
        shift = 2 * column + j - conv.left
        w = f"%w{s}.{i}.{j}"
        loads: list[str] = []
        for half in range(2):
            at = shift + half * VECTOR
            first = max(0, -at)
            end = min(VECTOR, conv.w - at, 2 * (ow - column) - half * VECTOR)
            loads += [f"  {w}.p{half} = getelementptr float, ptr %rp{i}, i64 {at}"]
            loads += [masks.load(f"{w}.h{half}", f"{w}.p{half}", first, end)]
        for parity in range(min(2, conv.kw - j)):
            x = f"%x{s}.{i}.{j + parity}"
            lanes = ", ".join(f"i32 {2 * lane + parity}" for lane in range(VECTOR))
            pair = f"<16 x float> {w}.h0, <16 x float> {w}.h1"
            loads.append(f"  {x} = shufflevector {pair}, <16 x i32> <{lanes}>")
            taps.append((j + parity, x, loads))
            loads = []
    return taps
