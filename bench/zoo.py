"""The model zoo (`tests/support/model_zoo.py`) through dflow, against ONNX Runtime and PyTorch.

    taskset -c 0 python bench/zoo.py [--models resnet18 bert ...] [--runs 10] [--rounds 3]
                                     [--half] [--batch 8]

Per model, all from this run, in a fresh on-disk cache: the export's ONNX import
(`dflow import`'s work), the lowering to device modules, the first call (the
kernels the store lacks compiled: one store for the whole run, so a model reuses the
kernels of those before it), then the steady time of one call of dflow, ONNX Runtime (one
intra-op and one inter-op thread) and PyTorch eager (`torch.set_num_threads(1)`,
`no_grad`), in interleaved rounds of `--runs` calls each, best round kept, and the
ratios dflow / peer (below 1: dflow is faster). With `--half`, each model is
converted to float16 first (`module.half()`, a float16 input; checked within
`model_zoo.HALF_STEPS` float16 steps). With `--batch N`, the input holds N of the
model's inputs (seeds 1 to N), the model exported for that batch. dflow's result is checked against
ONNX Runtime's and PyTorch's first (the zoo's tolerance). One core: run under
`taskset -c 0`; OpenBLAS gets one thread, as the peers do. The table printed is the
README's zoo table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
WORK = Path(tempfile.mkdtemp(prefix="dflow-bench-zoo-"))
os.environ["DFLOW_CACHE_DIR"] = str(WORK / "cache")
os.environ["NUMBA_CACHE_DIR"] = str(WORK / "numba")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from model_zoo import MODELS, ZooModel, assert_matches, assert_matches_half  # noqa: E402
from rounds import best  # noqa: E402

import dflow  # noqa: E402
from dflow.frontend.onnx import import_model  # noqa: E402


def measure(
    entry: ZooModel, runs: int, rounds: int, half: bool, batch: int = 1
) -> dict[str, float]:
    if half:
        module, x = entry.half(seed=1)
    else:
        module, x = entry.module(), entry.input(seed=1)
    if batch > 1:
        more = [entry.input(seed=seed).astype(x.dtype) for seed in range(2, batch + 1)]
        x = np.concatenate([x, *more])
    model = entry.export(module, x)
    start = time.perf_counter()
    import_model(model)
    imported = time.perf_counter() - start
    start = time.perf_counter()
    program = dflow.compile(model)
    lowered = time.perf_counter() - start
    start = time.perf_counter()
    result = program(x=x)
    first = time.perf_counter() - start
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    check = assert_matches_half if half else assert_matches
    check(result, session.run(None, {"x": x})[0])
    check(result, entry.eager(module, x))
    tensor = torch.from_numpy(x)

    def eager() -> Any:
        with torch.no_grad():
            return module(tensor)

    steady = best(
        {"dflow": lambda: program(x=x), "ort": lambda: session.run(None, {"x": x}), "torch": eager},
        runs,
        rounds,
    )
    return {"import": imported, "lower": lowered, "first": first, **steady}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=[m.name for m in MODELS])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--half", action="store_true", help="each model converted to float16")
    parser.add_argument("--batch", type=int, default=1, help="inputs per call")
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    header = (
        "| model | family | import s | lower s | first call s | dflow ms | ONNX Runtime ms "
        "| PyTorch ms | dflow / ORT | dflow / PyTorch |"
    )
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for entry in MODELS:
        if entry.name not in arguments.models:
            continue
        try:
            t = measure(entry, arguments.runs, arguments.rounds, arguments.half, arguments.batch)
        except Exception as error:  # a model that fails is a row saying why, not the end
            print(f"| {entry.name} | {entry.family} | failed: {type(error).__name__}: "
                  f"{str(error).splitlines()[0][:200]} |", flush=True)  # fmt: skip
            continue
        print(
            f"| {entry.name} | {entry.family} | {t['import']:.2f} | {t['lower']:.2f} | "
            f"{t['first']:.2f} | {t['dflow'] * 1e3:.3f} | {t['ort'] * 1e3:.3f} | "
            f"{t['torch'] * 1e3:.3f} | {t['dflow'] / t['ort']:.2f} | "
            f"{t['dflow'] / t['torch']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
