"""The window attributes of `Conv`, `MaxPool` and `AveragePool`: kernel, strides,
dilations and pads, with `auto_pad` and `ceil_mode` resolved into explicit pads
for an input of static shape, and 1-D windows made 2-D (a height of 1) so that
`df.conv2d` and the df pools serve both. A 3-D pool is two 2-D ones
(`separable_3d`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from onnx import NodeProto, helper

from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node

WINDOW_ATTRIBUTES = frozenset({"auto_pad", "dilations", "kernel_shape", "pads", "strides"})


@dataclass(frozen=True)
class Window:
    """A 2-D window: each field holds (height, width); `begin` and `end` are the pads
    before and after each axis."""

    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    begin: tuple[int, int]
    end: tuple[int, int]

    @property
    def pads(self) -> tuple[int, int, int, int]:
        """As df's `pads`: top, left, bottom, right."""
        return (self.begin[0], self.begin[1], self.end[0], self.end[1])

    def span(self, axis: int) -> int:
        return self.dilations[axis] * (self.kernel[axis] - 1) + 1


def spatial_rank(node: Node, x: Tensor) -> int:
    """1 or 2: how many spatial axes `x` (N, C, spatial...) has; an error otherwise."""
    rank = len(x.shape) - 2
    if rank not in (1, 2):
        raise node.error(
            f"a {rank}-D window (input of shape {list(x.shape)}) is not supported: dflow "
            "imports 1-D and 2-D convolutions, and 1-D to 3-D pools"
        )
    return rank


def as_2d(x: Tensor) -> Tensor:
    """An (N, C, W) tensor as (N, C, 1, W); a 4-D one as it is."""
    return x.reshape((*x.shape[:2], 1, x.shape[2])) if len(x.shape) == 3 else x


def from_2d(y: Tensor, rank: int) -> Tensor:
    """The result of a 2-D window op back in `rank` spatial axes."""
    return y.reshape((*y.shape[:2], y.shape[3])) if rank == 1 else y


def _pair(
    node: Node, name: str, values: Sequence[int] | None, rank: int, default: int
) -> tuple[int, int]:
    if values is None:
        values = [default] * rank
    if len(values) != rank:
        raise node.error(f"{name} {list(values)} must have {rank} values, one per spatial axis")
    if any(v < 1 for v in values):
        raise node.error(f"{name} {list(values)} must be positive")
    return (1, values[0]) if rank == 1 else (values[0], values[1])


