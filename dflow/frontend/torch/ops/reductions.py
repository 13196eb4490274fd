"""ATen's reductions: `sum`, `mean`, `amax`/`amin`, `max.dim`'s values, `any`/`all`,
`var`, `prod` of one axis, the norms, and `_softmax`/`_log_softmax` (the latter
as `x - max - log Σ exp(x - max)`, which stays finite where `softmax` underflows).

Integer sums are computed in the recorded result dtype (PyTorch sums `int32` into
`int64`); `any` and `all` reduce booleans as integers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dflow.dialects.df.arrays import numpy_dtype
from dflow.frontend import ops
from dflow.frontend.builder import Tensor
from dflow.frontend.torch.call import Call, converter


def _axes(call: Call, x: Tensor, name: str = "dim") -> list[int]:
    """The reduced axes (all for None or `[]`), counted from the front."""
    dims = call.arguments.get(name)
    rank = len(x.shape)
    if dims is None or dims == []:
        return list(range(rank))
    listed: list[Any] = list(dims) if isinstance(dims, list | tuple) else [dims]  # pyright: ignore[reportUnknownArgumentType]
    return sorted({call.axis(int(d), rank) for d in listed})


def _keepdim(call: Call) -> bool:
    return bool(call.arguments.get("keepdim") or False)


@converter("sum.dim_IntList", "sum.default")
def sum_(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    return ops.reduce_sum(x, _axes(call, x), _keepdim(call))


@converter("mean.dim", "mean.default")
def mean(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    return ops.reduce_mean(x, _axes(call, x), _keepdim(call))


@converter("amax.default", "max.default")
def amax(call: Call) -> Tensor:
    x = call.tensor("self")
    return ops.reduce_max(x, _axes(call, x), _keepdim(call))


@converter("amin.default", "min.default")
def amin(call: Call) -> Tensor:
    x = call.tensor("self")
    return -ops.reduce_max(-x, _axes(call, x), _keepdim(call))


@converter("max.dim")
def max_dim(call: Call) -> list[Tensor | None]:
    """The maxima (the indices, the second result, are not imported)."""
    x = call.tensor("self")
    return [ops.reduce_max(x, _axes(call, x), _keepdim(call)), None]


@converter("min.dim")
def min_dim(call: Call) -> list[Tensor | None]:
    x = call.tensor("self")
    return [-ops.reduce_max(-x, _axes(call, x), _keepdim(call)), None]


def _is_zero(call: Call, x: Tensor) -> Tensor:
    """Where `x` is 0 (false), as 1; elsewhere 0 (int32)."""
    return call.cast(
        x.equal(x.graph.constant(np.zeros((), numpy_dtype(x.type.element_type)))), torch.int32
    )


@converter("any.dim", "any.dims", "any.default")
def any_(call: Call) -> Tensor:
    """Some element is true: not every element is 0, i.e. the minimum of (element
    is 0) is 0."""
    x = call.tensor("self")
    is_zero = _is_zero(call, x)
    all_zero = -ops.reduce_max(-is_zero, _axes(call, x), _keepdim(call))
    return all_zero.equal(x.graph.constant(np.int32(0)))


@converter("all.dim", "all.dims", "all.default")
def all_(call: Call) -> Tensor:
    x = call.tensor("self")
    some_zero = ops.reduce_max(_is_zero(call, x), _axes(call, x), _keepdim(call))
    return some_zero.equal(x.graph.constant(np.int32(0)))


@converter("var.correction", "var.dim")
def var(call: Call) -> Tensor:
    """The mean square deviation, times `n / (n - correction)` (default 1)."""
    x = call.cast(call.tensor("self"))
    axes = _axes(call, x)
    centered = x - ops.reduce_mean(x, axes, keepdims=True)
    count = int(np.prod([x.shape[a] for a in axes]))
    correction = call.arguments.get("correction")
    if correction is None:
        correction = 1 if call.arguments.get("unbiased", True) else 0
    squares = ops.reduce_mean(centered.square(), axes, _keepdim(call))
    return squares * call.scalar(count / max(count - float(correction), 0.0))


@converter("linalg_vector_norm.default")
def vector_norm(call: Call) -> Tensor:
    x = abs(call.cast(call.tensor("self")))
    axes, keep = _axes(call, x), _keepdim(call)
    order = float(call["ord"])
    if order == 2:
        return ops.reduce_sum(x.square(), axes, keep).sqrt()
    if order == 1:
        return ops.reduce_sum(x, axes, keep)
    if order == float("inf"):
        return ops.reduce_max(x, axes, keep)
    power = call.scalar(order)
    return ops.reduce_sum(x**power, axes, keep) ** call.scalar(1 / order)


@converter("_softmax.default", "softmax.int")
def softmax(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    return ops.softmax(x, call.axis(call["dim"], len(x.shape)))


@converter("_log_softmax.default", "log_softmax.int")
def log_softmax(call: Call) -> Tensor:
    x = call.cast(call.tensor("self"))
    axis = call.axis(call["dim"], len(x.shape))
    shifted = x - ops.reduce_max(x, [axis], keepdims=True)
    return shifted - ops.reduce_sum(shifted.exp(), [axis], keepdims=True).log()
