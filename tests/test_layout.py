"""`df-layout` and the blocked convolution it makes (`df.conv2d_nchwc`).

The layouts are checked against their definitions written as index loops (not the
reshapes and transposes that implement them); the pass's output against the
interpreter on the program before it (the pass emits plain `df`, so every decision is
checked by the oracle); the generated NCHWc convolution of the llvm target
(`backend/llvm/nchwc.py`) against the interpreter over the shapes that exercise its
remainders (blocks and pixels past whole tiles), its passes over chunks of input
channels, strides, asymmetric pads and a fused elementwise rest; numba's routine
against the same.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from compiled_support import check, kernels_typed_as_declared, normal

import dflow
from dflow.backend.llvm.nchwc import NchwcConv
from dflow.dialects.df import reference
from dflow.driver.compilation.compiler import lowering_pipeline
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function
from dflow.runtime.library import cpu

__all__ = ["kernels_typed_as_declared"]


def test_nchwc_is_its_definition() -> None:
    """`y[n, c // b, h, w, c % b] = x[n, c, h, w]`, and back."""
    x = np.random.default_rng(0).normal(size=(2, 32, 3, 5)).astype(np.float32)
    blocked = reference.to_nchwc(x, 16)
    assert blocked.shape == (2, 2, 3, 5, 16)
    for n, c, h, w in itertools.product(*map(range, x.shape)):
        assert blocked[n, c // 16, h, w, c % 16] == x[n, c, h, w]
    assert np.array_equal(reference.from_nchwc(blocked), x)


def test_blocked_filter_is_its_definition() -> None:
    """`f[o // b, i // b, kh, kw, i % b, o % b] = w[o, i, kh, kw]`, and back."""
    w = np.random.default_rng(1).normal(size=(8, 12, 3, 2)).astype(np.float32)
    f = reference.to_oihw_io(w, 4)
    assert f.shape == (2, 3, 3, 2, 4, 4)
    for o, i, kh, kw in itertools.product(*map(range, w.shape)):
        assert f[o // 4, i // 4, kh, kw, i % 4, o % 4] == w[o, i, kh, kw]
    assert np.array_equal(reference.from_oihw_io(f), w)


def _direct(x: Any, w: Any, bias: Any, strides: tuple[int, int], pads: tuple[int, ...]) -> Any:
    """The convolution by its sum over taps, element by element (f64)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    padded = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]))
    padded[:, :, pads[0] : pads[0] + h, pads[1] : pads[1] + wd] = x
    oh = (padded.shape[2] - kh) // strides[0] + 1
    ow = (padded.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, o, oh, ow))
    for p, q in itertools.product(range(oh), range(ow)):
        window = padded[:, :, p * strides[0] : p * strides[0] + kh, q * strides[1] :][..., :kw]
        y[:, :, p, q] = np.einsum("ncij,ocij->no", window, w.astype(np.float64))
    return y + (0 if bias is None else bias[None, :, None, None])


@pytest.mark.parametrize("with_bias", [True, False])
def test_numba_routine_is_the_sum_over_taps(with_bias: bool) -> None:
    rng = np.random.default_rng(2)
    x = normal(rng, (2, 32, 7, 6), "f32")
    w = normal(rng, (48, 32, 3, 3), "f32")
    bias = normal(rng, (48,), "f32") if with_bias else None
    strides, pads = (2, 1), (1, 0, 1, 2)
    expected = _direct(x, w, bias, strides, pads)
    out = np.empty((2, 3, *expected.shape[2:], 16), np.float32)
    packed = reference.to_oihw_io(w, 16), reference.to_nchwc(x, 16)
    if bias is None:
        cpu.conv2d_nchwc_f32(packed[1], packed[0], out, *strides, *pads, 1)
    else:
        cpu.conv2d_nchwc_bias_f32(packed[1], packed[0], bias, out, *strides, *pads, 1)
    np.testing.assert_allclose(reference.from_nchwc(out), expected, rtol=1e-4, atol=1e-4)


