"""Whole ONNX models built with `onnx.helper`, as exporters write them, with seeded
random weights: an MLP, a LeNet-style CNN (flattened by PyTorch's
`Shape → Gather → Unsqueeze → Concat → Reshape` idiom), and a transformer encoder
layer (LayerNorm written out, multi-head attention with computed reshapes, an
Erf-based GELU as PyTorch exports it).

Each builder returns a checked `ModelProto` whose first input has a symbolic
batch dimension `N`. `onnx_runtime` runs a model in ONNX Runtime on one thread, the
reference whole-model tests compare dflow with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from numpy.typing import NDArray
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

Array = NDArray[Any]
RTOL = 1e-4
"""The tolerance of whole models against ONNX Runtime."""
OPSET = 17


@dataclass
class Builder:
    """Nodes and initializers of one graph; names are made unique by a counter."""

    seed: int
    nodes: list[NodeProto] = field(default_factory=list[NodeProto])
    initializers: list[TensorProto] = field(default_factory=list[TensorProto])
    count: int = 0

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def weight(self, shape: Sequence[int], scale: float | None = None) -> str:
        """A float initializer, He-scaled by its fan-in unless `scale` is given."""
        fan_in = math.prod(shape[1:]) if len(shape) > 1 else shape[0]
        std = math.sqrt(2.0 / fan_in) if scale is None else scale
        array = (self.rng.standard_normal(shape) * std).astype(np.float32)
        return self.constant(array, "w")

    def constant(self, array: Array, stem: str = "c") -> str:
        name = self.name(stem)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.constant(np.asarray(values, dtype=np.int64), "shape")

    def op(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attributes: Any) -> str:
        """Add a node; its first output's name."""
        names = [self.name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, **attributes))
        return names[0]

    def model(
        self, inputs: Sequence[onnx.ValueInfoProto], outputs: Sequence[onnx.ValueInfoProto]
    ) -> ModelProto:
        graph = helper.make_graph(self.nodes, "model", inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model)
        return model


