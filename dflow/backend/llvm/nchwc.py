"""The blocked convolution `df.conv2d_nchwc` as LLVM: output channels in the lanes.

Input NCHWc `[N, C/16, H, W, 16]`, filter `[O/16, C/16, KH, KW, 16, 16]` (packed at
compile time by `df-layout`), output NCHWc. A tile is `TILE_BLOCKS` blocks of 16
output channels by `TILE_PIXELS` consecutive output pixels of one row: its
accumulators, one vector of 16 output channels per block and pixel (24 of AVX-512's
32 registers), start from the bias (or the partial sums of an earlier pass) and take,
per tap and input channel, `TILE_BLOCKS` vector loads of the filter and
`TILE_PIXELS` broadcast inputs into `TILE_BLOCKS * TILE_PIXELS` FMAs: 10 loads for 24
FMAs, and no lane idle whatever the plane's size (NCHW's positions in lanes computed
63 positions for the 49 of a 7x7 plane). The pixels left over at a row's end make
one narrower tile, the blocks left over one shallower; rows of 7 pixels take tiles
of 3 blocks by 7 (`NchwcConv.tile_shape`).

A padded input is copied once per image into a zeroed buffer (rows `W + left +
right` pixels long), so every tap of every tile reads inside it. Images are looped
outermost, or, where the filter outweighs the input (`NchwcConv.images_inner`),
innermost of a tile's blocks and pass, all padded first. The input channels
are taken `chunk` blocks at a time, so that the filter of a tile's blocks for one
pass stays in the 1 MB L2 (`CHUNK_BYTES`); passes after the first add to the
output. The fused elementwise rest (`epilogue.py`) runs on each output row of a block
once its last pass has written it (16 x OW contiguous floats).

The tile function takes its strides as arguments, so one is generated per tile
shape, kernel size and stride, whatever the channels and the plane: the layers of a
network share them, each tile a unit of the module compiled once (DenseNet-201's 211
copies, one in each kernel's unit, took 27 s of LLVM's time where 12 distinct tiles
compile once; `program.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from dflow.backend.llvm.convolution import DirectConv

BLOCK = 16
"""Float32 lanes of an AVX-512 vector: the channel block generated here."""

TILE_BLOCKS = 4
"""Blocks of 16 output channels per tile."""

TILE_PIXELS = 6
"""Output pixels of a row per tile."""

ROW_OF_SEVEN = 7
"""The row width (ResNet's 7x7 planes) tiled 3 blocks by 7 pixels (`tile_shape`)."""

CHUNK_BYTES = 1 << 18
"""The most bytes of filter one pass of a tile's blocks reads (a quarter of the L2)."""

VECTOR = "<16 x float>"


@dataclass(frozen=True)
class NchwcConv:
    """The static shapes of one `df.conv2d_nchwc` of block 16."""

    n: int
    cb: int
    """Blocks of input channels."""
    h: int
    w: int
    ob: int
    """Blocks of output channels."""
    kh: int
    kw: int
    top: int
    left: int
    bottom: int
    right: int
    bias: bool = False
    sh: int = 1
    sw: int = 1
    lanes: int = BLOCK
    """Input channels per input block: 16, or 1 where the input is NCHW read as 5-D
    (a network's first convolution, of 3 channels), its filter `[O/16, C, KH, KW, 1,
    16]`."""
    groups: int = 1
    """Groups, each of whole blocks: generated where each output block is a group
    (`spread` tiles) or a group holds whole tiles (`supported`)."""
    fused: str = ""
    """The kernel whose elementwise rest runs on each output row (as `DirectConv`'s)."""
    buffers: int = 0
    """The buffers the elementwise rest reads or writes, passed after `y`."""

    pool: ClassVar[bool] = False
    """Not a pool (the interface `epilogue.fusable` reads)."""

    rest_inlined: ClassVar[bool] = False
    """The elementwise rest is called, not inlined: each tile's block calls it on
    its row, so inlined it was copied (and vectorized) at every call site, up to
    eight: 44 against 15 ms of LLVM per kernel, 2.0 of DenseNet-121's 5.5 s cold
    compile, for no measured difference in run time (one core, 2026-11-29)."""

    @property
    def k(self) -> int:
        """Output channels."""
        return self.ob * BLOCK

    @property
    def out(self) -> tuple[int, int]:
        pads = (self.top, self.left, self.bottom, self.right)
        return _output_plane((self.h, self.w), (self.kh, self.kw), pads, (self.sh, self.sw))

    @property
    def padded(self) -> bool:
        return any((self.top, self.left, self.bottom, self.right))

    @property
    def plane(self) -> tuple[int, int]:
        """Rows and columns of the (padded) input read."""
        return self.h + self.top + self.bottom, self.w + self.left + self.right

    @property
    def group_blocks(self) -> tuple[int, int]:
        """Input and output blocks per group."""
        return self.cb // self.groups, self.ob // self.groups

    @property
    def spread(self) -> bool:
        """Each output block its own group, reading its own input blocks."""
        return self.groups > 1 and self.group_blocks[1] == 1

    @property
    def tile_shape(self) -> tuple[int, int]:
        """Blocks and pixels of a whole tile: `TILE_BLOCKS` x `TILE_PIXELS`, but 3 x 7
        for rows of 7 pixels (ResNet's last stage), where 4 x 6 leaves a tile of one
        pixel per row: 109 against 99 GFLOP/s at 512 channels (one core, 2026-11-29;
        4 x 7 spills, 2 x 7 ran at 91; rows of 14 ran best as 4 x 6). Groups of
        several blocks keep whole tiles of `TILE_BLOCKS`."""
        if self.out[1] == ROW_OF_SEVEN and (self.groups == 1 or self.spread):
            return 3, ROW_OF_SEVEN
        return TILE_BLOCKS, TILE_PIXELS

    @property
    def supported(self) -> bool:
        """One group, a group per output block, or groups of whole tiles."""
        return self.groups == 1 or self.spread or self.group_blocks[1] % TILE_BLOCKS == 0

    @property
    def filter_block(self) -> int:
        """Floats of the filter per block of output channels."""
        return self.group_blocks[0] * self.kh * self.kw * self.lanes * BLOCK

    @property
    def images_inner(self) -> bool:
        """Whether the images are looped inside each pass of a tile's blocks (all
        images padded first), so that the filter is read once a call, not once an
        image: where it outweighs an image's input read once per tile of blocks (deep
        layers of small planes). At 8 images of 256 channels by 14x14 in a chain of
        convolutions, 2.09 ms an image against 2.51 the other way round (2.11 at one
        image); at 128 by 28x28, where the input weighs more, 2.04 against 2.49 (one
        core, 2026-11-29)."""
        hp, wp = self.plane
        tiles = -(-self.ob // self.tile_shape[0])
        image = self.cb * hp * wp * self.lanes
        return self.n > 1 and self.ob * self.filter_block > tiles * image

    @property
    def limit(self) -> int:
        """The most input channel blocks a pass takes, so that the filter a tile's blocks
        read in it fits `CHUNK_BYTES` (a group's blocks where it has fewer)."""
        per_block = self.tile_shape[0] * self.kh * self.kw * self.lanes * BLOCK * 4
        return max(1, CHUNK_BYTES // per_block)

    @property
    def name(self) -> str:
        """Named after its shapes but the input's channel blocks (`c`), an argument."""
        pads = f"{self.top}.{self.left}.{self.bottom}.{self.right}"
        shapes = f"{self.n}xcx{self.h}x{self.w}x{self.lanes}.{self.ob}x{self.kh}x{self.kw}"
        strides = f".s{self.sh}.{self.sw}"
        bias = ".bias" if self.bias else ""
        groups = f".g{self.groups}" if self.groups > 1 else ""
        name = f"conv_nchwc.{shapes}.p{pads}{strides}{groups}{bias}"
        return f"{self.fused or 'dflow'}.{name}"

    def tile(self, blocks: int, pixels: int) -> Tile:
        return Tile(blocks, pixels, self.kh, self.kw, self.sw, self.lanes, self.spread)

    @property
    def row_tiles(self) -> tuple[int, list[int]]:
        """The whole tiles of a row of output pixels, and the pixels of each narrower
        tile after them: a rest of 1 or 2 pixels and the last whole tile's 6 make two
        tiles of 4 and 3 or 4 (alone, with its data in the cache, the 4 x 2 tile ran at
        101 GFLOP/s, the 4 x 3 at 115, 4 x 4 at 116 and 4 x 6 at 117, a loop of FMAs
        at 117.5; one core, 2026-11-29): rows of 56 and of 14 pixels end 4 + 4."""
        width = self.tile_shape[1]
        full, rest = divmod(self.out[1], width)
        if full and 0 < rest <= 2 and width == TILE_PIXELS:
            joined = width + rest
            return full - 1, [joined - joined // 2, joined // 2]
        return full, [rest] if rest else []

    def tiles(self) -> Iterator[Tile]:
        """Each tile shape used."""
        whole = self.tile_shape
        blocks = {whole[0]} if self.ob >= whole[0] else set[int]()
        blocks |= {self.ob % whole[0]} - {0}
        full, tail = self.row_tiles
        pixels = {whole[1]} if full else set[int]()
        pixels |= set(tail)
        for j in sorted(blocks):
            for p in sorted(pixels):
                yield self.tile(j, p)

    def definition(self) -> str:
        """`void @<name>(ptr x, ptr w, [ptr bias,] ptr y, [ptr e<i>...,] i64 cb)`,
        internal to its module, calling the tile functions (`tiles`), defined apart.
        The input's channel blocks `cb` are an argument (the kernel's own, from
        `KernelPrinter.size_argument`): the layers of a dense block, which differ only
        in them, print one kernel, compiled once. Nothing the driver chooses depends
        on them (`images_inner` weighs two quantities proportional to them), and the
        loops they bound are outer ones."""
        return "\n".join(_Driver(self).lines())


@dataclass(frozen=True)
class Tile:
    """A tile function: `blocks` x `pixels` accumulators of a `kh` x `kw` filter of
    column stride `sw` over input blocks of `lanes` channels; `spread`: each output
    block reads its own input blocks (a grouped convolution of one block of outputs
    per group), `x_group` floats after the last's, else all read the same."""

    blocks: int
    pixels: int
    kh: int
    kw: int
    sw: int
    lanes: int
    spread: bool = False

    @property
    def name(self) -> str:
        shape = f"{self.blocks}x{self.pixels}.k{self.kh}x{self.kw}.s{self.sw}.i{self.lanes}"
        return f"dflow.nchwc_tile.{shape}{'.spread' if self.spread else ''}"

    @property
    def accumulators(self) -> list[tuple[int, int]]:
        return [(j, p) for j in range(self.blocks) for p in range(self.pixels)]

    def declaration(self) -> str:
        arguments = "ptr, ptr, ptr, ptr, i64, i1, i64, i64, i64, i64, i64"
        return f'declare void @"{self.name}"({arguments})'

    def definition(self) -> str:
        """`void @<tile>(ptr x, ptr w, ptr bias, ptr y, i64 cbs, i1 first, i64 x_row,
        i64 x_block, i64 w_block, i64 y_block, i64 x_group)`, external (kernels share
        it, `program.py`): the accumulators over
        `cbs` input blocks, each tap's inputs at `x + (c * x_block + i * x_row + (p *
        sw + j) * lanes)`, each output block's filter `w_block` floats after the last's
        and its output `y_block` floats after; started from `bias` (`first`) or from
        `y`."""
        lines = [
            f'define void @"{self.name}"(ptr %x, ptr %w, ptr %bias, ptr %y, '
            "i64 %cbs, i1 %first, i64 %x_row, i64 %x_block, i64 %w_block, i64 %y_block, "
            "i64 %x_group) {",
            "entry:",
        ]
        for j in range(self.blocks):
            lines += [
                f"  %yb{j}.at = mul i64 %y_block, {j}",
                f"  %yb{j} = getelementptr float, ptr %y, i64 %yb{j}.at",
                f"  %bias{j}.at = getelementptr float, ptr %bias, i64 {j * BLOCK}",
                f"  %bias{j} = load {VECTOR}, ptr %bias{j}.at, align 4",
                f"  %wb{j}.at = mul i64 %w_block, {j}",
                f"  %xg{j}.at = mul i64 %x_group, {j}",
            ]
        for j, p in self.accumulators:
            lines += [
                f"  %a{j}.{p} = alloca {VECTOR}, align 64",
                f"  %y{j}.{p}.at = getelementptr float, ptr %yb{j}, i64 {p * BLOCK}",
                f"  %y{j}.{p} = load {VECTOR}, ptr %y{j}.{p}.at, align 4",
                f"  %s{j}.{p} = select i1 %first, {VECTOR} %bias{j}, {VECTOR} %y{j}.{p}",
                f"  store {VECTOR} %s{j}.{p}, ptr %a{j}.{p}, align 64",
            ]
        taps = [*self.fmas()]
        lines += _loop(
            "c",
            "%cbs",
            lambda c: _loop(
                "i",
                str(self.kh),
                lambda i: _loop("j", str(self.kw), lambda jj: self.tap(c, i, jj, taps)),
            ),
        )
        for j, p in self.accumulators:
            lines += [
                f"  %f{j}.{p} = load {VECTOR}, ptr %a{j}.{p}, align 64",
                f"  store {VECTOR} %f{j}.{p}, ptr %y{j}.{p}.at, align 4",
            ]
        return "\n".join([*lines, "  ret void", "}"])

    def broadcasts(self, lane: int, p: int) -> Iterator[str]:
        """Pixel `p`'s input of channel `lane` in all lanes (`%xv<lane>.<p>`, or of
        a spread tile `%xv<lane>.<p>.<j>` for each block)."""
        for j in range(self.blocks) if self.spread else (None,):
            at = f"{lane}.{p}" if j is None else f"{lane}.{p}.{j}"
            base = "%xo" if j is None else f"%xo{j}"
            offset = p * self.sw * self.lanes + lane
            yield f"  %xp{at} = getelementptr float, ptr {base}, i64 {offset}"
            yield f"  %xs{at} = load float, ptr %xp{at}, align 4"
            yield f"  %xi{at} = insertelement {VECTOR} poison, float %xs{at}, i64 0"
            yield (
                f"  %xv{at} = shufflevector {VECTOR} %xi{at}, {VECTOR} poison, "
                "<16 x i32> zeroinitializer"
            )

    def fmas(self) -> Iterator[str]:
        """The FMAs of one tap over its input channels (`%xo`, `%wo` its bases): per
        channel, the blocks' filter vectors, then each pixel's input broadcast and
        its FMAs at once. So one broadcast is live with the accumulators and filter
        vectors (25 of the 32 registers for 3 x 7). With every pixel's input broadcast
        first, LLVM's scheduler spilled: 45 stack accesses in the 3 x 7 tile's loop,
        0 now, and ResNet-18 took 1.02x ONNX Runtime's time, 0.985x now (batch 8:
        1.06x, 1.03x; one core, 2026-11-29)."""
        for lane in range(self.lanes):
            for j in range(self.blocks):
                yield f"  %wp{lane}.{j}.at = add i64 %wb{j}.at, {lane * BLOCK}"
                yield f"  %wp{lane}.{j} = getelementptr float, ptr %wo, i64 %wp{lane}.{j}.at"
                yield f"  %wv{lane}.{j} = load {VECTOR}, ptr %wp{lane}.{j}, align 4"
            for p in range(self.pixels):
                yield from self.broadcasts(lane, p)
                for j in range(self.blocks):
                    before = f"%v{lane - 1}.{j}.{p}" if lane else f"%l{j}.{p}"
                    x = f"%xv{lane}.{p}.{j}" if self.spread else f"%xv{lane}.{p}"
                    yield (
                        f"  %v{lane}.{j}.{p} = call {VECTOR} @llvm.fma.v16f32({VECTOR} "
                        f"%wv{lane}.{j}, {VECTOR} {x}, {VECTOR} {before})"
                    )

    def tap(self, c: str, i: str, j: str, fmas: list[str]) -> list[str]:
        """One tap `(c, i, j)`: its bases, the accumulators loaded, its FMAs, stored."""
        lines = [
            f"  %xc = mul i64 {c}, %x_block",
            f"  %xr = mul i64 {i}, %x_row",
            f"  %xq = mul i64 {j}, {self.lanes}",
            "  %xcr = add i64 %xc, %xr",
            "  %xat = add i64 %xcr, %xq",
            "  %xo = getelementptr float, ptr %x, i64 %xat",
            f"  %wc = mul i64 {c}, {self.kh * self.kw}",
            f"  %wr = mul i64 {i}, {self.kw}",
            "  %wcr = add i64 %wc, %wr",
            f"  %wt = add i64 %wcr, {j}",
            f"  %wat = mul i64 %wt, {self.lanes * BLOCK}",
            "  %wo = getelementptr float, ptr %w, i64 %wat",
        ]
        if self.spread:
            lines += [
                f"  %xo{b} = getelementptr float, ptr %xo, i64 %xg{b}.at"
                for b in range(self.blocks)
            ]
        lines += [
            f"  %l{a}.{b} = load {VECTOR}, ptr %a{a}.{b}, align 64" for a, b in self.accumulators
        ]
        lines += fmas
        last = self.lanes - 1
        lines += [
            f"  store {VECTOR} %v{last}.{a}.{b}, ptr %a{a}.{b}, align 64"
            for a, b in self.accumulators
        ]
        return lines


def _loop(label: str, count: str, body: Callable[[str], list[str]]) -> list[str]:
    """A counted loop (at least one trip) of `body(index)`, whose blocks are labelled
    `<label>...`."""
    index = f"%{label}.i"
    return [
        f"  br label %{label}.pre",
        f"{label}.pre:",
        f"  br label %{label}",
        f"{label}:",
        f"  {index} = phi i64 [ 0, %{label}.pre ], [ %{label}.next, %{label}.latch ]",
        *body(index),
        f"  br label %{label}.latch",
        f"{label}.latch:",
        f"  %{label}.next = add i64 {index}, 1",
        f"  %{label}.more = icmp ult i64 %{label}.next, {count}",
        f"  br i1 %{label}.more, label %{label}, label %{label}.end",
        f"{label}.end:",
    ]


@dataclass(frozen=True)
class _Driver:
    """The convolution's function: images, passes, rows and tiles."""

    conv: NchwcConv

    def signature(self) -> str:
        conv = self.conv
        names = ["x", "w", *(("bias",) if conv.bias else ()), "y"]
        names += [f"e{i}" for i in range(conv.buffers)]
        parameters = ", ".join(f"ptr %{name}" for name in names)
        return f'define internal void @"{conv.name}"({parameters}, i64 %cb) {{'

    def lines(self) -> list[str]:
        conv = self.conv
        lines = [self.signature(), "entry:", *self.sizes()]
        if not conv.bias:
            lines += [
                f"  %bias = alloca [{TILE_BLOCKS * BLOCK} x float], align 64",
                f"  call void @llvm.memset.p0.i64(ptr %bias, i8 0, i64 {TILE_BLOCKS * 64}, i1 0)",
            ]
        copies = conv.n if conv.images_inner else 1
        if conv.padded:
            lines += [
                f"  %d.bytes = mul i64 %d.image, {copies * 4}",
                "  %xp = call ptr @malloc(i64 %d.bytes)",
                "  call void @llvm.memset.p0.i64(ptr %xp, i8 0, i64 %d.bytes, i1 0)",
            ]
        lines += (
            self.filter_stationary() if conv.images_inner else _loop("n", str(conv.n), self.image)
        )
        if conv.padded:
            lines.append("  call void @free(ptr %xp)")
        return [*lines, "  ret void", "}"]

    def sizes(self) -> list[str]:
        """What the input's channel blocks `%cb` decide: a group's (`%d.cbg`), a pass's
        (`%d.chunk`, at most `NchwcConv.limit`), the passes (`%d.passes`, the last's index
        `%d.last`), the floats of an output block's filter (`%d.fb`), of an image's
        (padded) input (`%d.image`) and of a group's (`%d.group`), and the input's rows
        over its blocks (`%d.rows`)."""
        conv = self.conv
        hp, wp = conv.plane
        return [
            f"  %d.cbg = udiv i64 %cb, {conv.groups}",
            f"  %d.few = icmp ult i64 %d.cbg, {conv.limit}",
            f"  %d.chunk = select i1 %d.few, i64 %d.cbg, i64 {conv.limit}",
            "  %d.chunk1 = sub i64 %d.chunk, 1",
            "  %d.up = add i64 %d.cbg, %d.chunk1",
            "  %d.passes = udiv i64 %d.up, %d.chunk",
            "  %d.last = sub i64 %d.passes, 1",
            f"  %d.fb = mul i64 %d.cbg, {conv.kh * conv.kw * conv.lanes * BLOCK}",
            f"  %d.image = mul i64 %cb, {hp * wp * conv.lanes}",
            f"  %d.group = mul i64 %d.cbg, {hp * wp * conv.lanes}",
            f"  %d.rows = mul i64 %cb, {conv.h}",
        ]

    def image(self, n: str) -> list[str]:
        """Image `n`: padded (into the one buffer), then every block of its output."""
        conv = self.conv
        lines: list[str] = []
        if conv.padded:
            lines += _loop("r", "%d.rows", lambda r: self.copy_row(n, r, "0"))
        lines += self.source(n, "src", "0" if conv.padded else n)
        return lines + self.tiles(lambda t, blocks, label: self.blocks(n, t, blocks, label))

    def tiles(self, blocks: Callable[[str, int, str], list[str]]) -> list[str]:
        """`blocks(t, count, label)` of the whole tiles' blocks, then of the rest."""
        full, rest = divmod(self.conv.ob, self.conv.tile_shape[0])
        lines: list[str] = []
        if full:
            lines += _loop("t", str(full), lambda t: blocks(t, self.conv.tile_shape[0], "t"))
        if rest:
            lines += blocks(str(full), rest, "u")
        return lines

    def filter_stationary(self) -> list[str]:
        """Every image padded first; then each tile's blocks of output channels, each
        pass over a chunk of input blocks, every image (`NchwcConv.images_inner`)."""
        conv = self.conv
        lines: list[str] = []
        if conv.padded:

            def rows(n: str) -> list[str]:
                return _loop("r", "%d.rows", lambda r: self.copy_row(n, r, n))

            lines += _loop("n", str(conv.n), rows)
        return lines + self.tiles(self.stationary_blocks)

    def stationary_blocks(self, t: str, blocks: int, label: str) -> list[str]:
        """The output blocks from `t` whole tiles: each pass, every image."""

        def images(c: str) -> list[str]:
            def image(n: str) -> list[str]:
                source = self.source(n, f"{label}.src0", n)
                return (
                    source
                    + self.image_blocks(n, label, f"%{label}.src0")
                    + self.rows(label, blocks)
                )

            return self.chunk(label, c) + _loop(f"{label}.n", str(self.conv.n), image)

        return self.group(t, label) + _loop(f"{label}.c", "%d.passes", images)

    def source(self, n: str, name: str, copy: str) -> list[str]:
        """`%name`: image `n`'s input, in the padded buffer at copy `copy` or in `x`."""
        buffer = "%xp" if self.conv.padded else "%x"
        return [
            f"  %{name}.at = mul i64 {copy}, %d.image",
            f"  %{name} = getelementptr float, ptr {buffer}, i64 %{name}.at",
        ]

    def copy_row(self, n: str, r: str, copy: str) -> list[str]:
        """Row `r` of image `n`'s blocks (`c * H + row`) into copy `copy` of the
        padded buffer."""
        conv = self.conv
        hp, wp = conv.plane
        return [
            f"  %cr.n = mul i64 {n}, %d.rows",
            f"  %cr.r = add i64 %cr.n, {r}",
            f"  %cr.from = mul i64 %cr.r, {conv.w * conv.lanes}",
            "  %cr.src = getelementptr float, ptr %x, i64 %cr.from",
            f"  %cr.c = udiv i64 {r}, {conv.h}",
            f"  %cr.row = urem i64 {r}, {conv.h}",
            f"  %cr.copy = mul i64 {copy}, %cb",
            "  %cr.cb = add i64 %cr.copy, %cr.c",
            f"  %cr.cp = mul i64 %cr.cb, {hp}",
            "  %cr.rp = add i64 %cr.cp, %cr.row",
            f"  %cr.rt = add i64 %cr.rp, {conv.top}",
            f"  %cr.px = mul i64 %cr.rt, {wp}",
            f"  %cr.pl = add i64 %cr.px, {conv.left}",
            f"  %cr.to = mul i64 %cr.pl, {conv.lanes}",
            "  %cr.dst = getelementptr float, ptr %xp, i64 %cr.to",
            "  call void @llvm.memcpy.p0.p0.i64(ptr %cr.dst, ptr %cr.src, "
            f"i64 {conv.w * conv.lanes * 4}, i1 0)",
        ]

    def blocks(self, n: str, t: str, blocks: int, label: str) -> list[str]:
        """Image `n`'s output blocks from `t` whole tiles (`blocks` of them), its
        input at `%src`: each pass over a chunk of input blocks, all rows."""
        lines = self.group(t, label) + self.image_blocks(n, label, "%src")
        return lines + _loop(
            f"{label}.c", "%d.passes", lambda c: self.chunk(label, c) + self.rows(label, blocks)
        )

    def group(self, t: str, label: str) -> list[str]:
        """The blocks from `t` whole tiles: their group, filter and bias."""
        conv = self.conv
        lines = [
            f"  %{label}.ob = mul i64 {t}, {conv.tile_shape[0]}",
            f"  %{label}.g = udiv i64 %{label}.ob, {conv.group_blocks[1]}",
            f"  %{label}.wat = mul i64 %{label}.ob, %d.fb",
            f"  %{label}.w = getelementptr float, ptr %w, i64 %{label}.wat",
        ]
        if conv.bias:
            return [
                *lines,
                f"  %{label}.bat = mul i64 %{label}.ob, {BLOCK}",
                f"  %{label}.bias = getelementptr float, ptr %bias, i64 %{label}.bat",
            ]
        return [*lines, f"  %{label}.bias = getelementptr float, ptr %bias, i64 0"]

    def image_blocks(self, n: str, label: str, source: str) -> list[str]:
        """Image `n`'s input of the blocks' group (from `source`) and their output."""
        conv = self.conv
        oh, ow = conv.out
        return [
            f"  %{label}.gx = mul i64 %{label}.g, %d.group",
            f"  %{label}.src = getelementptr float, ptr {source}, i64 %{label}.gx",
            f"  %{label}.nob = mul i64 {n}, {conv.ob}",
            f"  %{label}.yb = add i64 %{label}.nob, %{label}.ob",
            f"  %{label}.yat = mul i64 %{label}.yb, {oh * ow * BLOCK}",
            f"  %{label}.y = getelementptr float, ptr %y, i64 %{label}.yat",
        ]

    def chunk(self, label: str, c: str) -> list[str]:
        """Pass `c`: its input blocks, whether first or last, and their filter."""
        conv = self.conv
        hp, wp = conv.plane
        return [
            f"  %{label}.c0 = mul i64 {c}, %d.chunk",
            f"  %{label}.left = sub i64 %d.cbg, %{label}.c0",
            f"  %{label}.few = icmp ult i64 %{label}.left, %d.chunk",
            f"  %{label}.cbs = select i1 %{label}.few, i64 %{label}.left, i64 %d.chunk",
            f"  %{label}.first = icmp eq i64 {c}, 0",
            f"  %{label}.last = icmp eq i64 {c}, %d.last",
            f"  %{label}.xc = mul i64 %{label}.c0, {hp * wp * conv.lanes}",
            f"  %{label}.wc = mul i64 %{label}.c0, {conv.kh * conv.kw * conv.lanes * BLOCK}",
            f"  %{label}.wp = getelementptr float, ptr %{label}.w, i64 %{label}.wc",
        ]

    def rows(self, label: str, blocks: int) -> list[str]:
        """Every output row of the blocks, this pass over this image's input."""
        oh = self.conv.out[0]
        start = f"  %{label}.x = getelementptr float, ptr %{label}.src, i64 %{label}.xc"
        return [start, *_loop(f"{label}.oy", str(oh), lambda oy: self.row(label, oy, blocks))]

    def row(self, label: str, oy: str, blocks: int) -> list[str]:
        conv = self.conv
        wp = conv.plane[1]
        ow = conv.out[1]
        width = conv.tile_shape[1]
        full, tail = conv.row_tiles
        lines = [
            f"  %{label}.iy = mul i64 {oy}, {conv.sh * wp * conv.lanes}",
            f"  %{label}.xr = getelementptr float, ptr %{label}.x, i64 %{label}.iy",
            f"  %{label}.oyat = mul i64 {oy}, {ow * BLOCK}",
            f"  %{label}.yr = getelementptr float, ptr %{label}.y, i64 %{label}.oyat",
        ]
        if full:
            lines += _loop(
                f"{label}.q", str(full), lambda q: self.tile(label, (q, width), blocks, width, "q")
            )
        first = full * width
        for index, pixels in enumerate(tail):
            lines += self.tile(label, (str(first), 1), blocks, pixels, f"r{index}")
            first += pixels
        return lines + self.rest(label, oy, blocks)

    def tile(
        self, label: str, at_pixel: tuple[str, int], blocks: int, pixels: int, kind: str
    ) -> list[str]:
        """A call of the tile of `blocks` by `pixels` whose first pixel in the row is
        `q * step` (`at_pixel`: `(q, step)`)."""
        conv = self.conv
        hp, wp = conv.plane
        oh, ow = conv.out
        at = f"%{label}.{kind}"
        name = conv.tile(blocks, pixels).name
        x_group = "%d.group" if conv.spread else "0"
        q, step = at_pixel
        return [
            f"  {at}.xq = mul i64 {q}, {step * conv.sw * conv.lanes}",
            f"  {at}.x = getelementptr float, ptr %{label}.xr, i64 {at}.xq",
            f"  {at}.yq = mul i64 {q}, {step * BLOCK}",
            f"  {at}.y = getelementptr float, ptr %{label}.yr, i64 {at}.yq",
            f'  call void @"{name}"(ptr {at}.x, ptr %{label}.wp, ptr %{label}.bias, '
            f"ptr {at}.y, i64 %{label}.cbs, i1 %{label}.first, i64 {wp * conv.lanes}, "
            f"i64 {hp * wp * conv.lanes}, i64 %d.fb, "
            f"i64 {oh * ow * BLOCK}, i64 {x_group})",
        ]

    def rest(self, label: str, oy: str, blocks: int) -> list[str]:
        """The fused rest on each block's row `oy`, after the last pass."""
        conv = self.conv
        if not conv.fused:
            return []
        oh, ow = conv.out
        buffers = "".join(f"ptr %e{i}, " for i in range(conv.buffers))
        lines = [
            f"  br i1 %{label}.last, label %{label}.rest, label %{label}.done",
            f"{label}.rest:",
            f"  %{label}.f0 = add i64 %{label}.yat, %{label}.oyat",
        ]
        for j in range(blocks):
            lines += [
                f"  %{label}.f{j}.first = add i64 %{label}.f0, {j * oh * ow * BLOCK}",
                f"  %{label}.f{j}.end = add i64 %{label}.f{j}.first, {ow * BLOCK}",
                f'  call void @"{conv.fused}.elementwise"({buffers}i64 %{label}.f{j}.first, '
                f"i64 %{label}.f{j}.end)",
            ]
        return [*lines, f"  br label %{label}.done", f"{label}.done:"]


NEGATIVE_INFINITY = "0xFFF0000000000000"


@dataclass(frozen=True)
class NchwcPool:
    """A max or average pool of NCHWc `[N, CB, H, W, 16]`: each output pixel's 16
    channels one vector, its window's taps inside the input loaded and combined (a
    NaN-propagating maximum, or a sum divided by the taps inside: `df.avg_pool2d`
    counts no padding), no padded copy. The maximum takes a tap's input where it is
    greater or NaN, as `DirectConv`'s pools (NumPy's)."""

    n: int
    cb: int
    h: int
    w: int
    kh: int
    kw: int
    top: int
    left: int
    bottom: int
    right: int
    sh: int = 1
    sw: int = 1
    average: bool = False
    fused: str = ""
    """The kernel whose elementwise rest runs on each output row (as `DirectConv`'s)."""
    buffers: int = 0

    pool: ClassVar[bool] = True
    bias: ClassVar[bool] = False
    rest_inlined: ClassVar[bool] = True
    """The elementwise rest inlined at its one call, on each output row."""

    @property
    def k(self) -> int:
        return self.cb * BLOCK

    @property
    def out(self) -> tuple[int, int]:
        pads = (self.top, self.left, self.bottom, self.right)
        return _output_plane((self.h, self.w), (self.kh, self.kw), pads, (self.sh, self.sw))

    @property
    def name(self) -> str:
        kind = "avg_pool_nchwc" if self.average else "max_pool_nchwc"
        shapes = f"{self.n}x{self.cb}x{self.h}x{self.w}x16.{self.kh}x{self.kw}"
        pads = f"{self.top}.{self.left}.{self.bottom}.{self.right}"
        return f"{self.fused or 'dflow'}.{kind}.{shapes}.p{pads}.s{self.sh}.{self.sw}"

    def definition(self) -> str:
        """`void @<name>(ptr x, ptr y, [ptr e<i>...])`, internal to its module."""
        names = ["x", "y", *(f"e{i}" for i in range(self.buffers))]
        parameters = ", ".join(f"ptr %{name}" for name in names)
        oh, _ = self.out
        start = "zeroinitializer" if self.average else f"splat (float {NEGATIVE_INFINITY})"
        lines = [
            f'define internal void @"{self.name}"({parameters}) {{',
            "entry:",
            "  %acc = alloca <16 x float>, align 64",
            f"  %acc.start = bitcast <16 x float> {start} to <16 x float>",
            *_loop(
                "plane",
                str(self.n * self.cb),
                lambda plane: _loop("oy", str(oh), lambda oy: self.row(plane, oy)),
            ),
            "  ret void",
            "}",
        ]
        return "\n".join(lines)

    def row(self, plane: str, oy: str) -> list[str]:
        """Output row `oy` of a plane (an image's block of channels)."""
        oh, ow = self.out
        lines = [
            *_window_range("i", oy, self.sh, self.top, self.h, self.kh),
            f"  %row.plane = mul i64 {plane}, {oh}",
            "  %row.at = add i64 %row.plane, " + oy,
            f"  %row.first = mul i64 %row.at, {ow * BLOCK}",
            f"  %in.plane = mul i64 {plane}, {self.h * self.w * BLOCK}",
            *_loop("ox", str(ow), self.pixel),
        ]
        if self.fused:
            buffers = "".join(f"ptr %e{i}, " for i in range(self.buffers))
            lines += [
                f"  %row.end = add i64 %row.first, {ow * BLOCK}",
                f'  call void @"{self.fused}.elementwise"({buffers}i64 %row.first, i64 %row.end)',
            ]
        return lines

    def pixel(self, ox: str) -> list[str]:
        combine = "fadd" if self.average else "maximum"
        lines = [
            *_window_range("j", ox, self.sw, self.left, self.w, self.kw),
            "  store <16 x float> %acc.start, ptr %acc, align 64",
            *_loop(
                "ti",
                "%i.count",
                lambda ti: _loop("tj", "%j.count", lambda tj: self.tap(ti, tj, combine)),
            ),
            "  %pooled = load <16 x float>, ptr %acc, align 64",
        ]
        value = "%pooled"
        if self.average:
            lines += [
                "  %taps = mul i64 %i.count, %j.count",
                "  %taps.f = uitofp i64 %taps to float",
                "  %taps.i = insertelement <16 x float> poison, float %taps.f, i64 0",
                "  %taps.v = shufflevector <16 x float> %taps.i, <16 x float> poison, "
                "<16 x i32> zeroinitializer",
                "  %mean = fdiv <16 x float> %pooled, %taps.v",
            ]
            value = "%mean"
        return [
            *lines,
            f"  %out.q = mul i64 {ox}, {BLOCK}",
            "  %out.at = add i64 %row.first, %out.q",
            "  %out = getelementptr float, ptr %y, i64 %out.at",
            f"  store <16 x float> {value}, ptr %out, align 4",
        ]

    def tap(self, ti: str, tj: str, combine: str) -> list[str]:
        """Tap `(i0 + ti, j0 + tj)` of the window, combined into `%acc`."""
        steps = (
            ["  %acc.next = fadd <16 x float> %acc.v, %tap.v"]
            if combine == "fadd"
            else [
                "  %tap.gt = fcmp ogt <16 x float> %tap.v, %acc.v",
                "  %tap.nan = fcmp uno <16 x float> %tap.v, %tap.v",
                "  %tap.takes = or <16 x i1> %tap.gt, %tap.nan",
                "  %acc.next = select <16 x i1> %tap.takes, <16 x float> %tap.v, "
                "<16 x float> %acc.v",
            ]
        )
        return [
            f"  %tap.i = add i64 %i.first, {ti}",
            f"  %tap.j = add i64 %j.first, {tj}",
            f"  %tap.row = mul i64 %tap.i, {self.w * BLOCK}",
            f"  %tap.col = mul i64 %tap.j, {BLOCK}",
            "  %tap.off = add i64 %tap.row, %tap.col",
            "  %tap.at = add i64 %tap.off, %in.plane",
            "  %tap.p = getelementptr float, ptr %x, i64 %tap.at",
            "  %tap.v = load <16 x float>, ptr %tap.p, align 4",
            "  %acc.v = load <16 x float>, ptr %acc, align 64",
            *steps,
            "  store <16 x float> %acc.next, ptr %acc, align 64",
        ]


def _output_plane(
    plane: tuple[int, int], kernel: tuple[int, int], pads: tuple[int, ...], strides: tuple[int, int]
) -> tuple[int, int]:
    """Output rows and columns of a window over a padded input plane."""
    top, left, bottom, right = pads
    oh = (plane[0] + top + bottom - kernel[0]) // strides[0] + 1
    ow = (plane[1] + left + right - kernel[1]) // strides[1] + 1
    return oh, ow


def _window_range(axis: str, out: str, stride: int, before: int, size: int, taps: int) -> list[str]:
    """Of output position `out`, the first input position its window reads inside the
    input (`%<axis>.first`) and how many (`%<axis>.count`, at least one: pads are
    smaller than the window)."""
    return [
        f"  %{axis}.start = mul i64 {out}, {stride}",
        f"  %{axis}.signed = sub i64 %{axis}.start, {before}",
        f"  %{axis}.neg = icmp slt i64 %{axis}.signed, 0",
        f"  %{axis}.first = select i1 %{axis}.neg, i64 0, i64 %{axis}.signed",
        f"  %{axis}.stop = add i64 %{axis}.signed, {taps}",
        f"  %{axis}.over = icmp sgt i64 %{axis}.stop, {size}",
        f"  %{axis}.end = select i1 %{axis}.over, i64 {size}, i64 %{axis}.stop",
        f"  %{axis}.count = sub i64 %{axis}.end, %{axis}.first",
    ]


GeneratedConvolution = DirectConv | NchwcConv | NchwcPool
"""A convolution or pool a kernel's library call becomes (`library.py`)."""
