"""ATen's network ops: `convolution` (1-D and 2-D, grouped, transposed), `mm`,
`bmm`, `addmm`, the batch norms (inference, and training with the running
statistics), `native_layer_norm`, the pools, and CPU attention
(`_scaled_dot_product_flash_attention_for_cpu`).

Chosen compositions, where df has no op of its own:
- a 1-D convolution is a 2-D one of height 1; a transposed convolution is
  `df.conv2d_grad_input` (the gradient of the convolution it transposes);
- `ceil_mode` pools take the end padding that gives the recorded output size;
  `count_include_pad` scales `df.avg_pool2d` (which divides by the elements inside
  the input) per output position by inside / inside-or-padding;
- a batch norm is `x · a + b` per channel, `a = weight / √(var + ε)`, `b = bias -
  mean · a` (constants when the model is frozen); in training, with the batch's
  statistics, and the running ones `running · (1 - momentum) + batch · momentum`
  (the variance's unbiased);
- a layer norm is `df.layer_norm` over its trailing axes made one, or, where its
  mean and reciprocal deviation are used too (a training graph saves them),
  written out;
- attention is `softmax(q kᵀ · scale + mask) v`, its log-sum-exp written out when
  used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dflow.dialects import df
from dflow.frontend import ops
from dflow.frontend.builder import Tensor
from dflow.frontend.torch.call import Call, converter


def _pair(values: Sequence[int], default: int) -> tuple[int, int]:
    listed = list(values) or [default]
    return (listed[0], listed[-1]) if len(listed) <= 2 else (listed[0], listed[1])


def _uses(call: Call, output: int) -> bool:
    """Whether the node's result `output` is read (through `getitem`)."""
    return any(user.args[1] == output for user in call.node.users)


# ----------------------------------------------------------------------------- products


def _swapped(x: Tensor) -> Tensor | None:
    """The input of `x` when `x` is a `df.transpose` of its last two axes alone."""
    owner = x.value.owner
    if not isinstance(owner, df.TransposeOp):
        return None
    perm = owner.perm_values
    rank = len(perm)
    if rank < 2 or perm != (*range(rank - 2), rank - 1, rank - 2):
        return None
    return Tensor(x.graph, owner.input)


def product(a: Tensor, b: Tensor) -> Tensor:
    """`a @ b`, an operand that is a transpose of its last two axes read through the
    matmul's `transpose_a`/`transpose_b` (PyTorch's `linear` is `addmm(b, x, wᵀ)`: the
    transposed weight is not copied)."""
    a_input, b_input = _swapped(a), _swapped(b)
    left = a if a_input is None else a_input
    right = b if b_input is None else b_input
    return left.matmul(right, transpose_a=a_input is not None, transpose_b=b_input is not None)


@converter("mm.default", "bmm.default", "matmul.default")
def mm(call: Call) -> Tensor:
    other = call.tensor("mat2" if "mat2" in call.arguments else "other")
    return product(call.cast(call.tensor("self")), call.cast(other))


@converter("addmm.default")
def addmm(call: Call) -> Tensor:
    result = product(call.cast(call.tensor("mat1")), call.cast(call.tensor("mat2")))
    if call["alpha"] != 1:
        result = result * call.scalar(call["alpha"])
    if call["beta"] == 0:
        return result
    bias = call.cast(call.tensor("self"))
    return result + (bias if call["beta"] == 1 else bias * call.scalar(call["beta"]))


# ----------------------------------------------------------------------------- convolution


def _window(call: Call, rank: int) -> dict[str, tuple[int, ...]]:
    stride, padding, dilation = (call.ints(n) for n in ("stride", "padding", "dilation"))
    if rank == 1:
        return {"strides": (1, stride[0]), "pads": (0, padding[0], 0, padding[0]),
                "dilations": (1, dilation[0])}  # fmt: skip
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride, 1), _pair(padding, 0), _pair(dilation, 1)
    return {"strides": (sh, sw), "pads": (ph, pw, ph, pw), "dilations": (dh, dw)}


def _as_2d(x: Tensor) -> Tensor:
    return ops.reshape(x, [*x.shape[:2], 1, x.shape[2]]) if len(x.shape) == 3 else x


