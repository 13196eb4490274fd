"""Quantized models through dflow's importer (quantized values are df's i8 and ui8
tensors: `ops/quantization.py`), against ONNX Runtime's own results:

- torchvision's ResNet-18 quantized by `onnxruntime.quantization.quantize_static`
  in the QDQ format (activations UINT8, weights INT8 per channel), calibrated on 4
  random images;
- BERT (transformers, a small config) quantized by `quantize_dynamic` (weights INT8:
  `DynamicQuantizeLinear` + `MatMulInteger`, the embeddings' `Gather` on INT8 tables).

The tolerance is what the quantized kernels warrant. ONNX Runtime fuses each QDQ
group into an integer kernel (`QLinearConv`) that accumulates in i32 and requantizes
with its own float multiplier, where dflow convolves the dequantized values in float:
a value within float rounding of a half-step lands one step away, and the step
propagates. So each logit may differ by one quantization step of the output (the
last DequantizeLinear's scale; measured: a fifth of the 1000 logits differ by
exactly one step, none by more), and the top-1 class is the same. The dynamically
quantized BERT runs the same integer products (exact in i32) and matches to float
rounding (rtol 1e-4).

Quantized values flow anywhere else as the integers they are: INT8 arithmetic wraps
(as ONNX Runtime's does) and an INT8 graph output comes back as int8.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_models import onnx_runtime
from optional import require

import dflow

torch = require("torch", "to export models to ONNX (pip install -e '.[dev]')")
quantization = require("onnxruntime.quantization", "to quantize models")
pytestmark = pytest.mark.usefixtures("module_cache")


def _export(module: Any, x: Any, name: str) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, (torch.from_numpy(x),), buffer, dynamo=False, opset_version=17,
            input_names=[name], output_names=["y"],
        )  # fmt: skip
    return onnx.load_from_string(buffer.getvalue())


class _Images:
    """`quantize_static`'s calibration data: a few random images."""

    def __init__(self, name: str, count: int) -> None:
        rng = np.random.default_rng(5)
        self.batches = iter(
            [{name: rng.standard_normal((1, 3, 224, 224)).astype(np.float32)} for _ in range(count)]
        )

    def get_next(self) -> dict[str, Any] | None:
        return next(self.batches, None)


def test_qdq_resnet18_matches_onnx_runtime(tmp_path: Path) -> None:
    from vision import torchvision  # noqa: PLC0415 (imports torch: after the skip above)

    torch.manual_seed(0)
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    resnet18 = torchvision().models.resnet18().eval()
    onnx.save(_export(resnet18, x, "image"), tmp_path / "float.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantization.quantize_static(
            str(tmp_path / "float.onnx"), str(tmp_path / "qdq.onnx"), _Images("image", 4),
            quant_format=quantization.QuantFormat.QDQ, per_channel=True,
            activation_type=quantization.QuantType.QUInt8,
            weight_type=quantization.QuantType.QInt8,
        )  # fmt: skip
    model = onnx.load(tmp_path / "qdq.onnx")
    ops = {node.op_type for node in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear", "Conv"} <= ops
    (expected,) = onnx_runtime(model, {"image": x})
    actual = dflow.compile(model)(image=x)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    step = _final_scale(model)
    steps = np.abs(actual - expected) / step
    assert float(steps.max()) <= 1 + 1e-4, steps.max()
    assert int(actual.argmax()) == int(expected.argmax())


def _final_scale(model: onnx.ModelProto) -> float:
    """The scale of the last DequantizeLinear before the output (one quantization step
    of the logits)."""
    scales = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    last = [node for node in model.graph.node if node.op_type == "DequantizeLinear"][-1]
    return float(np.max(scales[last.input[1]]))


def test_dynamically_quantized_bert_matches_onnx_runtime(tmp_path: Path) -> None:
    require("transformers", "to build BERT (pip install -e '.[dev]')")
    from model_zoo import BY_NAME  # noqa: PLC0415 (imports transformers: after the skip)

    bert = BY_NAME["bert"]
    ids = bert.input(seed=2)
    onnx.save(_export(bert.module(), ids, "ids"), tmp_path / "f.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantization.quantize_dynamic(
            str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"),
            weight_type=quantization.QuantType.QInt8,
        )  # fmt: skip
    model = onnx.load(tmp_path / "q.onnx")
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= {n.op_type for n in model.graph.node}
    (expected,) = onnx_runtime(model, {"ids": ids})
    actual = dflow.compile(model)(ids=ids)
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * scale)


