"""ONNX's `GatherND` and `ScatterND` (`frontend/onnx/ops/nd_indexing.py`) on what the
backend node tests leave out: negative indices, batch axes, slices of several axes,
indices fed at run time, each against ONNX's reference implementation (an oracle
apart from dflow); and an index out of range, which stops the run with one line
naming the index and the axis it indexes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dflow
from dflow.driver.errors import DflowError

pytestmark = pytest.mark.usefixtures("module_cache")


def _model(node: onnx.NodeProto, inputs: dict[str, Any], output: tuple[int, ...]) -> Any:
    graph = helper.make_graph(
        [node], "nd",
        [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for name, a in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, output)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _check(model: onnx.ModelProto, inputs: dict[str, Any]) -> None:
    (expected,) = ReferenceEvaluator(model).run(None, inputs)
    np.testing.assert_array_equal(dflow.compile(model)(**inputs), expected)


@pytest.mark.parametrize(
    ("data_shape", "index_shape", "batch"),
    [((5, 4, 3), (6, 2), 0), ((5, 4, 3), (2, 3, 1), 0), ((2, 5, 4), (2, 3, 2), 1),
     ((3, 4), (2, 2, 2), 0), ((2, 3, 4, 5), (2, 3, 1, 2), 2)],
)  # fmt: skip
def test_gather_nd_with_negative_indices(
    data_shape: tuple[int, ...], index_shape: tuple[int, ...], batch: int
) -> None:
    rng = np.random.default_rng(sum(data_shape) + batch)
    data = rng.standard_normal(data_shape).astype(np.float32)
    sizes = np.array(data_shape[batch : batch + index_shape[-1]])
    indices = rng.integers(-sizes, sizes, index_shape).astype(np.int64)  # both signs
    node = helper.make_node("GatherND", ["data", "indices"], ["y"], batch_dims=batch)
    output = (*index_shape[:-1], *data_shape[batch + index_shape[-1] :])
    inputs = {"data": data, "indices": indices}
    _check(_model(node, inputs, output), inputs)


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd_with_negative_indices(reduction: str) -> None:
    rng = np.random.default_rng(1)
    data = rng.standard_normal((6, 4, 3)).astype(np.float32)
    indices = np.array([[0, -1], [3, 2], [-6, 0]], np.int64)  # rows 0..5 of 6, 4 columns
    updates = rng.standard_normal((3, 3)).astype(np.float32)
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=reduction)
    inputs = {"data": data, "indices": indices, "updates": updates}
    _check(_model(node, inputs, data.shape), inputs)


def test_an_index_out_of_range_is_one_line() -> None:
    data = np.zeros((5, 4), np.float32)
    node = helper.make_node("GatherND", ["data", "indices"], ["y"])
    indices = np.array([[1, 2], [0, 4]], np.int64)  # 4 is past the 4 columns
    program = dflow.compile(_model(node, {"data": data, "indices": indices}, (2,)))
    with pytest.raises(DflowError) as raised:
        program(data=data, indices=indices)
    assert str(raised.value).endswith("df.gather: index 4 is out of range for axis 0 of size 4")
    assert "\n" not in str(raised.value)
