"""Neural-network ONNX ops: `MatMul`, `Gemm`, `Conv`, the pools,
`BatchNormalization` (inference and training), `Dropout` (inference, or a ratio of
0), `LayerNormalization`.

Chosen compositions, where df has no op of its own:
- `ceil_mode` pools pad the end of each axis so that the last window exists (max
  pooling never picks padding, average pooling does not count it);
- `count_include_pad=1` scales `df.avg_pool2d` (which divides by the elements
  inside the input) by a constant: elements inside / elements inside the explicit
  pads, per output position;
- `BatchNormalization` is `x · a + b` with `a = scale / √(var + ε)` and
  `b = bias - mean · a` per channel (constants when its parameters are);
- `LayerNormalization` is ONNX's own function: the mean over the normalized axes,
  the centered input, its mean square (the variance), `rsqrt(var + ε)`, then the
  scale and bias; the mean and variance each computed once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from onnx import TensorProto
from xdsl.dialects.builtin import f32, f64, i64

from dflow.dialects import df
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.types import FLOATS
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.ops.elementwise import float_input
from dflow.frontend.onnx.ops.windows import (
    WINDOW_ATTRIBUTES,
    Window,
    as_2d,
    ceil_mode_window,
    from_2d,
    separable_3d,
    spatial_rank,
    window,
)
from dflow.frontend.selection import pad_constant, take

# ----------------------------------------------------------------------------- products


@converter("MatMul")
def matmul(node: Node) -> list[Tensor]:
    """NumPy's `matmul`: 1-D operands gain an axis that the result drops again;
    leading (batch) axes broadcast. A batch times a matrix is one 2-D product."""
    return [numpy_matmul(node, node.input(0), node.input(1))]


def numpy_matmul(node: Node, a: Tensor, b: Tensor) -> Tensor:
    """`numpy.matmul(a, b)` of df tensors (also the integer products' core)."""
    vector_a, vector_b = len(a.shape) == 1, len(b.shape) == 1
    if vector_a:
        a = a.reshape((1, a.shape[0]))
    if vector_b:
        b = b.reshape((b.shape[0], 1))
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise node.error(f"operands of shapes {list(a.shape)} and {list(b.shape)} are scalars")
    y = _product(node, a, b)
    shape = list(y.shape)
    if vector_b:
        shape.pop(-1)
    if vector_a:
        shape.pop(-1 if vector_b else -2)
    return y.reshape(shape) if len(shape) != len(y.shape) else y


def _product(node: Node, a: Tensor, b: Tensor) -> Tensor:
    if len(b.shape) == 2 and len(a.shape) > 2:
        rows = a.reshape((math.prod(a.shape[:-1]), a.shape[-1]))
        y = node.emit(df.MatmulOp(rows.value, b.value))
        return y.reshape((*a.shape[:-1], b.shape[-1]))
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    if a.shape[:-2] != batch:
        a = a.broadcast_to((*batch, *a.shape[-2:]))
    if b.shape[:-2] != batch:
        b = b.broadcast_to((*batch, *b.shape[-2:]))
    return node.emit(df.MatmulOp(a.value, b.value))


@converter("Gemm", attributes={"alpha", "beta", "transA", "transB"})
def gemm(node: Node) -> list[Tensor]:
    """`alpha · op(A) · op(B) + beta · C`, C broadcast to the product's shape."""
    a, b, c = node.input(0), node.input(1), node.optional(2)
    alpha, beta = node.float("alpha", 1.0), node.float("beta", 1.0)
    y = node.emit(
        df.MatmulOp(
            a.value,
            b.value,
            transpose_a=bool(node.int("transA", 0)),
            transpose_b=bool(node.int("transB", 0)),
        )
    )
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        shape = y.shape
        y = y + (c if beta == 1.0 else c * beta)
        if y.shape != shape:
            raise node.error(f"C of shape {list(c.shape)} does not broadcast to {list(shape)}")
    return [y]


# ----------------------------------------------------------------------------- convolution


@converter("Conv", attributes=WINDOW_ATTRIBUTES | {"group"})
def conv(node: Node) -> list[Tensor]:
    """A 1-D or 2-D `Conv` as one `df.conv2d`, whose `groups` is the node's `group`
    (grouped, or depthwise when it is the input's channels)."""
    return [conv2d_of(node, node.input(0), node.input(1), node.optional(2))]


def conv2d_of(node: Node, x: Tensor, w: Tensor, bias: Tensor | None) -> Tensor:
    """`x` convolved with `w` (and `bias`) by the node's window attributes and `group`
    (also the integer and quantized convolutions' core, on their shifted operands)."""
    rank = spatial_rank(node, x)
    if len(w.shape) != len(x.shape):
        raise node.error(f"filter of shape {list(w.shape)} for an input of {list(x.shape)}")
    kernel = node.ints("kernel_shape") or list(w.shape[2:])
    if list(kernel) != list(w.shape[2:]):
        raise node.error(f"kernel_shape {kernel} differs from the filter's {list(w.shape[2:])}")
    win = window(node, x, kernel)
    groups = node.int("group", 1)
    channels, outputs = x.shape[1], w.shape[0]
    if groups < 1 or channels % groups or outputs % groups or w.shape[1] * groups != channels:
        raise node.error(
            f"group={groups} does not divide input {list(x.shape)} and filter {list(w.shape)}"
        )
    y = _conv2d(node, as_2d(x), as_2d(w), bias, win, groups)
    return from_2d(y, rank)


def _conv2d(
    node: Node, x: Tensor, w: Tensor, bias: Tensor | None, win: Window, groups: int
) -> Tensor:
    return node.emit(
        df.Conv2DOp(
            x.value,
            w.value,
            None if bias is None else bias.value,
            strides=win.strides,
            pads=win.pads,
            dilations=win.dilations,
            groups=groups,
        )
    )


# ----------------------------------------------------------------------------- pooling


def _pool_window(node: Node, x: Tensor) -> tuple[Window, tuple[int, int]]:
    kernel = node.ints("kernel_shape")
    if kernel is None:
        raise node.error("attribute kernel_shape is missing")
    return ceil_mode_window(node, x, window(node, x, kernel))


@converter("MaxPool", attributes=WINDOW_ATTRIBUTES | {"ceil_mode", "storage_order"})
def max_pool(node: Node) -> list[Tensor]:
    """The maxima of the windows; of integers (INT8, UINT8 in opset 12 on) in f64,
    which holds every 8-bit (and 32-bit) value exactly."""
    x = node.input(0)
    element = node.element(x)
    indices = len(node.proto.output) > 1 and bool(node.proto.output[1])
    if len(x.shape) == 5:
        if indices:
            raise node.error("the Indices output of a 3-D MaxPool is not supported")
        return [separable_3d(node, x, max_pool)]
    floats = x if element in FLOATS else x.cast(f64)
    y = _float_max_pool(node, floats)
    y = y if element in FLOATS else y.cast(element)
    return [y, _max_pool_indices(node, floats)] if indices else [y]


def _max_pool_indices(node: Node, x: Tensor) -> Tensor:
    """ONNX's `Indices`: where each window's maximum lies, flattened over the whole
    input, `storage_order` 0 row-major (`((n * C + c) * H + h) * W + w`) or 1
    column-major in the plane (`((n * C + c) * W + w) * H + h`): `df.max_pool2d_indices`
    (`h * W + w`) and the offset of its plane."""
    win, _ = _pool_window(node, x)
    if win.dilations != (1, 1):
        raise node.error("the Indices output of a dilated MaxPool is not supported")
    plain = as_2d(x)
    n, c, height, width = plain.shape
    op = df.MaxPool2DIndicesOp(plain.value, kernel=win.kernel, strides=win.strides, pads=win.pads)
    place = node.emit(op)
    graph = node.graph
    if node.int("storage_order", 0) == 1:  # the row by f64 division: exact below 2**52
        row = ((place.cast(f64) + 0.5) / graph.constant(float(width))).cast(i64)
        column = place - row * graph.constant(np.int64(width))
        place = column * graph.constant(np.int64(height)) + row
    planes = np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * (height * width)
    return from_2d(place + graph.constant(planes), spatial_rank(node, x))


def _float_max_pool(node: Node, x: Tensor) -> Tensor:
    win, outputs = _pool_window(node, x)
    if win.dilations != (1, 1):
        taps = _taps(as_2d(x), win, outputs, -np.inf)
        y = taps[0]
        for tap in taps[1:]:
            y = y.maximum(tap)
        return from_2d(y, spatial_rank(node, x))
    op = df.MaxPool2DOp(as_2d(x).value, kernel=win.kernel, strides=win.strides, pads=win.pads)
    return from_2d(node.emit(op), spatial_rank(node, x))


@converter("AveragePool", attributes=WINDOW_ATTRIBUTES | {"ceil_mode", "count_include_pad"})
def average_pool(node: Node) -> list[Tensor]:
    x = node.input(0)
    if len(x.shape) == 5:
        return [separable_3d(node, x, average_pool)]
    explicit = window(node, x, node.ints("kernel_shape") or [])
    win, outputs = _pool_window(node, x)
    size = (1, x.shape[2]) if len(x.shape) == 3 else (x.shape[2], x.shape[3])
    dtype = numpy_dtype(x.type.element_type)
    include_pad = bool(node.int("count_include_pad", 0))
    if win.dilations != (1, 1):
        total = node.emit(df.AddNOp([t.value for t in _taps(as_2d(x), win, outputs, 0)]))
        counts = _counts(explicit, outputs, size, include_pad)
        return [from_2d(total / node.graph.constant(counts.astype(dtype)), spatial_rank(node, x))]
    op = df.AvgPool2DOp(as_2d(x).value, kernel=win.kernel, strides=win.strides, pads=win.pads)
    y = node.emit(op)
    if include_pad:
        factor = _counts(explicit, outputs, size, False) / _counts(explicit, outputs, size, True)
        y = y * node.graph.constant(factor.astype(dtype))
    return [from_2d(y, spatial_rank(node, x))]


def _counts(
    win: Window, outputs: Sequence[int], size: Sequence[int], include_pad: bool
) -> np.ndarray[tuple[int, ...], np.dtype[np.float64]]:
    """Per output position, how many of its window's elements lie inside the input
    (or, `include_pad`, inside the input and its explicit pads), as (1, 1, OH, OW)."""
    counts: list[np.ndarray[tuple[int, ...], np.dtype[np.float64]]] = []
    for axis in (0, 1):
        low, high = (
            (-win.begin[axis], size[axis] + win.end[axis]) if include_pad else (0, size[axis])
        )
        taps = np.arange(win.kernel[axis]) * win.dilations[axis]
        start = np.arange(outputs[axis]) * win.strides[axis] - win.begin[axis]
        position = start[:, None] + taps[None, :]
        counts.append(((position >= low) & (position < high)).sum(axis=1).astype(np.float64))
    return np.outer(counts[0], counts[1]).reshape(1, 1, outputs[0], outputs[1])


def _taps(x: Tensor, win: Window, outputs: Sequence[int], fill: float) -> list[Tensor]:
    """For a dilated window (which df's pools have not): per kernel tap, the input
    element each output position reads, from `x` padded with `fill`."""
    padded = x
    for axis in (2, 3):
        padded = pad_constant(padded, axis, win.begin[axis - 2], win.end[axis - 2], fill)
    taps: list[Tensor] = []
    for i in range(win.kernel[0]):
        rows = [i * win.dilations[0] + o * win.strides[0] for o in range(outputs[0])]
        picked = take(padded, 2, rows)
        for j in range(win.kernel[1]):
            columns = [j * win.dilations[1] + o * win.strides[1] for o in range(outputs[1])]
            taps.append(take(picked, 3, columns))
    return taps


@converter("GlobalAveragePool", "GlobalMaxPool")
def global_pool(node: Node) -> list[Tensor]:
    x = node.input(0)
    axes = list(range(2, len(x.shape)))
    if node.op_type == "GlobalAveragePool":
        return [x.mean(axes, keepdims=True)]
    return [x.max(axes, keepdims=True)]


# ----------------------------------------------------------------------------- inference


@converter("BatchNormalization", attributes={"epsilon", "momentum", "training_mode"})
def batch_normalization(node: Node) -> list[Tensor | None]:
    """Inference: `(x - mean) / √(var + ε) · scale + bias` per channel (axis 1); in
    training mode, with the batch's own mean and (population) variance over every
    axis but the channels', and the running statistics `input · momentum + batch ·
    (1 - momentum)` as the second and third outputs (ONNX's function)."""
    x, scale, bias, mean, var = (node.input(i) for i in range(5))
    epsilon = node.float("epsilon", 1e-5)
    shape = (x.shape[1], *([1] * (len(x.shape) - 2)))
    training = bool(node.int("training_mode", 0))
    if not training and any(node.proto.output[1:]):
        raise node.error("the running-statistics outputs are defined in training mode only")
    if training:
        return _training_batch_normalization(node, x, scale, bias, (mean, var), epsilon)
    a = scale * (var + epsilon).rsqrt()
    b = bias - mean * a
    return [x * a.reshape(shape) + b.reshape(shape)]


def _training_batch_normalization(
    node: Node, x: Tensor, scale: Tensor, bias: Tensor, running: tuple[Tensor, Tensor],
    epsilon: float,
) -> list[Tensor | None]:  # fmt: skip
    axes = [0, *range(2, len(x.shape))]
    shape = (x.shape[1], *([1] * (len(x.shape) - 2)))
    batch_mean = x.mean(axes)
    centered = x - batch_mean.reshape(shape)
    batch_var = (centered * centered).mean(axes)
    y = centered * ((batch_var + epsilon).rsqrt() * scale).reshape(shape) + bias.reshape(shape)
    momentum = node.float("momentum", 0.9)
    mean, var = (
        r * momentum + b * (1.0 - momentum)
        for r, b in zip(running, (batch_mean, batch_var), strict=True)
    )
    return [y, mean, var]


@converter("LayerNormalization", attributes={"axis", "epsilon", "stash_type"})
def layer_normalization(node: Node) -> list[Tensor]:
    """`Y = (x - mean) · rsqrt(var + ε) · scale + bias` over the axes from `axis` on,
    and the `Mean` and `InvStdDev` outputs (of the kept shape, with 1s). The first
    stage is computed in FLOAT (`stash_type`, the only type the spec's outputs allow
    that dflow has), the result cast back to `x`'s type before the scale and bias."""
    x, scale, bias = float_input(node), node.input(1), node.optional(2)
    element = node.element(x)
    if any(node.element(p) != element for p in (scale, bias) if p is not None):
        raise node.error(f"Scale and B must be of X's type, {element}")
    stash = node.int("stash_type", TensorProto.FLOAT)
    if stash != TensorProto.FLOAT:
        raise node.error(
            f"stash_type {stash} is not supported: dflow computes the first stage in FLOAT (1)"
        )
    rank = len(x.shape)
    if not rank:
        raise node.error("X is a scalar: there is no axis to normalize over")
    axes = list(range(node.axis(node.int("axis", -1), rank), rank))
    fused = _fused_layer_norm(node, x, scale, bias, axes)
    if fused is not None:
        return [fused]
    stage = x if element == f32 else x.cast(f32)
    mean = stage.mean(axes, keepdims=True)
    centered = stage - mean
    inverse = (
        (centered * centered).mean(axes, keepdims=True) + node.float("epsilon", 1e-5)
    ).rsqrt()
    normalized = centered * inverse
    y = (normalized if element == f32 else normalized.cast(element)) * scale
    if bias is not None:
        y = y + bias
    if y.shape != x.shape:
        shapes = [list(p.shape) for p in (scale, bias) if p is not None]
        raise node.error(f"Scale and B of shapes {shapes} do not broadcast to X's {list(x.shape)}")
    return [y, mean, inverse]


def _fused_layer_norm(
    node: Node, x: Tensor, scale: Tensor, bias: Tensor | None, axes: list[int]
) -> Tensor | None:
    """`df.layer_norm` over the normalized axes flattened into one (a reshape, free),
    when X is FLOAT (its own stash type), only Y is asked for, and Scale and B
    broadcast to the normalized shape; None otherwise (the composed form serves)."""
    shape = x.shape[axes[0] :]
    if node.element(x) != f32 or any(node.proto.output[1:]):
        return None
    parameters = [scale] if bias is None else [scale, bias]
    if any(not _broadcasts_to(p.shape, shape) for p in parameters):
        return None
    length = math.prod(shape)
    rows = [_row(p, shape, length) for p in parameters]
    if bias is None:
        rows.append(node.graph.constant(np.zeros(length, np.float32)))
    epsilon = node.float("epsilon", 1e-5)
    flat = x if len(axes) == 1 else x.reshape((*x.shape[: axes[0]], length))
    y = node.emit(df.LayerNormOp(flat.value, rows[0].value, rows[1].value, epsilon))
    return y if len(axes) == 1 else y.reshape(x.shape)


def _row(parameter: Tensor, shape: Sequence[int], length: int) -> Tensor:
    """Scale or B broadcast to the normalized shape, as one row of `length`."""
    if parameter.shape != tuple(shape):
        parameter = parameter.broadcast_to(shape)
    return parameter if parameter.shape == (length,) else parameter.reshape((length,))


def _broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    try:
        return len(shape) <= len(target) and np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _normalized(x: Tensor, axes: list[int], epsilon: float) -> Tensor:
    """`(x - mean) · rsqrt(var + ε)` over `axes`, the mean and variance each once."""
    centered = x - x.mean(axes, keepdims=True)
    return centered * ((centered * centered).mean(axes, keepdims=True) + epsilon).rsqrt()


def _per_channel(node: Node, x: Tensor, index: int, what: str) -> Tensor:
    """Input `index`, one value per channel of `x` (N, C, ...), shaped to broadcast."""
    value = node.input(index)
    channels = x.shape[1]
    if value.shape != (channels,):
        raise node.error(f"{what} has shape {list(value.shape)}, expected [{channels}]")
    return value.reshape((channels, *([1] * (len(x.shape) - 2))))


@converter("InstanceNormalization", attributes={"epsilon"})
def instance_normalization(node: Node) -> list[Tensor]:
    """Each channel of each image normalized over its spatial axes, then scaled and
    shifted per channel."""
    x = float_input(node)
    if len(x.shape) < 3:
        raise node.error(f"input has shape {list(x.shape)}: N, C and spatial axes expected")
    normalized = _normalized(x, list(range(2, len(x.shape))), node.float("epsilon", 1e-5))
    scale, bias = _per_channel(node, x, 1, "scale"), _per_channel(node, x, 2, "B")
    return [normalized * scale + bias]


@converter("GroupNormalization", attributes={"epsilon", "num_groups", "stash_type"})
def group_normalization(node: Node) -> list[Tensor]:
    """The channels in `num_groups` groups, each group of each image normalized over
    its channels and spatial axes, then scaled and shifted per channel (opset 21; per
    group in opset 18, repeated over the group's channels here)."""
    x = float_input(node)
    groups = node.int("num_groups", 0)
    channels = x.shape[1] if len(x.shape) > 1 else 0
    if len(x.shape) < 3 or groups <= 0 or channels % groups:
        raise node.error(
            f"num_groups {groups} must be positive and divide the {channels} channels "
            "of an input of rank 3 or more"
        )
    batch = x.shape[0]
    grouped = x.reshape((batch, groups, math.prod(x.shape[1:]) // groups))
    normalized = _normalized(grouped, [2], node.float("epsilon", 1e-5)).reshape(x.shape)
    if node.opset < 21:
        return [normalized * _per_group(node, x, groups, 1) + _per_group(node, x, groups, 2)]
    scale, bias = _per_channel(node, x, 1, "scale"), _per_channel(node, x, 2, "bias")
    return [normalized * scale + bias]


def _per_group(node: Node, x: Tensor, groups: int, index: int) -> Tensor:
    """Opset 18's scale or bias (one per group) as one per channel, shaped to broadcast."""
    value = node.input(index)
    if value.shape != (groups,):
        raise node.error(f"input {index} has shape {list(value.shape)}, expected [{groups}]")
    each = x.shape[1] // groups
    spread = value.reshape((groups, 1)).broadcast_to((groups, each))
    return spread.reshape((x.shape[1], *([1] * (len(x.shape) - 2))))


@converter("Dropout", attributes={"seed", "ratio"})
def dropout(node: Node) -> list[Tensor | None]:
    """Inference, or training with a ratio of 0 (which drops nothing and scales by
    1): the input, and an all-true mask when the mask is asked for."""
    x = node.input(0)
    training = node.constant(2, "training_mode")
    if training is not None and bool(np.any(training)):
        ratio = node.constant(1, "ratio")
        if ratio is None or float(ratio.reshape(-1)[0]) != 0.0:
            raise node.error(
                "training_mode=true with a ratio other than 0 is not supported: dflow "
                "imports Dropout for inference (it draws no random numbers)"
            )
    mask = (
        node.graph.constant(np.ones(x.shape, dtype=np.bool_))
        if len(node.proto.output) > 1
        else None
    )
    return [x, mask]
