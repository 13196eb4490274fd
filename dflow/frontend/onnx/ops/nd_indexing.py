"""ONNX's N-d indexing ops, `GatherND` and `ScatterND`, composed on `df.gather` and
`df.scatter_add` over the data with its indexed leading axes made one.

An index tuple `(i0, ..., ik-1)` (the last axis of `indices`) addresses a slice of
the data's first `k` axes (after the `batch_dims` ones); its row in the flattened
axes is `Σ ij · stride_j`. Each component is first taken through `df.gather` from
`[0, 1, ..., n_j - 1]`: the gather checks it at run time (one line naming the index
and the axis where it is out of range) and counts a negative one from the end, so
the row of every valid tuple is exact and an invalid one never reads elsewhere.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import i64

from dflow.dialects import df
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter


def _rows(node: Node, indices: Tensor, axes: tuple[int, ...]) -> Tensor:
    """The row of each index tuple (the last axis of `indices`) in the flattened
    `axes`, each component checked and counted from the end when negative."""
    graph, count = indices.graph, len(axes)
    if indices.shape[-1] != count:
        raise node.error(f"the last axis of indices has {indices.shape[-1]} components, "
                         f"expected {count}")  # fmt: skip
    wide = indices if indices.type.element_type == i64 else indices.cast(i64)
    leading = indices.shape[:-1]
    rows: Tensor | None = None
    for j, size in enumerate(axes):
        component = graph.emit(
            df.SliceOp(wide.value, (*[0] * len(leading), j), (*leading, j + 1))
        ).reshape(leading)
        positions = graph.constant(np.arange(size, dtype=np.int64))
        checked = graph.emit(df.GatherOp(positions.value, component.value, 0))
        term = checked * graph.constant(np.int64(math.prod(axes[j + 1 :])))
        rows = term if rows is None else rows + term
    assert rows is not None
    return rows


@converter("GatherND", attributes={"batch_dims"})
def gather_nd(node: Node) -> list[Tensor]:
    """The slices of `data` that `indices`' last axis addresses, after `batch_dims`
    axes that `data` and `indices` share: one `df.gather` of the rows."""
    data, indices = node.input(0), node.input(1)
    batch = node.int("batch_dims", 0)
    k = indices.shape[-1] if indices.shape else 0
    if not indices.shape or batch + k > len(data.shape) or batch >= len(indices.shape):
        raise node.error(f"indices of shape {list(indices.shape)} cannot index data of shape "
                         f"{list(data.shape)} after {batch} batch axes")  # fmt: skip
    if indices.shape[:batch] != data.shape[:batch]:
        raise node.error(f"the batch axes of data {list(data.shape[:batch])} and indices "
                         f"{list(indices.shape[:batch])} differ")  # fmt: skip
    rows = _rows(node, indices, data.shape[batch : batch + k])
    if batch:
        first = np.arange(math.prod(data.shape[:batch]), dtype=np.int64)
        offsets = first.reshape((*data.shape[:batch], *[1] * (len(rows.shape) - batch)))
        per_batch = math.prod(data.shape[batch : batch + k])
        rows = rows + indices.graph.constant(offsets * per_batch)
    flat = data.reshape((math.prod(data.shape[: batch + k]), *data.shape[batch + k :]))
    return [data.graph.emit(df.GatherOp(flat.value, rows.value, 0))]


@converter("ScatterND", attributes={"reduction"})
def scatter_nd(node: Node) -> list[Tensor]:
    """`data` with the slices `indices` addresses replaced by (`reduction="none"`) or
    added to (`"add"`) `updates`: `df.scatter_add` of the updates into the rows; a
    replaced row is selected from the scattered sums (ONNX leaves repeated indices
    undefined under "none"; here they add)."""
    data, indices, updates = node.input(0), node.input(1), node.input(2)
    reduction = node.string("reduction", "none")
    if reduction not in ("none", "add"):
        raise node.error(f"reduction {reduction!r} is not supported (none and add are)")
    k = indices.shape[-1] if indices.shape else 0
    if not indices.shape or k > len(data.shape):
        raise node.error(f"indices of shape {list(indices.shape)} cannot index data of shape "
                         f"{list(data.shape)}")  # fmt: skip
    slice_shape = data.shape[k:]
    if updates.shape != (*indices.shape[:-1], *slice_shape):
        raise node.error(f"updates of shape {list(updates.shape)} do not match indices "
                         f"{list(indices.shape)} and data {list(data.shape)}")  # fmt: skip
    graph, count = data.graph, math.prod(indices.shape[:-1])
    rows = _rows(node, indices, data.shape[:k]).reshape((count,))
    table = (math.prod(data.shape[:k]), *slice_shape)
    flat = data.reshape(table)
    scattered = graph.emit(
        df.ScatterAddOp(updates.reshape((count, *slice_shape)).value, rows.value, table, 0)
    )
    if reduction == "add":
        return [(flat + scattered).reshape(data.shape)]
    ones = graph.constant(np.ones(count, dtype=np.int64))
    hits = graph.emit(df.ScatterAddOp(ones.value, rows.value, (table[0],), 0))
    written = (hits > 0).reshape((table[0], *[1] * len(slice_shape)))
    replaced = graph.emit(df.SelectOp(written.value, scattered.value, flat.value))
    return [replaced.reshape(data.shape)]