def window(node: Node, x: Tensor, kernel: Sequence[int]) -> Window:
    """The window of a node over `x` (1-D or 2-D), its pads resolved (not `ceil_mode`)."""
    rank = spatial_rank(node, x)
    sizes = (1, x.shape[2]) if rank == 1 else (x.shape[2], x.shape[3])
    kernel_pair = _pair(node, "kernel_shape", kernel, rank, 1)
    strides = _pair(node, "strides", node.ints("strides"), rank, 1)
    dilations = _pair(node, "dilations", node.ints("dilations"), rank, 1)
    auto_pad = node.string("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = _same_pads(sizes, kernel_pair, strides, dilations, auto_pad == "SAME_UPPER")
    elif auto_pad == "VALID":
        begin, end = (0, 0), (0, 0)
    elif auto_pad == "NOTSET":
        begin, end = _explicit_pads(node, rank)
    else:
        raise node.error(f"auto_pad={auto_pad!r} is not supported")
    return Window(kernel_pair, strides, dilations, begin, end)


def _explicit_pads(node: Node, rank: int) -> tuple[tuple[int, int], tuple[int, int]]:
    pads = node.ints("pads") or [0] * 2 * rank
    if len(pads) != 2 * rank or any(p < 0 for p in pads):
        raise node.error(f"pads {pads} must be {2 * rank} non-negative values")
    if rank == 1:
        return (0, pads[0]), (0, pads[1])
    return (pads[0], pads[1]), (pads[2], pads[3])


def _same_pads(
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    upper: bool,
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Pads giving `ceil(size / stride)` outputs, the odd one at the end (SAME_UPPER)
    or at the beginning (SAME_LOWER)."""
    begin: list[int] = []
    end: list[int] = []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        out = math.ceil(size / s)
        total = max(0, (out - 1) * s + d * (k - 1) + 1 - size)
        small, large = total // 2, total - total // 2
        begin.append(small if upper else large)
        end.append(large if upper else small)
    return (begin[0], begin[1]), (end[0], end[1])


def ceil_mode_window(node: Node, x: Tensor, w: Window) -> tuple[Window, tuple[int, int]]:
    """With `ceil_mode`, the output length rounds up, except that no window may start
    in the end padding (ONNX's rule, as PyTorch's); the extra length is padded at the
    end. Returns the window with those pads and the output length of each axis."""
    rank = spatial_rank(node, x)
    sizes = (1, x.shape[2]) if rank == 1 else (x.shape[2], x.shape[3])
    ceil = bool(node.int("ceil_mode", 0))
    outputs: list[int] = []
    extra: list[int] = []
    for axis, size in enumerate(sizes):
        padded = size + w.begin[axis] + w.end[axis]
        if padded < w.span(axis):
            raise node.error(
                f"the window ({w.span(axis)} wide) is larger than the padded input "
                f"({padded}) of shape {list(x.shape)}"
            )
        steps = (padded - w.span(axis)) / w.strides[axis]
        out = (math.ceil(steps) if ceil else math.floor(steps)) + 1
        if ceil and (out - 1) * w.strides[axis] >= size + w.begin[axis]:
            out -= 1
        outputs.append(out)
        extra.append(max(0, (out - 1) * w.strides[axis] + w.span(axis) - padded))
    end = (w.end[0] + extra[0], w.end[1] + extra[1])
    return Window(w.kernel, w.strides, w.dilations, w.begin, end), (outputs[0], outputs[1])


Pool = Callable[[Node], Sequence[Tensor | None]]
"""A pool's converter (`MaxPool`'s, `AveragePool`'s)."""


def separable_3d(node: Node, x: Tensor, pool: Pool) -> Tensor:
    """A 3-D max or average pool of `x` (N, C, D, H, W) as two 2-D ones: over (H, W)
    with the depth folded into the channels, then over (D, H·W) with a window of
    width 1. A box window is separable: its maximum is the maximum over depth of
    the maxima over (H, W), and its average, whose count (of elements inside the
    input, or inside its pads) is the product of each axis's count, the average
    over depth of the averages over (H, W). Each stage resolves `auto_pad` and
    `ceil_mode` for its own axes, as the 3-D pool does per axis."""
    n, c, d, h, w = x.shape
    kernel = node.ints("kernel_shape") or []
    strides = node.ints("strides") or [1, 1, 1]
    dilations = node.ints("dilations") or [1, 1, 1]
    pads = node.ints("pads") or [0] * 6
    if not len(kernel) == len(strides) == len(dilations) == 3 or len(pads) != 6:
        raise node.error(
            f"a 3-D pool takes 3 values of kernel_shape, strides and dilations and 6 pads, "
            f"got {list(kernel)}, {list(strides)}, {list(dilations)} and {list(pads)}"
        )
    planes = _stage(node, x.reshape((n, c * d, h, w)), pool, {
        "kernel_shape": kernel[1:], "strides": strides[1:], "dilations": dilations[1:],
        "pads": [pads[1], pads[2], pads[4], pads[5]],
    })  # fmt: skip
    oh, ow = planes.shape[2:]
    depth = _stage(node, planes.reshape((n, c, d, oh * ow)), pool, {
        "kernel_shape": [kernel[0], 1], "strides": [strides[0], 1],
        "dilations": [dilations[0], 1], "pads": [pads[0], 0, pads[3], 0],
    })  # fmt: skip
    return depth.reshape((n, c, depth.shape[2], oh, ow))


def _stage(node: Node, x: Tensor, pool: Pool, window: dict[str, Any]) -> Tensor:
    """`pool` of a node like `node` (its other attributes, one output) over `x`."""
    proto = NodeProto()
    proto.CopyFrom(node.proto)
    kept = [a for a in node.proto.attribute if a.name not in window]
    del proto.attribute[:]
    proto.attribute.extend(kept)
    proto.attribute.extend(helper.make_attribute(k, v) for k, v in window.items())
    result = pool(replace(node, proto=proto, inputs=[x]))[0]
    assert result is not None
    return result
