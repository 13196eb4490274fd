# pyright: basic
"""The library routines CPU kernels call: contractions, windows and indexing, in
`@numba.njit`.

Kernels call them as `lib.<routine>_<element>(inputs..., out, parameters...)`,
writing `out` in place (the ABI of `func.call @dflow_<routine>_<element>` in the
kernel IR). Matrix products go to NumPy's BLAS (`blas.py`; else `np.dot`);
convolutions are im2col into one column buffer kept across the batch (none for a
pointwise 1x1; one shifted copy per column row for a "same" convolution) and one
product per image written straight into the output, the filter gradient one product
over a run of images; a grouped convolution is the same per group, on the group's
channel slices of the image, filter and output (each contiguous in NCHW and OIHW),
but a depthwise one (one input channel per group) is a direct loop;
integer products and the pools are loops; a gather or scatter-add is a row copy
or add per index, each index checked (an `IndexError` naming the op and the index);
`gather_elements` is a loop over the result. Copies are slice assignments: numba
checks a computed index for wrapping below zero, which keeps an indexed loop from
vectorizing. Window parameters follow the `df` ops: strides (2), pads
(top, left, bottom, right), dilations (2) and groups, or kernel (2), strides, pads.
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
matmul_i32 = matmul_i64 = matmul_ui64 = _dot_loops
batch_matmul_f32 = batch_matmul_f64 = _batched(_dot)
batch_matmul_i32 = batch_matmul_i64 = batch_matmul_ui64 = _batched(_dot_loops)


@_jit
def _inside(offset, stride, size, count):
    """The range `[first, end)` of the `count` positions `k` whose tap `k * stride +
    offset` falls inside `[0, size)` (empty when none does)."""
    first = max(0, (stride - 1 - offset) // stride)
    end = min(count, (size - offset + stride - 1) // stride)
    return first, max(first, end)


@_jit
def _im2col(image, cols, column, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw):
    """Columns of one image `[c, h, w]` into `cols[(c, i, j), column + (p, q)]`, zero
    where a tap falls in the padding."""
    _exchange(image, cols, column, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw,
              True)  # fmt: skip


@_jit
def _col2im(cols, image, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw):
    """Adds columns back into one image `[c, h, w]` (the transpose of `_im2col`);
    `cols` is scratch (the "same" path zeroes its side pixels)."""
    _exchange(image, cols, 0, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw,
              False)  # fmt: skip


@_jit
def _exchange(image, cols, column, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw,
              gather):  # fmt: skip
    """Every tap of one image `[c, h, w]` against its columns `[(c, i, j), column + (p,
    q)]`: `gather`, the column takes the image's element (zero in the padding); else
    the image adds the column's. Each row's tap bounds are worked out before its
    loops, so the copying loops have no branch; at unit strides with the output as
    wide as the input (a "same" convolution) a row is one shifted run of the whole
    plane (`_same_rows`)."""
    if sh == 1 and sw == 1 and out_w == image.shape[2]:
        _same_rows(image, cols, column, kernel_h, kernel_w, out_h, top, left, dh, dw, gather)
        return
    channels, height, width = image.shape
    for c in range(channels):
        for i in range(kernel_h):
            for j in range(kernel_w):
                row = (c * kernel_h + i) * kernel_w + j
                offset = j * dw - left
                first, end = _inside(offset, sw, width, out_w)
                for p in range(out_h):
                    y = p * sh + i * dh - top
                    base = column + p * out_w
                    inside = 0 <= y < height
                    if not gather:
                        if inside and end > first:
                            target = image[
                                c, y, first * sw + offset : (end - 1) * sw + offset + 1 : sw
                            ]
                            _add(target, cols[row, base + first : base + end])
                        continue
                    if not inside:
                        cols[row, base : base + out_w] = 0
                        continue
                    cols[row, base : base + first] = 0
                    if end > first:
                        taps = image[c, y, first * sw + offset : (end - 1) * sw + offset + 1 : sw]
                        cols[row, base + first : base + end] = taps
                    cols[row, base + end : base + out_w] = 0


@_jit
def _same_rows(image, cols, column, kernel_h, kernel_w, out_h, top, left, dh, dw, gather):
    """`_im2col` (`gather`) or `_col2im` at unit strides when the output is as wide as
    the input: the column of output pixel `k = p * w + q` reads the image's flat
    element `k + shift` (`shift = (i*dh - top) * w + j*dw - left`), so a row is one
    contiguous run over the rows `p` whose taps fall inside, with the pixels whose
    tap leaves the image sideways (`q` outside `[first, end)`) zeroed in `cols`
    (before the scatter of `_col2im`, after the gather of `_im2col`)."""
    channels, height, width = image.shape
    pixels = out_h * width
    for c in range(channels):
        flat = image[c].reshape(height * width)
        for i in range(kernel_h):
            p_first, p_end = _inside(i * dh - top, 1, height, out_h)
            for j in range(kernel_w):
                row = (c * kernel_h + i) * kernel_w + j
                offset = j * dw - left
                first, end = _inside(offset, 1, width, width)
                shift = (i * dh - top) * width + offset
                dst = cols[row, column : column + pixels]
                start = max(p_first * width, -shift)
                stop = min(p_end * width, height * width - shift)
                if not gather:
                    _zero_sides(dst, p_first, p_end, width, first, end)
                    _add(flat[max(0, start + shift) : max(0, stop + shift)], dst[start:stop])
                    continue
                dst[:start] = 0
                if stop > start:
                    dst[start:stop] = flat[start + shift : stop + shift]
                dst[max(start, stop) :] = 0
                _zero_sides(dst, p_first, p_end, width, first, end)


@_jit
def _add(target, source):
    """`target += source` for two views of one length, without the temporary numba
    makes of a slice's `+=`."""
    for k in range(source.size):
        target[k] += source[k]


