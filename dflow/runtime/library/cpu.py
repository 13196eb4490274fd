# pyright: basic
"""The library routines CPU kernels call: contractions and windows, in `@numba.njit`.

Kernels call them as `lib.<routine>_<element>(inputs..., out, parameters...)`,
writing `out` in place (the ABI of `func.call @dflow_<routine>_<element>` in the
kernel IR). Matrix products go to NumPy's BLAS (`blas.py`; else `np.dot`) and
convolutions through im2col and one product per image; integer products and
the pools are loops. Window parameters follow the `df` ops: strides (2), pads
(top, left, bottom, right) and dilations (2), or kernel (2), strides, pads.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dflow.runtime.library.blas import DGEMM, NO_TRANSPOSE, ROW_MAJOR, SGEMM, TRANSPOSE

_jit = numba.njit(cache=True, error_model="numpy", nogil=True)


if SGEMM is None or DGEMM is None:

    @_jit
    def _dot(a, b, out, transpose_a, transpose_b):
        """`out = op(a) @ op(b)` for 2-D float arrays, through SciPy's BLAS."""
        if transpose_a and transpose_b:
            np.dot(a.T, b.T, out)
        elif transpose_a:
            np.dot(a.T, b, out)
        elif transpose_b:
            np.dot(a, b.T, out)
        else:
            np.dot(a, b, out)

else:

    @_jit
    def _dot(a, b, out, transpose_a, transpose_b):
        """`out = op(a) @ op(b)` for C-contiguous 2-D float arrays (every kernel
        operand is one), through NumPy's BLAS; the leading dimensions are the row
        lengths, at least 1 as CBLAS requires of empty matrices."""
        if not (a.flags.c_contiguous and b.flags.c_contiguous and out.flags.c_contiguous):
            raise ValueError("matmul: the operands must be C-contiguous")
        rows, columns = out.shape
        inner = a.shape[0] if transpose_a else a.shape[1]
        if rows == 0 or columns == 0:
            return
        if inner == 0:
            out[:, :] = 0
            return
        op_a = TRANSPOSE if transpose_a else NO_TRANSPOSE
        op_b = TRANSPOSE if transpose_b else NO_TRANSPOSE
        lda, ldb, ldc = max(1, a.shape[1]), max(1, b.shape[1]), columns
        if out.itemsize == 4:  # float32 (else float64)
            SGEMM(ROW_MAJOR, op_a, op_b, rows, columns, inner, 1.0, a.ctypes, lda, b.ctypes, ldb,
                  0.0, out.ctypes, ldc)  # fmt: skip
        else:
            DGEMM(ROW_MAJOR, op_a, op_b, rows, columns, inner, 1.0, a.ctypes, lda, b.ctypes, ldb,
                  0.0, out.ctypes, ldc)  # fmt: skip


@_jit
def _dot_loops(a, b, out, transpose_a, transpose_b):
    """`out = op(a) @ op(b)` for 2-D integer arrays."""
    rows, columns = out.shape
    inner = a.shape[0] if transpose_a else a.shape[1]
    for i in range(rows):
        for j in range(columns):
            total = out.dtype.type(0)
            for k in range(inner):
                x = a[k, i] if transpose_a else a[i, k]
                y = b[j, k] if transpose_b else b[k, j]
                total += x * y
            out[i, j] = total


def _batched(dot):
    """A batched product from a 2-D one: operands broadcast over the batch axes."""

    @_jit
    def batch(a, b, out, transpose_a, transpose_b):
        batch_shape = out.shape[:-2]
        a3 = np.ascontiguousarray(np.broadcast_to(a, batch_shape + a.shape[-2:]))
        b3 = np.ascontiguousarray(np.broadcast_to(b, batch_shape + b.shape[-2:]))
        a3 = a3.reshape((-1, *a.shape[-2:]))
        b3 = b3.reshape((-1, *b.shape[-2:]))
        out3 = out.reshape((-1, *out.shape[-2:]))
        for i in range(out3.shape[0]):
            dot(a3[i], b3[i], out3[i], transpose_a, transpose_b)

    return batch