def _block(graph: Graph, x: Tensor, rng: np.random.Generator, channels: int) -> Tensor:
    """A residual block as networks are exported: conv, bias, relu, conv, scale per
    channel, the residual add, relu."""
    c = x.shape[1]
    w1 = graph.constant(normal(rng, (channels, c, 3, 3), "f32", 0.2))
    w2 = graph.constant(normal(rng, (c, channels, 3, 3), "f32", 0.2))
    b1 = graph.constant(normal(rng, (channels,), "f32"))
    scale = graph.constant(normal(rng, (1, c, 1, 1), "f32"))
    h = dflow.conv2d(x, w1, b1, pads=(1, 1, 1, 1)).relu()
    h = dflow.conv2d(h, w2, pads=(1, 1, 1, 1)) * scale
    return (h + x).relu()


def _network(graph: Graph, x: Tensor) -> dict[str, Tensor]:
    rng = np.random.default_rng(3)
    h = _block(graph, x, rng, 64)
    down = graph.constant(normal(rng, (48, 64, 1, 1), "f32", 0.2))
    d = dflow.conv2d(h, down, strides=(2, 2))
    pooled = dflow.max_pool2d(h, kernel=(2, 2), strides=(2, 2))
    side = graph.constant(normal(rng, (16, 64, 1, 1), "f32", 0.2))
    joined = dflow.concat([d, dflow.conv2d(pooled, side)], axis=1)
    return {"joined": joined.sigmoid() - 0.5, "h": h, "mean": dflow.reduce_mean(joined, [2, 3])}


