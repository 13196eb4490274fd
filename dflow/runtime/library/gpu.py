# pyright: basic
"""The library routines GPU kernels call: contractions, windows and indexing, as CUDA
launches.

Kernels call them as `lib.<routine>_<element>(inputs..., out, parameters...)`
from the host-side launcher of a GPU kernel, with device arrays, writing `out`
in place (the ABI of `func.call @dflow_<routine>_<element>` in the kernel IR,
the same as `runtime.library.cpu`). Each routine launches one `@cuda.jit` kernel
of a thread per output element, which sums in the output's element type (the
zero of that type is passed in, so one kernel serves every element type).
Matrix products stage their operands through shared memory in `TILE` x `TILE`
tiles; convolutions and pools read global memory directly. Window parameters
follow the `df` ops: strides (2), pads (top, left, bottom, right), dilations
(2) and groups, or kernel (2), strides, pads. A grouped convolution's thread of
output channel `o` reads the input channels of its group, `o // (O / groups)`.
An index out of range in a gather or scatter is flagged by its thread and raised
after the launch as the CPU routine raises it. The gradients of convolutions and
pools have no GPU routine
(`backend/numba/capabilities.py` keeps them on the CPU).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import cuda as _cuda

cuda: Any = _cuda
"""`numba.cuda`, untyped: its stubs know neither kernel launches nor the simulator."""

THREADS = 256
"""Threads per block of the one-dimensional launches."""
TILE = 16
"""The side of a matrix-product tile (a block is `TILE` x `TILE` threads)."""


def _blocks(count: int, threads: int = THREADS) -> int:
    return max(1, (count + threads - 1) // threads)


def _zero(out):
    return out.dtype.type(0)


# ----- matrix products -------------------------------------------------------


@cuda.jit(cache=True)
def _matmul(a, b, out, transpose_a, transpose_b, zero, a_batch, b_batch):
    """`out[z] = op(a[a_batch[z]]) @ op(b[b_batch[z]])` over 3-D arrays: a block per
    `TILE` x `TILE` tile of `out[z]`, a thread per element, the operands staged
    through shared memory one `TILE`-wide slice of the inner axis at a time."""
    left = cuda.shared.array((TILE, TILE), out.dtype)
    right = cuda.shared.array((TILE, TILE), out.dtype)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i = cuda.blockIdx.x * TILE + tx
    j = cuda.blockIdx.y * TILE + ty
    z = cuda.blockIdx.z
    rows, columns = out.shape[1], out.shape[2]
    x, y = a_batch[z], b_batch[z]
    inner = a.shape[1] if transpose_a else a.shape[2]
    total = zero
    for start in range(0, inner, TILE):
        # left[tx, ty] = op(a)[i, start + ty]; right[tx, ty] = op(b)[start + tx, j]
        k = start + ty
        if i < rows and k < inner:
            left[tx, ty] = a[x, k, i] if transpose_a else a[x, i, k]
        else:
            left[tx, ty] = zero
        k = start + tx
        if k < inner and j < columns:
            right[tx, ty] = b[y, j, k] if transpose_b else b[y, k, j]
        else:
            right[tx, ty] = zero
        cuda.syncthreads()
        for t in range(TILE):
            total += left[tx, t] * right[t, ty]
        cuda.syncthreads()
    if i < rows and j < columns:
        out[z, i, j] = total


_BATCH_INDICES: dict[tuple[tuple[int, ...], ...], tuple] = {}


def _batch_indices(a_batch: tuple[int, ...], b_batch: tuple[int, ...], batch: tuple[int, ...]):
    """Device arrays of the flat batch index of `a` and of `b` for each batch index of
    `out` (NumPy broadcasting: an operand's axes of size 1 or missing repeat)."""
    key = (a_batch, b_batch, batch)
    found = _BATCH_INDICES.get(key)
    if found is None:
        count = math.prod(batch)

        def flat(shape: tuple[int, ...]):
            ids = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
            return np.ascontiguousarray(np.broadcast_to(ids, batch).reshape(count))

        found = _BATCH_INDICES[key] = (cuda.to_device(flat(a_batch)), cuda.to_device(flat(b_batch)))
    return found


def _as3(array, batch: int):
    shape = tuple(array.shape)  # a plain tuple: the simulator's shapes refuse negative indices
    return array.reshape((batch, shape[-2], shape[-1]))


def batch_matmul(a, b, out, transpose_a, transpose_b):
    """`out = op(a) @ op(b)`, operands broadcast over the batch axes (2-D: one matrix)."""
    shape = tuple(out.shape)
    batch, (rows, columns) = shape[:-2], shape[-2:]
    a_batch, b_batch = tuple(a.shape)[:-2], tuple(b.shape)[:-2]
    a_ids, b_ids = _batch_indices(a_batch, b_batch, batch)
    count = math.prod(batch)
    a3, b3 = _as3(a, math.prod(a_batch)), _as3(b, math.prod(b_batch))
    out3 = _as3(out, count)
    if rows == 0 or columns == 0 or count == 0:
        return
    grid = (_blocks(rows, TILE), _blocks(columns, TILE), count)
    _matmul[grid, (TILE, TILE)](
        a3, b3, out3, bool(transpose_a), bool(transpose_b), _zero(out), a_ids, b_ids
    )


matmul = batch_matmul


# ----- convolutions ----------------------------------------------------------


@cuda.jit(device=True, inline="always")
def _conv_at(x, w, n, o, p, q, sh, sw, top, left, dh, dw, groups, zero):
    height, width = x.shape[2], x.shape[3]
    channels, kernel_h, kernel_w = w.shape[1], w.shape[2], w.shape[3]
    base = (o // (w.shape[0] // groups)) * channels
    total = zero
    for c in range(channels):
        for i in range(kernel_h):
            y = p * sh + i * dh - top
            if y < 0 or y >= height:
                continue
            for j in range(kernel_w):
                z = q * sw + j * dw - left
                if 0 <= z < width:
                    total += x[n, base + c, y, z] * w[o, c, i, j]
    return total


@cuda.jit(device=True, inline="always")
def _unflatten(thread, out):
    """`(n, c, p, q)` of the thread's element of the 4-D `out`."""
    q = thread % out.shape[3]
    rest = thread // out.shape[3]
    p = rest % out.shape[2]
    rest //= out.shape[2]
    return rest // out.shape[1], rest % out.shape[1], p, q


@cuda.jit(cache=True)
def _conv2d_kernel(x, w, out, sh, sw, top, left, dh, dw, groups, zero):
    thread = cuda.grid(1)
    if thread >= out.size:
        return
    n, o, p, q = _unflatten(thread, out)
    out[n, o, p, q] = _conv_at(x, w, n, o, p, q, sh, sw, top, left, dh, dw, groups, zero)


@cuda.jit(cache=True)
def _conv2d_bias_kernel(x, w, bias, out, sh, sw, top, left, dh, dw, groups, zero):
    thread = cuda.grid(1)
    if thread >= out.size:
        return
    n, o, p, q = _unflatten(thread, out)
    total = _conv_at(x, w, n, o, p, q, sh, sw, top, left, dh, dw, groups, zero)
    out[n, o, p, q] = total + bias[o]


def conv2d(x, w, out, sh, sw, top, left, bottom, right, dh, dw, groups):
    """`out[n,o,p,q] = sum_{c,i,j} xpad[n,g*C+c,p*sh+i*dh,q*sw+j*dw] * w[o,c,i,j]`, `g`
    the group of output channel `o` and `C` the filter's channels."""
    if out.size:
        _conv2d_kernel[_blocks(out.size), THREADS](
            x, w, out, sh, sw, top, left, dh, dw, groups, _zero(out)
        )


def conv2d_bias(x, w, bias, out, sh, sw, top, left, bottom, right, dh, dw, groups):
    """`conv2d` plus `bias[o]` on each output channel."""
    if out.size:
        _conv2d_bias_kernel[_blocks(out.size), THREADS](
            x, w, bias, out, sh, sw, top, left, dh, dw, groups, _zero(out)
        )


# ----- pools -----------------------------------------------------------------
# The window loops repeat those of `cpu.py`: see the note there (numba's cache).


@cuda.jit(cache=True)
def _max_pool2d_kernel(x, out, kh, kw, sh, sw, top, left, lowest):
    thread = cuda.grid(1)
    if thread >= out.size:
        return
    n, c, p, q = _unflatten(thread, out)
    height, width = x.shape[2], x.shape[3]
    best = lowest
    for i in range(kh):
        y = p * sh + i - top
        for j in range(kw):
            z = q * sw + j - left
            if 0 <= y < height and 0 <= z < width:
                v = x[n, c, y, z]
                if v > best or math.isnan(v):
                    best = v
    out[n, c, p, q] = best


@cuda.jit(cache=True)
def _avg_pool2d_kernel(x, out, kh, kw, sh, sw, top, left, zero):
    thread = cuda.grid(1)
    if thread >= out.size:
        return
    n, c, p, q = _unflatten(thread, out)
    height, width = x.shape[2], x.shape[3]
    total = zero
    count = 0
    for i in range(kh):
        y = p * sh + i - top
        for j in range(kw):
            z = q * sw + j - left
            if 0 <= y < height and 0 <= z < width:
                total += x[n, c, y, z]
                count += 1
    out[n, c, p, q] = total / count


def max_pool2d(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """Window maximum; padding never wins (NaN propagates as in `np.max`)."""
    if out.size:
        lowest = out.dtype.type(-np.inf)
        _max_pool2d_kernel[_blocks(out.size), THREADS](x, out, kh, kw, sh, sw, top, left, lowest)


def avg_pool2d(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """Window mean over the elements inside the input."""
    if out.size:
        _avg_pool2d_kernel[_blocks(out.size), THREADS](
            x, out, kh, kw, sh, sw, top, left, _zero(out)
        )


# ----- indexing ----------------------------------------------------------------


def _around(shape: tuple[int, ...], axis: int) -> tuple[int, int]:
    """The sizes before and after `axis` of `shape`."""
    return math.prod(shape[:axis]), math.prod(shape[axis + 1 :])


@cuda.jit(device=True, inline="always")
def _checked(index, size, bad):
    """`index` counted from the end when negative; out of range, it is written to
    `bad` (flag, index) and -1 returned: the thread does nothing."""
    if index < -size or index >= size:
        bad[1] = index
        bad[0] = 1
        return -1
    return index + size if index < 0 else index


@cuda.jit(cache=True)
def _gather_kernel(source, taken, target, bad):
    """A thread per element of `target` (outer, count, inner)."""
    thread = cuda.grid(1)
    count, inner = target.shape[1], target.shape[2]
    if thread >= target.shape[0] * count * inner:
        return
    o, n, i = thread // (count * inner), (thread // inner) % count, thread % inner
    row = _checked(taken[n], source.shape[1], bad)
    if row >= 0:
        target[o, n, i] = source[o, row, i]


@cuda.jit(cache=True)
def _gather_elements_kernel(source, taken, target, shapes, axis, bad):
    """A thread per element of the flat `target`, reading the flat `source` at its
    own coordinates (in the indices' shape) with the one on `axis` replaced by its
    index; `shapes` holds the data's shape, then the indices'."""
    p = cuda.grid(1)
    if p >= target.size:
        return
    rank = shapes.size // 2
    rest, offset, stride = p, 0, 1
    for k in range(rank - 1, -1, -1):
        coordinate, rest = rest % shapes[rank + k], rest // shapes[rank + k]
        if k == axis:
            coordinate = _checked(taken[p], shapes[k], bad)
            if coordinate < 0:
                return
        offset += coordinate * stride
        stride *= shapes[k]
    target[p] = source[offset]


@cuda.jit(cache=True)
def _zero_kernel(target, zero):
    thread = cuda.grid(1)
    if thread < target.size:
        target[thread] = zero


@cuda.jit(cache=True)
def _scatter_add_kernel(source, taken, target, bad):
    """A thread per element of `source` (outer, count, inner), added atomically."""
    thread = cuda.grid(1)
    count, inner = source.shape[1], source.shape[2]
    if thread >= source.shape[0] * count * inner:
        return
    o, n, i = thread // (count * inner), (thread // inner) % count, thread % inner
    row = _checked(taken[n], target.shape[1], bad)
    if row >= 0:
        cuda.atomic.add(target, (o, row, i), source[o, n, i])


def _raise_bad(op: str, bad, size: int, axis: int) -> None:
    """The first index out of range any thread met, as the CPU routines raise it."""
    flag, index = bad.copy_to_host()
    if flag:
        raise IndexError(f"{op}: index {index} is out of range for axis {axis} of size {size}")


def gather(data, indices, out, axis):
    """`out = numpy.take(data, indices, axis)`, a thread per element of `out`."""
    outer, inner = _around(data.shape, axis)
    size, count = data.shape[axis], indices.size
    bad = cuda.to_device(np.zeros(2, np.int64))
    target = out.reshape(outer, count, inner)
    if out.size:
        _gather_kernel[_blocks(out.size), THREADS](
            data.reshape(outer, size, inner), indices.reshape(count), target, bad
        )
    _raise_bad("df.gather", bad, size, axis)


def gather_elements(data, indices, out, axis):
    """ONNX's `GatherElements`, a thread per element of `out`."""
    bad = cuda.to_device(np.zeros(2, np.int64))
    if out.size:
        _gather_elements_kernel[_blocks(out.size), THREADS](
            data.reshape(data.size), indices.reshape(indices.size), out.reshape(out.size),
            cuda.to_device(np.array([*data.shape, *indices.shape], np.int64)), axis, bad,
        )  # fmt: skip
    _raise_bad("df.gather_elements", bad, data.shape[axis], axis)


def scatter_add(updates, indices, out, axis):
    """`out` zeroed, then each slice of `updates` added at its index along `axis`."""
    outer, inner = _around(out.shape, axis)
    size, count = out.shape[axis], indices.size
    bad = cuda.to_device(np.zeros(2, np.int64))
    if out.size:
        _zero_kernel[_blocks(out.size), THREADS](out.reshape(out.size), _zero(out))
    if updates.size:
        _scatter_add_kernel[_blocks(updates.size), THREADS](
            updates.reshape(outer, count, inner), indices.reshape(count),
            out.reshape(outer, size, inner), bad,
        )  # fmt: skip
    _raise_bad("df.scatter_add", bad, size, axis)


_NUMBERS = ("f32", "f64", "i32", "i64", "ui64")  # ui64: no wider type to compute in
_ALL = (*_NUMBERS, "i1")


def _for_elements(elements: tuple[str, ...], **routines: object) -> None:
    for name, routine in routines.items():
        for element in elements:
            globals()[f"{name}_{element}"] = routine


_for_elements(
    _NUMBERS,
    matmul=matmul,
    batch_matmul=batch_matmul,
)
_for_elements(
    ("f32", "f64"),
    conv2d=conv2d,
    conv2d_bias=conv2d_bias,
    max_pool2d=max_pool2d,
    avg_pool2d=avg_pool2d,
)
_for_elements(
    tuple(f"{index}_{element}" for index in ("i32", "i64") for element in _ALL),
    gather=gather,
    gather_elements=gather_elements,
)
_for_elements(
    tuple(f"{index}_{element}" for index in ("i32", "i64") for element in _NUMBERS),
    scatter_add=scatter_add,
)
