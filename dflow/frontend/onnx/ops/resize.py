"""ONNX `Resize` (every mode: nearest, linear, cubic, antialiased; every coordinate
transformation), as separable resampling along each resized axis.

Resizing is linear in the data and separable: along one axis, output position `o` is
`sum_j W[o, j] · x[j] + b[o]`, where `W` (output by input) holds the interpolation
coefficients and `b` the extrapolation value of positions outside the input
(`tf_crop_and_resize`). dflow asks ONNX's reference implementation for `W` and `b`
(a one-axis `Resize` with the node's own attributes, run on the identity matrix and
on zeros), so every mode means exactly what the specification's own code computes.
With `keep_aspect_ratio_policy`, one scale (the smallest or largest ratio of `sizes`
to the shape) serves every axis. Each row of `W` has a few nonzero coefficients (1
for nearest, 2 for linear, 4 for cubic, more when antialiasing shrinks): the axis
becomes, per coefficient slot, a `df.gather` of the input at constant indices times
a constant weight, summed. A nearest resize is a bare gather (exact).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import TensorProto, helper

from dflow.dialects import df
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter

RESIZE_ATTRIBUTES = {
    "antialias",
    "axes",
    "coordinate_transformation_mode",
    "cubic_coeff_a",
    "exclude_outside",
    "extrapolation_value",
    "keep_aspect_ratio_policy",
    "mode",
    "nearest_mode",
}

Array = np.ndarray[Any, Any]

CHOICES = {
    "mode": ("nearest", ("nearest", "linear", "cubic")),
    "coordinate_transformation_mode": (
        "half_pixel",
        (
            "half_pixel",
            "half_pixel_symmetric",
            "pytorch_half_pixel",
            "align_corners",
            "asymmetric",
            "tf_half_pixel_for_nearest",
            "tf_crop_and_resize",
        ),
    ),
    "nearest_mode": (
        "round_prefer_floor",
        ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"),
    ),
}
"""The string attributes, their defaults and the values ONNX defines."""


def _checked_attributes(node: Node) -> dict[str, Any]:
    """The node's attributes for the one-axis reference `Resize`, each checked here so
    that a wrong one is this node's one-line error, not the reference's exception."""
    attributes: dict[str, Any] = {}
    for name, (default, allowed) in CHOICES.items():
        value = node.string(name, default)
        if value not in allowed:
            raise node.error(f"{name} {value!r} is not one of {', '.join(allowed)}")
        attributes[name] = value
    for name in ("antialias", "exclude_outside"):
        flag = node.int(name, 0)
        if flag not in (0, 1):
            raise node.error(f"{name} must be 0 or 1, got {flag}")
        attributes[name] = flag
    attributes["cubic_coeff_a"] = node.float("cubic_coeff_a", -0.75)
    attributes["extrapolation_value"] = node.float("extrapolation_value", 0.0)
    return attributes


@converter("Resize", attributes=RESIZE_ATTRIBUTES)
def resize(node: Node) -> list[Tensor]:
    x = node.input(0)
    rank = len(x.shape)
    if str(x.element) not in ("f32", "f64"):
        raise node.error(f"X must be float or double, got {x.element}")
    axes = node.ints("axes")
    chosen = list(range(rank)) if axes is None else [node.axis(a, rank) for a in axes]
    scales, sizes = _scales_and_sizes(node, len(chosen))
    roi = node.constant(1, "roi")
    cropping = node.string("coordinate_transformation_mode", "") == "tf_crop_and_resize"
    if sizes is not None and _policy(node) != "stretch":
        return [_kept_aspect(node, x, chosen, sizes, cropping)]
    for k, axis in enumerate(chosen):
        if x.shape[axis] == 0:  # an empty axis resizes to nothing, by any scale
            if sizes is not None and int(sizes[k]):
                raise node.error(
                    f"axis {axis} of X {list(x.shape)} is empty: it cannot be resized to "
                    f"{int(sizes[k])}"
                )
            continue
        if _unchanged(x.shape[axis], k, scales, sizes) and not cropping:
            continue
        weights, offsets = _resampling(node, x.shape[axis], k, len(chosen), scales, sizes, roi)
        x = _resampled(x, axis, weights, offsets)
    return [x]


def _policy(node: Node) -> str:
    policy = node.string("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise node.error(
            f"keep_aspect_ratio_policy {policy!r} is not one of stretch, not_larger, not_smaller"
        )
    return policy


def _kept_aspect(node: Node, x: Tensor, chosen: list[int], sizes: Array, cropping: bool) -> Tensor:
    """A resize to `sizes` keeping the aspect ratio: every chosen axis scaled by the
    smallest (`not_larger`) or largest (`not_smaller`) of `sizes / shape`, to
    `round_half_up(scale · size)` elements (ONNX's rule)."""
    if cropping:
        raise node.error("keep_aspect_ratio_policy with tf_crop_and_resize is not supported")
    ratios = [int(sizes[k]) / x.shape[axis] for k, axis in enumerate(chosen)]
    pick = min if _policy(node) == "not_larger" else max
    dominant = ratios.index(pick(ratios))
    shape = x.shape
    for k, axis in enumerate(chosen):
        weights = _aspect_weights(node, shape[axis], k, chosen, shape, sizes, dominant)
        x = _resampled(x, axis, weights, np.zeros(weights.shape[0]))
    return x


def _aspect_weights(
    node: Node, size: int, k: int, chosen: list[int], shape: tuple[int, ...], sizes: Array,
    dominant: int,
) -> Array:  # fmt: skip
    """`W` of axis `k` under a kept aspect ratio, from the reference: a 3-D `Resize`
    of a batch of `size` unit vectors (axis 0, untouched) along the dominant axis
    (axis 1, constant data: its rows of weights sum to 1) and this one (axis 2), so
    that the policy picks the node's own scale."""
    from onnx.reference import ReferenceEvaluator  # noqa: PLC0415 (only Resize needs it)

    length = shape[chosen[dominant]]
    wanted = [int(sizes[dominant]), int(sizes[k])]
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], axes=[1, 2],
                          keep_aspect_ratio_policy=_policy(node), **_checked_attributes(node))],
        "axis",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None)],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
        [helper.make_tensor("sizes", TensorProto.INT64, [2], wanted)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", max(node.opset, 18))])
    units = np.broadcast_to(np.eye(size)[:, None, :], (size, length, size))
    reference: Any = ReferenceEvaluator(model)
    rows = np.asarray(reference.run(None, {"x": units})[0])[:, 0, :]
    return rows.T


def _unchanged(size: int, k: int, scales: Array | None, sizes: Array | None) -> bool:
    """Whether axis `k` of the resized ones keeps its size at scale 1 (a no-op)."""
    if sizes is not None:
        return int(sizes[k]) == size
    assert scales is not None
    return float(scales[k]) == 1.0


def _scales_and_sizes(node: Node, count: int) -> tuple[Array | None, Array | None]:
    """The node's `scales` or `sizes` (one of them, known at import), one per axis."""
    scales = node.constant(2, "scales")
    sizes = node.constant(3, "sizes")
    if scales is not None and scales.size == 0:
        scales = None
    if (scales is None) == (sizes is None):
        raise node.error("exactly one of scales and sizes must be given")
    given = scales if scales is not None else sizes
    assert given is not None
    if given.shape != (count,):
        raise node.error(f"scales or sizes has {given.size} values for {count} axes")
    return scales, sizes


def _resampling(
    node: Node, size: int, k: int, count: int, scales: Array | None, sizes: Array | None,
    roi: Array | None,
) -> tuple[Array, Array]:  # fmt: skip
    """`W` (output by input) and `b` (output) of axis `k` of the resized ones, from ONNX's
    reference implementation of this node on one axis."""
    from onnx.reference import ReferenceEvaluator  # noqa: PLC0415 (only Resize needs it)

    attributes = _checked_attributes(node)
    inputs = ["x", "roi", "scales", "sizes"]
    initializers: list[TensorProto] = []
    if roi is not None and roi.size:
        start, end = roi.reshape(-1)[k], roi.reshape(-1)[count + k]
        initializers.append(helper.make_tensor("roi", TensorProto.FLOAT, [4], [0, start, 1, end]))
    else:
        inputs[1] = ""
    if scales is not None:
        initializers.append(
            helper.make_tensor("scales", TensorProto.FLOAT, [2], [1.0, float(scales[k])])
        )
        inputs = inputs[:3]
    else:
        assert sizes is not None
        inputs[2] = ""
        initializers.append(
            helper.make_tensor("sizes", TensorProto.INT64, [2], [size, int(sizes[k])])
        )
    graph = helper.make_graph(
        [helper.make_node("Resize", inputs, ["y"], **attributes)],
        "axis",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None)],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", max(node.opset, 13))])
    reference: Any = ReferenceEvaluator(model)
    offsets = np.asarray(reference.run(None, {"x": np.zeros((size, size))})[0])[0]
    rows = np.asarray(reference.run(None, {"x": np.eye(size)})[0])  # rows[j, o] = W[o, j] + b[o]
    return rows.T - offsets[:, None], offsets


def _resampled(x: Tensor, axis: int, weights: Array, offsets: Array) -> Tensor:
    """`sum_j weights[o, j] · x[..., j, ...] + offsets[o]` along `axis`: a gather and a
    weight per coefficient slot of the rows."""
    dtype = np.float64 if str(x.element) == "f64" else np.float32
    slots = max(1, int((weights != 0).sum(axis=1).max(initial=0)))
    order = np.argsort(weights == 0, axis=1, kind="stable")[:, :slots]  # nonzero columns first
    picked = np.take_along_axis(weights, order, axis=1)
    shape = [weights.shape[0] if d == axis else 1 for d in range(len(x.shape))]
    total: Tensor | None = None
    for slot in range(slots):
        indices = x.graph.constant(order[:, slot].astype(np.int64))
        gathered = x.graph.emit(df.GatherOp(x.value, indices.value, axis))
        weight = picked[:, slot]
        if not np.all(weight == 1.0):
            gathered = gathered * x.graph.constant(weight.astype(dtype).reshape(shape))
        total = gathered if total is None else total + gathered
    assert total is not None
    if np.any(offsets != 0):
        total = total + x.graph.constant(offsets.astype(dtype).reshape(shape))
    return total
