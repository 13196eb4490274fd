"""Language models as transformers builds them from a small config (random weights, no
download), exported by `torch.onnx.export` (TorchScript's exporter, opset 17) and run
compiled by dflow against ONNX Runtime (one thread) and PyTorch itself: BERT (token
ids fed at run time through `Gather`, the attention mask made with `Where`, `Expand`
and `GatherElements`, `LayerNormalization`, `Erf`) and GPT-2 (its causal mask from
`Trilu`, `Split` heads, `Gemm`, the tanh GELU).
"""

from __future__ import annotations

import pytest
from onnx_models import assert_close, onnx_runtime
from optional import require

import dflow

torch = require("torch", "to export models to ONNX (pip install -e '.[dev]')")
transformers = require("transformers", "to build BERT and GPT-2 (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")

from model_zoo import BY_NAME  # noqa: E402 (imports torch: after the skips)


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("bert", {"Gather", "GatherElements", "LayerNormalization", "Where", "Erf"}),
        ("gpt2", {"Gather", "Trilu", "Split", "LayerNormalization", "Gemm"}),
    ],
)
def test_language_model_matches_onnx_runtime_and_pytorch(name: str, ops: set[str]) -> None:
    """The zoo's BERT and GPT-2 (`tests/support/model_zoo.py`), token ids fed as `x`."""
    entry = BY_NAME[name]
    module = entry.module()
    model = entry.export(module)
    assert ops <= {node.op_type for node in model.graph.node}
    ids = entry.input(seed=0)
    (expected,) = onnx_runtime(model, {"x": ids})
    program = dflow.compile(model)
    actual = program(x=ids)
    assert_close(actual, expected)
    assert_close(actual, entry.eager(module, ids))
    other = entry.input(seed=1)
    (expected,) = onnx_runtime(model, {"x": other})
    assert_close(program(x=other), expected)  # the same program, other tokens
