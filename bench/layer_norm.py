"""LayerNormalization: dflow's one fused kernel against ONNX Runtime and PyTorch.

    taskset -c 0 python bench/layer_norm.py [--runs 200] [--rounds 5]

A LayerNormalization over the last axis with a scale and a bias (as every
transformer has it), at the shapes the zoo's transformers run (BERT-base's 256 x
768, ViT-Tiny's 197 x 192, a long row of 4096, many short rows of 64). The same
ONNX model runs in dflow (one `df.layer_norm` kernel: each row's mean and
variance computed once, then normalized, scaled and shifted) and in ONNX Runtime
(its CPU provider, one thread), and PyTorch eager runs `F.layer_norm`
(`torch.set_num_threads(1)`); so does dflow's former composed form (a `reduce_mean`,
`x - mean`, the `reduce_mean` of its square, `rsqrt`, scale and bias: the kernels
`df-fuse` makes of them), the measurement that chose the op. dflow's results are
checked against ONNX Runtime's first; then the contenders take turns over
`--rounds` rounds of `--runs` calls (`rounds.best`), and the ratios to ONNX
Runtime and PyTorch are printed (below 1: dflow is faster).
One core: run under `taskset -c 0`.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import onnxruntime as ort
import torch
from onnx import ModelProto, TensorProto, helper, numpy_helper
from rounds import best

import dflow

SHAPES = [(256, 768), (197, 192), (16, 4096), (4096, 64)]


def _model(rows: int, width: int, scale: np.ndarray, bias: np.ndarray) -> ModelProto:
    node = helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1)
    graph = helper.make_graph(
        [node],
        "layer_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, width])],
        [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _composed(rows: int, width: int, scale: np.ndarray, bias: np.ndarray) -> dflow.Graph:
    """The layer norm of df's other ops, as the ONNX importer wrote it before."""
    graph = dflow.Graph("main")
    x = graph.input("x", (rows, width), "f32")
    centered = x - x.mean([1], keepdims=True)
    variance = (centered * centered).mean([1], keepdims=True)
    normalized = centered * (variance + 1e-5).rsqrt()
    graph.output(normalized * graph.constant(scale) + graph.constant(bias))
    return graph


def _timed(rows: int, width: int, options: ort.SessionOptions, runs: int, rounds: int) -> str:
    """One shape: checked against ONNX Runtime, then timed; its line of the table."""
    rng = np.random.default_rng(rows + width)
    x = rng.standard_normal((rows, width)).astype(np.float32)
    scale, bias = (rng.standard_normal(width).astype(np.float32) for _ in range(2))
    model = _model(rows, width, scale, bias)
    program = dflow.compile(model)
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    (expected,) = session.run(None, {"x": x})
    np.testing.assert_allclose(program(x), expected, rtol=1e-4, atol=1e-4)
    composed = dflow.compile(_composed(rows, width, scale, bias))
    np.testing.assert_allclose(composed(x), expected, rtol=1e-4, atol=1e-4)
    tx, ts, tb = (torch.from_numpy(a) for a in (x, scale, bias))
    calls = {
        "dflow": lambda: program(x),
        "composed": lambda: composed(x),
        "ort": lambda: session.run(None, {"x": x}),
        "torch": lambda: torch.nn.functional.layer_norm(tx, (width,), ts, tb),
    }
    times = best(calls, runs, rounds)
    d, c, o, t = (times[k] * 1e6 for k in ("dflow", "composed", "ort", "torch"))
    shape = f"{rows}x{width}"
    return f"{shape:>12} {d:9.1f} {c:9.1f} {o:8.1f} {t:9.1f} {c / o:9.2f} {d / o:6.2f} {d / t:7.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    print(
        f"{'shape':>12} {'dflow us':>9} {'composed':>9} {'ORT us':>8} {'torch us':>9} "
        f"{'comp/ORT':>9} {'/ORT':>6} {'/torch':>7}"
    )
    for rows, width in SHAPES:
        print(_timed(rows, width, options, args.runs, args.rounds), flush=True)


if __name__ == "__main__":
    main()
