"""NumPy kernels for the `df` ops that are more than one NumPy call.

Pure functions of arrays and integer tuples, independent of the IR, so that
tests can call them and the interpreter, folder and lowering agree on one
definition. Layouts are NCHW for images and OIHW for filters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[Any]


def relu(x: Array) -> Array:
    """`max(x, 0)` in `x`'s dtype; NaN stays NaN."""
    return np.maximum(x, np.zeros((), x.dtype))


def rsqrt(x: Array) -> Array:
    """`1 / sqrt(x)`."""
    return np.reciprocal(np.sqrt(x))


def erf(x: Array) -> Array:
    """The error function, elementwise, in double precision (SciPy's; NumPy has none),
    rounded to `x`'s dtype. SciPy is imported at the first call (it takes a tenth of
    a second, which every process would otherwise pay at start)."""
    from scipy import special  # noqa: PLC0415

    return np.asarray(special.erf(x.astype(np.float64))).astype(x.dtype)


def sigmoid(x: Array) -> Array:
    """`1 / (1 + exp(-x))` without overflow or cancellation: with `z = exp(-|x|)`,
    `1 / (1 + z)` for x >= 0 and `z / (1 + z)` below."""
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + z), z / (1 + z))


def lowest(dtype: np.dtype[Any]) -> Any:
    """The identity of maximum in `dtype`: -inf for floats, the smallest integer.
    The maximum of nothing is this value (as the compiled kernels start from it),
    not NumPy's "zero-size array" error."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def reduce_max(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    """Maximum over `axes`; NaN propagates, and an empty axis gives `lowest`."""
    return np.max(x, axis=axes, keepdims=keepdims, initial=lowest(x.dtype))


def softmax(x: Array, axis: int) -> Array:
    shifted = np.exp(x - reduce_max(x, (axis,), keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def layer_norm(x: Array, scale: Array, bias: Array, epsilon: float) -> Array:
    """Normalized along the last axis, then scaled and shifted; in `x`'s dtype."""
    centered = x - np.mean(x, axis=-1, keepdims=True)
    variance = np.mean(centered * centered, axis=-1, keepdims=True)
    inverse = (1 / np.sqrt(variance + x.dtype.type(epsilon))).astype(x.dtype)
    return (centered * inverse * scale + bias).astype(x.dtype)


def matmul(a: Array, b: Array, transpose_a: bool, transpose_b: bool) -> Array:
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


def _pad_spatial(x: Array, pads: Sequence[int], value: float = 0) -> Array:
    top, left, bottom, right = pads
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def _padded_zeros(shape: Sequence[int], pads: Sequence[int], dtype: Any) -> Array:
    """Zeros of the NCHW `shape` with its spatial axes padded by `pads`."""
    top, left, bottom, right = pads
    n, c, h, w = shape
    return np.zeros((n, c, h + top + bottom, w + left + right), dtype=dtype)


def _unpadded(padded: Array, shape: Sequence[int], pads: Sequence[int]) -> Array:
    """The part of a padded NCHW array that lies inside the input of `shape`."""
    top, left, _, _ = pads
    return padded[:, :, top : top + shape[2], left : left + shape[3]]


def _taps(
    kernel_hw: Sequence[int],
    out_hw: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> Iterator[tuple[int, int, slice, slice]]:
    """For each kernel tap (i, j): the strided slices of the padded input it reads."""
    for i in range(kernel_hw[0]):
        rows = slice(
            i * dilations[0], i * dilations[0] + strides[0] * (out_hw[0] - 1) + 1, strides[0]
        )
        for j in range(kernel_hw[1]):
            cols = slice(
                j * dilations[1], j * dilations[1] + strides[1] * (out_hw[1] - 1) + 1, strides[1]
            )
            yield i, j, rows, cols


def _group_slices(channels: int, outputs: int, groups: int) -> Iterator[tuple[slice, slice]]:
    """Each group's input and output channel slices: `channels` and `outputs` per group."""
    for g in range(groups):
        yield slice(g * channels, (g + 1) * channels), slice(g * outputs, (g + 1) * outputs)


def conv2d(
    x: Array,
    w: Array,
    bias: Array | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    out_hw: Sequence[int],
    groups: int = 1,
) -> Array:
    """`y[n,o,p,q] = sum_{c,i,j} xpad[n,c,p*sh+i*dh,q*sw+j*dw] * w[o,c,i,j] (+ bias[o])`,
    per group: output channel `o` of group `g` reads input channels `g*Cg + c`."""
    padded = _pad_spatial(x, pads)
    out = np.zeros((x.shape[0], w.shape[0], *out_hw), dtype=x.dtype)
    for ins, outs in _group_slices(w.shape[1], w.shape[0] // groups, groups):
        for i, j, rows, cols in _taps(w.shape[2:], out_hw, strides, dilations):
            taps = padded[:, ins, rows, cols]
            out[:, outs] += np.einsum("nchw,oc->nohw", taps, w[outs, :, i, j])
    if bias is not None:
        out += bias[None, :, None, None]
    return out


def to_nchwc(x: Array, block: int) -> Array:
    """NCHW as NCHWc: `y[n, c // b, h, w, c % b] = x[n, c, h, w]` (C a multiple of b)."""
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2))


