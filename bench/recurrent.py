"""Recurrent layers from ONNX: dflow's unrolled LSTM, GRU and RNN against ONNX Runtime
and PyTorch eager.

    taskset -c 0 python bench/recurrent.py [--runs 20] [--rounds 5]

Each layer (`nn.LSTM`, `nn.GRU`, `nn.RNN`, one layer, forward, random weights of seed
0, exported by `torch.onnx.export` at opset 17) runs at two sizes: a sequence of 32
steps, batch 4 and 16, 64 inputs, 128 hidden units. Printed per layer and size, all
from this run: dflow's time from `dflow.compile` to its first result (the import,
lowering and numba's compile of the kernels, in a fresh cache), and the steady time
of one call of each contender (interleaved rounds of `--runs` calls, best round kept;
dflow's results checked against ONNX Runtime's first), and the ratios dflow / peer.
ONNX Runtime gets one intra-op and one inter-op thread, PyTorch
`torch.set_num_threads(1)`; run under `taskset -c 0`.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
WORK = Path(tempfile.mkdtemp(prefix="dflow-bench-recurrent-"))
os.environ["DFLOW_CACHE_DIR"] = str(WORK / "cache")
os.environ["NUMBA_CACHE_DIR"] = str(WORK / "numba")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from rounds import best  # noqa: E402

import dflow  # noqa: E402

SEQUENCE, FEATURES, HIDDEN = 32, 64, 128


def export(layer: Any, x: np.ndarray[Any, Any]) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            layer, (torch.from_numpy(x),), buffer, dynamo=False, opset_version=17,
            input_names=["x"], output_names=["y"],
        )  # fmt: skip
    return onnx.load_from_string(buffer.getvalue())


def measure(kind: str, batch: int, runs: int, rounds: int) -> None:
    torch.manual_seed(0)
    layer = getattr(torch.nn, kind)(FEATURES, HIDDEN).eval()
    x = np.random.default_rng(0).standard_normal((SEQUENCE, batch, FEATURES)).astype(np.float32)
    model = export(layer, x)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, {"x": x})[0]
    start = time.perf_counter()
    program = dflow.compile(model)
    first = program(x=x)
    first = first[0] if isinstance(first, tuple) else first
    cold = time.perf_counter() - start
    np.testing.assert_allclose(first, expected, rtol=1e-4, atol=1e-5)
    tensor = torch.from_numpy(x)

    def eager() -> Any:
        with torch.no_grad():
            return layer(tensor)

    times = best(
        {
            "dflow": lambda: program(x=x),
            "onnxruntime": lambda: session.run(None, {"x": x}),
            "pytorch": eager,
        },
        runs,
        rounds,
    )
    print(
        f"{kind:4} batch {batch:2}: first result {cold:5.2f} s; steady dflow "
        f"{times['dflow'] * 1e3:6.3f} ms, ONNX Runtime {times['onnxruntime'] * 1e3:6.3f} ms, "
        f"PyTorch {times['pytorch'] * 1e3:6.3f} ms; dflow / ORT "
        f"{times['dflow'] / times['onnxruntime']:4.2f}, dflow / PyTorch "
        f"{times['dflow'] / times['pytorch']:4.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    print(f"sequence {SEQUENCE}, {FEATURES} inputs, {HIDDEN} hidden units, one thread each")
    for kind in ("LSTM", "GRU", "RNN"):
        for batch in (4, 16):
            measure(kind, batch, arguments.runs, arguments.rounds)


if __name__ == "__main__":
    main()
