"""ResNet-18 from ONNX: dflow compiled against ONNX Runtime and PyTorch eager.

    taskset -c 0 python bench/onnx_resnet.py [--batches 1 8] [--runs 10] [--rounds 3] [--blas-as-is]

ResNet-18 (torchvision's own, imported by `tests/support/vision.py`) with
random weights (seed 0), exported by `torch.onnx.export` (opset 17, a symbolic batch,
BatchNorm folded into the convolutions as exporters do by default). The same weights
run three ways: dflow (the model imported with `--shape`-like static shapes, compiled, called), ONNX
Runtime (its CPU provider, one intra-op and one inter-op thread) and PyTorch eager
(`torch.set_num_threads(1)`, `no_grad`, eval mode). Printed, all from this run:

1. dflow's stages on the batch-1 model, in a fresh on-disk cache: reading and
   importing the model, lowering it to device modules (`dflow.compile`), and its
   first call (numba compiles the kernels) and, warm, a second process's first
   call with the on-disk caches filled;
2. per batch size, the steady time of one inference: the contenders take turns
   over `--rounds` rounds of `--runs` calls each on the same input, best round
   kept; dflow's results are checked against ONNX Runtime's (rtol 1e-4) first;
3. the ratios dflow / peer (below 1: dflow is faster).

One core: run under `taskset -c 0`. The contenders share one process, so
`OPENBLAS_NUM_THREADS=1` holds for each alike; OpenBLAS (dflow's convolutions and
products) is asked for its AVX-512 kernels as the peers' own libraries pick theirs
(`bench/blas_choice.py`; `--blas-as-is` keeps the environment's choice).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from blas_choice import prefer_avx512_blas

BLAS_CHOICE = prefer_avx512_blas()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
WORK = Path(tempfile.mkdtemp(prefix="dflow-bench-onnx-"))
"""Fresh caches, set before numba is imported (it reads NUMBA_CACHE_DIR once)."""
os.environ["DFLOW_CACHE_DIR"] = str(WORK / "cache")
os.environ["NUMBA_CACHE_DIR"] = str(WORK / "numba")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import dflow  # noqa: E402
from dflow.frontend.onnx import import_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from vision import torchvision  # noqa: E402

Infer = Callable[[np.ndarray], np.ndarray]


def resnet18() -> tuple[Any, onnx.ModelProto]:
    torch.manual_seed(0)
    module = torchvision().models.resnet18().eval()
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (torch.zeros(1, 3, 224, 224),),
            buffer,
            dynamo=False,
            opset_version=17,
            input_names=["input"],
            output_names=["logits"],
            dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
        )
    return module, onnx.load_from_string(buffer.getvalue())


def onnx_runtime(model: onnx.ModelProto) -> Infer:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return lambda x: session.run(None, {"input": x})[0]


def pytorch(module: Any) -> Infer:
    torch.set_num_threads(1)

    def infer(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.from_numpy(x)).numpy()

    return infer


def stages(path: Path) -> dict[str, float]:
    """Import, lowering and first call of the batch-1 model in this process, in a
    fresh on-disk cache (its numba kernels compiled from nothing)."""
    shapes = {"input": (1, 3, 224, 224)}
    start = time.perf_counter()
    import_model(path, shapes)
    imported = time.perf_counter()
    program = dflow.compile(path, shapes=shapes)  # imports again, then lowers
    compiled = time.perf_counter()
    program(np.zeros((1, 3, 224, 224), np.float32))
    first = time.perf_counter()
    return {
        "import (read, check, convert)": imported - start,
        "lower (dflow.compile - import)": (compiled - imported) - (imported - start),
        "first call (numba compiles)": first - compiled,
        "total, model to 1st result": first - imported + (imported - start),
    }


WARM_SCRIPT = """
import sys, time, numpy as np
start = time.perf_counter()
import dflow
program = dflow.compile(sys.argv[1], shapes={"input": (1, 3, 224, 224)})
program(np.zeros((1, 3, 224, 224), np.float32))
print(time.perf_counter() - start)
"""


def warm_first_call(path: Path) -> float:
    """A new process's import of dflow, compile and first call, caches filled."""
    result = subprocess.run(
        [sys.executable, "-c", WARM_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ.copy(),
    )
    return float(result.stdout.split()[-1])


def steady(contenders: dict[str, Infer], x: np.ndarray, runs: int, rounds: int) -> dict[str, float]:
    """Seconds per call, best round of `runs` calls, contenders in turn each round."""
    best = dict.fromkeys(contenders, float("inf"))
    for infer in contenders.values():
        infer(x)  # warm up
    for _ in range(rounds):
        for name, infer in contenders.items():
            start = time.perf_counter()
            for _ in range(runs):
                infer(x)
            best[name] = min(best[name], (time.perf_counter() - start) / runs)
    return best


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--runs", type=int, default=10, help="calls per round")
    parser.add_argument("--rounds", type=int, default=3)
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    module, model = resnet18()
    path = WORK / "resnet18.onnx"
    onnx.save(model, str(path))
    cores = sorted(os.sched_getaffinity(0))
    print(f"ResNet-18, {path.stat().st_size / 1e6:.1f} MB, cores {cores}, {BLAS_CHOICE}")
    for stage, seconds in stages(path).items():
        print(f"  {stage:<32} {seconds:7.2f} s")
    print(f"  {'warm process: import → 1st result':<32} {warm_first_call(path):7.2f} s")
    peers = {"onnxruntime": onnx_runtime(model), "pytorch": pytorch(module)}
    print(f"\n{'batch':>5} {'dflow ms':>9} {'ORT ms':>8} {'torch ms':>9} {'/ORT':>6} {'/torch':>7}")
    for batch in args.batches:
        x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224)).astype(np.float32)
        program = dflow.compile(path, shapes={"input": x.shape})
        ours = program(x)
        np.testing.assert_allclose(ours, peers["onnxruntime"](x), rtol=1e-4, atol=1e-4)
        times = steady({"dflow": program, **peers}, x, args.runs, args.rounds)
        d, o, t = (times[k] * 1e3 for k in ("dflow", "onnxruntime", "pytorch"))
        print(f"{batch:>5} {d:9.1f} {o:8.1f} {t:9.1f} {d / o:6.2f} {d / t:7.2f}")
    shutil.rmtree(WORK)


if __name__ == "__main__":
    main()
