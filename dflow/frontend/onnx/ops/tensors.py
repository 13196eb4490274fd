"""ONNX ops that move data without computing: reshapes, transposes, concatenation,
slicing, splitting, gathering, and the constants and shapes they are fed with.

Their shape operands (`Reshape`'s shape, `Slice`'s starts, `Split`'s sizes) must
be known at import time; `FoldingGraph` folds the shape arithmetic that computes
them into constants. `Gather` is `df.gather`, its indices read at run time.
`Slice` with steps other than 1, and `Gather` with constant indices in a few runs,
are composed of `df.slice`, `df.reshape` and `df.concat`: a stride `s` takes the
first of each group of `s` (a reshape and a slice), and indices are runs of
consecutive ones, a slice each, concatenated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dflow.dialects import df
from dflow.dialects.df.folding import constant_operand
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.model import checked_count, tensor_array
from dflow.frontend.selection import joined, slice_axis, take


@converter("Flatten", attributes={"axis"})
def flatten(node: Node) -> list[Tensor]:
    x = node.input(0)
    rank = len(x.shape)
    axis = node.int("axis", 1)
    if not -rank <= axis <= rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    return [x.reshape((math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))]


@converter("Reshape", attributes={"allowzero"})
def reshape(node: Node) -> list[Tensor]:
    """A `0` copies the input's dimension (unless `allowzero`), one `-1` is inferred."""
    x = node.input(0)
    shape = node.ints_input(1, "the shape") or []
    allowzero = bool(node.int("allowzero", 0))
    dims: list[int] = []
    for index, wanted in enumerate(shape):
        dim = wanted
        if dim == 0 and not allowzero:
            if index >= len(x.shape):
                raise node.error(
                    f"shape {shape} copies axis {index} of a rank-{len(x.shape)} input"
                )
            dim = x.shape[index]
        if dim < -1:
            raise node.error(f"shape {shape} has a negative dimension")
        dims.append(dim)
    if dims.count(-1) > 1:
        raise node.error(f"shape {shape} has more than one -1")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or math.prod(x.shape) % known:
            raise node.error(f"cannot reshape {list(x.shape)} into {shape}")
        dims[dims.index(-1)] = math.prod(x.shape) // known
    if math.prod(dims) != math.prod(x.shape):
        raise node.error(f"cannot reshape {list(x.shape)} into {shape} ({dims})")
    return [x.reshape(dims)]


@converter("Transpose", attributes={"perm"})
def transpose(node: Node) -> list[Tensor]:
    x = node.input(0)
    perm = node.ints("perm")
    return [x.transpose(None if perm is None else perm)]


def distinct_axes(node: Node, rank: int, axes: Sequence[int]) -> list[int]:
    """`axes` counted from the front, each once."""
    normal = [node.axis(axis, rank, "axes") for axis in axes]
    if len(set(normal)) != len(normal):
        raise node.error(f"axes {list(axes)} repeat an axis")
    return normal


def axes_operand(node: Node, since: int, name: str = "axes") -> list[int] | None:
    """The `axes` (or another list `name`) of a node: an attribute before opset
    `since`, input 1 from it."""
    if node.opset >= since:
        if name in node.attributes:
            raise node.error(f"{name} is an input from opset {since} on, not an attribute")
        return node.ints_input(1, name)
    return node.ints(name)


@converter("Squeeze", attributes={"axes"})
def squeeze(node: Node) -> list[Tensor]:
    x = node.input(0)
    axes = axes_operand(node, 13)
    if axes is None:
        chosen = [i for i, dim in enumerate(x.shape) if dim == 1]
    else:
        chosen = distinct_axes(node, len(x.shape), axes)
    wide = [axis for axis in chosen if x.shape[axis] != 1]
    if wide:
        raise node.error(f"axis {wide[0]} of shape {list(x.shape)} is not of size 1")
    return [x.reshape([dim for i, dim in enumerate(x.shape) if i not in chosen])]