@_jit
def _zero_sides(dst, p_first, p_end, width, first, end):
    """Zero the pixels `q < first` and `q >= end` of the rows `[p_first, p_end)`."""
    for p in range(p_first, p_end):
        dst[p * width : p * width + first] = 0
        dst[p * width + end : (p + 1) * width] = 0


@_jit
def _pointwise(w, sh, sw, top, left, bottom, right):
    """A 1x1 convolution with unit strides and no padding: an image `[c, h, w]` is its
    own column matrix `[c, h * w]`."""
    unit = w.shape[2] == 1 and w.shape[3] == 1 and sh == 1 and sw == 1
    return unit and top == 0 and left == 0 and bottom == 0 and right == 0


@_jit
def conv2d(x, w, out, sh, sw, top, left, bottom, right, dh, dw, groups):
    """`out[n,o,p,q] = sum_{c,i,j} xpad[n,g*C+c,p*sh+i*dh,q*sw+j*dw] * w[o,c,i,j]` for
    output channel `o` of group `g` (`C` the filter's channels): per image and group,
    im2col into one buffer kept across the batch, then one SGEMM written straight
    into the group's output channels."""
    filters, channels, kernel_h, kernel_w = w.shape
    per_group = filters // groups
    if channels == 1 and groups > 1:
        _depthwise(x, w, out, sh, sw, top, left, dh, dw, per_group)
        return
    out_h, out_w = out.shape[2], out.shape[3]
    pixels, taps = out_h * out_w, channels * kernel_h * kernel_w
    weights = np.ascontiguousarray(w).reshape((filters, taps))
    pointwise = _pointwise(w, sh, sw, top, left, bottom, right)
    cols = np.empty((0 if pointwise else taps, pixels), x.dtype)
    for n in range(x.shape[0]):
        for g in range(groups):
            image = x[n, g * channels : (g + 1) * channels]
            first, end = g * per_group, (g + 1) * per_group
            target = out[n, first:end].reshape((per_group, pixels))
            if pointwise:
                _dot(weights[first:end], image.reshape((channels, pixels)), target, False, False)
                continue
            _im2col(image, cols, 0, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw)
            _dot(weights[first:end], cols, target, False, False)