matmul_f32 = matmul_f64 = _dot
matmul_i32 = matmul_i64 = _dot_loops
batch_matmul_f32 = batch_matmul_f64 = _batched(_dot)
batch_matmul_i32 = batch_matmul_i64 = _batched(_dot_loops)


@_jit
def _exchange(image, cols, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw, gather):
    """Every tap of one image `[c, h, w]` against its columns: row `(c, i, j)`, column
    `(p, q)`, padding skipped. `gather`: the column takes the image's element (im2col);
    else the image adds the column's (col2im, the transpose)."""
    channels, height, width = image.shape
    for c in range(channels):
        for i in range(kernel_h):
            for j in range(kernel_w):
                row = (c * kernel_h + i) * kernel_w + j
                for p in range(out_h):
                    y = p * sh + i * dh - top
                    if y < 0 or y >= height:
                        continue
                    for q in range(out_w):
                        z = q * sw + j * dw - left
                        if 0 <= z < width:
                            if gather:
                                cols[row, p * out_w + q] = image[c, y, z]
                            else:
                                image[c, y, z] += cols[row, p * out_w + q]


@_jit
def _im2col(x, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw):
    """Columns of one image `x[c, h, w]`: row `(c, i, j)`, column `(p, q)`; zero padding."""
    cols = np.zeros((x.shape[0] * kernel_h * kernel_w, out_h * out_w), x.dtype)
    _exchange(x, cols, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw, True)
    return cols


@_jit
def _col2im(cols, out, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw):
    """Adds columns back into one image `out[c, h, w]` (the transpose of `_im2col`)."""
    _exchange(out, cols, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw, False)


@_jit
def conv2d(x, w, out, sh, sw, top, left, bottom, right, dh, dw):
    """`out[n,o,p,q] = sum_{c,i,j} xpad[n,c,p*sh+i*dh,q*sw+j*dw] * w[o,c,i,j]`."""
    filters, _, kernel_h, kernel_w = w.shape
    out_h, out_w = out.shape[2], out.shape[3]
    weights = np.ascontiguousarray(w).reshape((filters, -1))
    for n in range(x.shape[0]):
        cols = _im2col(x[n], kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw)
        out[n] = np.dot(weights, cols).reshape((filters, out_h, out_w))


@_jit
def conv2d_bias(x, w, bias, out, sh, sw, top, left, bottom, right, dh, dw):
    conv2d(x, w, out, sh, sw, top, left, bottom, right, dh, dw)
    for o in range(out.shape[1]):
        out[:, o] += bias[o]


@_jit
def conv2d_grad_input(dy, w, out, sh, sw, top, left, bottom, right, dh, dw):
    """The transpose of `conv2d` in its input: `col2im(w^T dy)` per image."""
    filters, _, kernel_h, kernel_w = w.shape
    out_h, out_w = dy.shape[2], dy.shape[3]
    weights = np.ascontiguousarray(w).reshape((filters, -1))
    out[:] = 0
    for n in range(dy.shape[0]):
        gradient = np.ascontiguousarray(dy[n]).reshape((filters, out_h * out_w))
        cols = np.dot(weights.T.copy(), gradient)
        _col2im(cols, out[n], kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw)


@_jit
def conv2d_grad_filter(x, dy, out, sh, sw, top, left, bottom, right, dh, dw):
    """`dw = sum_n dy[n] cols(x[n])^T`."""
    filters, _, kernel_h, kernel_w = out.shape
    out_h, out_w = dy.shape[2], dy.shape[3]
    total = np.zeros((filters, out[0].size), out.dtype)
    for n in range(x.shape[0]):
        cols = _im2col(x[n], kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw)
        gradient = np.ascontiguousarray(dy[n]).reshape((filters, out_h * out_w))
        total += np.dot(gradient, cols.T.copy())
    out[:] = total.reshape(out.shape)


