"""The model zoo (`tests/support/model_zoo.py`), a fast subset in CI: models of each family
(torchvision, timm, transformers, recurrent) not tested elsewhere (ResNet-18 is in
`test_onnx_torch.py` and `test_onnx_float16.py`, BERT and GPT-2 in
`test_onnx_transformers.py`), exported, compiled by dflow and compared with ONNX
Runtime (one thread) and PyTorch within the zoo's tolerance (rtol 1e-3, atol 1e-4 of
the largest magnitude). `python bench/zoo.py` runs every model and times them.
"""

from __future__ import annotations

import pytest
from onnx_models import onnx_runtime
from optional import require

import dflow

require("torch", "to export models to ONNX (pip install -e '.[dev]')")
require("transformers", "to build the transformers models (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")

from model_zoo import BY_NAME, assert_matches  # noqa: E402 (imports torch: after the skips)

SUBSET = (
    "mobilenet_v3_small", "mnasnet0_5", "convnext_atto", "distilbert", "t5_encoder", "vit", "gru"
)  # fmt: skip


@pytest.mark.parametrize("name", SUBSET)
def test_zoo_model_matches_onnx_runtime_and_pytorch(name: str) -> None:
    entry = BY_NAME[name]
    module = entry.module()
    model = entry.export(module)
    x = entry.input(seed=1)
    (expected,) = onnx_runtime(model, {"x": x})
    actual = dflow.compile(model)(x=x)
    assert_matches(actual, expected)
    assert_matches(actual, entry.eager(module, x))
