"""Convolutions and pools of the CPU library against PyTorch, one core: every conv
shape of the conv net benchmark (batch 32) and of ResNet-18 (batch 1), and 1x1,
depthwise and grouped ones of MobileNet-V2, EfficientNet-B0 and RegNetX (`SHAPES`),
forward and both gradients, with GFLOP/s and their fraction of the same machine's SGEMM
GFLOP/s (the roof of a convolution done as im2col + GEMM); then the pools. The
forward convolutions also run as the llvm target generates them
(`dflow/backend/llvm/convolution.py`: direct, 1x1 filters of stride 1 in place),
the default CPU target's code, in the same rounds; and those of one group and
output channels in blocks of 16 as it generates them in NCHWc (`nchwc`:
`dflow/backend/llvm/nchwc.py`, the layout `df-layout` chooses, input and filter
packed beforehand as it packs them at compile time).

    taskset -c 0 python bench/conv.py [--rounds 5] [--only forward] [--blas-as-is]

Each routine runs as a kernel calls it (`dflow.runtime.library.cpu.conv2d_f32(x, w,
out, strides, pads, dilations, groups)`), checked first against PyTorch's result; PyTorch
runs `torch.nn.functional.conv2d` and `torch.ops.aten.convolution_backward` (its
gradients) with one thread. Times are the best of interleaved rounds (each round
runs every routine of every shape once after the other), so a noisy spell of the
machine slows all alike. Like `bench/kernels.py`, it asks OpenBLAS for its
SKYLAKEX kernels (this project's machines set Haswell, half the SGEMM speed on
their CPU); `--blas-as-is` keeps the environment's choice.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from blas_choice import prefer_avx512_blas

BLAS_CHOICE = prefer_avx512_blas()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the BLAS choice)
import torch  # noqa: E402

from dflow.backend.llvm.convolution import DECLARATIONS, DirectConv  # noqa: E402
from dflow.backend.llvm.nchwc import NchwcConv  # noqa: E402
from dflow.dialects.df.reference import from_nchwc, to_nchwc, to_oihw_io  # noqa: E402
from dflow.runtime import llvm_jit  # noqa: E402
from dflow.runtime.library import cpu  # noqa: E402


@dataclass(frozen=True)
class Conv:
    """`x[n, c, h, w] * w[o, c / groups, k, k]`, square kernel, stride and symmetric
    padding, in `groups` groups of channels (as many as `c`: a depthwise one)."""

    name: str
    n: int
    c: int
    hw: int
    o: int
    k: int
    stride: int = 1
    pad: int = 0
    groups: int = 1

    @property
    def out_hw(self) -> int:
        return (self.hw + 2 * self.pad - self.k) // self.stride + 1

    @property
    def flops(self) -> float:
        return 2.0 * self.n * self.o * self.out_hw**2 * self.c // self.groups * self.k**2


SHAPES = [
    Conv("convnet conv1", 32, 3, 32, 16, 3, 1, 1),
    Conv("convnet conv2", 32, 16, 16, 32, 3, 1, 1),
    Conv("resnet stem 7x7/2", 1, 3, 224, 64, 7, 2, 3),
    Conv("resnet 64 3x3", 1, 64, 56, 64, 3, 1, 1),
    Conv("resnet 64->128 3x3/2", 1, 64, 56, 128, 3, 2, 1),
    Conv("resnet 64->128 1x1/2", 1, 64, 56, 128, 1, 2, 0),
    Conv("resnet 128 3x3", 1, 128, 28, 128, 3, 1, 1),
    Conv("resnet 128->256 3x3/2", 1, 128, 28, 256, 3, 2, 1),
    Conv("resnet 256 3x3", 1, 256, 14, 256, 3, 1, 1),
    Conv("resnet 256->512 3x3/2", 1, 256, 14, 512, 3, 2, 1),
    Conv("resnet 512 3x3", 1, 512, 7, 512, 3, 1, 1),
    Conv("mbv2 16->96 1x1", 1, 16, 112, 96, 1),
    Conv("mbv2 32->192 1x1", 1, 32, 28, 192, 1),
    Conv("mbv2 960->160 1x1", 1, 960, 7, 160, 1),
    Conv("mbv2 32 dw 3x3", 1, 32, 112, 32, 3, 1, 1, 32),
    Conv("mbv2 96 dw 3x3/2", 1, 96, 112, 96, 3, 2, 1, 96),
    Conv("effb0 672 dw 5x5", 1, 672, 14, 672, 5, 1, 2, 672),
    Conv("effb0 1152 dw 5x5", 1, 1152, 7, 1152, 5, 1, 2, 1152),
    Conv("regnetx 400 g25 3x3", 1, 400, 7, 400, 3, 1, 1, 25),
]
"""The conv net's and ResNet-18's shapes, then 1x1 and depthwise ones of MobileNet-V2
and EfficientNet-B0 and a grouped one of RegNetX-400MF."""


def best_of(functions: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Seconds of each function, best of `rounds` interleaved rounds (after a warm-up)."""
    for function in functions.values():
        function()
    times = dict.fromkeys(functions, float("inf"))
    for _ in range(rounds):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name] = min(times[name], time.perf_counter() - start)
    return times


