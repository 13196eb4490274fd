"""`MaxPool`'s `Indices` output (`df.max_pool2d_indices` and the offset of each
plane), compared with ONNX Runtime's over both storage orders, 1-D and 2-D inputs,
pads on either side, strides, `ceil_mode` and integer inputs; refused in one line
for a dilated window."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import onnx_runtime

import dflow
from dflow.frontend.onnx import OnnxImportError, import_model

pytestmark = pytest.mark.usefixtures("module_cache")

CASES: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 7, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 5, 5), {"kernel_shape": [2, 2], "pads": [0, 0, 1, 1]}),
    ((2, 3, 9), {"kernel_shape": [2], "strides": [2], "ceil_mode": 1}),
    ((1, 4, 6, 8), {"kernel_shape": [2, 3], "strides": [2, 1], "ceil_mode": 1}),
]


def _model(shape: tuple[int, ...], element: int, **attributes: Any) -> Any:
    node = helper.make_node("MaxPool", ["x"], ["y", "indices"], **attributes)
    graph = helper.make_graph(
        [node],
        "pool",
        [helper.make_tensor_value_info("x", element, shape)],
        [
            helper.make_tensor_value_info("y", element, None),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])))
def test_indices_are_onnx_runtimes(case: Any, storage_order: int) -> None:
    shape, attributes = case
    model = _model(shape, TensorProto.FLOAT, storage_order=storage_order, **attributes)
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    values, indices = dflow.compile(model)(x)
    expected_values, expected_indices = onnx_runtime(model, {"x": x})
    np.testing.assert_array_equal(values, expected_values)
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, expected_indices)


def test_indices_of_integers_are_onnx_runtimes() -> None:
    """INT8 (pooled in f64): distinct values, so no tie decides the index."""
    shape = (1, 2, 6, 6)
    model = _model(shape, TensorProto.INT8, kernel_shape=[2, 2], strides=[2, 2])
    rng = np.random.default_rng(3)
    x = rng.permutation(np.arange(-36, 36, dtype=np.int8)).reshape(shape)
    values, indices = dflow.compile(model)(x)
    expected_values, expected_indices = onnx_runtime(model, {"x": x})
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)


def test_indices_of_a_dilated_window_are_refused_in_one_line() -> None:
    model = _model((1, 2, 8, 8), TensorProto.FLOAT, kernel_shape=[2, 2], dilations=[2, 2])
    with pytest.raises(OnnxImportError) as refused:
        import_model(model)
    message = refused.value.message
    assert "Indices output of a dilated MaxPool" in message and "\n" not in message
