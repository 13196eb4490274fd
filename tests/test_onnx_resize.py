"""`Resize` to `sizes` keeping the aspect ratio (`keep_aspect_ratio_policy`
`not_larger`, `not_smaller`), in the modes and on the axes models use, compared with
ONNX Runtime: one scale for every resized axis (the smallest or largest of the
size ratios), each axis `round_half_up(scale · size)` long; and an empty axis."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import onnx_runtime

import dflow
from dflow.frontend.onnx import OnnxImportError, import_model

pytestmark = pytest.mark.usefixtures("module_cache")


def _model(shape: tuple[int, ...], sizes: list[int], axes: list[int], **attributes: Any) -> Any:
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], axes=axes, **attributes)
    graph = helper.make_graph(
        [node],
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("sizes", TensorProto.INT64, [len(sizes)], sizes)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


CASES = {
    "linear_up_hw": ((1, 3, 5, 7), [12, 9], [2, 3], {"mode": "linear"}),
    "linear_down_hw": ((2, 2, 9, 6), [4, 5], [2, 3], {"mode": "linear"}),
    "cubic_hw": ((1, 1, 6, 8), [11, 13], [2, 3], {"mode": "cubic"}),
    "nearest_three_axes": ((1, 4, 3, 5), [6, 7, 9], [1, 2, 3], {"mode": "nearest"}),
    "align_corners": ((1, 1, 4, 6), [9, 10], [3, 2],
                      {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
}  # fmt: skip


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_resize_keeping_the_aspect_ratio_matches_onnx_runtime(case: str, policy: str) -> None:
    shape, sizes, axes, attributes = CASES[case]
    model = _model(shape, sizes, axes, keep_aspect_ratio_policy=policy, **attributes)
    x = np.random.default_rng(len(case)).standard_normal(shape).astype(np.float32)
    (expected,) = onnx_runtime(model, {"x": x})
    actual = dflow.compile(model)(x)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_an_empty_axis_stays_empty_and_cannot_grow() -> None:
    """An axis of size 0 resizes to 0 elements (an empty result, the other axes
    resized); asked for more by `sizes`, the node is refused in one line."""
    model = _model((1, 0, 4, 4), [0, 6, 6], [1, 2, 3], mode="linear")
    actual = dflow.compile(model)(np.zeros((1, 0, 4, 4), np.float32))
    assert actual.shape == (1, 0, 6, 6)
    grown = _model((1, 0, 4, 4), [1, 6, 6], [1, 2, 3], mode="linear")
    with pytest.raises(OnnxImportError) as refused:
        import_model(grown)
    message = refused.value.message
    assert "axis 1 of X [1, 0, 4, 4] is empty: it cannot be resized to 1" in message
    assert "\n" not in message