# The pools' window loops are also in `gpu.py`, on purpose: numba's cache keys a
# function's machine code by its own file only, so a window helper shared from a
# third module would be inlined into both caches and a change to it would go
# unseen by them. Each file keeps its own copy and recompiles when it changes.


@_jit
def max_pool2d(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """Window maximum; padding never wins (NaN propagates as in `np.max`)."""
    height, width = x.shape[2], x.shape[3]
    for n in range(out.shape[0]):
        for c in range(out.shape[1]):
            for p in range(out.shape[2]):
                for q in range(out.shape[3]):
                    best = -np.inf
                    for i in range(kh):
                        y = p * sh + i - top
                        for j in range(kw):
                            z = q * sw + j - left
                            if 0 <= y < height and 0 <= z < width:
                                v = x[n, c, y, z]
                                if v > best or math.isnan(v):
                                    best = v
                    out[n, c, p, q] = best


@_jit
def _window_count(p, q, kh, kw, sh, sw, top, left, height, width):
    count = 0
    for i in range(kh):
        y = p * sh + i - top
        for j in range(kw):
            z = q * sw + j - left
            if 0 <= y < height and 0 <= z < width:
                count += 1
    return count


@_jit
def avg_pool2d(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """Window mean over the elements inside the input."""
    height, width = x.shape[2], x.shape[3]
    for n in range(out.shape[0]):
        for c in range(out.shape[1]):
            for p in range(out.shape[2]):
                for q in range(out.shape[3]):
                    total = out.dtype.type(0)
                    for i in range(kh):
                        y = p * sh + i - top
                        for j in range(kw):
                            z = q * sw + j - left
                            if 0 <= y < height and 0 <= z < width:
                                total += x[n, c, y, z]
                    count = _window_count(p, q, kh, kw, sh, sw, top, left, height, width)
                    out[n, c, p, q] = total / count


@_jit
def max_pool2d_grad(x, dy, out, kh, kw, sh, sw, top, left, bottom, right):
    """Each window's gradient to the first position (in tap order) of its maximum."""
    height, width = x.shape[2], x.shape[3]
    out[:] = 0
    for n in range(dy.shape[0]):
        for c in range(dy.shape[1]):
            for p in range(dy.shape[2]):
                for q in range(dy.shape[3]):
                    best, by, bz = -np.inf, -1, -1
                    for i in range(kh):
                        y = p * sh + i - top
                        for j in range(kw):
                            z = q * sw + j - left
                            inside = 0 <= y < height and 0 <= z < width
                            v = x[n, c, y, z] if inside else -np.inf
                            if by < 0 or v > best:
                                best, by, bz = v, y, z
                    if 0 <= by < height and 0 <= bz < width:
                        out[n, c, by, bz] += dy[n, c, p, q]


@_jit
def avg_pool2d_grad(dy, out, kh, kw, sh, sw, top, left, bottom, right):
    """Each window's gradient spread evenly over its elements inside the input."""
    height, width = out.shape[2], out.shape[3]
    out[:] = 0
    for n in range(dy.shape[0]):
        for c in range(dy.shape[1]):
            for p in range(dy.shape[2]):
                for q in range(dy.shape[3]):
                    count = _window_count(p, q, kh, kw, sh, sw, top, left, height, width)
                    share = dy[n, c, p, q] / count
                    for i in range(kh):
                        y = p * sh + i - top
                        for j in range(kw):
                            z = q * sw + j - left
                            if 0 <= y < height and 0 <= z < width:
                                out[n, c, y, z] += share


def _for_floats(**routines: object) -> None:
    for name, routine in routines.items():
        globals()[f"{name}_f32"] = globals()[f"{name}_f64"] = routine


_for_floats(
    conv2d=conv2d,
    conv2d_bias=conv2d_bias,
    conv2d_grad_input=conv2d_grad_input,
    conv2d_grad_filter=conv2d_grad_filter,
    max_pool2d=max_pool2d,
    avg_pool2d=avg_pool2d,
    max_pool2d_grad=max_pool2d_grad,
    avg_pool2d_grad=avg_pool2d_grad,
)
