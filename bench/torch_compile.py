"""`torch.compile(backend="dflow")` against Inductor (`torch.compile`'s default) and
eager PyTorch, one thread, in the same run.

    taskset -c 0 python bench/torch_compile.py [--models resnet18 bert ...] [--all]
                                               [--train] [--runs 10] [--rounds 3]

Per model of the zoo (`tests/support/model_zoo.py`; by default a set of each
family, `--all` every model), in a process of its own with fresh caches (dflow's
on-disk cache, Inductor's FX graph and AOTAutograd caches, both compilers' kernel
caches; numba's cache of dflow's runtime helpers is kept, as after an install):
the first call of each backend (`no_grad`; its time less one steady call is the
compile time), the results checked against eager (the zoo's tolerance), then the
steady time of one call of each in interleaved rounds of `--runs` calls, best
round kept, and the ratios dflow / peer (below 1: dflow is faster);
`--no-inductor` leaves Inductor out (the whole zoo checked and timed against eager
in minutes rather than hours). `--train`
adds training steps (forward, cross entropy, backward, SGD): the MLP
784-512-512-10 at batch 256 and the conv net of `bench/train.py` (2 x conv 3x3,
ReLU, max pool; dense) at batch 32. `torch.set_num_threads(1)`; Dynamo's
`allow_rnn` on (by default it leaves LSTM and GRU layers to eager PyTorch); run
under `taskset -c 0`.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT = (
    "resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "densenet121", "convnext_tiny",
    "vit_tiny", "bert", "gru",
)  # fmt: skip
TRAIN = ("mlp_step", "convnet_step")
BACKENDS = ("dflow", "inductor", "eager")


def _fresh_caches() -> None:
    work = Path(tempfile.mkdtemp(prefix="dflow-bench-torch-"))
    os.environ["DFLOW_CACHE_DIR"] = str(work / "dflow")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(work / "inductor")
    os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    os.environ["TRITON_CACHE_DIR"] = str(work / "triton")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def _model(name: str) -> tuple[Any, tuple[Any, ...], Callable[[Any], Any]]:
    """The module, its inputs, and what a call does with the module (inference under
    `no_grad`, or a training step)."""
    import torch  # noqa: PLC0415

    if name in TRAIN:
        return _training(name)
    sys.path.insert(0, str(HERE.parent / "tests" / "support"))
    from model_zoo import BY_NAME  # noqa: PLC0415

    entry = BY_NAME[name]
    module = entry.module()
    x = torch.from_numpy(entry.input(seed=1))

    def infer(model: Any) -> Any:
        with torch.no_grad():
            return model(x)

    return module, (x,), infer


def _training(name: str) -> tuple[Any, tuple[Any, ...], Callable[[Any], Any]]:
    import torch  # noqa: PLC0415

    torch.manual_seed(0)
    nn = torch.nn
    if name == "mlp_step":
        module = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                               nn.Linear(512, 10))  # fmt: skip
        x, y = torch.randn(256, 784), torch.randint(0, 10, (256,))
    else:
        module = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                               nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                               nn.Flatten(), nn.Linear(32 * 7 * 7, 10))  # fmt: skip
        x, y = torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))

    def step(model: Any) -> Any:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        parameters = list(model.parameters())
        for p in parameters:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in parameters:
                p.sub_(1e-3 * p.grad)
        return loss.detach()

    return module, (x,), step


def measure_one(name: str, runs: int, rounds: int, backends: tuple[str, ...]) -> dict[str, float]:
    """One model's figures (in this process, whose caches are fresh)."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    sys.path.insert(0, str(HERE))
    from rounds import best  # noqa: PLC0415

    torch.set_num_threads(1)
    torch._dynamo.config.allow_rnn = True  # pyright: ignore[reportPrivateUsage] (else LSTM, GRU run eagerly)
    module, _, call = _model(name)
    copies = {b: copy.deepcopy(module) for b in backends}  # a training step changes its own
    compiled = {
        "dflow": torch.compile(copies["dflow"], backend="dflow"),
        "inductor": torch.compile(copies.get("inductor", module)),
        "eager": copies["eager"],
    }
    first: dict[str, float] = {}
    results: dict[str, Any] = {}
    for backend in backends:
        start = time.perf_counter()
        results[backend] = call(compiled[backend])
        first[backend] = time.perf_counter() - start
    expected = results["eager"].numpy()
    scale = float(np.abs(expected).max())
    for backend in backends[:-1]:
        np.testing.assert_allclose(results[backend].numpy(), expected, rtol=1e-3, atol=1e-3 * scale)
    steady = best({b: (lambda b=b: call(compiled[b])) for b in backends}, runs, rounds)
    figures = {f"{b}_ms": steady[b] * 1e3 for b in backends}
    figures |= {f"{b}_compile_s": first[b] - steady[b] for b in backends[:-1]}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    backends = tuple(b for b in BACKENDS if b != "inductor" or not args.no_inductor)
    if args.one:
        _fresh_caches()
        print(json.dumps(measure_one(args.one, args.runs, args.rounds, backends)))
        return
    names = list(args.models or _all_names() if args.all else args.models or DEFAULT)
    names += list(TRAIN) if args.train else []
    print("| model | dflow ms | Inductor ms | eager ms | dflow / Inductor | dflow / eager "
          "| dflow compile s | Inductor compile s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        _report(name, args.runs, args.rounds, args.no_inductor)


def _all_names() -> list[str]:
    sys.path.insert(0, str(HERE.parent / "tests" / "support"))
    from model_zoo import MODELS  # noqa: PLC0415

    return [model.name for model in MODELS]


def _report(name: str, runs: int, rounds: int, no_inductor: bool) -> None:
    command = [sys.executable, __file__, "--one", name, "--runs", str(runs),
               "--rounds", str(rounds)] + (["--no-inductor"] if no_inductor else [])  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        reason = (done.stderr.strip().splitlines() or ["?"])[-1][:120]
        print(f"| {name} | failed: {reason} |", flush=True)
        return
    f = json.loads(done.stdout.strip().splitlines()[-1])
    f.setdefault("inductor_ms", float("nan"))
    f.setdefault("inductor_compile_s", float("nan"))
    cells = [
        f"{f['dflow_ms']:.3f}", f"{f['inductor_ms']:.3f}", f"{f['eager_ms']:.3f}",
        f"{f['dflow_ms'] / f['inductor_ms']:.2f}", f"{f['dflow_ms'] / f['eager_ms']:.2f}",
        f"{f['dflow_compile_s']:.2f}", f"{f['inductor_compile_s']:.2f}",
    ]  # fmt: skip
    print(f"| {name} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
