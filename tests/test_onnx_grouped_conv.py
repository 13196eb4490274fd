"""Grouped and depthwise ONNX `Conv` through dflow: each `Conv` imports as one
`df.conv2d` carrying `groups` (no per-group slices and concat), and the interpreter
and the compiled program equal ONNX Runtime (one thread) for 2 and 4 groups and
depthwise convolutions (one and two filters per channel), with strides, pads,
dilations and bias, in float32 (ONNX Runtime has no float64 Conv: float64 is checked
against a NumPy grouped convolution written here); a depthwise-separable stack
(MobileNet's block: pointwise, depthwise, pointwise) imports as one conv2d per Conv
too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from numpy.typing import NDArray
from onnx import ModelProto, TensorProto, helper, numpy_helper
from onnx_models import onnx_runtime

import dflow
from dflow.driver.compilation.interpreted import interpret
from dflow.frontend.onnx import import_model
from dflow.frontend.onnx.errors import OnnxImportError

Array = NDArray[Any]
pytestmark = pytest.mark.usefixtures("module_cache")

GROUPINGS = {
    "2 groups": (8, 6, 2),
    "4 groups": (8, 8, 4),
    "depthwise": (8, 8, 8),
    "depthwise x2": (8, 16, 8),
}
"""Input channels, output channels and `group` of each case."""

WINDOWS: dict[str, dict[str, list[int]]] = {
    "plain": {},
    "strided, padded, dilated": {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2]},
}
"""Conv attributes (ONNX pads: begins then ends, here top, left, bottom, right)."""

ELEMENTS = {"f32": (np.float32, TensorProto.FLOAT), "f64": (np.float64, TensorProto.DOUBLE)}


def _conv_model(
    channels: int, filters: int, group: int, window: dict[str, list[int]], dtype: str
) -> ModelProto:
    """One `Conv` with a bias over a 2 x C x 9 x 8 input."""
    numpy_type, onnx_type = ELEMENTS[dtype]
    rng = np.random.default_rng(group)
    weight = rng.standard_normal((filters, channels // group, 3, 3)).astype(numpy_type)
    bias = rng.standard_normal(filters).astype(numpy_type)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=group, **window)
    graph = helper.make_graph(
        [node],
        "grouped",
        [helper.make_tensor_value_info("x", onnx_type, [2, channels, 9, 8])],
        [helper.make_tensor_value_info("y", onnx_type, None)],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _conv_groups(model: ModelProto, shapes: dict[str, tuple[int, ...]]) -> list[int]:
    """The `groups` of each `df.conv2d` of the imported model (and no concat)."""
    module = import_model(model, shapes)
    assert not [op for op in module.walk() if op.name in ("df.concat", "df.slice")]
    return [op.properties["groups"].value.data for op in module.walk() if op.name == "df.conv2d"]


def _numpy_conv(model: ModelProto, x: Array) -> Array:
    """The model's one grouped Conv in NumPy: each group's windows against its filters."""
    node = model.graph.node[0]
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    w, b = (numpy_helper.to_array(t) for t in model.graph.initializer)
    group = attributes["group"]
    sh, sw = attributes.get("strides", [1, 1])
    top, left, bottom, right = attributes.get("pads", [0, 0, 0, 0])
    dh, dw = attributes.get("dilations", [1, 1])
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    span = (dh * (w.shape[2] - 1) + 1, dw * (w.shape[3] - 1) + 1)
    windows = np.lib.stride_tricks.sliding_window_view(padded, span, axis=(2, 3))
    windows = windows[:, :, ::sh, ::sw, ::dh, ::dw]  # n, c, p, q, i, j
    per_in, per_out = x.shape[1] // group, w.shape[0] // group
    parts = [
        np.einsum(
            "ncpqij,ocij->nopq",
            windows[:, g * per_in : (g + 1) * per_in],
            w[g * per_out : (g + 1) * per_out],
        )
        for g in range(group)
    ]
    return np.concatenate(parts, 1) + b[None, :, None, None]


@pytest.mark.parametrize("dtype", list(ELEMENTS))
@pytest.mark.parametrize("window", list(WINDOWS))
@pytest.mark.parametrize("grouping", list(GROUPINGS))
def test_grouped_conv_matches_onnx_runtime(grouping: str, window: str, dtype: str) -> None:
    channels, filters, group = GROUPINGS[grouping]
    model = _conv_model(channels, filters, group, WINDOWS[window], dtype)
    x = np.random.default_rng(0).standard_normal((2, channels, 9, 8)).astype(ELEMENTS[dtype][0])
    assert _conv_groups(model, {"x": x.shape}) == [group]
    if dtype == "f32":
        (expected,) = onnx_runtime(model, {"x": x})
        np.testing.assert_allclose(_numpy_conv(model, x), expected, rtol=1e-5, atol=1e-5)
    else:
        expected = _numpy_conv(model, x)
    tolerance = {"rtol": 1e-5, "atol": 1e-5} if dtype == "f32" else {"rtol": 1e-12, "atol": 1e-12}
    (interpreted,) = interpret(import_model(model, {"x": x.shape}), "main", [x], None, 60.0)
    np.testing.assert_allclose(interpreted, expected, **tolerance)
    np.testing.assert_allclose(dflow.compile(model)(x), expected, **tolerance)


def _separable_stack() -> ModelProto:
    """Two MobileNet-V2 blocks (expand 1x1, depthwise 3x3 with ReLU, project 1x1)."""
    rng = np.random.default_rng(3)
    nodes: list[onnx.NodeProto] = []
    weights: list[TensorProto] = []
    x = "x"
    for index, (cin, expanded, cout, stride) in enumerate([(4, 12, 6, 2), (6, 18, 6, 1)]):
        for step, (inputs, outputs, k, group) in enumerate(
            [(cin, expanded, 1, 1), (expanded, expanded, 3, expanded), (expanded, cout, 1, 1)]
        ):
            name = f"{index}_{step}"
            shape = (outputs, inputs // group, k, k)
            weights.append(numpy_helper.from_array(rng.standard_normal(shape).astype("f"), name))
            stride_here = stride if step == 1 else 1
            conv = helper.make_node(
                "Conv",
                [x, name],
                [f"c{name}"],
                group=group,
                strides=[stride_here] * 2,
                pads=[k // 2] * 4,
            )
            nodes.append(conv)
            x = f"c{name}"
            if step < 2:
                nodes.append(helper.make_node("Relu", [x], [f"r{name}"]))
                x = f"r{name}"
    graph = helper.make_graph(
        nodes,
        "separable",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16, 16])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_depthwise_separable_stack_is_one_conv2d_per_conv() -> None:
    model = _separable_stack()
    assert _conv_groups(model, {"x": (1, 4, 16, 16)}) == [1, 12, 1, 1, 18, 1]
    x = np.random.default_rng(1).standard_normal((1, 4, 16, 16)).astype(np.float32)
    (expected,) = onnx_runtime(model, {"x": x})
    got = dflow.compile(model)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_a_group_that_does_not_divide_is_refused_in_one_line() -> None:
    model = _conv_model(8, 6, 4, {}, "f32")  # 6 filters in 4 groups
    with pytest.raises(OnnxImportError, match="group=4 does not divide") as error:
        import_model(model, {"x": (2, 8, 9, 8)})
    assert "\n" not in str(error.value)