@converter("convolution.default")
def convolution(call: Call) -> Tensor:
    x, w = call.cast(call.tensor("input")), call.cast(call.tensor("weight"))
    rank = len(x.shape) - 2
    if rank not in (1, 2):
        raise call.error(f"{rank}-D convolutions are not supported")
    window = _window(call, rank)
    bias = call["bias"]
    shape = list(call.shape) if rank == 2 else [*call.shape[:2], 1, call.shape[2]]
    if call["transposed"]:
        y = ops.conv2d_grad_input(_as_2d(x), _as_2d(w), shape, groups=call["groups"], **window)
        y = y if bias is None else y + ops.reshape(call.cast(bias), [shape[1], 1, 1])
    else:
        y = ops.conv2d(_as_2d(x), _as_2d(w), None if bias is None else call.cast(bias),
                       groups=call["groups"], **window)  # fmt: skip
    return ops.reshape(y, call.shape) if rank == 1 else y


@converter("convolution_backward.default")
def convolution_backward(call: Call) -> list[Tensor | None]:
    """The gradients of a 2-D convolution in its input, weight and bias (those
    `output_mask` asks for)."""
    dy, x, w = (call.cast(call.tensor(n)) for n in ("grad_output", "input", "weight"))
    if len(x.shape) != 4 or call["transposed"]:
        raise call.error("the gradient of a convolution that is not 2-D is not supported")
    window = {**_window(call, 2), "groups": call["groups"]}
    wants = [bool(m) for m in call["output_mask"]]
    return [
        ops.conv2d_grad_input(dy, w, x.shape, **window) if wants[0] else None,
        ops.conv2d_grad_filter(x, dy, w.shape, **window) if wants[1] else None,
        ops.reduce_sum(dy, [0, 2, 3]) if wants[2] else None,
    ]


# ----------------------------------------------------------------------------- pooling


def _pool_window(call: Call, x: Tensor, output: Sequence[int]) -> dict[str, tuple[int, ...]]:
    """Kernel, strides and pads (the end ones giving the recorded `output` size)."""
    kernel = _pair(call.ints("kernel_size"), 1)
    strides = _pair(call.ints("stride") if call["stride"] else list(kernel), 1)
    pads = _pair(call.ints("padding"), 0)
    ends = [
        max(0, (output[a] - 1) * strides[a] + kernel[a] - x.shape[2 + a] - pads[a]) for a in (0, 1)
    ]
    return {"kernel": kernel, "strides": strides, "pads": (*pads, *ends)}


def _plain(call: Call) -> None:
    dilation = call.arguments.get("dilation")
    if dilation and any(d != 1 for d in dilation):
        raise call.error("dilated pooling is not supported")


@converter("max_pool2d_with_indices.default", "max_pool2d.default")
def max_pool2d(call: Call) -> list[Tensor | None] | Tensor:
    x = call.tensor("self")
    _plain(call)
    window = _pool_window(call, x, call.shape[2:])
    y = ops.max_pool2d(x, **window)
    if "with_indices" not in str(call.node.target):
        return y
    indices = ops.max_pool2d_indices(x, **window) if _uses(call, 1) else None
    return [y, indices]


@converter("max_pool2d_with_indices_backward.default")
def max_pool2d_backward(call: Call) -> Tensor:
    dy, x = call.tensor("grad_output"), call.tensor("self")
    _plain(call)
    window = _pool_window(call, x, dy.shape[2:])
    return ops.max_pool2d_grad_indices(dy, call.tensor("indices"), x.shape, **window)


def _counts(size: int, output: int, kernel: int, stride: int, pad: int, padded: bool) -> list[int]:
    """Per output position, its window's elements inside the input (`padded`: inside
    the input or its explicit padding)."""
    low, high = (-pad, size + pad) if padded else (0, size)
    starts = [o * stride - pad for o in range(output)]
    return [max(0, min(s + kernel, high) - max(s, low)) for s in starts]


def _include_pad_factor(call: Call, x: Tensor, output: Sequence[int]) -> Tensor | None:
    """inside / inside-or-padding per output position, for `count_include_pad`."""
    window = _pool_window(call, x, output)
    if not call["count_include_pad"] or not any(window["pads"][:2]):
        return None
    factors: list[np.ndarray[tuple[int, ...], np.dtype[np.float64]]] = []
    for a in (0, 1):
        args = (x.shape[2 + a], output[a], window["kernel"][a], window["strides"][a])
        inside = np.array(_counts(*args, window["pads"][a], False), dtype=np.float64)
        padded = np.array(_counts(*args, window["pads"][a], True), dtype=np.float64)
        factors.append(inside / padded)
    factor = np.outer(factors[0], factors[1]).reshape(1, 1, output[0], output[1])
    return call.graph.constant(factor.astype(np.float32)).cast(x.type.element_type)


