"""3-D `MaxPool` and `AveragePool` (N, C, D, H, W) import as two 2-D pools
(`windows.separable_3d`), compared with ONNX Runtime's own 3-D kernels (with NumPy's
windows where ONNX Runtime refuses the model, a `SAME_UPPER` MaxPool; ONNX's
reference evaluator gets `SAME_*` pads wrong) over the
window attributes the 2-D stages must each resolve for their axes: explicit pads
on every side, `SAME_UPPER`/`SAME_LOWER`, strides, dilations, `ceil_mode` and
`count_include_pad`; integer maxima; and a refused Indices output."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import onnx_runtime

import dflow
from dflow.frontend.onnx import OnnxImportError, import_model

pytestmark = pytest.mark.usefixtures("module_cache")

SHAPE = (2, 3, 7, 6, 9)


def _model(op_type: str, element: int, outputs: int = 1, **attributes: Any) -> Any:
    names = ["y", "indices"][:outputs]
    node = helper.make_node(op_type, ["x"], names, **attributes)
    graph = helper.make_graph(
        [node],
        "pool3d",
        [helper.make_tensor_value_info("x", element, SHAPE)],
        [
            helper.make_tensor_value_info("y", element, None),
            *[helper.make_tensor_value_info("indices", TensorProto.INT64, None)][: outputs - 1],
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


WINDOWS = {
    "plain": {"kernel_shape": [2, 3, 2]},
    "pads_strides": {"kernel_shape": [3, 2, 3], "strides": [2, 1, 2], "pads": [1, 0, 2, 1, 1, 0]},
    "same_upper": {"kernel_shape": [3, 3, 2], "strides": [2, 2, 3], "auto_pad": "SAME_UPPER"},
    "same_lower": {"kernel_shape": [2, 3, 4], "strides": [1, 2, 2], "auto_pad": "SAME_LOWER"},
    "ceil_dilated": {"kernel_shape": [2, 2, 3], "strides": [2, 3, 2], "dilations": [2, 1, 2],
                     "ceil_mode": 1, "pads": [1, 1, 0, 0, 1, 1]},
}  # fmt: skip


@pytest.mark.parametrize("window", sorted(WINDOWS))
@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
def test_3d_pool_matches_the_reference(op_type: str, window: str) -> None:
    attributes = dict(WINDOWS[window])
    if op_type == "MaxPool" and "dilations" not in attributes:
        attributes["storage_order"] = 0
    x = np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)
    includes = [0, 1] if op_type == "AveragePool" else [None]
    for include in includes:
        extra = {} if include is None else {"count_include_pad": include}
        model = _model(op_type, TensorProto.FLOAT, **attributes, **extra)
        if op_type == "MaxPool" and window == "same_upper":
            expected = _same_upper_max_pool(x, attributes["kernel_shape"], attributes["strides"])
        else:
            (expected,) = onnx_runtime(model, {"x": x})
        actual = dflow.compile(model)(x)
        assert actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def _same_upper_max_pool(x: Any, kernel: list[int], strides: list[int]) -> Any:
    """NumPy's 3-D max pool with `SAME_UPPER` pads: `ceil(size / stride)` outputs per
    axis, the padding (-inf) split evenly, the odd element at the end."""
    pads = [(0, 0), (0, 0)]
    for size, k, s in zip(x.shape[2:], kernel, strides, strict=True):
        total = max(0, (-(-size // s) - 1) * s + k - size)
        pads.append((total // 2, total - total // 2))
    padded = np.pad(x, pads, constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, kernel, axis=(2, 3, 4))
    return windows[:, :, :: strides[0], :: strides[1], :: strides[2]].max(axis=(5, 6, 7))


def test_3d_max_pool_of_integers_is_exact() -> None:
    x = np.random.default_rng(6).integers(0, 255, SHAPE).astype(np.uint8)
    model = _model("MaxPool", TensorProto.UINT8, kernel_shape=[2, 2, 3], strides=[1, 2, 2])
    (expected,) = onnx_runtime(model, {"x": x})
    np.testing.assert_array_equal(dflow.compile(model)(x), expected)


def test_3d_max_pool_with_indices_is_refused_in_one_line() -> None:
    model = _model("MaxPool", TensorProto.FLOAT, outputs=2, kernel_shape=[2, 2, 2])
    with pytest.raises(OnnxImportError) as refused:
        import_model(model)
    assert "Indices" in refused.value.message and "\n" not in refused.value.message


def test_a_3d_pool_with_2d_attributes_is_one_line() -> None:
    model = _model("AveragePool", TensorProto.FLOAT, kernel_shape=[2, 2])
    with pytest.raises(OnnxImportError) as refused:
        import_model(model)
    message = refused.value.message
    assert "3 values of kernel_shape" in message and "\n" not in message
