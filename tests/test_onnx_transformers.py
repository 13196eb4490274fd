"""Language models as transformers builds them from a small config (random weights, no
download), exported by `torch.onnx.export` (TorchScript's exporter, opset 17) and run
compiled by dflow against ONNX Runtime (one thread) and PyTorch itself: BERT (token
ids fed at run time through `Gather`, the attention mask made with `Where`, `Expand`
and `GatherElements`, `LayerNormalization`, `Erf`) and GPT-2 (its causal mask from
`Trilu`, `Split` heads, `Gemm`, the tanh GELU).
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import ModelProto
from onnx_models import assert_close, onnx_runtime
from optional import require

import dflow

torch = require("torch", "to export models to ONNX (pip install -e '.[dev]')")
transformers = require("transformers", "to build BERT and GPT-2 (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")

VOCABULARY, SEQUENCE = 100, 16


class LastHidden(torch.nn.Module):
    """The model's last hidden state from token ids (the export's one input)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: Any) -> Any:
        return self.model(input_ids=ids).last_hidden_state


def bert() -> Any:
    config = transformers.BertConfig(
        vocab_size=VOCABULARY, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64,
    )  # fmt: skip
    return transformers.BertModel(config)


def gpt2() -> Any:
    config = transformers.GPT2Config(
        vocab_size=VOCABULARY, n_embd=32, n_layer=2, n_head=2, n_positions=64,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return transformers.GPT2Model(config)


def export(module: Any, ids: Any) -> ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, (torch.from_numpy(ids),), buffer, dynamo=False, opset_version=17,
            input_names=["ids"], output_names=["hidden"],
        )  # fmt: skip
    return onnx.load_from_string(buffer.getvalue())


@pytest.mark.parametrize(
    ("build", "ops"),
    [
        (bert, {"Gather", "GatherElements", "LayerNormalization", "Where", "Erf"}),
        (gpt2, {"Gather", "Trilu", "Split", "LayerNormalization", "Gemm"}),
    ],
)
def test_language_model_matches_onnx_runtime_and_pytorch(build: Any, ops: set[str]) -> None:
    torch.manual_seed(0)
    module = LastHidden(build()).eval()
    ids = np.random.default_rng(0).integers(0, VOCABULARY, (2, SEQUENCE))
    model = export(module, ids)
    assert ops <= {node.op_type for node in model.graph.node}
    (expected,) = onnx_runtime(model, {"ids": ids})
    with torch.no_grad():
        eager = module(torch.from_numpy(ids)).numpy()
    program = dflow.compile(model)
    actual = program(ids=ids)
    assert_close(actual, expected)
    assert_close(actual, eager)
    other = np.random.default_rng(1).integers(0, VOCABULARY, (2, SEQUENCE))
    (expected,) = onnx_runtime(model, {"ids": other})
    assert_close(program(ids=other), expected)  # the same program, other tokens
