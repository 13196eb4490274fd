"""Direct convolutions as LLVM: a float32 2-D convolution of dilation 1, generated
for its static shapes, strides and groups as a function of vector FMAs.

The input of each image is copied once into a zero-padded buffer (its rows `Wp`
long), so that an output position `p = oh * Wp + ow` reads the input at
`p + i * Wp + j` for tap `(i, j)`: consecutive positions read consecutive inputs,
whatever the tap, and a vector of `VECTOR` positions is one load. Positions whose
`ow` falls in the padding are computed and dropped (a 7x7 output with pads of 1
computes 63 positions for 49). Of strides `(sh, sw)`, the padded input is held as
`sh * sw` phases, each the rows and columns of one remainder (`Wq = ceil(Wp / sw)`
long), and tap `(i, j)` reads phase `(i % sh, j % sw)` at `p + (i / sh) * Wq +
j / sw`: consecutive again. A 1x1 filter of stride 1 and no pads (`in_place`) needs
no copy: its input is its padded input and its output the tiles' layout, so its
tiles read `x` and write `y`, the positions past the last whole tile in one tile
of masked loads and stores. A max pool (`pool`) is generated the same way, each
channel over its own plane of an input padded with -inf.

A tile is `CHANNELS` output channels by `VECTORS` vectors of positions, its
`CHANNELS * VECTORS` accumulators held in registers across the input channels and
taps: per tap, `VECTORS` input loads and `CHANNELS` broadcast weights feed
`CHANNELS * VECTORS` FMAs. Weights are read in their own layout (OIHW), one scalar
broadcast per FMA row, so nothing is packed. Tiles write a scratch of the padded
positions, from which each output row is copied into place. The output channels
left over by `CHANNELS` make one narrower tile. Of several groups, each channel
reads its group's inputs: one load per tap for the tile where its channels share a
group, one per channel otherwise (a depthwise convolution).

Its scratch buffers come from `malloc` (a few MB at most for a network's layer);
the vector width suits AVX-512's 32 registers (16 accumulators of 16 lanes). Of the
tiles tried on ResNet-18's and the conv net's 3x3 convolutions (one core,
2026-11-29, GFLOP/s against SGEMM's 101), 8 channels by 2 vectors was the best or
within 5% of it on each (86-110): 4 by 3 fell to 58 at 512 channels of 7x7, where
its 48 positions cover 63 in two tiles and the weights are read twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from dflow.backend.llvm import masks
from dflow.backend.llvm.depthwise import per_channel_lines
from dflow.backend.llvm.masks import VECTOR

VECTORS = 2
"""Vectors of output positions per tile, by default."""

CHANNELS = 8
"""Output channels per tile, by default."""

WHOLE_REST_MAX = 1 << 22
"""The most elements a convolution writes in place per image (all its channels) for
its fused rest to run once on all of them after they are written, rather than on
each tile's positions of each channel as they are written; of a depthwise
convolution, the most elements of a plane, rather than on each row. Calls on runs of
32 cost their setup many times over: on one core (2026-11-29) a 1x1 convolution of
16 to 96 channels on 112 x 112 with a sigmoid fused took 3.31 ms so, 2.70 ms with
one call after the whole image (4.8 MB, read back from the cache), and
EfficientNet-B0 21.5 against 20.6 ms; past 16 MB an image is handed over a tile at
a time, which keeps it in the cache."""

FMA = "declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)"
MEMSET = "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)"
MEMCPY = "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)"
MALLOC = "declare ptr @malloc(i64)"
FREE = "declare void @free(ptr)"
DECLARATIONS = (FMA, *masks.MASKED, MEMSET, MEMCPY, MALLOC, FREE)
"""What a convolution function calls, declared once per module."""


@dataclass(frozen=True)
class DirectConv:
    """`y[n, k, oh, ow] = sum over c, i, j of x_padded[n, c, oh + i, ow + j] *
    w[k, c, i, j]`: the static shapes and pads of one convolution."""

    n: int
    c: int
    h: int
    w: int
    k: int
    kh: int
    kw: int
    top: int
    left: int
    bottom: int
    right: int
    bias: bool = False
    """Whether a bias per output channel is added (`conv2d_bias`): the accumulators
    start from it."""
    sh: int = 1
    sw: int = 1
    """The strides."""
    groups: int = 1
    """Groups of input and output channels (a depthwise convolution: as many as
    input channels), each output channel reading only its group's inputs."""
    pool: bool = False
    """A max pool instead (`k` is `c`, no weights): the padding is -inf, and each
    tap takes the maximum as NumPy does (a NaN propagates)."""
    average: bool = False
    """Of a pool: an average pool, whose padding is 0 and whose taps are summed, each
    sum divided by the taps of its window inside the input (the padding not
    counted, as `df.avg_pool2d`), read from a constant table (`counts`)."""
    vectors: int = VECTORS
    """Vectors of output positions per tile."""
    channels: int = CHANNELS
    """Output channels per tile."""
    fused: str = ""
    """The kernel whose elementwise rest (`epilogue.py`) this convolution runs on each
    piece of its output as it writes it, while it is in the cache: it calls
    `@"<fused>.elementwise"(<buffers>, f0, f1)` on the output's elements `[f0, f1)`
    (row-major, of the whole batch), and is that kernel's own `@"<fused>.conv.<shapes>"`
    (or `.max_pool.`).
    Empty: it has none."""
    buffers: int = 0
    """The buffers the elementwise rest reads or writes, passed after `y`."""

    rest_inlined: ClassVar[bool] = True
    """The elementwise rest inlined where it is called, on each piece written."""

    @property
    def max_pool(self) -> bool:
        """A max pool: its padding is -inf (a convolution's and an average pool's 0)."""
        return self.pool and not self.average

    @property
    def padded(self) -> tuple[int, int]:
        return self.h + self.top + self.bottom, self.w + self.left + self.right

    @property
    def phase(self) -> tuple[int, int]:
        """Rows and columns of a phase of the padded input: of stride s, the input
        is held as s x s phases (rows and columns of each remainder modulo s), so
        that a tap reads consecutive columns of one phase for consecutive outputs."""
        hp, wp = self.padded
        return -(-hp // self.sh), -(-wp // self.sw)

    @property
    def plane(self) -> int:
        """Floats of one channel of one phase."""
        hq, wq = self.phase
        return hq * wq

    def tap_offset(self, tap: int) -> int:
        """Where tap `(i, j)` (`tap = i * kw + j`) reads, from output position `p` of
        channel 0: in phase `(i % sh, j % sw)`, `(i / sh)` rows and `j / sw` columns
        on."""
        i, j = divmod(tap, self.kw)
        phase = (i % self.sh) * self.sw + j % self.sw
        return phase * self.c * self.plane + (i // self.sh) * self.phase[1] + j // self.sw

    @property
    def out(self) -> tuple[int, int]:
        hp, wp = self.padded
        return (hp - self.kh) // self.sh + 1, (wp - self.kw) // self.sw + 1

    @property
    def tile(self) -> int:
        """Positions per tile."""
        return VECTOR * self.vectors

    @property
    def positions(self) -> int:
        """The padded positions computed per output channel: whole tiles covering
        `oh * Wq` (`oh * ow` itself `in_place`, its last tile masked)."""
        oh, _ = self.out
        count = oh * self.phase[1]
        return count if self.in_place else -(-count // self.tile) * self.tile

    @property
    def whole_rest(self) -> bool:
        """Whether the fused rest runs once per image (written in place) or per plane
        (depthwise), not per tile or row: `WHOLE_REST_MAX`."""
        oh, ow = self.out
        count = oh * ow if self.per_channel else self.k * self.positions
        return count <= WHOLE_REST_MAX

    @property
    def in_place(self) -> bool:
        """A 1x1 filter of stride 1 and no padding (not a pool's): the input is its own
        padded input and the output its own scratch (each channel's plane its
        positions), so the tiles read `x` and write `y` themselves."""
        unit = (self.kh, self.kw, self.sh, self.sw) == (1, 1, 1, 1)
        return unit and not (self.top or self.left or self.bottom or self.right or self.pool)

    @property
    def input_floats(self) -> int:
        """The padded input buffer (its phases one after the other), with room for
        the last tile's reads past it."""
        wq = self.phase[1]
        return self.sh * self.sw * self.c * self.plane + self.positions + self.kh * wq + self.kw

    @property
    def name(self) -> str:
        """The function's name: its shapes, so that a module defines each once (a
        fused one, `<kernel>.` before them: its kernel's own)."""
        pads = f"{self.top}.{self.left}.{self.bottom}.{self.right}"
        shapes = f"{self.n}x{self.c}x{self.h}x{self.w}.{self.k}x{self.kh}x{self.kw}"
        strides = "" if (self.sh, self.sw) == (1, 1) else f".s{self.sh}.{self.sw}"
        kind = ("avg_pool" if self.average else "max_pool") if self.pool else "conv"
        groups = f".g{self.groups}" if self.groups > 1 else ""
        bias = ".bias" if self.bias else ""
        return f"{self.fused or 'dflow'}.{kind}.{shapes}.p{pads}{strides}{groups}{bias}"

    @property
    def group_channels(self) -> tuple[int, int]:
        """Input and output channels per group."""
        return self.c // self.groups, self.k // self.groups

    def elementwise_call(self, first: str, count: int) -> list[str]:
        """The elementwise rest called on the `count` elements from `first` (a
        register), where the convolution has one."""
        if not self.fused:
            return []
        buffers = "".join(f"ptr %e{i}, " for i in range(self.buffers))
        return [
            f"  {first}.end = add i64 {first}, {count}",
            f'  call void @"{self.fused}.elementwise"({buffers}i64 {first}, i64 {first}.end)',
        ]

    @property
    def per_channel(self) -> bool:
        """A convolution whose output channels each read one input channel (a depthwise
        one, `k` a multiple of `c`) of column stride 1 or 2: generated row by row,
        without copies (`depthwise.py`)."""
        depthwise = self.groups == self.c and self.k % self.c == 0
        return depthwise and self.sw in (1, 2) and not self.pool

    def definition(self) -> str:
        """The function `void @<name>(ptr x, ptr w, [ptr bias,] ptr y)`, internal to
        its module (an average pool's table of counts before it)."""
        writer = _Writer(self)
        if self.per_channel:
            return "\n".join(per_channel_lines(self, writer.signature))
        lines = writer.in_place if self.in_place else writer.lines
        return "\n".join([self.counts_table(), *lines] if self.average else lines)

    def counts(self) -> list[int]:
        """Of each position of a channel's plane (`positions`, row-major over rows of
        `phase[1]` columns): the taps of its window inside the input, 1 for the
        positions past the output's columns or rows (computed, never copied out)."""
        out_h, out_w = self.out
        wq = self.phase[1]

        def inside(at: int, stride: int, before: int, taps: int, size: int) -> int:
            return sum(0 <= at * stride + t - before < size for t in range(taps))

        found: list[int] = []
        for position in range(self.positions):
            row, column = divmod(position, wq)
            if row >= out_h or column >= out_w:
                found.append(1)
                continue
            rows = inside(row, self.sh, self.top, self.kh, self.h)
            found.append(rows * inside(column, self.sw, self.left, self.kw, self.w))
        return found

    def counts_table(self) -> str:
        """`@"<name>.counts"`: `counts` as a constant array of floats."""
        values = ", ".join(f"float {float(count):e}" for count in self.counts())
        table = f"[{self.positions} x float] [{values}]"
        return f'@"{self.name}.counts" = internal constant {table}'


@dataclass
class _Writer:
    conv: DirectConv
    prefix: str = ""
    """Of the labels and of the tile's base `%<prefix>pbase`: a second set of tiles
    (the masked last one) in the same function."""
    last: int = 0
    """The positions of a masked last tile (0: every tile whole)."""

    @property
    def signature(self) -> str:
        """`define internal void @<name>(ptr %x, [ptr %w,] [ptr %bias,] ptr %y, [ptr
        %e<i>...]) {`."""
        conv = self.conv
        names = ["x", *(() if conv.pool else ("w",)), *(("bias",) if conv.bias else ())]
        names += ["y", *(f"e{i}" for i in range(conv.buffers))]
        parameters = ", ".join(f"ptr %{name}" for name in names)
        return f'define internal void @"{conv.name}"({parameters}) {{'

    @property
    def base(self) -> str:
        """The first position of the tile: `%pbase`, or the masked tile's."""
        return f"%{self.prefix}pbase"

    @cached_property
    def in_place(self) -> list[str]:
        """The function of an `in_place` convolution: per image, its whole tiles of
        positions, then a last tile of those left over, masked."""
        conv = self.conv
        full, last = divmod(conv.positions, conv.tile)
        after_full = "mptile" if last else "out.done"
        lines = [
            self.signature,
            "entry:",
            "  br label %image",
            "image:",
            "  %n = phi i64 [ 0, %entry ], [ %n.next, %out.done ]",
            f"  %x.at = mul i64 %n, {conv.c * conv.positions}",
            "  %xp = getelementptr float, ptr %x, i64 %x.at",
            f"  %y.at = mul i64 %n, {conv.k * conv.positions}",
            "  %yp = getelementptr float, ptr %y, i64 %y.at",
            f"  br label %{'ptile' if full else after_full}",
        ]
        if full:
            lines += [
                "ptile:",
                "  %pb = phi i64 [ 0, %image ], [ %pb.next, %ptile.next ]",
                f"  %pbase = mul i64 %pb, {conv.tile}",
                *self.channel_tiles(),
                "ptile.next:",
                "  %pb.next = add i64 %pb, 1",
                f"  %pb.more = icmp ult i64 %pb.next, {full}",
                f"  br i1 %pb.more, label %ptile, label %{after_full}",
            ]
        if last:
            lines += [
                "mptile:",
                f"  %mpbase = add i64 0, {full * conv.tile}",
                *_Writer(conv, "m", last).channel_tiles(),
                "mptile.next:",
                "  br label %out.done",
            ]
        whole = conv.whole_rest and conv.k * conv.positions
        return [
            *lines,
            "out.done:",
            *(conv.elementwise_call("%y.at", whole) if whole else ()),
            "  %n.next = add i64 %n, 1",
            f"  %n.more = icmp ult i64 %n.next, {conv.n}",
            "  br i1 %n.more, label %image, label %end",
            "end:",
            "  ret void",
            "}",
        ]

    def lanes(self, vector: int) -> int:
        """The positions of vector `vector` of the tile that exist (16 but in a
        masked last tile)."""
        if not self.last:
            return VECTOR
        return max(0, min(VECTOR, self.last - vector * VECTOR))

    @cached_property
    def lines(self) -> list[str]:
        """The function: per image, the padded input copied in, the tiles of each
        tile of positions, the output rows copied out."""
        conv = self.conv
        x_bytes, y_bytes = 4 * conv.input_floats, 4 * conv.k * conv.positions
        lines = [
            self.signature,
            "entry:",
            f"  %xp = call ptr @malloc(i64 {x_bytes})",
            f"  %yp = call ptr @malloc(i64 {y_bytes})",
            "  br label %image",
            "image:",
            "  %n = phi i64 [ 0, %entry ], [ %n.next, %out.done ]",
            *(self.filled() if conv.max_pool else self.zeroed(x_bytes)),
            *(self.rows() if (conv.sh, conv.sw) == (1, 1) else self.elements()),
            "tiles:",
            "  br label %ptile",
            "ptile:",
            "  %pb = phi i64 [ 0, %tiles ], [ %pb.next, %ptile.next ]",
            f"  %pbase = mul i64 %pb, {conv.tile}",
        ]
        lines += self.pool_tiles() if conv.pool else self.channel_tiles()
        tiles = conv.positions // conv.tile
        lines += [
            "ptile.next:",
            "  %pb.next = add i64 %pb, 1",
            f"  %pb.more = icmp ult i64 %pb.next, {tiles}",
            "  br i1 %pb.more, label %ptile, label %out",
            *self.copy_out(),
            "end:",
            "  call void @free(ptr %xp)",
            "  call void @free(ptr %yp)",
            "  ret void",
            "}",
        ]
        return lines

    def channel_tiles(self) -> list[str]:
        """A convolution's tiles of output channels for the positions of tile `%pb`:
        full tiles of `channels`, then one narrower tile of those left over."""
        conv = self.conv
        full, left = divmod(conv.k, conv.channels)
        p = self.prefix
        following = f"{p}tail" if left else f"{p}ptile.next"
        lines = [f"  br label %{p}ktile" if full else f"  br label %{following}"]
        if full:
            lines += self.tiles(f"{p}ktile", f"{p}ptile", full, conv.channels, 0, following)
        if left:
            before = f"{p}ktile.next" if full else f"{p}ptile"
            first = full * conv.channels
            lines += self.tiles(f"{p}tail", before, 1, left, first, f"{p}ptile.next")
        return lines

    @property
    def entry(self) -> str:
        """The block before the rows are copied in: the image's, or the fill's."""
        return "fill" if self.conv.max_pool else "image"

    @staticmethod
    def zeroed(x_bytes: int) -> list[str]:
        """The padded input buffer zeroed (a convolution's padding)."""
        return [
            f"  call void @llvm.memset.p0.i64(ptr %xp, i8 0, i64 {x_bytes}, i1 0)",
            "  br label %rows",
        ]

    def filled(self) -> list[str]:
        """The padded input buffer filled with -inf (a max pool's padding, which no
        window's maximum takes over a number)."""
        return [
            "  br label %fill",
            "fill:",
            "  %f = phi i64 [ 0, %image ], [ %f.next, %fill ]",
            "  %f.at = getelementptr float, ptr %xp, i64 %f",
            "  store float 0xFFF0000000000000, ptr %f.at",
            "  %f.next = add i64 %f, 1",
            f"  %f.more = icmp ult i64 %f.next, {self.conv.input_floats}",
            "  br i1 %f.more, label %fill, label %rows",
        ]

    def pool_tiles(self) -> list[str]:
        """Each channel's pool over the taps, for the positions of tile `%pb`, in
        `VECTORS` accumulators stored to the scratch: a maximum from -inf, each tap's
        input taken where it is greater or NaN (NumPy's maximum); an average's sum
        from 0, divided by the counts of its positions' windows
        (`@"<name>.counts"`)."""
        conv = self.conv
        lines = [
            "  br label %pool",
            "pool:",
            "  %pk = phi i64 [ 0, %ptile ], [ %pk.next, %pool ]",
            f"  %pk.plane = mul i64 %pk, {conv.plane}",
            "  %pk.base = add i64 %pk.plane, %pbase",
        ]
        start = "zeroinitializer" if conv.average else "splat (float 0xFFF0000000000000)"
        best = [start] * conv.vectors
        for tap in range(conv.kh * conv.kw):
            at = conv.tap_offset(tap)
            for v in range(conv.vectors):
                t = f"%pk.t{tap}.{v}"
                lines += [
                    f"  {t}.o = add i64 %pk.base, {at + v * VECTOR}",
                    f"  {t}.p = getelementptr float, ptr %xp, i64 {t}.o",
                    f"  {t}.x = load <16 x float>, ptr {t}.p, align 4",
                    *self.pooled(t, best[v]),
                ]
                best[v] = t
        lines += [f"  %pk.y = mul i64 %pk, {conv.positions}", "  %pk.row = add i64 %pk.y, %pbase"]
        for v in range(conv.vectors):
            lines += self.divided(v, best[v]) if conv.average else []
            value = f"%pk.m{v}" if conv.average else best[v]
            lines += [
                f"  %pk.s{v}.i = add i64 %pk.row, {v * VECTOR}",
                f"  %pk.s{v} = getelementptr float, ptr %yp, i64 %pk.s{v}.i",
                f"  store <16 x float> {value}, ptr %pk.s{v}, align 4",
            ]
        return [
            *lines,
            "  %pk.next = add i64 %pk, 1",
            f"  %pk.more = icmp ult i64 %pk.next, {conv.c}",
            "  br i1 %pk.more, label %pool, label %ptile.next",
        ]

    def pooled(self, t: str, best: str) -> list[str]:
        """Tap `t`'s input (`{t}.x`) folded into the accumulator `best` as `t`: added
        (an average pool), or taken where greater or NaN (a max pool)."""
        if self.conv.average:
            return [f"  {t} = fadd <16 x float> {best}, {t}.x"]
        return [
            f"  {t}.gt = fcmp ogt <16 x float> {t}.x, {best}",
            f"  {t}.nan = fcmp uno <16 x float> {t}.x, {t}.x",
            f"  {t}.keep = or <16 x i1> {t}.gt, {t}.nan",
            f"  {t} = select <16 x i1> {t}.keep, <16 x float> {t}.x, <16 x float> {best}",
        ]

    def divided(self, v: int, total: str) -> list[str]:
        """An average pool's sums of vector `v` of the tile divided by their counts, as
        `%pk.m<v>`."""
        table = f'@"{self.conv.name}.counts"'
        return [
            f"  %pk.n{v}.i = add i64 %pbase, {v * VECTOR}",
            f"  %pk.n{v}.p = getelementptr float, ptr {table}, i64 %pk.n{v}.i",
            f"  %pk.n{v} = load <16 x float>, ptr %pk.n{v}.p, align 4",
            f"  %pk.m{v} = fdiv <16 x float> {total}, %pk.n{v}",
        ]

    def rows(self) -> list[str]:
        """Each input row of image `%n` copied into the padded buffer (of stride 1:
        one phase)."""
        conv = self.conv
        hp, wp = conv.padded
        return [
            "rows:",
            f"  %r = phi i64 [ 0, %{self.entry} ], [ %r.next, %rows ]",
            f"  %r.c = udiv i64 %r, {conv.h}",
            f"  %r.h = urem i64 %r, {conv.h}",
            f"  %r.plane = mul i64 %r.c, {hp}",
            "  %r.row = add i64 %r.plane, %r.h",
            f"  %r.shifted = add i64 %r.row, {conv.top}",
            f"  %r.start = mul i64 %r.shifted, {wp}",
            f"  %r.dst = add i64 %r.start, {conv.left}",
            f"  %r.image = mul i64 %n, {conv.c * conv.h}",
            "  %r.src.row = add i64 %r.image, %r",
            f"  %r.src = mul i64 %r.src.row, {conv.w}",
            "  %r.to = getelementptr float, ptr %xp, i64 %r.dst",
            "  %r.from = getelementptr float, ptr %x, i64 %r.src",
            f"  call void @llvm.memcpy.p0.p0.i64(ptr %r.to, ptr %r.from, i64 {4 * conv.w}, i1 0)",
            "  %r.next = add i64 %r, 1",
            f"  %r.more = icmp ult i64 %r.next, {conv.c * conv.h}",
            "  br i1 %r.more, label %rows, label %tiles",
        ]

    def elements(self) -> list[str]:
        """Each input row of image `%n` copied into its phases of the padded buffer:
        row `top + ih` to phase row `(top + ih) % sh` at `(top + ih) / sh`; its
        columns of each remainder `(left + iw) % sw`, every `sw`-th, one after the
        other in their phase (a loop per remainder, without divisions)."""
        conv = self.conv
        wq = conv.phase[1]
        lines = [
            "rows:",
            f"  %r = phi i64 [ 0, %{self.entry} ], [ %r.next, %r.done ]",
            f"  %r.c = udiv i64 %r, {conv.h}",
            f"  %r.h = urem i64 %r, {conv.h}",
            f"  %r.row = add i64 %r.h, {conv.top}",
            f"  %r.prow = urem i64 %r.row, {conv.sh}",
            f"  %r.qrow = udiv i64 %r.row, {conv.sh}",
            f"  %r.phase = mul i64 %r.prow, {conv.sw * conv.c * conv.plane}",
            f"  %r.plane = mul i64 %r.c, {conv.plane}",
            f"  %r.line = mul i64 %r.qrow, {wq}",
            "  %r.in.phase = add i64 %r.plane, %r.line",
            "  %r.dst = add i64 %r.phase, %r.in.phase",
            f"  %r.image = mul i64 %n, {conv.c * conv.h}",
            "  %r.src.row = add i64 %r.image, %r",
            f"  %r.src = mul i64 %r.src.row, {conv.w}",
        ]
        previous = "rows"
        for remainder in range(conv.sw):
            first = (remainder - conv.left) % conv.sw
            count = max(0, -(-(conv.w - first) // conv.sw))
            if count:
                lines += self.columns(remainder, first, count, previous)
                previous = f"c{remainder}.done"
        return [
            *lines,
            "  br label %r.done",
            "r.done:",
            "  %r.next = add i64 %r, 1",
            f"  %r.more = icmp ult i64 %r.next, {conv.c * conv.h}",
            "  br i1 %r.more, label %rows, label %tiles",
        ]

    def columns(self, remainder: int, first: int, count: int, previous: str) -> list[str]:
        """The columns `first`, `first + sw`, ... (`count` of them) of row `%r` into
        phase column `remainder`, from its column `(left + first) / sw` on."""
        conv = self.conv
        c = f"%c{remainder}"
        at = remainder * conv.c * conv.plane + (conv.left + first) // conv.sw
        return [
            f"  br label {c}",
            f"c{remainder}:",
            f"  {c}.t = phi i64 [ 0, %{previous} ], [ {c}.t.next, {c} ]",
            f"  {c}.step = mul i64 {c}.t, {conv.sw}",
            f"  {c}.src.col = add i64 {c}.step, {first}",
            f"  {c}.src = add i64 %r.src, {c}.src.col",
            f"  {c}.from = getelementptr float, ptr %x, i64 {c}.src",
            f"  {c}.v = load float, ptr {c}.from",
            f"  {c}.dst.col = add i64 {c}.t, {at}",
            f"  {c}.dst = add i64 %r.dst, {c}.dst.col",
            f"  {c}.to = getelementptr float, ptr %xp, i64 {c}.dst",
            f"  store float {c}.v, ptr {c}.to",
            f"  {c}.t.next = add i64 {c}.t, 1",
            f"  {c}.more = icmp ult i64 {c}.t.next, {count}",
            f"  br i1 {c}.more, label {c}, label {c}.done",
            f"c{remainder}.done:",
        ]

    def tiles(
        self, label: str, before: str, count: int, channels: int, first: int, after: str
    ) -> list[str]:
        """`count` tiles of `channels` output channels from channel `first`, for the
        positions of tile `%pb`, then a branch to `after`."""
        conv = self.conv
        taps = conv.kh * conv.kw
        acc = [[f"%{label}.a{q}.{v}" for v in range(conv.vectors)] for q in range(channels)]
        latch = f"{label}.e.done" if self.tile_rest else f"{label}.store"
        lines = [
            f"{label}:",
            f"  %{label}.kb = phi i64 [ 0, %{before} ], [ %{label}.kb.next, %{latch} ]",
            f"  %{label}.tiled = mul i64 %{label}.kb, {channels}",
            f"  %{label}.first = add i64 %{label}.tiled, {first}",
        ]
        starts = ["zeroinitializer"] * channels
        if conv.bias:
            for q in range(channels):
                b = f"%{label}.b{q}"
                lines += [
                    f"  {b}.k = add i64 %{label}.first, {q}",
                    f"  {b}.p = getelementptr float, ptr %bias, i64 {b}.k",
                    *masks.splat(b, f"{b}.p"),
                ]
                starts[q] = b
        lines += [
            f"  br label %{label}.chan",
            f"{label}.chan:",
            f"  %{label}.ci = phi i64 [ 0, %{label} ], [ %{label}.ci.next, %{label}.chan ]",
        ]
        for q in range(channels):
            for v in range(conv.vectors):
                lines.append(
                    f"  {acc[q][v]} = phi <16 x float> [ {starts[q]}, %{label} ], "
                    f"[ {acc[q][v]}.t{taps - 1}, %{label}.chan ]"
                )
        cg, kg = conv.group_channels
        shared = conv.groups == 1 or kg % channels == 0
        for q in range(channels):
            lines += [
                f"  %{label}.k{q} = add i64 %{label}.first, {q}",
                f"  %{label}.wk{q} = mul i64 %{label}.k{q}, {cg}",
                f"  %{label}.wc{q} = add i64 %{label}.wk{q}, %{label}.ci",
                f"  %{label}.w{q} = mul i64 %{label}.wc{q}, {taps}",
            ]
        lines += self.bases(label, range(1) if shared else range(channels))
        for tap in range(taps):
            lines += self.tap(label, tap, channels, acc, shared)
        lines += [
            f"  %{label}.ci.next = add i64 %{label}.ci, 1",
            f"  %{label}.ci.more = icmp ult i64 %{label}.ci.next, {cg}",
            f"  br i1 %{label}.ci.more, label %{label}.chan, label %{label}.store",
            f"{label}.store:",
        ]
        for q in range(channels):
            lines += [
                f"  %{label}.y{q}.row = mul i64 %{label}.k{q}, {conv.positions}",
                f"  %{label}.y{q} = add i64 %{label}.y{q}.row, {self.base}",
            ]
            for v in range(conv.vectors):
                at = f"%{label}.y{q}.{v}"
                lines += [
                    f"  {at}.i = add i64 %{label}.y{q}, {v * VECTOR}",
                    f"  {at} = getelementptr float, ptr %yp, i64 {at}.i",
                    masks.store(f"{acc[q][v]}.t{taps - 1}", at, 0, self.lanes(v)),
                ]
        lines += self.tile_elementwise(label, channels)
        lines += [
            f"  %{label}.kb.next = add i64 %{label}.kb, 1",
            f"  %{label}.kb.more = icmp ult i64 %{label}.kb.next, {count}",
            f"  br i1 %{label}.kb.more, label %{label}, label %{label}.next",
            f"{label}.next:",
            f"  br label %{after}",
        ]
        return lines

    @property
    def tile_rest(self) -> bool:
        """Whether the fused rest runs on each tile as it is written (in place, an
        image too large for `whole_rest`)."""
        conv = self.conv
        return bool(conv.fused) and conv.in_place and not conv.whole_rest

    def tile_elementwise(self, label: str, channels: int) -> list[str]:
        """Written in place, the elementwise rest of the tile's positions of each of
        its `channels`, in a loop after its stores (one call to inline)."""
        conv = self.conv
        if not self.tile_rest:
            return []
        e = f"%{label}.e"
        return [
            f"  br label {e}",
            f"{label}.e:",
            f"  {e}.q = phi i64 [ 0, %{label}.store ], [ {e}.q.next, {e} ]",
            f"  {e}.k = add i64 %{label}.first, {e}.q",
            f"  {e}.kp = mul i64 {e}.k, {conv.positions}",
            f"  {e}.p = add i64 {e}.kp, {self.base}",
            f"  {e}.f = add i64 %y.at, {e}.p",
            *conv.elementwise_call(f"{e}.f", self.last or conv.tile),
            f"  {e}.q.next = add i64 {e}.q, 1",
            f"  {e}.q.more = icmp ult i64 {e}.q.next, {channels}",
            f"  br i1 {e}.q.more, label {e}, label %{label}.e.done",
            f"{label}.e.done:",
        ]

    def bases(self, label: str, channels: range) -> list[str]:
        """Where channel `ci` of the group of each of `channels` (one, the tile's
        first, where all share a group) begins in the padded input, at tile `%pb`:
        `%<label>.base<q>`."""
        conv = self.conv
        cg, kg = conv.group_channels
        lines: list[str] = []
        for q in channels:
            base = f"%{label}.base{q}"
            lines += [
                f"  {base}.g = udiv i64 %{label}.k{q}, {kg}",
                f"  {base}.gc = mul i64 {base}.g, {cg}",
                f"  {base}.c = add i64 {base}.gc, %{label}.ci",
                f"  {base}.plane = mul i64 {base}.c, {conv.plane}",
                f"  {base} = add i64 {base}.plane, {self.base}",
            ]
        return lines

    def tap(
        self, label: str, tap: int, channels: int, acc: list[list[str]], shared: bool
    ) -> list[str]:
        """Tap `tap`'s FMAs: its input vectors (the tile's, `shared`, or each
        channel's) times each channel's weight."""
        conv = self.conv
        t = f"%{label}.t{tap}"
        at = conv.tap_offset(tap)
        lines: list[str] = []
        for r in range(1) if shared else range(channels):
            lines.append(f"  {t}.off{r} = add i64 %{label}.base{r}, {at}")
            for v in range(conv.vectors):
                lines += [
                    f"  {t}.o{r}.{v} = add i64 {t}.off{r}, {v * VECTOR}",
                    f"  {t}.p{r}.{v} = getelementptr float, ptr %xp, i64 {t}.o{r}.{v}",
                    masks.load(f"{t}.x{r}.{v}", f"{t}.p{r}.{v}", 0, self.lanes(v)),
                ]
        for q in range(channels):
            r = 0 if shared else q
            lines += [
                f"  {t}.wi{q} = add i64 %{label}.w{q}, {tap}",
                f"  {t}.wp{q} = getelementptr float, ptr %w, i64 {t}.wi{q}",
                *masks.splat(f"{t}.wv{q}", f"{t}.wp{q}"),
            ]
            for v in range(conv.vectors):
                previous = acc[q][v] if tap == 0 else f"{acc[q][v]}.t{tap - 1}"
                lines.append(
                    f"  {acc[q][v]}.t{tap} = call <16 x float> @llvm.fma.v16f32("
                    f"<16 x float> {t}.wv{q}, <16 x float> {t}.x{r}.{v}, <16 x float> {previous})"
                )
        return lines

    def copy_out(self) -> list[str]:
        """Each output row of image `%n` copied from the scratch into `y`."""
        conv = self.conv
        oh, ow = conv.out
        wq = conv.phase[1]
        return [
            "out:",
            "  br label %out.row",
            "out.row:",
            "  %o = phi i64 [ 0, %out ], [ %o.next, %out.row ]",
            f"  %o.k = udiv i64 %o, {oh}",
            f"  %o.h = urem i64 %o, {oh}",
            f"  %o.kbase = mul i64 %o.k, {conv.positions}",
            f"  %o.hbase = mul i64 %o.h, {wq}",
            "  %o.src = add i64 %o.kbase, %o.hbase",
            f"  %o.image = mul i64 %n, {conv.k * oh}",
            "  %o.dst.row = add i64 %o.image, %o",
            f"  %o.dst = mul i64 %o.dst.row, {ow}",
            "  %o.from = getelementptr float, ptr %yp, i64 %o.src",
            "  %o.to = getelementptr float, ptr %y, i64 %o.dst",
            f"  call void @llvm.memcpy.p0.p0.i64(ptr %o.to, ptr %o.from, i64 {4 * ow}, i1 0)",
            *conv.elementwise_call("%o.dst", ow),
            "  %o.next = add i64 %o, 1",
            f"  %o.more = icmp ult i64 %o.next, {conv.k * oh}",
            "  br i1 %o.more, label %out.row, label %out.done",
            "out.done:",
            "  %n.next = add i64 %n, 1",
            f"  %n.more = icmp ult i64 %n.next, {conv.n}",
            "  br i1 %n.more, label %image, label %end",
        ]
