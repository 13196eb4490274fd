"""Models converted to float16 (the zoo's ResNet-18, ViT and BERT, `module.half()`
exported by PyTorch with a float16 input: every weight, activation and output is
FLOAT16) import, compile and match ONNX Runtime's own float16 results.

dflow computes each op in float32 and rounds its result to float16 (`df-widen`), as
NumPy's float16 ufuncs do; ONNX Runtime's CPU kernels also compute in float32 but
sum in other orders and fuse other ops, so a value within float32 rounding of a
float16 tie lands one step away, and the step propagates. The tolerance is
therefore in float16 steps: four units in the last place at the output's largest
magnitude (`model_zoo.HALF_STEPS`; measured: one unit for ResNet-18 and ViT, two
for BERT). Values off by
anything a bug would make (a wrong conversion, a lost rounding) are hundreds of
steps away.
"""

from __future__ import annotations

import onnx
import pytest
from onnx_models import onnx_runtime
from optional import require

import dflow

torch = require("torch", "to export models to ONNX (pip install -e '.[dev]')")
require("transformers", "to build the transformers models (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")

from model_zoo import BY_NAME, assert_matches_half  # noqa: E402 (imports torch: after the skips)


@pytest.mark.parametrize("name", ["resnet18", "vit", "bert"])
def test_float16_model_matches_onnx_runtime(name: str) -> None:
    zoo = BY_NAME[name]
    module, x = zoo.half()
    model = zoo.export(module, x)
    weights = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT16]
    assert weights, "the export has float16 weights"
    (expected,) = onnx_runtime(model, {"x": x})
    assert_matches_half(dflow.compile(model)(x=x), expected)