def sgemm_gflops(rounds: int) -> float:
    a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
    out = np.empty_like(a)
    seconds = best_of({"sgemm": lambda: np.dot(a, a, out)}, rounds)["sgemm"]
    return 2 * 1024**3 / seconds / 1e9


def _case(conv: Conv, kind: str) -> tuple[dict[str, Callable[[], object]], float]:
    """dflow's library routine's, PyTorch's and for the forward convolution the llvm
    target's call for one routine of `conv`, checked equal, and its flops."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((conv.n, conv.c, conv.hw, conv.hw), dtype=np.float32)
    w = rng.standard_normal((conv.o, conv.c // conv.groups, conv.k, conv.k), dtype=np.float32)
    dy = rng.standard_normal((conv.n, conv.o, conv.out_hw, conv.out_hw), dtype=np.float32)
    s, p = conv.stride, conv.pad
    geometry = (s, s, p, p, p, p, 1, 1, conv.groups)
    tx, tw, tdy = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(dy)
    mask = {
        "forward": None,
        "grad_input": (True, False, False),
        "grad_filter": (False, True, False),
    }
    extra: dict[str, Callable[[], object]] = {}
    if kind == "forward":
        out = np.empty_like(dy)
        out_llvm = np.empty_like(dy)
        run_llvm = generated(conv)
        extra["llvm"] = lambda: run_llvm(x, w, out_llvm)
        blocked = blocked_call(conv, x, w)
        if blocked is not None:
            extra["nchwc"] = blocked[0]

        def ours() -> object:
            return cpu.conv2d_f32(x, w, out, *geometry)

        def theirs() -> object:
            return torch.nn.functional.conv2d(tx, tw, stride=s, padding=p, groups=conv.groups)
    else:
        out = np.empty_like(x if kind == "grad_input" else w)

        def ours() -> object:
            if kind == "grad_input":
                return cpu.conv2d_grad_input_f32(dy, w, out, *geometry)
            return cpu.conv2d_grad_filter_f32(x, dy, out, *geometry)

        def theirs() -> object:
            result = torch.ops.aten.convolution_backward(
                tdy, tx, tw, None, [s, s], [p, p], [1, 1], False, [0, 0], conv.groups, mask[kind]
            )
            return result[0] if kind == "grad_input" else result[1]

    ours()
    expected = theirs()
    assert isinstance(expected, torch.Tensor)
    scale = float(np.abs(expected.numpy()).max()) or 1.0
    np.testing.assert_allclose(out / scale, expected.numpy() / scale, atol=2e-5)
    if extra:
        extra["llvm"]()
        np.testing.assert_allclose(out_llvm / scale, expected.numpy() / scale, atol=2e-5)
    if "nchwc" in extra:
        extra["nchwc"]()
        got = from_nchwc(blocked[1]) / scale  # pyright: ignore[reportOptionalSubscript]
        np.testing.assert_allclose(got, expected.numpy() / scale, atol=2e-5)
    return {"dflow": ours, **extra, "torch": theirs}, conv.flops


def blocked_call(
    conv: Conv, x: np.ndarray, w: np.ndarray
) -> tuple[Callable[[], object], np.ndarray] | None:
    """The llvm target's NCHWc convolution of `conv` (`df-layout`'s, for one group and
    output channels in blocks of 16) on `x` and `w` packed beforehand, as `df-layout`
    packs them at compile time (an input of channels not in 16s read as NCHW); the
    call and its output, else None."""
    if conv.groups != 1 or conv.o % 16:
        return None
    lanes = 16 if conv.c % 16 == 0 else 1
    s, p = conv.stride, conv.pad
    shapes = (conv.n, conv.c // lanes, conv.hw, conv.hw, conv.o // 16, conv.k, conv.k)
    blocked = NchwcConv(*shapes, p, p, p, p, False, s, s, lanes)
    tiles = [tile.definition() for tile in blocked.tiles()]
    call = f'call void @"{blocked.name}"(ptr %x, ptr %w, ptr %y, i64 {blocked.cb})'
    entry = f"define void @conv(ptr %x, ptr %w, ptr %y) {{\nentry:\n  {call}\n  ret void\n}}"
    text = "\n".join([*tiles, blocked.definition(), entry])
    machine = llvm_jit.target_machine()
    code = llvm_jit.compile_object("\n".join([text, *DECLARATIONS]), machine)
    library = llvm_jit.library_of([code], machine)
    _LIBRARIES.append(library)
    function = library.function("conv", 3)
    xb = to_nchwc(x, 16) if lanes == 16 else np.ascontiguousarray(x[..., None])
    wb = to_oihw_io(w, 16, lanes)
    out = np.empty((conv.n, conv.o // 16, conv.out_hw, conv.out_hw, 16), np.float32)
    return (lambda: function(xb.ctypes.data, wb.ctypes.data, out.ctypes.data)), out


def generated(conv: Conv) -> Callable[[np.ndarray, np.ndarray, np.ndarray], object]:
    """The llvm target's convolution of `conv`'s shapes, compiled alone and called on
    NumPy arrays (x, w, out)."""
    s, p = conv.stride, conv.pad
    shapes = (conv.n, conv.c, conv.hw, conv.hw, conv.o, conv.k, conv.k)
    direct = DirectConv(*shapes, p, p, p, p, False, s, s, conv.groups)
    text = direct.definition().replace(f'internal void @"{direct.name}"', "void @conv")
    machine = llvm_jit.target_machine()
    code = llvm_jit.compile_object("\n".join([text, *DECLARATIONS]), machine)
    library = llvm_jit.library_of([code], machine)
    _LIBRARIES.append(library)  # its machine code lives as long as the benchmark
    function = library.function("conv", 3)
    return lambda x, w, out: function(x.ctypes.data, w.ctypes.data, out.ctypes.data)


_LIBRARIES: list[object] = []


def _pool_times(shape: tuple[int, ...], k: int, s: int, p: int, rounds: int) -> dict[str, float]:
    """Max pooling forward (alone, and with the indices a gradient keeps) and backward
    (searching the windows again, or from the indices), dflow's library against
    PyTorch's."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape, dtype=np.float32)
    tx = torch.from_numpy(x)
    out_hw = (shape[2] + 2 * p - k) // s + 1
    out = np.empty((*shape[:2], out_hw, out_hw), np.float32)
    dy = rng.standard_normal(out.shape, dtype=np.float32)
    dx = np.empty_like(x)
    tdy = torch.from_numpy(dy)
    _, indices = torch.nn.functional.max_pool2d(tx, k, s, p, return_indices=True)
    ours = np.empty(out.shape, np.int64)
    n, c = shape[:2]
    planes, flat = x.reshape(n, c, -1), ours.reshape(n, c, -1)
    maxima = out.reshape(n, c, -1)

    def with_indices() -> None:  # what df-autodiff puts in place of the forward pool
        cpu.max_pool2d_indices_f32(x, ours, k, k, s, s, p, p, p, p)
        cpu.gather_elements_i64_f32(planes, flat, maxima, 2)

    def torch_backward() -> object:
        return torch.ops.aten.max_pool2d_with_indices_backward(
            tdy, tx, [k, k], [s, s], [p, p], [1, 1], False, indices
        )

    calls: dict[str, Callable[[], object]] = {
        "forward dflow": lambda: cpu.max_pool2d_f32(x, out, k, k, s, s, p, p, p, p),
        "forward torch": lambda: torch.nn.functional.max_pool2d(tx, k, s, p),
        "indices dflow": with_indices,
        "indices torch": lambda: torch.nn.functional.max_pool2d(tx, k, s, p, return_indices=True),
        "grad dflow": lambda: cpu.max_pool2d_grad_f32(x, dy, dx, k, k, s, s, p, p, p, p),
        "grad torch": torch_backward,
        "grad_indices dflow": lambda: cpu.max_pool2d_grad_indices_f32(
            dy, ours, dx, k, k, s, s, p, p, p, p
        ),
        "grad_indices torch": torch_backward,
    }
    return best_of(calls, rounds)


