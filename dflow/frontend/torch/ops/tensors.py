"""ATen's shape ops and the tensors it makes from nothing: views (`view`, `permute`,
`expand`, `squeeze`, `slice`, `select`, `as_strided`) as `df.reshape`,
`df.transpose`, `df.broadcast_to`, `df.slice` and, for strided picks, a
`df.gather` of constant indices; `cat`, `split`, `flip`, `constant_pad_nd`; and
`full`, `arange`, `scalar_tensor` as constants.

A view's shape is the one PyTorch recorded, so `view(x, [-1, 8])` needs no
arithmetic here. A graph is functional, so a view is a value of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from dflow.dialects import df
from dflow.frontend import ops
from dflow.frontend.builder import Tensor
from dflow.frontend.selection import pad_constant, take
from dflow.frontend.torch.call import Call, array_of, converter, numpy_of


@converter("view.default", "_unsafe_view.default", "reshape.default", "unsqueeze.default",
           "squeeze.dim", "squeeze.dims", "squeeze.default", "flatten.using_ints",
           "view_copy.default")  # fmt: skip
def view(call: Call) -> Tensor:
    x = call.tensor("self")
    return x if x.shape == call.shape else ops.reshape(x, call.shape)


@converter("permute.default", "permute_copy.default")
def permute(call: Call) -> Tensor:
    x = call.tensor("self")
    rank = len(x.shape)
    return transposed(x, [call.axis(d, rank) for d in call.ints("dims")])


def transposed(x: Tensor, perm: Sequence[int]) -> Tensor:
    """`x` transposed by `perm`; a transpose of a transpose is one (or none, where the
    two cancel: a backward graph's `t(t(w))`)."""
    owner = x.value.owner
    if isinstance(owner, df.TransposeOp):
        inner = owner.perm_values
        perm = [inner[p] for p in perm]
        x = Tensor(x.graph, owner.input)
    if list(perm) == list(range(len(perm))):
        return x
    return x.transpose(perm)


@converter("t.default", "numpy_T.default")
def t(call: Call) -> Tensor:
    x = call.tensor("self")
    return x if len(x.shape) < 2 else transposed(x, [1, 0])


@converter("transpose.int")
def transpose(call: Call) -> Tensor:
    x = call.tensor("self")
    rank = len(x.shape)
    perm = list(range(rank))
    a, b = call.axis(call["dim0"], rank), call.axis(call["dim1"], rank)
    perm[a], perm[b] = perm[b], perm[a]
    return transposed(x, perm)


@converter("expand.default", "expand_copy.default", "broadcast_to.default")
def expand(call: Call) -> Tensor:
    x = call.tensor("self")
    return x if x.shape == call.shape else ops.broadcast_to(x, call.shape)


@converter("cat.default", "concat.default")
def cat(call: Call) -> Tensor:
    tensors = [call.cast(t) for t in call["tensors"] if t.shape != (0,) or len(call.shape) == 1]
    if len(tensors) == 1:
        return tensors[0]
    return ops.concat(tensors, call.axis(call["dim"], len(call.shape)))


def _range(call: Call, size: int) -> tuple[int, int, int]:
    """`start:end:step` of `slice.Tensor` within an axis of `size`."""
    start, end, step = call["start"], call["end"], call["step"] or 1
    begin, stop, _ = slice(start, end).indices(size)
    return begin, max(begin, stop), int(step)


@converter("slice.Tensor", "slice_copy.Tensor")
def slice_(call: Call) -> Tensor:
    x = call.tensor("self")
    axis = call.axis(call["dim"], len(x.shape))
    begin, stop, step = _range(call, x.shape[axis])
    return take(x, axis, list(range(begin, stop, step)))


@converter("select.int", "select_copy.int")
def select(call: Call) -> Tensor:
    x = call.tensor("self")
    axis = call.axis(call["dim"], len(x.shape))
    index = int(call["index"]) % x.shape[axis]
    return ops.reshape(take(x, axis, [index]), call.shape)


def _scattered(x: Tensor, axis: int, places: Sequence[int], source: Tensor) -> Tensor:
    """`x` with its slices at `places` along `axis` replaced by `source`'s, in
    order: one gather from `x` and `source` joined, of constant indices."""
    size = x.shape[axis]
    picks = list(range(size))
    for k, place in enumerate(places):
        picks[place] = size + k
    return take(ops.concat([x, source], axis), axis, picks)


@converter("slice_scatter.default")
def slice_scatter(call: Call) -> Tensor:
    x, source = call.cast(call.tensor("self")), call.cast(call.tensor("src"))
    axis = call.axis(call["dim"], len(x.shape))
    begin, stop, step = _range(call, x.shape[axis])
    return _scattered(x, axis, range(begin, stop, step), source)


@converter("select_scatter.default")
def select_scatter(call: Call) -> Tensor:
    x, source = call.cast(call.tensor("self")), call.cast(call.tensor("src"))
    axis = call.axis(call["dim"], len(x.shape))
    row = ops.reshape(source, [*x.shape[:axis], 1, *x.shape[axis + 1 :]])
    return _scattered(x, axis, [int(call["index"]) % x.shape[axis]], row)


@converter("split_with_sizes.default", "split.Tensor", "split_with_sizes_copy.default")
def split(call: Call) -> list[Tensor]:
    x = call.tensor("self")
    axis = call.axis(call["dim"], len(x.shape))
    sizes = [int(shape[axis]) for shape in (tuple(v.shape) for v in call.value)]
    parts: list[Tensor] = []
    start = 0
    for size in sizes:
        parts.append(take(x, axis, list(range(start, start + size))))
        start += size
    return parts


@converter("unbind.int")
def unbind(call: Call) -> list[Tensor]:
    x = call.tensor("self")
    axis = call.axis(call["dim"], len(x.shape))
    shape = [*x.shape[:axis], *x.shape[axis + 1 :]]
    return [ops.reshape(take(x, axis, [i]), shape) for i in range(x.shape[axis])]


@converter("flip.default")
def flip(call: Call) -> Tensor:
    x = call.tensor("self")
    for axis in {call.axis(d, len(x.shape)) for d in call.ints("dims")}:
        x = take(x, axis, list(range(x.shape[axis] - 1, -1, -1)))
    return x


@converter("as_strided.default", "as_strided_copy.default")
def as_strided(call: Call) -> Tensor:
    """The elements of `self`'s storage at `offset + Σ index · stride`: a gather of
    constant indices from `self` flattened, which is its storage when its recorded
    layout is contiguous (a functional graph's fresh values are)."""
    x = call.tensor("self")
    source: Any = call.node.args[0]
    recorded: Any = source.meta.get("val")
    if not isinstance(recorded, torch.Tensor) or not recorded.is_contiguous():
        raise call.error("as_strided of a tensor that is not contiguous is not supported")
    offset = int(call["storage_offset"] or 0) - int(recorded.storage_offset())
    places = np.full(call.shape, offset, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(call.shape, call.ints("stride"), strict=True)):
        line = [1] * len(call.shape)
        line[axis] = size
        places = places + (np.arange(size, dtype=np.int64) * stride).reshape(line)
    flat = ops.reshape(x, [int(np.prod(x.shape))])
    return ops.gather(flat, x.graph.constant(places), 0)


@converter("constant_pad_nd.default")
def constant_pad_nd(call: Call) -> Tensor:
    """`pad` lists (before, after) from the last axis back; negative counts crop."""
    x = call.cast(call.tensor("self"))
    pads = call.ints("pad")
    fill = call["value"] or 0
    for pair in range(len(pads) // 2):
        axis = len(x.shape) - 1 - pair
        x = pad_constant(x, axis, pads[2 * pair], pads[2 * pair + 1], fill)
    return x


# ----------------------------------------------------------------------------- new tensors


@converter("full.default", "full_like.default", "new_full.default")
def full(call: Call) -> Tensor:
    value = call["fill_value"]
    return call.graph.constant(np.full(call.shape, value, dtype=numpy_of(call.dtype)))


@converter("zeros.default", "zeros_like.default", "new_zeros.default")
def zeros(call: Call) -> Tensor:
    return call.graph.constant(np.zeros(call.shape, dtype=numpy_of(call.dtype)))


@converter("ones.default", "ones_like.default", "new_ones.default")
def ones(call: Call) -> Tensor:
    return call.graph.constant(np.ones(call.shape, dtype=numpy_of(call.dtype)))


@converter("scalar_tensor.default")
def scalar_tensor(call: Call) -> Tensor:
    return call.scalar(call["s"])


@converter("arange.start_step", "arange.default", "arange.start")
def arange(call: Call) -> Tensor:
    """PyTorch's `arange` computed by PyTorch itself (its float steps round as it does)."""
    start = call.arguments.get("start", 0)
    end = call["end"]
    step = call.arguments.get("step", 1)
    values = torch.arange(start, end, step, dtype=call.dtype)
    return call.graph.constant(array_of(values))