def _narrow_model(second: str) -> onnx.ModelProto:
    """A QuantizeLinear whose INT8 output goes to `second` (one input, one output)."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node(second, ["q", "q"] if second == "Add" else ["q"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "narrow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [4])],
        [helper.make_tensor("s", TensorProto.FLOAT, [], [0.1]),
         helper.make_tensor("z", TensorProto.INT8, [], [3])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("second", ["Add", "Identity"])
def test_quantized_values_flow_on_as_int8(second: str) -> None:
    """A QuantizeLinear's INT8 output added to itself (wrapping past 127) or given
    out as it is: int8 values, as ONNX Runtime computes them."""
    model = _narrow_model(second)
    x = np.array([1.0, -2.5, 9.0, 12.4], np.float32)  # 9.0 / 0.1 + 3 = 93: 186 wraps
    (expected,) = onnx_runtime(model, {"x": x})
    actual = dflow.compile(model)(x=x)
    assert actual.dtype == np.int8 == expected.dtype
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize(("zero", "data_type"), [(3, TensorProto.INT8), (200, TensorProto.UINT8)])
def test_quantize_then_dequantize_rounds_half_to_even_and_saturates(
    zero: int, data_type: int
) -> None:
    """Against ONNX's reference implementation: halves to even, saturation at both ends."""
    from onnx.reference import ReferenceEvaluator  # noqa: PLC0415

    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
        [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
         helper.make_tensor("z", data_type, [], [zero])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x = np.array([0.25, 0.75, -0.25, -1.25, 100.0, -100.0, 1.0, 2.25], np.float32)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(dflow.compile(model)(x=x), expected)


def _blocked_model(
    op_type: str, x_type: int, shape: tuple[int, ...], block: int, point: Any
) -> Any:
    """`op_type` along axis 1 in blocks of `block` (scale and zero point of the
    blocked shape as initializers)."""
    blocks = -(-shape[1] // block)
    scale_shape = (shape[0], blocks, *shape[2:])
    rng = np.random.default_rng(block)
    scale = (rng.random(scale_shape) * 0.1 + 0.01).astype(np.float32)
    initializers = [onnx.numpy_helper.from_array(scale, "scale")]
    inputs = ["x", "scale"]
    if point is not None:
        initializers.append(onnx.numpy_helper.from_array(np.resize(point, scale_shape), "point"))
        inputs.append("point")
    out_type = TensorProto.FLOAT if op_type == "DequantizeLinear" else initializers[-1].data_type
    node = helper.make_node(op_type, inputs, ["y"], axis=1, block_size=block)
    graph = helper.make_graph(
        [node],
        "blocked",
        [helper.make_tensor_value_info("x", x_type, shape)],
        [helper.make_tensor_value_info("y", out_type, None)],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("block", [2, 3, 8])
def test_blocked_quantization_matches_onnx_runtime(block: int) -> None:
    """QuantizeLinear and DequantizeLinear with `block_size` (the last block short
    where 7 does not divide), per-block scales and zero points, as ONNX Runtime."""
    shape = (3, 7, 2)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    quantize = _blocked_model(
        "QuantizeLinear", TensorProto.FLOAT, shape, block, np.array([3, 250, 128], np.uint8)
    )
    (expected,) = onnx_runtime(quantize, {"x": x})
    np.testing.assert_array_equal(dflow.compile(quantize)(x), expected)
    q = np.random.default_rng(2).integers(0, 255, shape).astype(np.uint8)
    dequantize = _blocked_model(
        "DequantizeLinear", TensorProto.UINT8, shape, block, np.array([7, 200], np.uint8)
    )
    (expected,) = onnx_runtime(dequantize, {"x": q})
    np.testing.assert_allclose(dflow.compile(dequantize)(q), expected, rtol=1e-6)