def pools(rounds: int) -> None:
    cases = [
        ("convnet pool 2x2/2", (32, 16, 32, 32), 2, 2, 0),
        ("resnet pool 3x3/2", (1, 64, 112, 112), 3, 2, 1),
    ]
    print(f"\n{'pool':<22} {'routine':<13} {'dflow ms':>9} {'torch ms':>9} {'/ torch':>8}")
    for name, shape, k, s, p in cases:
        times = _pool_times(shape, k, s, p, rounds)
        for routine in ("forward", "indices", "grad", "grad_indices"):
            ours, theirs = times[f"{routine} dflow"], times[f"{routine} torch"]
            row = f"{ours * 1e3:>9.3f} {theirs * 1e3:>9.3f} {ours / theirs:>8.2f}"
            print(f"{name:<22} {routine:<13} {row}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=("forward", "grad_input", "grad_filter"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    kinds = [args.only] if args.only else ["forward", "grad_input", "grad_filter"]
    roof = sgemm_gflops(args.rounds)
    print(f"{BLAS_CHOICE}; SGEMM 1024^3 (NumPy's OpenBLAS, one thread): {roof:.1f} GFLOP/s")
    print(
        f"{'shape':<22} {'routine':<12} {'dflow ms':>9} {'torch ms':>9} {'/ torch':>8} "
        f"{'GFLOP/s':>8} {'/ SGEMM':>8} {'llvm ms':>8} {'GFLOP/s':>8} {'/ SGEMM':>8} "
        f"{'nchwc ms':>8} {'GFLOP/s':>8} {'/ SGEMM':>8}"
    )
    totals = {"dflow": 0.0, "llvm": 0.0, "nchwc": 0.0, "torch": 0.0}
    for conv in SHAPES:
        for kind in kinds:
            calls, flops = _case(conv, kind)
            times = best_of(calls, args.rounds)
            for name, seconds in times.items():
                totals[name] += seconds
            rate = flops / times["dflow"] / 1e9
            row = (
                f"{conv.name:<22} {kind:<12} {times['dflow'] * 1e3:>9.3f} "
                f"{times['torch'] * 1e3:>9.3f} {times['dflow'] / times['torch']:>8.2f} "
                f"{rate:>8.1f} {rate / roof:>8.2f}"
            )
            for column in ("llvm", "nchwc"):
                if column in times:
                    generated_rate = flops / times[column] / 1e9
                    row += (
                        f" {times[column] * 1e3:>8.3f} {generated_rate:>8.1f} "
                        f"{generated_rate / roof:>8.2f}"
                    )
            print(row)
    print(
        f"{'all shapes':<35} {totals['dflow'] * 1e3:>9.2f} {totals['torch'] * 1e3:>9.2f} "
        f"{totals['dflow'] / totals['torch']:>8.2f}   llvm (forward) {totals['llvm'] * 1e3:.2f} ms"
    )
    pools(args.rounds)


if __name__ == "__main__":
    main()
