"""ONNX's `TopK` (composed from ranks: `frontend/onnx/ops/reductions.py`) against
NumPy's stable sort (an earlier element first among equals, as ONNX says) and ONNX
Runtime: many ties, a middle axis, largest and smallest, integers; and K outside
the axis refused in one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import onnx_runtime

import dflow
from dflow.frontend.onnx import OnnxImportError, import_model

pytestmark = pytest.mark.usefixtures("module_cache")


def _model(shape: tuple[int, ...], k: int, axis: int, largest: int, dtype: Any) -> Any:
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=largest)
    graph = helper.make_graph(
        [node], "topk", [helper.make_tensor_value_info("x", element, shape)],
        [helper.make_tensor_value_info("values", element, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
        [helper.make_tensor("k", TensorProto.INT64, [1], [k])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("shape", "k", "axis", "largest", "dtype"),
    [((4, 9), 3, 1, 1, np.float32), ((4, 9), 9, -1, 0, np.float32), ((3, 7, 5), 4, 1, 1,
     np.float32), ((6, 5), 2, 0, 0, np.int64), ((2, 8), 0, 1, 1, np.float32)],
)  # fmt: skip
def test_top_k_is_a_stable_sort(
    shape: tuple[int, ...], k: int, axis: int, largest: int, dtype: Any
) -> None:
    rng = np.random.default_rng(k + axis)
    x = rng.integers(-3, 4, shape).astype(dtype)  # few values: many ties
    model = _model(shape, k, axis, largest, dtype)
    values, indices = dflow.compile(model)(x=x)
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    want = np.take(order, np.arange(k), axis=axis)
    np.testing.assert_array_equal(indices, want)
    np.testing.assert_array_equal(values, np.take_along_axis(x, want, axis=axis))
    ort_values, ort_indices = onnx_runtime(model, {"x": x})
    np.testing.assert_array_equal(indices, ort_indices)
    np.testing.assert_array_equal(values, ort_values)


def test_k_beyond_the_axis_is_one_line() -> None:
    with pytest.raises(OnnxImportError) as refused:
        import_model(_model((2, 4), 5, 1, 1, np.float32))
    assert "K = 5 is outside [0, 4], the size of axis 1" in refused.value.message
    assert "\n" not in refused.value.message