@converter("Unsqueeze", attributes={"axes"})
def unsqueeze(node: Node) -> list[Tensor]:
    x = node.input(0)
    axes = axes_operand(node, 13)
    if axes is None:
        raise node.error("axes are missing")
    rank = len(x.shape) + len(axes)
    inserted = set(distinct_axes(node, rank, axes))
    dims = iter(x.shape)
    return [x.reshape([1 if i in inserted else next(dims) for i in range(rank)])]


@converter("Concat", attributes={"axis"})
def concat(node: Node) -> list[Tensor]:
    parts = [node.input(i) for i in range(len(node.inputs))]
    if "axis" not in node.attributes:
        raise node.error("attribute axis is missing")
    return [node.emit(df.ConcatOp([p.value for p in parts], node.int("axis", 0)))]


@converter("Expand")
def expand(node: Node) -> list[Tensor]:
    """Broadcast to the NumPy broadcast of the input's shape and `shape`."""
    x = node.input(0)
    shape = node.ints_input(1, "the shape") or []
    try:
        target = tuple(np.broadcast_shapes(x.shape, tuple(shape)))
    except ValueError:
        raise node.error(f"shape {shape} does not broadcast with {list(x.shape)}") from None
    return [x.broadcast_to(target) if target != x.shape else x]


# ----------------------------------------------------------------------------- slicing


@converter("Slice")
def slice_(node: Node) -> list[Tensor]:
    """`x[start:end:step]` on the chosen axes, bounds clamped as NumPy clamps them."""
    x = node.input(0)
    starts = node.ints_input(1, "starts")
    ends = node.ints_input(2, "ends")
    if starts is None or ends is None or len(starts) != len(ends):
        raise node.error("starts and ends must be given, of one length")
    axes = node.ints_input(3, "axes") or list(range(len(starts)))
    steps = node.ints_input(4, "steps") or [1] * len(starts)
    if not len(axes) == len(steps) == len(starts):
        raise node.error("starts, ends, axes and steps must have one length")
    for axis, start, end, step in zip(
        distinct_axes(node, len(x.shape), axes), starts, ends, steps, strict=True
    ):
        if step == 0:
            raise node.error("a step of 0")
        begin, stop, _ = slice(start, end, step).indices(x.shape[axis])
        x = take(x, axis, list(range(begin, stop, step)))
    return [x]


@converter("Gather", attributes={"axis"})
def gather(node: Node) -> list[Tensor]:
    """`numpy.take(data, indices, axis)`: `df.gather`, its indices checked at run
    time; indices known at import time are checked now and taken by `selection.take`
    (slices where they are a few runs of a constant step)."""
    x, indices = node.input(0), node.input(1)
    axis = node.axis(node.int("axis", 0), len(x.shape))
    known = constant_operand(indices.value)
    if known is None:
        return [x.graph.emit(df.GatherOp(x.value, indices.value, axis))]
    size = x.shape[axis]
    flat = [int(i) for i in known.reshape(-1)]
    wrong = [i for i in flat if not -size <= i < size]
    if wrong:
        raise node.error(f"index {wrong[0]} is out of range for axis {axis} of size {size}")
    taken = take(x, axis, [i % size for i in flat])
    shape = (*x.shape[:axis], *known.shape, *x.shape[axis + 1 :])
    return [taken.reshape(shape) if taken.shape != shape else taken]


@converter("GatherElements", attributes={"axis"})
def gather_elements(node: Node) -> list[Tensor]:
    """`df.gather_elements`: `take_along_axis(data, indices, axis)`."""
    x, indices = node.input(0), node.input(1)
    axis = node.axis(node.int("axis", 0), len(x.shape))
    return [x.graph.emit(df.GatherElementsOp(x.value, indices.value, axis))]


@converter("Trilu", attributes={"upper"})
def trilu(node: Node) -> list[Tensor]:
    """The upper (`upper=1`, the default) or lower triangle of each matrix of the
    last two axes, from diagonal `k` (input 1, known at import time), the rest zeros:
    a select against a constant mask, which fuses with its neighbours."""
    x = node.input(0)
    if len(x.shape) < 2:
        raise node.error(f"Trilu takes a tensor of rank 2 or more, got rank {len(x.shape)}")
    offset = node.ints_input(1, "k")
    k = 0 if offset is None else offset[0]
    ones = np.ones(x.shape[-2:], dtype=np.bool_)
    mask = np.triu(ones, k) if node.int("upper", 1) else np.tril(ones, k)
    zero = node.scalar(0, x)
    return [node.emit(df.SelectOp(node.graph.constant(mask).value, x.value, zero.value))]


