"""Recurrent layers (`RNN`, `GRU`, `LSTM`) through dflow's importer, unrolled over their
static sequence: PyTorch's `nn.RNN`/`nn.GRU`/`nn.LSTM` exported by `torch.onnx.export`
(forward and bidirectional, two layers, `batch_first`, initial states fed), compiled and
compared with ONNX Runtime (one thread) and PyTorch; and hand-made nodes for what
PyTorch does not export (reverse alone, `linear_before_reset=0`, peepholes, `clip`,
other activations, `layout=1`) against ONNX's reference implementation and ONNX
Runtime. Refusals are one line each.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnx_models import assert_close, onnx_runtime
from optional import require

import dflow
from dflow.frontend.onnx import OnnxImportError, import_model

torch = require("torch", "to export models to ONNX (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")

SEQUENCE, BATCH, FEATURES, HIDDEN = 5, 3, 4, 6


class Recurrent(torch.nn.Module):
    """A recurrent layer fed its initial states; every output returned."""

    def __init__(self, kind: str, bidirectional: bool, batch_first: bool) -> None:
        super().__init__()
        layer = getattr(torch.nn, kind)
        self.kind = kind
        self.layer = layer(
            FEATURES, HIDDEN, num_layers=2, bidirectional=bidirectional, batch_first=batch_first
        )

    def forward(self, x: Any, h: Any, c: Any) -> Any:
        if self.kind == "LSTM":
            y, (h, c) = self.layer(x, (h, c))
            return y, h, c
        y, h = self.layer(x, h)
        return y, h


def _export(module: Any, inputs: tuple[Any, ...], names: list[str]) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, inputs, buffer, dynamo=False, opset_version=17,
            input_names=["x", "h", "c"], output_names=names,
        )  # fmt: skip
    return onnx.load_from_string(buffer.getvalue())


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize(("bidirectional", "batch_first"), [(False, False), (True, True)])
def test_exported_layer_matches_onnx_runtime_and_pytorch(
    kind: str, bidirectional: bool, batch_first: bool
) -> None:
    torch.manual_seed(len(kind))
    module = Recurrent(kind, bidirectional, batch_first).eval()
    rng = np.random.default_rng(0)
    shape = (BATCH, SEQUENCE, FEATURES) if batch_first else (SEQUENCE, BATCH, FEATURES)
    states = (2 * (2 if bidirectional else 1), BATCH, HIDDEN)
    x, h, c = (rng.standard_normal(s).astype(np.float32) for s in (shape, states, states))
    names = ["y", "h_n", "c_n"][: 3 if kind == "LSTM" else 2]
    model = _export(module, tuple(torch.from_numpy(a) for a in (x, h, c)), names)
    assert kind in {node.op_type for node in model.graph.node}
    feeds = {i.name: a for i, a in zip(model.graph.input, (x, h, c), strict=False)}
    expected = onnx_runtime(model, feeds)
    with torch.no_grad():
        eager = [t.numpy() for t in module(*(torch.from_numpy(a) for a in (x, h, c)))]
    actual = dflow.compile(model)(**feeds)
    for got, want, torch_value in zip(actual, expected, eager, strict=True):
        assert_close(got, want)
        assert_close(got, torch_value)


def _node_model(op: str, gates: int, attributes: dict[str, Any], inputs: list[str]) -> Any:
    """One recurrent node over float inputs of ONNX's shapes, every output asked."""
    directions = 2 if attributes.get("direction") == "bidirectional" else 1
    layout = attributes.get("layout", 0)
    x_shape = [BATCH, SEQUENCE, FEATURES] if layout else [SEQUENCE, BATCH, FEATURES]
    state = [BATCH, directions, HIDDEN] if layout else [directions, BATCH, HIDDEN]
    shapes = {
        "X": x_shape,
        "W": [directions, gates * HIDDEN, FEATURES],
        "R": [directions, gates * HIDDEN, HIDDEN],
        "B": [directions, 2 * gates * HIDDEN],
        "initial_h": state,
        "initial_c": state,
        "P": [directions, 3 * HIDDEN],
    }
    names = ["X", "W", "R", "B", "", "initial_h", "initial_c", "P"]
    used = [n if n in inputs else "" for n in names]
    while used and not used[-1]:
        used.pop()
    outputs = ["Y", "Y_h", "Y_c"][: 3 if op == "LSTM" else 2]
    node = helper.make_node(op, used, outputs, hidden_size=HIDDEN, **attributes)
    graph = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rng = np.random.default_rng(1)
    feeds = {n: (rng.standard_normal(shapes[n]) * 0.7).astype(np.float32) for n in inputs}
    return model, feeds


NODES = [
    ("RNN", 1, {"direction": "reverse"}, ["X", "W", "R", "B", "initial_h"]),
    ("RNN", 1, {"activations": ["Relu"]}, ["X", "W", "R"]),
    ("GRU", 3, {"direction": "reverse", "linear_before_reset": 0}, ["X", "W", "R", "B"]),
    ("GRU", 3, {"linear_before_reset": 1, "layout": 1}, ["X", "W", "R", "B", "initial_h"]),
    ("GRU", 3, {"direction": "bidirectional", "clip": 0.5}, ["X", "W", "R"]),
    ("LSTM", 4, {"direction": "reverse"}, ["X", "W", "R", "B", "initial_h", "initial_c"]),
    ("LSTM", 4, {}, ["X", "W", "R", "B", "initial_h", "initial_c", "P"]),
    (
        "LSTM",
        4,
        {
            "activations": ["HardSigmoid", "LeakyRelu", "Softsign"],
            "activation_alpha": [0.3, 0.2],
            "activation_beta": [0.4],
        },
        ["X", "W", "R"],
    ),
]


@pytest.mark.parametrize(("op", "gates", "attributes", "inputs"), NODES)
def test_node_matches_onnx_runtime(
    op: str, gates: int, attributes: dict[str, Any], inputs: list[str]
) -> None:
    """Against ONNX Runtime; `layout=1`, which it refuses, against ONNX's reference
    implementation (which ignores `clip` and the activations' parameters, where
    ONNX Runtime and dflow agree)."""
    model, feeds = _node_model(op, gates, attributes, inputs)
    if attributes.get("layout"):
        expected = ReferenceEvaluator(model).run(None, feeds)
    else:
        expected = onnx_runtime(model, feeds)
    actual = dflow.compile(model)(**feeds)
    for got, want in zip(actual, expected, strict=True):
        assert_close(got, np.asarray(want, dtype=np.float32))


def test_shorter_sequences_are_refused_in_one_line() -> None:
    model, _ = _node_model("GRU", 3, {}, ["X", "W", "R"])
    lengths = helper.make_tensor("lengths", TensorProto.INT32, [BATCH], [SEQUENCE, 2, SEQUENCE])
    model.graph.initializer.append(lengths)
    node = model.graph.node[0]
    node.input.extend(["", "lengths"][len(node.input) - 3 :])
    with pytest.raises(OnnxImportError) as refused:
        import_model(model)
    assert "sequence_lens [5, 2, 5] differ from the sequence length 5" in refused.value.message
    assert "\n" not in refused.value.message


def test_an_unknown_activation_is_refused_in_one_line() -> None:
    model, _ = _node_model("RNN", 1, {"activations": ["Swish"]}, ["X", "W", "R"])
    with pytest.raises(OnnxImportError, match="activation 'Swish' is not one ONNX defines"):
        import_model(model)
