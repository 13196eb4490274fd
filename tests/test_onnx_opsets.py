"""The forms an op takes across opsets, against ONNX Runtime.

The backend node tests are written at the newest opsets; models in use are
exported at 11 to 17, where `axes` is an attribute rather than an input (the
reductions before 13 and 18, `Squeeze`/`Unsqueeze` before 13), `Softmax` and
`LogSoftmax` flatten around their axis before 13, and `Clip` and `Slice` take
optional inputs. Each case is one node at one opset: its first input fed, its
other inputs initializers; dflow's interpreter and compiled program must both
give what ONNX Runtime gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from onnx import ModelProto, TensorProto, helper, numpy_helper
from onnx_models import onnx_runtime

import dflow
from dflow.driver.compilation.interpreted import interpret
from dflow.frontend.onnx import import_model

Array = NDArray[Any]
pytestmark = pytest.mark.usefixtures("module_cache")
SHAPES = {"squeeze": (1, 6, 1, 4)}
"""The fed input's shape where it is not (2, 3, 4)."""


def single_node(
    op: str, opset: int, x: Array, constants: list[Array | None], **attributes: Any
) -> ModelProto:
    """`op` on the fed input `x` and the initializers `constants` (None: an omitted
    optional input), one output `y` of unknown shape."""
    names = ["x"]
    initializers = []
    for index, value in enumerate(constants):
        if value is None:
            names.append("")
            continue
        names.append(f"c{index}")
        initializers.append(numpy_helper.from_array(value, f"c{index}"))
    node = helper.make_node(op, names, ["y"], **attributes)
    graph = helper.make_graph(
        [node],
        f"{op.lower()}_{opset}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def axes(*values: int) -> Array:
    return np.array(values, np.int64)


CASES: dict[str, tuple[str, int, list[Array | None], dict[str, Any]]] = {
    "reduce_sum_11_attribute": ("ReduceSum", 11, [], {"axes": [0, -1], "keepdims": 0}),
    "reduce_sum_11_all": ("ReduceSum", 11, [], {}),
    "reduce_sum_13_input": ("ReduceSum", 13, [axes(1)], {"keepdims": 1}),
    "reduce_sum_13_no_axes": ("ReduceSum", 13, [], {"keepdims": 0}),
    "reduce_sum_13_noop": ("ReduceSum", 13, [axes()], {"noop_with_empty_axes": 1}),
    "reduce_mean_11": ("ReduceMean", 11, [], {"axes": [1]}),
    "reduce_mean_13": ("ReduceMean", 13, [], {"axes": [-2, 2], "keepdims": 0}),
    "reduce_mean_18_input": ("ReduceMean", 18, [axes(0, 2)], {}),
    "reduce_max_11": ("ReduceMax", 11, [], {"axes": [2], "keepdims": 0}),
    "reduce_max_18_input": ("ReduceMax", 18, [axes(-1)], {"keepdims": 1}),
    "softmax_11_axis_1": ("Softmax", 11, [], {"axis": 1}),
    "softmax_11_default": ("Softmax", 11, [], {}),
    "softmax_13_axis_1": ("Softmax", 13, [], {"axis": 1}),
    "softmax_13_default": ("Softmax", 13, [], {}),
    "log_softmax_11_axis_0": ("LogSoftmax", 11, [], {"axis": 0}),
    "log_softmax_13_axis_1": ("LogSoftmax", 13, [], {"axis": 1}),
    "unsqueeze_11": ("Unsqueeze", 11, [], {"axes": [0, -1]}),
    "unsqueeze_13": ("Unsqueeze", 13, [axes(1, 4)], {}),
    "squeeze_11": ("Squeeze", 11, [], {"axes": [0, 2]}),
    "squeeze_11_all": ("Squeeze", 11, [], {}),
    "squeeze_13": ("Squeeze", 13, [axes(-2)], {}),
    "slice_11_negative_steps": (
        "Slice",
        11,
        [axes(-1, 3), axes(-5, 0), axes(2, 1), axes(-1, -2)],
        {},
    ),
    "slice_11_no_axes": ("Slice", 11, [axes(1, 0), axes(2, 100)], {}),
    "slice_13_steps": ("Slice", 13, [axes(0), axes(4), axes(-1), axes(2)], {}),
    "clip_11_min_only": ("Clip", 11, [np.float32(-0.25), None], {}),
    "clip_11_max_only": ("Clip", 11, [None, np.float32(0.3)], {}),
    "clip_13_both": ("Clip", 13, [np.float32(-1), np.float32(1)], {}),
    "flatten_11_axis_0": ("Flatten", 11, [], {"axis": 0}),
    "flatten_13_axis_minus_1": ("Flatten", 13, [], {"axis": -1}),
    "reshape_11_zero_and_minus_one": ("Reshape", 11, [axes(0, -1)], {}),
    "reshape_14_allowzero": ("Reshape", 14, [axes(4, 0, 2)], {"allowzero": 0}),
    "transpose_11_default": ("Transpose", 11, [], {}),
    "leaky_relu_6": ("LeakyRelu", 6, [], {"alpha": 0.2}),
    "dropout_12_inference": ("Dropout", 12, [np.float32(0.5)], {}),
    "batch_norm_9": ("BatchNormalization", 9, [], {}),
}
"""Each case: the op, its opset, its initializers, its attributes."""


@pytest.mark.parametrize("name", sorted(CASES))
def test_form_matches_onnx_runtime(name: str) -> None:
    op, opset, constants, attributes = CASES[name]
    if op == "BatchNormalization":  # scale, bias, mean, variance over the channels
        rng = np.random.default_rng(1)
        constants = [rng.uniform(0.5, 2.0, 3).astype(np.float32) for _ in range(4)]
    shape = SHAPES.get(name.split("_", maxsplit=1)[0], (2, 3, 4))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    model = single_node(op, opset, x, constants, **attributes)
    (expected,) = onnx_runtime(model, {"x": x})
    module = import_model(model)
    (interpreted,) = interpret(module.clone(), "main", [x], None, 10.0)
    compiled = dflow.compile(module)(x)
    for actual in (interpreted, compiled):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)