@_jit
def _depthwise(x, w, out, sh, sw, top, left, dh, dw, per_group):
    """A depthwise convolution (one input channel per group, `per_group` filters
    each) as a direct loop: each output plane is its channel's taps, each scaled by
    its weight and added over the outputs `[first, end)` whose tap is inside (a
    product per group would be 1 x KH·KW by KH·KW x pixels: mostly call overhead)."""
    height, width = x.shape[2], x.shape[3]
    kernel_h, kernel_w = w.shape[2], w.shape[3]
    out_h, out_w = out.shape[2], out.shape[3]
    for n in range(x.shape[0]):
        for o in range(w.shape[0]):
            image, plane = x[n, o // per_group], out[n, o]
            plane[:, :] = 0
            for i in range(kernel_h):
                p_first, p_end = _inside(i * dh - top, sh, height, out_h)
                for j in range(kernel_w):
                    offset = j * dw - left
                    first, end = _inside(offset, sw, width, out_w)
                    weight = w[o, 0, i, j]
                    for p in range(p_first, p_end):
                        row = image[p * sh + i * dh - top]
                        target = plane[p]
                        for q in range(first, end):
                            target[q] += weight * row[q * sw + offset]


@_jit
def conv2d_bias(x, w, bias, out, sh, sw, top, left, bottom, right, dh, dw, groups):
    conv2d(x, w, out, sh, sw, top, left, bottom, right, dh, dw, groups)
    for o in range(out.shape[1]):
        out[:, o] += bias[o]


@_jit
def conv2d_nchwc(x, w, out, sh, sw, top, left, bottom, right, groups):
    """`df.conv2d_nchwc`: `out[n,o,p,q,:] = sum_{c,i,j,l} xpad[n,g*C+c,p*sh+i,q*sw+j,l] *
    w[o,c,i,j,l,:]` for output block `o` of group `g` (`C` the filter's input blocks),
    a loop over the taps inside the input with the output channels of a block
    innermost (the llvm target generates this convolution; this routine is the numba
    target's)."""
    height, width = x.shape[2], x.shape[3]
    kernel_h, kernel_w = w.shape[2], w.shape[3]
    per_group = out.shape[1] // groups
    out[:] = 0
    for n in range(x.shape[0]):
        for o in range(out.shape[1]):
            first = (o // per_group) * w.shape[1]
            for c in range(w.shape[1]):
                for i in range(kernel_h):
                    p_first, p_end = _inside(i - top, sh, height, out.shape[2])
                    for j in range(kernel_w):
                        q_first, q_end = _inside(j - left, sw, width, out.shape[3])
                        taps = w[o, c, i, j]
                        for p in range(p_first, p_end):
                            for q in range(q_first, q_end):
                                pixel = x[n, first + c, p * sh + i - top, q * sw + j - left]
                                target = out[n, o, p, q]
                                for lane in range(pixel.shape[0]):
                                    value = pixel[lane]
                                    for m in range(target.shape[0]):
                                        target[m] += value * taps[lane, m]


@_jit
def conv2d_nchwc_bias(x, w, bias, out, sh, sw, top, left, bottom, right, groups):
    conv2d_nchwc(x, w, out, sh, sw, top, left, bottom, right, groups)
    block = out.shape[4]
    for o in range(out.shape[1]):
        out[:, o] += bias[o * block : (o + 1) * block]


@_jit
def conv2d_grad_input(dy, w, out, sh, sw, top, left, bottom, right, dh, dw, groups):
    """The transpose of `conv2d` in its input: `col2im(w^T dy)` per image and group,
    into the group's input channels (`w^T dy` itself for a pointwise convolution)."""
    filters, channels, kernel_h, kernel_w = w.shape
    per_group = filters // groups
    out_h, out_w = dy.shape[2], dy.shape[3]
    pixels, taps = out_h * out_w, channels * kernel_h * kernel_w
    weights = np.ascontiguousarray(w).reshape((filters, taps))
    pointwise = _pointwise(w, sh, sw, top, left, bottom, right)
    if not pointwise:
        out[:] = 0
    cols = np.empty((0 if pointwise else taps, pixels), out.dtype)
    for n in range(dy.shape[0]):
        for g in range(groups):
            first, end = g * per_group, (g + 1) * per_group
            gradient = dy[n, first:end].reshape((per_group, pixels))
            image = out[n, g * channels : (g + 1) * channels]
            if pointwise:
                target = image.reshape((channels, pixels))
                _dot(weights[first:end], gradient, target, True, False)
                continue
            _dot(weights[first:end], gradient, cols, True, False)
            _col2im(cols, image, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left, dh, dw)


FILTER_GRADIENT_COLUMNS = 1 << 22
"""Elements of the column matrix `conv2d_grad_filter` builds at once, at most (16 MiB
of float32): as many images as fit go into one product."""


@_jit
def conv2d_grad_filter(x, dy, out, sh, sw, top, left, bottom, right, dh, dw, groups):
    """`dw = sum_n dy[n] cols(x[n])^T` per group (its output channels' rows of `dw`
    against its input channels' columns), each as one product over a run of images:
    their columns side by side `[(c, i, j), (n, p, q)]` against `dy` laid out the
    same way `[o, (n, p, q)]` (runs bounded by `FILTER_GRADIENT_COLUMNS`)."""
    filters, channels, kernel_h, kernel_w = out.shape
    per_group = filters // groups
    out_h, out_w = dy.shape[2], dy.shape[3]
    taps, pixels = channels * kernel_h * kernel_w, out_h * out_w
    total = out.reshape((filters, taps))
    total[:] = 0
    if pixels == 0 or x.shape[0] == 0:
        return
    run = max(1, min(x.shape[0], FILTER_GRADIENT_COLUMNS // max(1, taps * pixels)))
    cols = np.empty((taps, run * pixels), out.dtype)
    gradient = np.empty((per_group, run * pixels), out.dtype)
    partial = np.empty((per_group, taps), out.dtype)
    for g in range(groups):
        first = g * per_group
        _filter_gradient(x, dy, total[first : first + per_group], g * channels, first, cols,
                         gradient, partial, run, kernel_h, kernel_w, sh, sw, top, left, dh,
                         dw)  # fmt: skip


@_jit
def _filter_gradient(x, dy, total, channel, output, cols, gradient, partial, run, kernel_h,
                     kernel_w, sh, sw, top, left, dh, dw):  # fmt: skip
    """One group's `total = sum_n dy[n] cols(x[n])^T`, its channels of `x` from
    `channel` and of `dy` from `output` (sliced per image: the slices of one image
    are contiguous), `run` images to a product; `total` starts at zero."""
    filters, channels = total.shape[0], total.shape[1] // (kernel_h * kernel_w)
    out_h, out_w = dy.shape[2], dy.shape[3]
    pixels = out_h * out_w
    for start in range(0, x.shape[0], run):
        images = min(run, x.shape[0] - start)
        for k in range(images):
            n = start + k
            image = x[n, channel : channel + channels]
            _im2col(image, cols, k * pixels, kernel_h, kernel_w, out_h, out_w, sh, sw, top, left,
                    dh, dw)  # fmt: skip
            rows = dy[n, output : output + filters]
            gradient[:, k * pixels : (k + 1) * pixels] = rows.reshape((filters, pixels))
        if images == x.shape[0]:  # the whole batch in one product, straight into `total`
            _dot(gradient, cols, total, False, True)
            return
        if images < run:  # the last run of several: its columns made contiguous
            width = images * pixels
            last_gradient = np.ascontiguousarray(gradient[:, :width])
            _dot(last_gradient, np.ascontiguousarray(cols[:, :width]), partial, False, True)
        else:
            _dot(gradient, cols, partial, False, True)
        total += partial


# The pools' window loops are also in `gpu.py`, on purpose: numba's cache keys a
# function's machine code by its own file only, so a window helper shared from a
# third module would be inlined into both caches and a change to it would go
# unseen by them. Each file keeps its own copy and recompiles when it changes.


@_jit
def max_pool2d(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """Window maximum; padding never wins (NaN propagates as in `np.max`)."""
    if not _windows_inside(x, out, kh, kw, sh, sw, top, left):
        x = _padded(x, top, left, bottom, right)
    _max_pool2d_inside(x, out, kh, kw, sh, sw)


@_jit
def _padded(x, top, left, bottom, right):
    """`x` inside a border of -inf, which no window maximum takes over a number."""
    height, width = x.shape[2], x.shape[3]
    shape = (x.shape[0], x.shape[1], top + height + bottom, left + width + right)
    padded = np.full(shape, -np.inf, x.dtype)
    padded[:, :, top : top + height, left : left + width] = x
    return padded


@_jit
def _windows_inside(x, out, kh, kw, sh, sw, top, left):
    """Whether every window of the pool lies inside the input: no padding at the top
    and left, and the last window ends before any padding at the bottom and right."""
    rows, columns = out.shape[2], out.shape[3]
    return (
        top == 0
        and left == 0
        and (rows - 1) * sh + kh <= x.shape[2]
        and (columns - 1) * sw + kw <= x.shape[3]
    )


@_jit
def _max_pool2d_inside(x, out, kh, kw, sh, sw):
    """`max_pool2d` where every window lies inside the input: per output row, the
    maximum down the window's rows over the whole input row (contiguous,
    vectorized), then across each window's columns. Indices are unsigned: numba
    checks a signed computed index for wrap-around, which keeps a loop scalar."""
    width = x.shape[3]
    column = np.empty(width, x.dtype)
    for n in range(out.shape[0]):
        for c in range(out.shape[1]):
            plane = x[n, c]
            for p in range(out.shape[2]):
                column[:] = plane[p * sh]
                for i in range(1, kh):
                    source = plane[p * sh + i]
                    for z in range(width):
                        v, best = source[z], column[z]
                        column[z] = v if v > best or math.isnan(v) else best
                line = out[n, c, p]
                for q in range(line.shape[0]):
                    line[q] = column[np.uint64(q * sw)]
                for j in range(1, kw):
                    for q in range(line.shape[0]):
                        v, best = column[np.uint64(q * sw + j)], line[q]
                        line[q] = v if v > best or math.isnan(v) else best


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
def _unblocked(x):
    """NCHWc `[N, C/b, H, W, b]` as NCHW (a copy)."""
    n, blocks, height, width, block = x.shape
    plain = np.empty((n, blocks * block, height, width), x.dtype)
    for c in range(blocks * block):
        plain[:, c] = x[:, c // block, :, :, c % block]
    return plain


@_jit
def _blocked_into(plain, out):
    """NCHW `plain` into NCHWc `out`."""
    block = out.shape[4]
    for c in range(plain.shape[1]):
        out[:, c // block, :, :, c % block] = plain[:, c]


@_jit
def _pooled_through_nchw(x, out, kh, kw, sh, sw, top, left, bottom, right, average):
    """`avg_pool2d` (`average`) or `max_pool2d` of NCHWc `x` into `out`, through NCHW
    copies."""
    n, blocks, height, width, block = out.shape
    plain = np.empty((n, blocks * block, height, width), out.dtype)
    if average:
        avg_pool2d(_unblocked(x), plain, kh, kw, sh, sw, top, left, bottom, right)
    else:
        max_pool2d(_unblocked(x), plain, kh, kw, sh, sw, top, left, bottom, right)
    _blocked_into(plain, out)


@_jit
def max_pool2d_nchwc(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """`max_pool2d` of NCHWc (the llvm target generates it)."""
    _pooled_through_nchw(x, out, kh, kw, sh, sw, top, left, bottom, right, False)


@_jit
def avg_pool2d_nchwc(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """`avg_pool2d` of NCHWc (the llvm target generates it)."""
    _pooled_through_nchw(x, out, kh, kw, sh, sw, top, left, bottom, right, True)


@_jit
def max_pool2d_grad(x, dy, out, kh, kw, sh, sw, top, left, bottom, right):
    """Each window's gradient to the first position (in tap order) of its maximum, or
    of its first NaN (as `np.argmax` picks); a maximum in the padding (-inf, when
    the window holds nothing larger) takes the gradient away."""
    out[:] = 0
    if _windows_inside(x, dy, kh, kw, sh, sw, top, left):
        _max_pool2d_grad_inside(x, dy, out, kh, kw, sh, sw)
        return
    padded = _padded(x, top, left, bottom, right)
    gradient = np.zeros(padded.shape, out.dtype)
    _max_pool2d_grad_inside(padded, dy, gradient, kh, kw, sh, sw)
    out[:] = gradient[:, :, top : top + x.shape[2], left : left + x.shape[3]]


@numba.njit(error_model="numpy", nogil=True, inline="always")
def _later_tap(source, best, where, start, sw, j):
    """One tap after the first over a row of windows: where it is larger than the
    best so far, or the first NaN over a number, it becomes the best (branch-free).
    Inlined where `sw` is a constant, LLVM vectorizes the strided reads; with a
    stride known only at run time, it vectorizes only stride 1."""
    for q in range(best.shape[0]):
        v, b, w = source[np.uint64(q * sw + j)], best[q], where[q]
        take = (v > b) | (math.isnan(v) & (not math.isnan(b)))
        best[q] = v if take else b
        where[q] = start + q * sw if take else w


@_jit
def _row_maxima(plane, p, kh, kw, sh, sw, best, where, top, left, width):
    """Each window of output row `p` of `plane` (the input, or a copy padded by `top`
    and `left`): its maximum (`best`) and that one's index `h * width + w` in the
    input (`where`), the first in tap order or the first NaN; one tap at a time over
    the whole row (`_later_tap`, with strides 1 and 2 as constants)."""
    first = plane[p * sh]
    for q in range(best.shape[0]):
        best[q], where[q] = first[np.uint64(q * sw)], (p * sh - top) * width + q * sw - left
    for tap in range(1, kh * kw):
        i, j = tap // kw, tap % kw
        source, start = plane[p * sh + i], (p * sh + i - top) * width + j - left
        if sw == 2:
            _later_tap(source, best, where, start, 2, j)
        elif sw == 1:
            _later_tap(source, best, where, start, 1, j)
        else:
            _later_tap(source, best, where, start, sw, j)


@_jit
def _max_pool2d_grad_inside(x, dy, out, kh, kw, sh, sw):
    """`max_pool2d_grad` where every window lies inside the input: per output row,
    each window's maximum and where it is (`_row_maxima`), then one add per window."""
    best = np.empty(dy.shape[3], x.dtype)
    where = np.empty(dy.shape[3], np.int64)
    for n in range(dy.shape[0]):
        for c in range(dy.shape[1]):
            plane, target, gradient = x[n, c], out[n, c].reshape(-1), dy[n, c]
            for p in range(dy.shape[2]):
                _row_maxima(plane, p, kh, kw, sh, sw, best, where, 0, 0, x.shape[3])
                row = gradient[p]
                for q in range(dy.shape[3]):
                    target[np.uint64(where[q])] += row[q]


@_jit
def max_pool2d_indices(x, out, kh, kw, sh, sw, top, left, bottom, right):
    """Each window's index `h * W + w` of its first maximum, or of its first NaN, over
    the positions inside the input: PyTorch's indices, but the first NaN as
    `np.argmax` picks. Searched as `max_pool2d_grad` searches (`_row_maxima`), over
    a padded copy where windows reach the padding. A window whose maximum is -inf
    holds nothing else inside the input: it takes its first element there (the
    search may have ended in the padding)."""
    inside = _windows_inside(x, out, kh, kw, sh, sw, top, left)
    source = x if inside else _padded(x, top, left, bottom, right)
    width = x.shape[3]
    best = np.empty(out.shape[3], x.dtype)
    where = np.empty(out.shape[3], np.int64)
    for n in range(out.shape[0]):
        for c in range(out.shape[1]):
            plane, target = source[n, c], out[n, c]
            for p in range(out.shape[2]):
                _row_maxima(plane, p, kh, kw, sh, sw, best, where, top, left, width)
                row, y = target[p], max(p * sh - top, 0)
                for q in range(out.shape[3]):
                    first = y * width + max(q * sw - left, 0)
                    row[q] = where[q] if best[q] != -np.inf else first


@_jit
def max_pool2d_grad_indices(dy, indices, out, kh, kw, sh, sw, top, left, bottom, right):
    """Each window's gradient added at its index in the input's plane (the window
    only sized the operands, which the verifier checked)."""
    height, width = out.shape[2], out.shape[3]
    out[:] = 0
    for n in range(dy.shape[0]):
        for c in range(dy.shape[1]):
            target, taken, gradient = out[n, c].reshape(-1), indices[n, c], dy[n, c]
            for p in range(dy.shape[2]):
                for q in range(dy.shape[3]):
                    index = taken[p, q]
                    if index < 0 or index >= height * width:
                        raise IndexError("df.max_pool2d_grad_indices: index " + str(index)
                                         + " is out of range for a " + str(height) + "x"
                                         + str(width) + " plane")  # fmt: skip
                    target[index] += gradient[p, q]


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


# ----- indexing --------------------------------------------------------------


@_jit
def _around(array, axis):
    """The sizes before and after `axis` of `array`'s shape."""
    outer, inner = 1, 1
    for k in range(array.ndim):
        if k < axis:
            outer *= array.shape[k]
        elif k > axis:
            inner *= array.shape[k]
    return outer, inner


@numba.njit(cache=True, error_model="numpy", nogil=True, inline="always")
def _checked(op, index, size, axis):
    """`index` counted from the end when negative; out of range an IndexError (the
    message of the reference semantics, `reference.checked_indices`)."""
    if index < -size or index >= size:
        raise IndexError(op + ": index " + str(index) + " is out of range for axis "
                         + str(axis) + " of size " + str(size))  # fmt: skip
    return index + size if index < 0 else index


@_jit
def gather(data, indices, out, axis):
    """`out = numpy.take(data, indices, axis)`: a row copy per index."""
    outer, inner = _around(data, axis)
    size, count = data.shape[axis], indices.size
    source = data.reshape((outer, size, inner))
    taken = indices.reshape((count,))
    target = out.reshape((outer, count, inner))
    for n in range(count):
        row = _checked("df.gather", taken[n], size, axis)
        target[:, n, :] = source[:, row, :]


@_jit
def gather_elements(data, indices, out, axis):
    """`out[p] = data[p with its coordinate on axis replaced by indices[p]]`."""
    size, rank = data.shape[axis], data.ndim
    if axis == rank - 1 and data.shape[:-1] == indices.shape[:-1]:
        _gather_last_axis(data, indices, out, axis)
        return
    source, taken, target = (
        data.reshape(data.size),
        indices.reshape(indices.size),
        out.reshape(out.size),
    )
    strides = np.empty(rank, np.int64)
    stride = 1
    for k in range(rank - 1, -1, -1):
        strides[k], stride = stride, stride * data.shape[k]
    for p in range(taken.size):
        rest, offset = p, 0
        for k in range(rank - 1, -1, -1):
            coordinate, rest = rest % indices.shape[k], rest // indices.shape[k]
            if k == axis:
                coordinate = _checked("df.gather_elements", taken[p], size, axis)
            offset += coordinate * strides[k]
        target[p] = source[offset]


@_jit
def _gather_last_axis(data, indices, out, axis):
    """`gather_elements` along the last axis where the other axes match: row by row
    (`df.max_pool2d`'s maxima read at their indices)."""
    size, count = data.shape[axis], indices.shape[axis]
    outer, _ = _around(data, axis)
    rows, taken = data.reshape((outer, size)), indices.reshape((outer, count))
    target = out.reshape((outer, count))
    for r in range(outer):
        row, places, line = rows[r], taken[r], target[r]
        for k in range(count):
            line[k] = row[_checked("df.gather_elements", places[k], size, axis)]


@_jit
def scatter_add(updates, indices, out, axis):
    """`out` zeroed, then each slice of `updates` added at its index along `axis`."""
    outer, inner = _around(out, axis)
    size, count = out.shape[axis], indices.size
    target = out.reshape((outer, size, inner))
    taken = indices.reshape((count,))
    source = updates.reshape((outer, count, inner))
    out[...] = 0
    for n in range(count):
        row = _checked("df.scatter_add", taken[n], size, axis)
        target[:, row, :] += source[:, n, :]


_NUMBERS = ("f32", "f64", "i32", "i64", "ui64")  # ui64: no wider type to compute in
_ALL = (*_NUMBERS, "i1")


def _for_elements(elements: tuple[str, ...], **routines: object) -> None:
    """`<name>_<element>` for each routine and element: the names kernels call."""
    for name, routine in routines.items():
        for element in elements:
            globals()[f"{name}_{element}"] = routine


_for_elements(
    ("f32", "f64"),
    conv2d=conv2d,
    conv2d_bias=conv2d_bias,
    conv2d_nchwc=conv2d_nchwc,
    conv2d_nchwc_bias=conv2d_nchwc_bias,
    conv2d_grad_input=conv2d_grad_input,
    conv2d_grad_filter=conv2d_grad_filter,
    max_pool2d=max_pool2d,
    avg_pool2d=avg_pool2d,
    max_pool2d_nchwc=max_pool2d_nchwc,
    avg_pool2d_nchwc=avg_pool2d_nchwc,
    max_pool2d_grad=max_pool2d_grad,
    max_pool2d_indices=max_pool2d_indices,
    max_pool2d_grad_indices=max_pool2d_grad_indices,
    avg_pool2d_grad=avg_pool2d_grad,
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