def from_nchwc(x: Array) -> Array:
    """NCHWc as NCHW, the inverse of `to_nchwc`."""
    n, blocks, h, w, block = x.shape
    return np.ascontiguousarray(x.transpose(0, 1, 4, 2, 3).reshape(n, blocks * block, h, w))


def to_oihw_io(w: Array, block: int, block_in: int | None = None) -> Array:
    """An OIHW filter as `[O/bo, I/bi, KH, KW, bi, bo]` (`bo` = `block`, `bi` =
    `block_in`, by default `block`): `f[o // bo, i // bi, kh, kw, i % bi, o % bo] =
    w[o, i, kh, kw]`, each tap's block of inputs a row of output-channel vectors (the
    layout of `df.conv2d_nchwc`)."""
    o, i, kh, kw = w.shape
    bi = block if block_in is None else block_in
    blocked = w.reshape(o // block, block, i // bi, bi, kh, kw)
    return np.ascontiguousarray(blocked.transpose(0, 2, 4, 5, 3, 1))


def from_oihw_io(f: Array) -> Array:
    """The OIHW filter of a blocked one, the inverse of `to_oihw_io`."""
    ob, ib, kh, kw, bi, bo = f.shape
    return np.ascontiguousarray(f.transpose(0, 5, 1, 4, 2, 3).reshape(ob * bo, ib * bi, kh, kw))


def conv2d_nchwc(
    x: Array,
    f: Array,
    bias: Array | None,
    strides: Sequence[int],
    pads: Sequence[int],
    groups: int = 1,
) -> Array:
    """`conv2d` of NCHWc input and blocked filter (`to_oihw_io`) to NCHWc output."""
    w = from_oihw_io(f)
    plain = from_nchwc(x)
    out_hw = [
        (size + pads[axis] + pads[axis + 2] - w.shape[2 + axis]) // strides[axis] + 1
        for axis, size in enumerate(plain.shape[2:])
    ]
    y = conv2d(plain, w, bias, strides, pads, (1, 1), out_hw, groups)
    return to_nchwc(y, f.shape[-1])


def conv2d_grad_input(
    dy: Array,
    w: Array,
    input_shape: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int = 1,
) -> Array:
    """The transpose of `conv2d` in its input: scatter each tap's contribution back
    (per group, into the group's input channels)."""
    padded = _padded_zeros(input_shape, pads, dy.dtype)
    for ins, outs in _group_slices(w.shape[1], w.shape[0] // groups, groups):
        for i, j, rows, cols in _taps(w.shape[2:], dy.shape[2:], strides, dilations):
            padded[:, ins, rows, cols] += np.einsum("nohw,oc->nchw", dy[:, outs], w[outs, :, i, j])
    return _unpadded(padded, input_shape, pads)


def conv2d_grad_filter(
    x: Array,
    dy: Array,
    filter_shape: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int = 1,
) -> Array:
    """`dw[o,c,i,j] = sum_{n,p,q} xpad[n,g*Cg+c,p*sh+i*dh,q*sw+j*dw] * dy[n,o,p,q]` for
    output channel `o` of group `g`."""
    padded = _pad_spatial(x, pads)
    dw = np.zeros(tuple(filter_shape), dtype=x.dtype)
    for ins, outs in _group_slices(filter_shape[1], filter_shape[0] // groups, groups):
        for i, j, rows, cols in _taps(filter_shape[2:], dy.shape[2:], strides, dilations):
            taps = padded[:, ins, rows, cols]
            dw[outs, :, i, j] = np.einsum("nchw,nohw->oc", taps, dy[:, outs])
    return dw


def max_pool2d(
    x: Array,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    out_hw: Sequence[int],
) -> Array:
    """Window maximum; padding is -inf so it never wins."""
    padded = _pad_spatial(x, pads, -np.inf)
    windows = [padded[:, :, r, c] for _, _, r, c in _taps(kernel, out_hw, strides, (1, 1))]
    return np.max(np.stack(windows), axis=0)


def avg_pool2d(
    x: Array,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    out_hw: Sequence[int],
) -> Array:
    """Window mean over the elements inside the input (padding is not counted)."""
    padded = _pad_spatial(x, pads)
    inside = _pad_spatial(np.ones((1, 1, *x.shape[2:]), dtype=x.dtype), pads)
    taps = list(_taps(kernel, out_hw, strides, (1, 1)))
    total = np.sum(np.stack([padded[:, :, r, c] for _, _, r, c in taps]), axis=0)
    count = np.sum(np.stack([inside[:, :, r, c] for _, _, r, c in taps]), axis=0)
    return total / count


def max_pool2d_grad(
    x: Array,
    dy: Array,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
) -> Array:
    """Route each window's gradient to the first position holding the window's maximum."""
    padded = _pad_spatial(x, pads, -np.inf)
    grad = np.zeros(padded.shape, dtype=dy.dtype)
    taps = list(_taps(kernel, dy.shape[2:], strides, (1, 1)))
    winner = np.argmax(np.stack([padded[:, :, r, c] for _, _, r, c in taps]), axis=0)
    for index, (_, _, rows, cols) in enumerate(taps):
        grad[:, :, rows, cols] += np.where(winner == index, dy, 0)
    return _unpadded(grad, x.shape, pads)


def max_pool2d_indices(
    x: Array,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    out_hw: Sequence[int],
) -> Array:
    """Where each window's maximum lies: its index `h * W + w` in the input's plane
    (PyTorch's `max_pool2d_with_indices`), the first in row-major window order, or
    the first NaN. Padding never wins, not even over -inf."""
    height, width = x.shape[2:]
    places = np.arange(height * width, dtype=np.int64).reshape(1, 1, height, width)
    padded, where = _pad_spatial(x, pads, -np.inf), _pad_spatial(places, pads, -1)
    taps = list(_taps(kernel, out_hw, strides, (1, 1)))
    values = np.stack([padded[:, :, r, c] for _, _, r, c in taps])
    positions = np.stack(
        [np.broadcast_to(where[:, :, r, c], values.shape[1:]) for _, _, r, c in taps]
    )
    inside = positions >= 0
    best = np.max(np.where(inside, values, -np.inf), axis=0)
    hit = inside & ((values == best) | (np.isnan(values) & np.isnan(best)))
    first = np.argmax(hit, axis=0)
    return np.take_along_axis(positions, first[np.newaxis], axis=0)[0]


def max_pool2d_grad_indices(dy: Array, indices: Array, input_shape: Sequence[int]) -> Array:
    """Each window's gradient added at its index in the input's plane (the adjoint of
    reading the maximum at `max_pool2d_indices`); an index outside the plane is an
    `IndexError` naming it."""
    n, c, height, width = input_shape
    windows = int(np.prod(indices.shape[2:]))
    flat = np.asarray(indices, dtype=np.int64).reshape(n * c, windows)
    wrong = flat[(flat < 0) | (flat >= height * width)]
    if wrong.size:
        raise IndexError(
            f"df.max_pool2d_grad_indices: index {int(wrong[0])} is out of range for a "
            f"{height}x{width} plane"
        )
    grad = np.zeros((n * c, height * width), dtype=dy.dtype)
    np.add.at(grad, (np.arange(n * c)[:, np.newaxis], flat), dy.reshape(n * c, windows))
    return grad.reshape(tuple(input_shape))


def avg_pool2d_grad(
    dy: Array,
    input_shape: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
) -> Array:
    """Spread each window's gradient evenly over its elements inside the input."""
    inside = _pad_spatial(np.ones((1, 1, *input_shape[2:]), dtype=dy.dtype), pads)
    taps = list(_taps(kernel, dy.shape[2:], strides, (1, 1)))
    count = np.sum(np.stack([inside[:, :, r, c] for _, _, r, c in taps]), axis=0)
    grad = _padded_zeros(input_shape, pads, dy.dtype)
    for _, _, rows, cols in taps:
        grad[:, :, rows, cols] += dy / count
    return _unpadded(grad, input_shape, pads)


def checked_indices(op: str, indices: Array, size: int, axis: int) -> Array:
    """`indices` as int64 in [0, size), negative ones counted from the end (as ONNX's
    and NumPy's); one out of range is an `IndexError` naming the op, the index and
    the axis (the compiled kernels raise the same)."""
    flat = np.asarray(indices, dtype=np.int64)
    wrong = flat[(flat < -size) | (flat >= size)]
    if wrong.size:
        raise IndexError(
            f"{op}: index {int(wrong.reshape(-1)[0])} is out of range for axis {axis} "
            f"of size {size}"
        )
    return np.where(flat < 0, flat + size, flat)


def scatter_add(updates: Array, indices: Array, shape: Sequence[int], axis: int) -> Array:
    """Zeros of `shape` with each slice of `updates` added at its index along `axis`
    (repeated indices add up): the adjoint of `numpy.take(x, indices, axis)`."""
    out = np.zeros(tuple(shape), dtype=updates.dtype)
    taken = checked_indices("df.scatter_add", indices, shape[axis], axis).reshape(-1)
    rows = updates.reshape((*shape[:axis], taken.size, *shape[axis + 1 :]))
    np.add.at(np.moveaxis(out, axis, 0), taken, np.moveaxis(rows, axis, 0))  # a view of out
    return out


def gather_elements(data: Array, indices: Array, axis: int) -> Array:
    """`out[..., i, ...] = data[..., indices[..., i, ...], ...]` along `axis`, the other
    axes of `data` cut to the indices' shape (ONNX's `GatherElements`)."""
    cut = data[
        tuple(slice(0, n) if k != axis else slice(None) for k, n in enumerate(indices.shape))
    ]
    taken = checked_indices("df.gather_elements", indices, data.shape[axis], axis)
    return np.take_along_axis(cut, taken, axis)