def _no_override(call: Call) -> None:
    if call.arguments.get("divisor_override") is not None:
        raise call.error("avg_pool2d with divisor_override is not supported")


@converter("avg_pool2d.default")
def avg_pool2d(call: Call) -> Tensor:
    x = call.tensor("self")
    _no_override(call)
    y = ops.avg_pool2d(x, **_pool_window(call, x, call.shape[2:]))
    factor = _include_pad_factor(call, x, call.shape[2:])
    return y if factor is None else y * factor


@converter("avg_pool2d_backward.default")
def avg_pool2d_backward(call: Call) -> Tensor:
    dy, x = call.tensor("grad_output"), call.tensor("self")
    _no_override(call)
    factor = _include_pad_factor(call, x, dy.shape[2:])
    dy = dy if factor is None else dy * factor
    return ops.avg_pool2d_grad(dy, x.shape, **_pool_window(call, x, dy.shape[2:]))


@converter("_adaptive_avg_pool2d.default", "adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(call: Call) -> Tensor:
    x = call.tensor("self")
    out = call.shape[-2:]
    size = x.shape[-2:]
    if any(s % o for s, o in zip(size, out, strict=True)):
        raise call.error(f"adaptive pooling of {list(size)} to {list(out)} is not supported")
    if tuple(out) == (1, 1):
        return ops.reduce_mean(x, [-2, -1], keepdims=True)
    kernel = [s // o for s, o in zip(size, out, strict=True)]
    return ops.avg_pool2d(x, kernel, kernel)


# ----------------------------------------------------------------------------- normalization


def _channel(call: Call, name: str, x: Tensor, default: float) -> Tensor:
    """A per-channel parameter shaped to broadcast along axis 1 (or `default`)."""
    value = call.arguments.get(name)
    if value is None:
        return call.scalar(default)
    return ops.reshape(call.cast(value), [x.shape[1], *([1] * (len(x.shape) - 2))])


@converter("_native_batch_norm_legit_no_training.default")
def batch_norm_inference(call: Call) -> list[Tensor | None]:
    x = call.cast(call.tensor("input"))
    epsilon = call.scalar(call["eps"])
    scale = (
        _channel(call, "weight", x, 1.0) * (_channel(call, "running_var", x, 1.0) + epsilon).rsqrt()
    )
    shift = _channel(call, "bias", x, 0.0) - _channel(call, "running_mean", x, 0.0) * scale
    return [x * scale + shift, None, None]


@converter("_native_batch_norm_legit_functional.default", "_native_batch_norm_legit.default",
           "native_batch_norm.default", "_native_batch_norm_legit.no_stats")  # fmt: skip
def batch_norm_training(call: Call) -> list[Tensor | None]:
    """With the batch's statistics (over every axis but the channels'); the running
    ones updated, for the functional form, as its 4th and 5th results."""
    x = call.cast(call.tensor("input"))
    if not call.arguments.get("training", True):
        return [*batch_norm_inference(call)]
    axes = [a for a in range(len(x.shape)) if a != 1]
    mean = ops.reduce_mean(x, axes, keepdims=True)
    centered = x - mean
    variance = ops.reduce_mean(centered.square(), axes, keepdims=True)
    rstd = (variance + call.scalar(call["eps"])).rsqrt()
    y = centered * rstd * _channel(call, "weight", x, 1.0) + _channel(call, "bias", x, 0.0)
    outputs: list[Tensor | None] = [y, _flat(mean), _flat(rstd)]
    if "functional" in str(call.node.target):
        outputs += _running(call, x, _flat(mean), _flat(variance))
    return outputs


def _flat(x: Tensor) -> Tensor:
    return ops.reshape(x, [x.shape[1]])


def _running(call: Call, x: Tensor, mean: Tensor, variance: Tensor) -> list[Tensor | None]:
    count = int(np.prod(x.shape)) // x.shape[1]
    momentum = call.scalar(call["momentum"])
    keep = call.scalar(1 - call["momentum"])
    unbiased = variance * call.scalar(count / max(count - 1, 1))
    running_mean, running_var = call.tensor("running_mean"), call.tensor("running_var")
    return [
        call.cast(running_mean) * keep + mean * momentum,
        call.cast(running_var) * keep + unbiased * momentum,
    ]


@converter("native_layer_norm.default")
def layer_norm(call: Call) -> list[Tensor | None]:
    x = call.cast(call.tensor("input"))
    count = len(call.ints("normalized_shape"))
    length = int(np.prod(x.shape[len(x.shape) - count :]))
    if _uses(call, 1) or _uses(call, 2):
        return _layer_norm_written_out(call, x, count)
    rows = ops.reshape(x, [*x.shape[: len(x.shape) - count], length])
    scale = _row(call, "weight", length, 1.0)
    bias = _row(call, "bias", length, 0.0)
    y = ops.layer_norm(rows, scale, bias, float(call["eps"]))
    return [ops.reshape(y, x.shape), None, None]


def _row(call: Call, name: str, length: int, default: float) -> Tensor:
    value = call.arguments.get(name)
    if value is None:
        return call.graph.constant(np.full(length, default, dtype=np.float32)).cast(call.element)
    return ops.reshape(call.cast(value), [length])


def _layer_norm_written_out(call: Call, x: Tensor, count: int) -> list[Tensor | None]:
    axes = list(range(len(x.shape) - count, len(x.shape)))
    mean = ops.reduce_mean(x, axes, keepdims=True)
    centered = x - mean
    rstd = (
        ops.reduce_mean(centered.square(), axes, keepdims=True) + call.scalar(call["eps"])
    ).rsqrt()
    y = centered * rstd
    trailing = x.shape[len(x.shape) - count :]
    for name in ("weight", "bias"):
        value = call.arguments.get(name)
        if value is not None:
            shaped = ops.reshape(call.cast(value), list(trailing))
            y = y * shaped if name == "weight" else y + shaped
    return [y, mean, rstd]


# ----------------------------------------------------------------------------- attention


def _scores(call: Call, q: Tensor, k: Tensor) -> Tensor:
    """`q kᵀ · scale`, masked (`is_causal`, `attn_mask`)."""
    scale = call.arguments.get("scale") or 1 / math.sqrt(q.shape[-1])
    s = q.matmul(k, transpose_b=True) * call.scalar(scale, None)
    if call["is_causal"]:
        length, source = s.shape[-2:]
        future = np.triu(np.ones((length, source), dtype=bool), 1)
        s = s + call.graph.constant(np.where(future, -np.inf, 0).astype(np.float32)).cast(
            s.type.element_type
        )
    mask = call.arguments.get("attn_mask")
    if mask is not None:
        s = s + call.cast(mask)
    return s


def _attention_inputs(call: Call) -> tuple[Tensor, Tensor, Tensor]:
    if call["dropout_p"]:
        raise call.error("attention with dropout is not supported")
    return (call.cast(call.tensor("query")), call.cast(call.tensor("key")),
            call.cast(call.tensor("value")))  # fmt: skip


@converter("_scaled_dot_product_flash_attention_for_cpu.default")
def attention(call: Call) -> list[Tensor | None]:
    q, k, v = _attention_inputs(call)
    s = _scores(call, q, k)
    p = ops.softmax(s, -1)
    if not _uses(call, 1):
        return [p.matmul(v), None]
    top = ops.reduce_max(s, [-1], keepdims=True)
    total = ops.reduce_sum((s - top).exp(), [-1], keepdims=True)
    lse = ops.reshape(top + total.log(), s.shape[:-1])
    return [p.matmul(v), lse]


@converter("_scaled_dot_product_flash_attention_for_cpu_backward.default")
def attention_backward(call: Call) -> list[Tensor | None]:
    """With `P = softmax(S)`: `dV = Pᵀ dO`, `dP = dO Vᵀ`, `dS = P ∘ (dP - rowsum(dO ∘ O))`,
    `dQ = dS K · scale`, `dK = dSᵀ Q · scale`."""
    q, k, v = _attention_inputs(call)
    d_out, out = call.cast(call.tensor("grad_out")), call.cast(call.tensor("out"))
    p = ops.softmax(_scores(call, q, k), -1)
    scale = call.scalar(call.arguments.get("scale") or 1 / math.sqrt(q.shape[-1]), None)
    d_p = d_out.matmul(v, transpose_b=True)
    d_s = p * (d_p - ops.reduce_sum(d_out * out, [-1], keepdims=True))
    return [
        d_s.matmul(k) * scale,
        d_s.matmul(q, transpose_a=True) * scale,
        p.matmul(d_out, transpose_a=True),
    ]


# ----------------------------------------------------------------------------- gradients


@converter("threshold_backward.default")
def threshold_backward(call: Call) -> Tensor:
    dy, x = call.cast(call.tensor("grad_output")), call.tensor("self")
    below = x <= call.operand(call["threshold"], None)
    return ops.select(below, call.scalar(0), dy)
