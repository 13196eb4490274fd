"""Selections an importer knows at import time, built as views where it can: the
slices of an axis at constant indices (`take`), constant padding or cropping of an
axis (`pad_constant`). Both importers (ONNX's `Gather`, `Slice`, `Pad` and dilated
pools; ATen's `slice`, `select`, `split`, `flip`, `pad`, the scatters) build with
them, so a constant selection becomes `df.slice`s the fuser sees through rather
than a `df.gather`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dflow.dialects import df
from dflow.dialects.df.arrays import numpy_dtype
from dflow.frontend.builder import Tensor

FEW_RUNS = 4
"""Constant indices in at most this many runs are taken as slices, more by a gather."""


def take(x: Tensor, axis: int, indices: Sequence[int]) -> Tensor:
    """`x` at `indices` (in range, any order) along `axis`: in at most `FEW_RUNS`
    runs of a constant step, a slice per run (a strided run by a reshape), the runs
    concatenated; else one `df.gather` of the indices as a constant."""
    runs = runs_of(indices)
    if len(runs) > FEW_RUNS:
        where = x.graph.constant(np.asarray(indices, dtype=np.int64))
        return x.graph.emit(df.GatherOp(x.value, where.value, axis))
    if len(runs) == 1 and runs[0][2] == 1 and runs[0][1] == x.shape[axis] and runs[0][0] == 0:
        return x
    parts = [_run(x, axis, first, count, step) for first, count, step in runs] or [
        slice_axis(x, axis, 0, 0)
    ]
    if len(parts) == 1:
        return parts[0]
    return x.graph.emit(df.ConcatOp([p.value for p in parts], axis))


def runs_of(indices: Sequence[int]) -> list[tuple[int, int, int]]:
    """`indices` as (first, count, step) runs of a constant positive step."""
    runs: list[tuple[int, int, int]] = []
    for index in indices:
        if runs:
            first, count, step = runs[-1]
            if count == 1 and index > first:
                runs[-1] = (first, 2, index - first)
                continue
            if index == first + count * step:
                runs[-1] = (first, count + 1, step)
                continue
        runs.append((index, 1, 1))
    return runs


def slice_axis(x: Tensor, axis: int, begin: int, end: int) -> Tensor:
    """`x[begin:end]` along `axis`: a `df.slice`."""
    start = [0] * len(x.shape)
    limit = list(x.shape)
    start[axis], limit[axis] = begin, end
    return x.graph.emit(df.SliceOp(x.value, start, limit))


def _run(x: Tensor, axis: int, first: int, count: int, step: int) -> Tensor:
    """`x[first : first + count * step : step]` along `axis`."""
    if step == 1 or count == 1:
        return slice_axis(x, axis, first, first + count if step == 1 else first + 1)
    whole = count if first + count * step <= x.shape[axis] else count - 1
    block = slice_axis(x, axis, first, first + whole * step)
    grouped = block.reshape((*x.shape[:axis], whole, step, *x.shape[axis + 1 :]))
    picked = slice_axis(grouped, axis + 1, 0, 1)
    picked = picked.reshape((*x.shape[:axis], whole, *x.shape[axis + 1 :]))
    if whole == count:
        return picked
    last = slice_axis(x, axis, first + whole * step, first + whole * step + 1)
    return x.graph.emit(df.ConcatOp([picked.value, last.value], axis))


def pad_constant(x: Tensor, axis: int, before: int, after: int, fill: float) -> Tensor:
    """`x` with `before` and `after` slices of `fill` around `axis`; a negative
    count crops that many slices instead."""
    size = x.shape[axis]
    x = take(x, axis, range(max(0, -before), size - max(0, -after)))
    dtype = numpy_dtype(x.type.element_type)
    parts: list[Tensor] = []
    for count in (max(0, before), max(0, after)):
        shape = list(x.shape)
        shape[axis] = count
        parts.append(x.graph.constant(np.full(shape, fill, dtype=dtype)))
    return joined(x, axis, parts[0], parts[1])


def joined(x: Tensor, axis: int, before: Tensor, after: Tensor) -> Tensor:
    """`before`, `x`, `after` concatenated along `axis`, the empty ones left out."""
    pieces = [p for p in (before, x, after) if p.shape[axis] > 0]
    if len(pieces) == 1:
        return pieces[0]
    return x.graph.emit(df.ConcatOp([p.value for p in pieces], axis))
