"""Models converted to float16 (the zoo's ResNet-18, ViT and BERT, `module.half()`
exported by PyTorch with a float16 input: every weight, activation and output is
FLOAT16) import, compile and match ONNX Runtime's own float16 results.

dflow computes each op in float32 and rounds its result to float16 (`df-widen`), as
NumPy's float16 ufuncs do; ONNX Runtime's CPU kernels also compute in float32 but
sum in other orders and fuse other ops, so a value within float32 rounding of a
float16 tie lands one step away, and the step propagates. The tolerance is
therefore in float16 steps: four units in the last place at the output's largest
magnitude (measured: one unit for ResNet-18 and ViT, two for BERT). Values off by
anything a bug would make (a wrong conversion, a lost rounding) are hundreds of
steps away.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import onnx
import pytest
from onnx_models import onnx_runtime
from optional import require

import dflow

torch = require("torch", "to export models to ONNX (pip install -e '.[dev]')")
require("transformers", "to build the transformers models (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")

from model_zoo import BY_NAME  # noqa: E402 (imports torch: after the skips)

UNITS = 4
"""The tolerance, in float16 units in the last place at the largest magnitude."""


def _half_model(name: str) -> tuple[onnx.ModelProto, Any]:
    """The zoo's model `name` in float16, exported at opset 17, and its input."""
    zoo = BY_NAME[name]
    module = zoo.module().half()
    x = zoo.input()
    if x.dtype == np.float32:
        x = x.astype(np.float16)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, (torch.from_numpy(x),), buffer, dynamo=False, opset_version=17,
            input_names=["x"], output_names=["y"],
        )  # fmt: skip
    return onnx.load_from_string(buffer.getvalue()), x


@pytest.mark.parametrize("name", ["resnet18", "vit", "bert"])
def test_float16_model_matches_onnx_runtime(name: str) -> None:
    model, x = _half_model(name)
    weights = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT16]
    assert weights, "the export has float16 weights"
    (expected,) = onnx_runtime(model, {"x": x})
    actual = dflow.compile(model)(x=x)
    assert actual.dtype == expected.dtype == np.float16
    assert actual.shape == expected.shape
    step = float(np.spacing(np.abs(expected).max()))
    difference = np.abs(actual.astype(np.float32) - expected.astype(np.float32)).max()
    assert difference <= UNITS * step, f"{difference} is over {UNITS} steps of {step}"