def _pad_axis(x: Tensor, axis: int, before: int, after: int, mode: str, fill: Tensor) -> Tensor:
    """`x` padded along `axis` (both counts >= 0) as `mode` says: `fill` (a rank-0
    tensor), the edge repeated, the inside reflected, or wrapped around."""
    size = x.shape[axis]

    def rows(indices: list[int]) -> Tensor:
        where = x.graph.constant(np.array(indices, dtype=np.int64))
        return x.graph.emit(df.GatherOp(x.value, where.value, axis))

    if mode == "constant":
        shapes = [
            tuple(count if k == axis else d for k, d in enumerate(x.shape))
            for count in (before, after)
        ]
        parts = [fill.broadcast_to(shape) for shape in shapes]
    elif mode == "edge":
        parts = [rows([0] * before), rows([size - 1] * after)]
    elif mode == "reflect":
        parts = [
            rows(list(range(before, 0, -1))),
            rows(list(range(size - 2, size - 2 - after, -1))),
        ]
    else:  # wrap
        parts = [
            rows([(i - before) % size for i in range(before)]),
            rows([i % size for i in range(after)]),
        ]
    return joined(x, axis, *parts)


@converter("Pad", attributes={"mode"})
def pad(node: Node) -> list[Tensor]:
    """ONNX's `Pad` (opset 11 on: `pads`, `constant_value` and `axes` as inputs): a
    negative count crops (a slice), a positive one adds `constant_value` (zero by
    default), the edge, the inside reflected (`reflect`), or the far end (`wrap`)."""
    x = node.input(0)
    rank = len(x.shape)
    if node.opset < 11:
        raise node.error("Pad before opset 11 (pads as an attribute) is not supported")
    mode = node.string("mode", "constant")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise node.error(f"mode {mode!r} is not constant, edge, reflect or wrap")
    axes = node.ints_input(3, "axes")
    chosen = list(range(rank)) if axes is None else [node.axis(a, rank) for a in axes]
    pads = node.ints_input(1, "pads") or []
    if len(pads) != 2 * len(chosen):
        raise node.error(
            f"pads has {len(pads)} values; 2 per padded axis ({2 * len(chosen)}) expected"
        )
    fill = node.optional(2)
    fill = node.scalar(0, x) if fill is None else fill.reshape(())
    for k, axis in enumerate(chosen):
        before, after = pads[k], pads[k + len(chosen)]
        start, limit = max(0, -before), x.shape[axis] - max(0, -after)
        if start or limit != x.shape[axis]:
            x = slice_axis(x, axis, start, max(start, limit))
        before, after = max(0, before), max(0, after)
        if (before or after) and mode != "constant" and not x.shape[axis]:
            raise node.error(
                f"axis {axis} is empty: there is nothing to pad it with in {mode} mode"
            )
        if mode == "reflect" and max(before, after) >= x.shape[axis]:
            raise node.error(
                f"reflect pads of {before} and {after} reach past axis {axis} "
                f"of size {x.shape[axis]}"
            )
        if before or after:
            x = _pad_axis(x, axis, before, after, mode, fill)
    return [x]


@converter("Range")
def range_(node: Node) -> list[Tensor]:
    """`numpy.arange(start, limit, delta)`, all three known at import time (the
    result's length depends on them): a constant."""
    start, limit, delta = (
        node.required_constant(i, what) for i, what in enumerate(("start", "limit", "delta"))
    )
    if not (start.shape == limit.shape == delta.shape == ()):
        raise node.error("start, limit and delta must be scalars")
    if delta == 0:
        raise node.error("delta is 0: the range would never end")
    count = max(int(np.ceil((limit - start) / delta)), 0)
    values = start + delta * np.arange(count, dtype=start.dtype)
    return [node.graph.constant(values.astype(start.dtype))]


