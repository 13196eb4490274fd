"""ATen's indexing: `embedding`, `index_select` and `index.Tensor` (one index
tensor, or several on adjacent axes) as `df.gather`; `gather` as
`df.gather_elements`; `scatter.value` (a one-hot, as cross entropy's gradient
writes it) by comparisons; `index_put` with `accumulate` (an embedding's gradient)
as `df.scatter_add`.
"""

from __future__ import annotations

import numpy as np

from dflow.frontend import ops
from dflow.frontend.builder import Tensor
from dflow.frontend.torch.call import Call, converter


@converter("embedding.default")
def embedding(call: Call) -> Tensor:
    return ops.gather(call.tensor("weight"), call.tensor("indices"), 0)


@converter("index_select.default")
def index_select(call: Call) -> Tensor:
    x = call.tensor("self")
    return ops.gather(x, call.tensor("index"), call.axis(call["dim"], len(x.shape)))


@converter("gather.default")
def gather(call: Call) -> Tensor:
    """`df.gather_elements` of `self` cut to the index's extent on the other axes
    (PyTorch reads only that corner)."""
    x, where = call.tensor("self"), call.tensor("index")
    axis = call.axis(call["dim"], len(x.shape))
    limit = [x.shape[a] if a == axis else where.shape[a] for a in range(len(x.shape))]
    if limit != list(x.shape):
        x = ops.slice(x, [0] * len(limit), limit)
    return ops.gather_elements(x, where, axis)


def _indexed(call: Call) -> tuple[int, list[Tensor]]:
    """The first indexed axis and the index tensors, on adjacent axes."""
    indices = list(call["indices"])
    axes = [axis for axis, index in enumerate(indices) if index is not None]
    if not axes or axes != list(range(axes[0], axes[0] + len(axes))):
        raise call.error("index tensors on axes that are not adjacent are not supported")
    return axes[0], [indices[a] for a in axes]


@converter("index.Tensor", "_unsafe_index.Tensor")
def index(call: Call) -> Tensor:
    """`x[..., i, j, ...]` with index tensors on adjacent axes from `first`: those
    axes merged into one, indexed by `i · size_j + j` (each index taken modulo its
    axis, as negative ones count from the end)."""
    x = call.tensor("self")
    first, tensors = _indexed(call)
    if len(tensors) == 1:
        return ops.gather(x, tensors[0], first)
    sizes = x.shape[first : first + len(tensors)]
    flat: Tensor | None = None
    for tensor, size in zip(tensors, sizes, strict=True):
        position = _modulo(tensor, size)
        flat = position if flat is None else flat * tensor.graph.constant(np.int64(size)) + position
    assert flat is not None
    merged = [*x.shape[:first], int(np.prod(sizes)), *x.shape[first + len(tensors) :]]
    return ops.gather(ops.reshape(x, merged), flat, first)


def _i64(index: Tensor) -> Tensor:
    return index if str(index.type.element_type) == "i64" else index.cast("i64")


def _modulo(index: Tensor, size: int) -> Tensor:
    wide = _i64(index)
    bound = index.graph.constant(np.int64(size))
    zero = index.graph.constant(np.int64(0))
    return ops.select(wide < zero, wide + bound, wide)


@converter("scatter.value", "scatter.src")
def scatter(call: Call) -> Tensor:
    """`self` with `value` written at `index` along `dim`: where some index of the
    element's line names the element's place (an index of every other axis's full
    size, as cross entropy's gradient has)."""
    x = call.cast(call.tensor("self"))
    where = call.tensor("index")
    axis = call.axis(call["dim"], len(x.shape))
    if any(w != s for a, (w, s) in enumerate(zip(where.shape, x.shape, strict=True)) if a != axis):
        raise call.error("scatter with an index narrower than self is not supported")
    if "src" in call.arguments and isinstance(call.arguments.get("src"), Tensor):
        raise call.error("scatter of a source tensor is not supported")
    rank = len(x.shape)
    expanded = ops.reshape(where, [*where.shape[: axis + 1], 1, *where.shape[axis + 1 :]])
    line = [1] * (rank + 1)
    line[axis + 1] = x.shape[axis]
    places = x.graph.constant(np.arange(x.shape[axis], dtype=np.int64).reshape(line))
    mask = ops.reduce_max(_hits(expanded, places).cast("i32"), [axis], False)
    written = mask.equal(x.graph.constant(np.int32(1)))
    return ops.select(written, call.operand(call["value"]), x)


def _hits(expanded: Tensor, places: Tensor) -> Tensor:
    return _i64(expanded).equal(places)


@converter("index_put.default")
def index_put(call: Call) -> Tensor:
    """`self` plus `values` added at one index tensor's places along the first axis
    (`accumulate`, as an embedding's gradient writes it)."""
    x = call.cast(call.tensor("self"))
    indices = list(call["indices"])
    if not call["accumulate"] or len(indices) != 1 or indices[0] is None:
        raise call.error("index_put is supported with accumulate=True and one index tensor")
    (where,) = indices
    values = call.cast(call.tensor("values"))
    expected = [*where.shape, *x.shape[1:]]
    if list(values.shape) != expected:
        values = ops.broadcast_to(values, expected)
    return x + ops.scatter_add(values, where, x.shape, 0)