def _io(name: str, shape: Sequence[int | str]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def _rename_output(b: Builder, value: str, name: str) -> None:
    b.nodes.append(helper.make_node("Identity", [value], [name]))


# ----------------------------------------------------------------------------- MLP


def mlp(seed: int = 0, sizes: Sequence[int] = (64, 128, 64, 10)) -> ModelProto:
    """Gemm layers with ReLU between them and a softmax at the end."""
    b = Builder(seed)
    x = "input"
    for i, (n_in, n_out) in enumerate(pairwise(sizes)):
        x = b.op("Gemm", [x, b.weight((n_out, n_in)), b.weight((n_out,), 0.1)], transB=1)
        if i < len(sizes) - 2:
            x = b.op("Relu", [x])
    _rename_output(b, b.op("Softmax", [x], axis=-1), "probabilities")
    return b.model([_io("input", ["N", sizes[0]])], [_io("probabilities", ["N", sizes[-1]])])


# ----------------------------------------------------------------------------- LeNet


def _flatten_like_pytorch(b: Builder, x: str) -> str:
    """`x.view(x.size(0), -1)` as PyTorch's exporter writes it."""
    shape = b.op("Shape", [x])
    batch = b.op("Gather", [shape, b.constant(np.array(0, dtype=np.int64))], axis=0)
    batch = b.op("Unsqueeze", [batch, b.ints([0])])
    target = b.op("Concat", [batch, b.ints([-1])], axis=0)
    return b.op("Reshape", [x, target])


def lenet(seed: int = 0) -> ModelProto:
    """Conv 5x5 → ReLU → MaxPool → Conv 5x5 → ReLU → AveragePool → flatten → Gemm
    → ReLU → Gemm, on 1x28x28 images."""
    b = Builder(seed)
    x = b.op("Conv", ["image", b.weight((6, 1, 5, 5)), b.weight((6,), 0.1)], pads=[2, 2, 2, 2])
    x = b.op("MaxPool", [b.op("Relu", [x])], kernel_shape=[2, 2], strides=[2, 2])
    x = b.op("Conv", [x, b.weight((16, 6, 5, 5)), b.weight((16,), 0.1)])
    x = b.op("AveragePool", [b.op("Relu", [x])], kernel_shape=[2, 2], strides=[2, 2])
    x = _flatten_like_pytorch(b, x)
    x = b.op("Relu", [b.op("Gemm", [x, b.weight((120, 400)), b.weight((120,), 0.1)], transB=1)])
    x = b.op("Gemm", [x, b.weight((84, 120)), b.weight((84,), 0.1)], transB=1)
    x = b.op("Gemm", [b.op("Relu", [x]), b.weight((10, 84)), b.weight((10,), 0.1)], transB=1)
    _rename_output(b, x, "logits")
    return b.model([_io("image", ["N", 1, 28, 28])], [_io("logits", ["N", 10])])


# ----------------------------------------------------------------------------- transformer


def _layer_norm(b: Builder, x: str, width: int) -> str:
    """LayerNorm over the last axis, written out as opset-17 exports before
    LayerNormalization: (x - mean) / sqrt(var + eps) * gamma + beta."""
    mean = b.op("ReduceMean", [x], axes=[-1], keepdims=1)
    centered = b.op("Sub", [x, mean])
    square = b.op("Pow", [centered, b.constant(np.array(2.0, np.float32))])
    var = b.op("ReduceMean", [square], axes=[-1], keepdims=1)
    std = b.op("Sqrt", [b.op("Add", [var, b.constant(np.array(1e-5, np.float32))])])
    normed = b.op("Div", [centered, std])
    gamma = b.constant((1 + 0.1 * b.rng.standard_normal(width)).astype(np.float32), "gamma")
    beta = b.constant((0.1 * b.rng.standard_normal(width)).astype(np.float32), "beta")
    return b.op("Add", [b.op("Mul", [normed, gamma]), beta])


def _dense(b: Builder, x: str, n_in: int, n_out: int) -> str:
    y = b.op("MatMul", [x, b.weight((n_in, n_out), 1 / math.sqrt(n_in))])
    return b.op("Add", [y, b.weight((n_out,), 0.02)])


def _heads(b: Builder, x: str, heads: int, order: Sequence[int]) -> str:
    """(N, S, D) → (N, heads, S, D/heads) permuted by `order`, the target shape
    computed from `Shape` as exporters do."""
    shape = b.op("Shape", [x])
    leading = b.op("Slice", [shape, b.ints([0]), b.ints([2]), b.ints([0])])
    target = b.op("Concat", [leading, b.ints([heads, -1])], axis=0)
    return b.op("Transpose", [b.op("Reshape", [x, target])], perm=list(order))


def _gelu_erf(b: Builder, x: str) -> str:
    """x * 0.5 * (1 + erf(x / sqrt(2))), as PyTorch exports nn.GELU before opset 20."""
    scaled = b.op("Div", [x, b.constant(np.array(math.sqrt(2), np.float32))])
    one_plus = b.op("Add", [b.op("Erf", [scaled]), b.constant(np.array(1.0, np.float32))])
    half = b.op("Mul", [x, b.constant(np.array(0.5, np.float32))])
    return b.op("Mul", [half, one_plus])


def transformer_layer(
    seed: int = 0, sequence: int = 16, width: int = 64, heads: int = 4
) -> ModelProto:
    """A pre-norm encoder layer: x + attention(LN(x)), then + MLP(LN(.)) with GELU."""
    b = Builder(seed)
    h = _layer_norm(b, "tokens", width)
    q = _heads(b, _dense(b, h, width, width), heads, (0, 2, 1, 3))
    k = _heads(b, _dense(b, h, width, width), heads, (0, 2, 3, 1))
    v = _heads(b, _dense(b, h, width, width), heads, (0, 2, 1, 3))
    scores = b.op("MatMul", [q, k])
    scale = b.constant(np.array(math.sqrt(width // heads), np.float32))
    weights = b.op("Softmax", [b.op("Div", [scores, scale])], axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [weights, v])], perm=[0, 2, 1, 3])
    shape = b.op("Shape", ["tokens"])
    merged = b.op("Reshape", [context, shape])
    x = b.op("Add", ["tokens", _dense(b, merged, width, width)])
    hidden = _gelu_erf(b, _dense(b, _layer_norm(b, x, width), width, 4 * width))
    y = b.op("Add", [x, _dense(b, hidden, 4 * width, width)])
    _rename_output(b, y, "encoded")
    return b.model(
        [_io("tokens", ["N", sequence, width])], [_io("encoded", ["N", sequence, width])]
    )


MODELS = {
    "mlp": (mlp, (64,)),
    "lenet": (lenet, (1, 28, 28)),
    "transformer": (transformer_layer, (16, 64)),
}
"""Each builder and its input's shape without the batch axis."""


# ----------------------------------------------------------------------------- the reference


def onnx_runtime(model: ModelProto, feeds: dict[str, Array]) -> list[Array]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, feeds))


def assert_close(actual: Array, expected: Array) -> None:
    """rtol 1e-4 against the reference, with an absolute floor of 1e-4 of its largest
    magnitude (a value near zero in a sum of thousands of products)."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=RTOL * scale)


def batch_input(shape: Sequence[int], seed: int = 0) -> Array:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