def test_the_pass_keeps_the_programs_results() -> None:
    """The interpreter gives the program's results after `df-layout`: it blocks the
    two 3x3 convolutions, the 1x1 after them, their elementwise ops, the pool, the 1x1
    of it and the concatenation; not the mean."""
    x = normal(np.random.default_rng(4), (1, 64, 8, 6), "f32")
    graph = Graph("main")
    results = _network(graph, graph.input("x", x.shape, "f32"))
    graph.output(*results.values())
    module = graph.module()
    expected = run_function(module, "main", [x])
    apply_pipeline(module, "df-layout")
    text = str(module)
    assert text.count("df.conv2d_nchwc") == 4 and "df.conv2d " not in text
    assert "df.max_pool2d_nchwc" in text
    assert "-> tensor<1x4x4x3x16xf32>" in text  # the concatenation, blocked
    for got, want in zip(run_function(module, "main", [x]), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_compiled_network_matches_the_interpreter(tmp_path: Path) -> None:
    """Within float32 rounding: values up to ~20 summed from 576 products per
    convolution, in another order than NumPy's."""
    x = normal(np.random.default_rng(5), (1, 64, 8, 6), "f32")
    check(tmp_path, [x], _network, f32_atol=1e-3)


SHAPES = [
    # n, c, hw, o, k, stride, pads: tiles of 4 blocks x 6 pixels and what is left
    (1, 16, (7, 7), 80, 3, (1, 1), (1, 1, 1, 1)),  # 5 blocks (4 + 1), 7 pixels (6 + 1)
    (2, 32, (9, 8), 64, 3, (2, 2), (1, 0, 1, 2)),  # strided, asymmetric pads, batch 2
    (1, 192, (5, 5), 64, 3, (1, 1), (1, 1, 1, 1)),  # 12 input blocks: two passes
    (1, 64, (6, 13), 16, 1, (1, 1), (0, 0, 0, 0)),  # 1x1, no copy, 13 = 6 + 4 + 3
    (1, 16, (3, 14), 64, 3, (1, 1), (1, 1, 1, 1)),  # rows of 14 = 6 + 4 + 4
    (1, 16, (11, 11), 64, 7, (2, 2), (3, 3, 3, 3)),  # a 7x7 of stride 2
    (1, 3, (12, 10), 64, 7, (2, 2), (3, 3, 3, 3)),  # a stem: NCHW input (a block of 1)
    (2, 16, (30, 30), 64, 3, (1, 1), (1, 1, 1, 1)),  # images outside: the input outweighs
    (3, 32, (5, 6), 80, 3, (1, 1), (0, 0, 0, 0)),  # images inside, unpadded, 4 + 1 blocks
]


def _conv(shape: Any) -> NchwcConv:
    """The generated convolution of a case of `SHAPES` (with its bias)."""
    n, c, hw, o, k, strides, pads = shape
    lanes = 16 if c % 16 == 0 else 1
    return NchwcConv(n, c // lanes, *hw, o // 16, k, k, *pads, True, *strides, lanes)


def test_the_shapes_loop_images_both_ways() -> None:
    """Of several images, the cases loop them outside each tile's output blocks and
    inside them (the filter read once a call), padded and not."""
    batched = [_conv(shape) for shape in SHAPES if shape[0] > 1]
    assert {conv.images_inner for conv in batched} == {True, False}
    assert {conv.padded for conv in batched if conv.images_inner} == {True, False}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[1]}x{s[2][0]}x{s[2][1]}-{s[3]}")
def test_generated_nchwc_convolutions_match_the_interpreter(shape: Any, tmp_path: Path) -> None:
    """Each convolution with a fused rest (bias, relu, a residual) through the llvm
    target, whose module calls the generated blocked convolution."""
    n, c, hw, o, k, strides, pads = shape
    rng = np.random.default_rng(6)
    x = normal(rng, (n, c, *hw), "f32")
    w = normal(rng, (o, c, k, k), "f32", 0.3)
    bias = normal(rng, (o,), "f32")

    first = normal(rng, (c, c, 3, 3), "f32", 0.1)

    def body(graph: Graph, x: Tensor) -> dict[str, Tensor]:
        if k == 1:  # a 1x1 convolution is blocked after a blocked one only
            x = dflow.conv2d(x, graph.constant(first), pads=(1, 1, 1, 1))
        y = dflow.conv2d(x, graph.constant(w), graph.constant(bias), strides=strides, pads=pads)
        return {"y": (y + y.exp().minimum(2.0)).relu()}

    check(tmp_path, [x], body, f32_atol=1e-4)
    source = next(tmp_path.glob("*.ll")).read_text()
    assert _conv(shape).name.removeprefix("dflow.") in source
    assert "is the numba target's" not in source  # the reorders too (urem: a stem's)


GROUPED = [
    # c, o, groups, hw, stride: generated?, a spread tile?
    (64, 64, 4, (7, 9), 1, True, True),  # RegNet's groups of 16: a group per block
    (64, 128, 2, (6, 6), 2, True, False),  # groups of whole tiles (4 blocks each)
    (32, 64, 2, (5, 8), 1, False, False),  # 2 blocks a group: left NCHW
]


@pytest.mark.parametrize("case", GROUPED, ids=lambda c: f"{c[0]}-{c[1]}-g{c[2]}")
def test_grouped_convolutions_in_whole_blocks(case: Any, tmp_path: Path) -> None:
    """Groups of whole blocks are blocked where the generated tiles serve them (a
    spread tile reads each output block's own inputs), and all match the
    interpreter."""
    c, o, groups, hw, stride, blocked, spread = case
    rng = np.random.default_rng(8)
    x = normal(rng, (1, c, *hw), "f32")
    w = normal(rng, (o, c // groups, 3, 3), "f32", 0.3)

    def body(graph: Graph, x: Tensor) -> dict[str, Tensor]:
        window = {"pads": (1, 1, 1, 1), "groups": groups, "strides": (stride, stride)}
        return {"y": dflow.conv2d(x, graph.constant(w), **window).relu() + 1.0}

    check(tmp_path, [x], body, f32_atol=1e-4)
    source = next(tmp_path.glob("*.ll")).read_text()
    assert ("conv_nchwc" in source, ".spread" in source) == (blocked, spread)


def test_generated_nchwc_pools_match_the_interpreter(tmp_path: Path) -> None:
    """A ResNet stem's max pool (3x3 of stride 2, padded) and an average pool (3x3 of
    stride 1, padded: the corners count 4 taps) of a blocked convolution, each with a
    fused rest, generated (`NchwcPool`); a NaN in the input stays in its windows."""
    rng = np.random.default_rng(9)
    x = normal(rng, (1, 3, 13, 11), "f32")
    x[0, 1, 4, 4] = np.nan
    w = normal(rng, (64, 3, 7, 7), "f32", 0.3)

    def body(graph: Graph, x: Tensor) -> dict[str, Tensor]:
        y = dflow.conv2d(x, graph.constant(w), strides=(2, 2), pads=(3, 3, 3, 3)).relu()
        m = dflow.max_pool2d(y, kernel=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
        a = dflow.avg_pool2d(y, kernel=(3, 3), pads=(1, 1, 1, 1))
        return {"max": m + 1.0, "mean": a * 2.0}

    check(tmp_path, [x], body, f32_atol=1e-4)
    source = next(tmp_path.glob("*.ll")).read_text()
    assert "max_pool_nchwc" in source and "avg_pool_nchwc" in source


def test_layers_differing_in_input_channels_share_a_kernel(tmp_path: Path) -> None:
    """A dense block's 1x1 layers (here 64, 128 and 192 input channels into 64, each
    with its ReLU, after a 3x3 convolution that blocks the input) print one kernel,
    which takes the input's channel blocks as an argument and is compiled once; the
    tiles it calls are units of their own."""
    rng = np.random.default_rng(10)
    x = normal(rng, (1, 64, 8, 8), "f32")
    start = normal(rng, (64, 64, 3, 3), "f32", 0.1)
    filters = [normal(rng, (64, c, 1, 1), "f32", 0.1) for c in (64, 128, 192)]

    def body(graph: Graph, x: Tensor) -> dict[str, Tensor]:
        x = dflow.conv2d(x, graph.constant(start), pads=(1, 1, 1, 1))
        features = [x]
        for f in filters:
            inputs = dflow.concat(features, axis=1) if len(features) > 1 else x
            features.append(dflow.conv2d(inputs, graph.constant(f)).relu())
        return {"y": dflow.concat(features, axis=1)}

    check(tmp_path, [x], body, f32_atol=1e-4)
    source = next(tmp_path.glob("*.ll")).read_text()
    driver = re.compile(r'define internal void @"(dflow\.k\.[0-9a-f]+)\.conv_nchwc\.1xcx8x8x16\.')
    assert len(driver.findall(source)) == 1
    (kernel,) = driver.findall(source)
    calls = re.findall(rf'call void @"{kernel}"\(.*, i64 (\d+)\)', source)
    assert sorted(calls) == ["12", "4", "8"]  # 64, 128 and 192 channels in blocks of 16
    name = "dflow.nchwc_tile.4x4.k1x1.s1.i16"  # rows of 8 pixels: two tiles of 4
    assert f"; ===== unit {name}: shared" in source
    assert source.count(f'define void @"{name}"') == 1
    assert f'define internal void @"{name}"' not in source


def test_rows_end_in_tiles_of_three_pixels_or_more() -> None:
    """A row is whole tiles of 6 pixels, then the rest; a rest of 1 or 2 joins the last
    whole tile's pixels as tiles of 4 and 3 or 4 (a tile of 2 runs at 86% of one of 6),
    and rows of 7 are one tile of 7."""
    splits = {}
    for width in (1, 2, 6, 7, 8, 13, 14, 28, 56, 112):
        conv = NchwcConv(1, 4, width, width, 4, 3, 3, 1, 1, 1, 1)
        full, tail = conv.row_tiles
        assert full * conv.tile_shape[1] + sum(tail) == width
        splits[width] = [conv.tile_shape[1]] * full + tail
    assert splits[14] == [6, 4, 4] and splits[13] == [6, 4, 3] and splits[7] == [7]
    assert splits[56] == [6] * 8 + [4, 4] and splits[112] == [6] * 18 + [4]
    assert all(min(row) >= 3 for width, row in splits.items() if width >= 3)


def test_the_tile_is_vector_fmas() -> None:
    """The tile's inner body is 16-lane FMAs of filter vectors and broadcast inputs:
    4 x 6 per input channel of a tap, no scalar arithmetic on floats."""
    tiles = {t.name: t for t in NchwcConv(1, 2, 14, 14, 4, 3, 3, 1, 1, 1, 1).tiles()}
    tile = tiles["dflow.nchwc_tile.4x6.k3x3.s1.i16"].definition()
    assert tile.count("@llvm.fma.v16f32") == 16 * 4 * 6
    assert " fmul float" not in tile and " fadd float" not in tile
    seven = NchwcConv(1, 2, 7, 7, 4, 3, 3, 1, 1, 1, 1)  # rows of 7: 3 blocks by 7
    assert [(t.blocks, t.pixels) for t in seven.tiles()] == [(1, 7), (3, 7)]


@pytest.mark.parametrize("shape", [(4, 6, 14), (3, 7, 7), (4, 6, 56)])
def test_the_tile_keeps_its_vectors_in_registers(shape: tuple[int, int, int]) -> None:
    """Compiled for this CPU with its strides constant (as each kernel's copy is), a
    tile's loop keeps accumulators, filter vectors and the broadcast input in the
    AVX-512 registers: no stack access at all (45 in the 3 x 7 tile when every
    pixel's input was broadcast before the FMAs)."""
    llvm_jit = pytest.importorskip("dflow.runtime.llvm_jit")
    if "+avx512f" not in llvm_jit.llvm.get_host_cpu_features().flatten():
        pytest.skip("the tiles are sized for AVX-512's 32 vector registers")
    blocks, pixels, width = shape
    conv = NchwcConv(1, 8, width, width, 8, 3, 3, 1, 1, 1, 1)
    (tile,) = [t for t in conv.tiles() if (t.blocks, t.pixels) == (blocks, pixels)]
    hp, wp = conv.plane
    strides = [wp * 16, hp * wp * 16, conv.filter_block, width * width * 16, 0]
    caller = (
        "define void @caller(ptr %x, ptr %w, ptr %b, ptr %y, i64 %cbs, i1 %first) {\n"
        f'entry:\n  call void @"{tile.name}"(ptr %x, ptr %w, ptr %b, ptr %y, i64 %cbs, '
        f"i1 %first, {', '.join(f'i64 {s}' for s in strides)})\n  ret void\n}}\n"
    )
    text = "\n".join(
        [
            tile.definition().replace("define void", "define internal void", 1),
            "declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)",
            caller,
        ]
    )
    machine = llvm_jit.target_machine()
    assembly = machine.emit_assembly(llvm_jit._optimized_module(text, machine))
    assert assembly.count("vfmadd") == 16 * blocks * pixels  # one tap a trip
    assert "(%rsp)" not in assembly


def test_compiled_networks_fall_back_where_layout_does_not_apply(tmp_path: Path) -> None:
    """32 outputs (fewer than a tile's blocks) and a grouped convolution stay NCHW
    and run."""
    rng = np.random.default_rng(7)
    x = normal(rng, (1, 3, 9, 9), "f32")
    stem = normal(rng, (32, 3, 3, 3), "f32", 0.3)
    grouped = normal(rng, (32, 16, 3, 3), "f32", 0.3)

    def body(graph: Graph, x: Tensor) -> dict[str, Tensor]:
        h = dflow.conv2d(x, graph.constant(stem), pads=(1, 1, 1, 1)).relu()
        return {"y": dflow.conv2d(h, graph.constant(grouped), pads=(1, 1, 1, 1), groups=2)}

    check(tmp_path, [x], body, f32_atol=1e-4)
    assert "conv2d_nchwc" not in next(tmp_path.glob("*.ll")).read_text()


def test_numba_target_keeps_nchw() -> None:
    """Only the llvm target's pipeline runs `df-layout` (numba's has no generated
    blocked convolution)."""
    assert "df-layout" in lowering_pipeline(target="llvm")
    assert "df-layout" not in lowering_pipeline(target="numba")