@converter("Split", attributes={"axis", "split", "num_outputs"})
def split(node: Node) -> list[Tensor]:
    """Consecutive `df.slice`s of `x` along `axis`, one per output."""
    x = node.input(0)
    if not x.shape or not node.proto.output:
        raise node.error("Split takes a tensor of rank 1 or more and gives an output or more")
    axis = node.axis(node.int("axis", 0), len(x.shape))
    sizes = _split_sizes(node, x.shape[axis])
    if len(sizes) == 1:
        return [x]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    ends = [start + size for start, size in zip(starts, sizes, strict=True)]
    return [slice_axis(x, axis, start, end) for start, end in zip(starts, ends, strict=True)]


def _split_sizes(node: Node, size: int) -> list[int]:
    """The size of each output along the axis: `split` (an attribute before opset 13,
    input 1 from it), else `num_outputs` (opset 18) or as many as the node has
    outputs, of equal size (from opset 18 the last may be smaller)."""
    outputs = len(node.proto.output)
    sizes = axes_operand(node, 13, "split")
    if "num_outputs" in node.attributes:
        parts = node.int("num_outputs", 0)
        if node.opset < 18:
            raise node.error("num_outputs is an attribute from opset 18 on")
        if sizes is not None:
            raise node.error("split and num_outputs are both given")
        if parts != outputs:
            raise node.error(f"num_outputs={parts} but the node has {outputs} outputs")
    if sizes is None:
        chunk = -(-size // outputs)
        sizes = [chunk] * (outputs - 1) + [size - chunk * (outputs - 1)]
        if sizes[-1] < 0 or (node.opset < 18 and size % outputs):
            raise node.error(f"an axis of size {size} does not split into {outputs} parts")
        return sizes
    if len(sizes) != outputs or any(s < 0 for s in sizes) or sum(sizes) != size:
        raise node.error(
            f"split {sizes} does not divide an axis of size {size} into {outputs} outputs"
        )
    return sizes


# ----------------------------------------------------------------------------- constants


@converter("Shape", attributes={"start", "end"})
def shape(node: Node) -> list[Tensor]:
    """The input's (static) shape as INT64, from `start` to `end` (opset 15)."""
    dims = node.input(0).shape
    start, end = node.int("start", 0), node.int("end", len(dims))
    return [node.graph.constant(np.array(dims[slice(start, end)], dtype=np.int64))]


@converter(
    "Constant",
    attributes={
        "value",
        "value_float",
        "value_floats",
        "value_int",
        "value_ints",
        "value_string",
        "value_strings",
        "sparse_value",
    },
)
def constant(node: Node) -> list[Tensor]:
    if len(node.attributes) != 1:
        raise node.error("a Constant needs exactly one value attribute")
    name = next(iter(node.attributes))
    if name == "value":
        tensor = node.attributes[name].t
        return [
            node.graph.constant(tensor_array(tensor, node.folder, f"the value of {node.describe}"))
        ]
    if name in ("value_float", "value_floats"):
        return [node.graph.constant(np.asarray(node.attribute(name), dtype=np.float32))]
    if name in ("value_int", "value_ints"):
        return [node.graph.constant(np.asarray(node.attribute(name), dtype=np.int64))]
    raise node.error(f"{name} is not supported (dflow has no strings or sparse tensors)")


@converter("ConstantOfShape", attributes={"value"})
def constant_of_shape(node: Node) -> list[Tensor]:
    """A tensor of `shape` filled with `value` (one element; float 0 by default)."""
    shape = node.ints_input(0, "the shape") or []
    if "value" in node.attributes:
        fill = tensor_array(
            node.attributes["value"].t, node.folder, f"the value of {node.describe}"
        )
        if fill.size != 1:
            raise node.error(f"value must have one element, it has {fill.size}")
    else:
        fill = np.zeros(1, dtype=np.float32)
    checked_count(shape, f"{node.describe}'s result", fill.dtype.itemsize)
    return [node.graph.constant(np.full(shape, fill.reshape(-1)[0], dtype=fill.dtype))]
