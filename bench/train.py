"""The digits training loop of `examples/train_digits.py` against its peers.

    taskset -c 0 python bench/train.py [--model mlp|conv] [--steps 200] [--rounds 5]

One model (the example's MLP 64-128-10 or conv net), one batch size (32), one
update (SGD with momentum 0.9, rate 0.05), written three ways: dflow (`dflow.jit`
of the example's step), JAX (`jax.jit` of the same step) and PyTorch eager, each
where it is installed. Printed, all measured in this run:

1. steady-state time of a training step: the contenders take turns over
   `--rounds` rounds of `--steps` steps each, on the same batches, best round kept;
2. time to the first step, compile included: each contender in a fresh process
   (for dflow with empty caches, so numba compiles; and again with its on-disk
   cache warm), from the step's construction to its first result, the framework
   already imported;
3. the full run of the example (15 epochs): its test accuracy and time per epoch.

Ratios are dflow's time over the peer's (below 1: dflow is faster). One core:
run under `taskset -c 0`; PyTorch is asked for one thread, XLA for no thread pool.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import train_digits  # noqa: E402

BATCH = 32
RATE = 0.05
MOMENTUM = 0.9

Step = Callable[[np.ndarray, np.ndarray], float]
"""One training step on a batch (images, one-hot labels); returns the loss."""


def dflow_step(model: str) -> Step:
    params = train_digits.init(model, 0)
    velocity = {name: np.zeros_like(value) for name, value in params.items()}
    state = [params, velocity]

    def step(images: np.ndarray, labels: np.ndarray) -> float:
        loss, state[0], state[1] = train_digits.train_step(
            state[0], state[1], images, labels, RATE, MOMENTUM
        )
        return float(loss)

    return step


def jax_step(model: str) -> Step:
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415

    def logits(params: dict[str, Any], images: Any) -> Any:
        if "w1" in params:
            hidden = jax.nn.relu(images @ params["w1"] + params["b1"])
            return hidden @ params["w2"] + params["b2"]
        features = jax.lax.conv_general_dilated(
            images,
            params["k"],
            (1, 1),
            ((1, 1), (1, 1)),
            dimension_numbers=("NCHW", "OIHW", "NCHW"),
        )
        features = jax.nn.relu(features + params["c"][None, :, None, None])
        pooled = jax.lax.reduce_window(
            features, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"
        )
        return pooled.reshape(pooled.shape[0], 128) @ params["w"] + params["b"]

    def loss_of(params: dict[str, Any], images: Any, labels: Any) -> Any:
        return -(labels * jax.nn.log_softmax(logits(params, images))).sum(1).mean()

    @jax.jit
    def update(params: Any, velocity: Any, images: Any, labels: Any) -> Any:
        loss, grads = jax.value_and_grad(loss_of)(params, images, labels)
        velocity = {k: velocity[k] * MOMENTUM + grads[k] for k in params}
        return loss, {k: params[k] - velocity[k] * RATE for k in params}, velocity

    params = {k: jnp.asarray(v) for k, v in train_digits.init(model, 0).items()}
    state = [params, {k: jnp.zeros_like(v) for k, v in params.items()}]

    def step(images: np.ndarray, labels: np.ndarray) -> float:
        loss, state[0], state[1] = update(state[0], state[1], images, labels)
        return float(loss)

    return step


def torch_step(model: str) -> Step:
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)
    params = {
        k: torch.from_numpy(v.copy()).requires_grad_(True)
        for k, v in train_digits.init(model, 0).items()
    }
    optimizer = torch.optim.SGD(params.values(), lr=RATE, momentum=MOMENTUM)

    def logits(images: Any) -> Any:
        if "w1" in params:
            return torch.relu(images @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
        features = torch.relu(
            torch.nn.functional.conv2d(images, params["k"], params["c"], padding=1)
        )
        pooled = torch.nn.functional.max_pool2d(features, 2)
        return pooled.reshape(pooled.shape[0], 128) @ params["w"] + params["b"]

    def step(images: np.ndarray, labels: np.ndarray) -> float:
        optimizer.zero_grad(set_to_none=True)
        loss = (
            -(torch.from_numpy(labels) * torch.log_softmax(logits(torch.from_numpy(images)), 1))
            .sum(1)
            .mean()
        )
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


MAKERS: dict[str, Callable[[str], Step]] = {
    "dflow": dflow_step,
    "JAX jit": jax_step,
    "PyTorch": torch_step,
}
MODULES = {"JAX jit": "jax", "PyTorch": "torch"}


def available() -> list[str]:
    found = ["dflow"]
    for name, module in MODULES.items():
        try:
            __import__(module)
            found.append(name)
        except ImportError:
            print(f"({name} is not installed: no {name} figure)")
    return found


def batches(model: str, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    images, labels, _, _ = train_digits.load(model, 0)
    rng = np.random.default_rng(1)
    chosen = [rng.choice(len(images), BATCH, replace=False) for _ in range(count)]
    return [(images[c], labels[c]) for c in chosen]


def steady(model: str, names: list[str], steps: int, rounds: int) -> dict[str, float]:
    """Seconds per step, best round, the contenders taking turns each round."""
    data = batches(model, steps)
    runs = {name: MAKERS[name](model) for name in names}
    for run in runs.values():
        run(*data[0])  # compile
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            started = time.perf_counter()
            for images, labels in data:
                run(images, labels)
            best[name] = min(best[name], (time.perf_counter() - started) / steps)
    return best


def first_step_here(name: str, model: str) -> float:
    """In this (fresh) process: seconds from building the step to its first loss
    (the framework imported before: dflow, as this script imports it, and the peer)."""
    images, labels = batches(model, 1)[0]
    if name in MODULES:
        __import__(MODULES[name])
    started = time.perf_counter()
    MAKERS[name](model)(images, labels)
    return time.perf_counter() - started


def first_step(name: str, model: str, environment: dict[str, str]) -> float:
    """`first_step_here` in a fresh process."""
    done = subprocess.run(
        [sys.executable, __file__, "--first-step", name, "--model", model],
        capture_output=True, text=True, check=True, env=environment, timeout=600,
    )  # fmt: skip
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def full_run(model: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_digits.py"), "--model", model],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    epochs = [line for line in done.stdout.splitlines() if line.startswith("epoch")]
    times = [float(line.rsplit("(", 1)[1].split()[0]) for line in epochs]
    last = done.stdout.strip().splitlines()[-1]
    return f"{last}; {np.median(times[1:]):.1f} ms per epoch (the first: {times[0]:.1f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", choices=("mlp", "conv"), default="mlp")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--first-step", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_step:
        print(json.dumps(first_step_here(args.first_step, args.model)))
        return
    names = available()
    print(f"model {args.model}, batch {BATCH}, SGD momentum {MOMENTUM}, rate {RATE}")
    per_step = steady(args.model, names, args.steps, args.rounds)
    with tempfile.TemporaryDirectory() as cold:
        fresh = {
            **os.environ,
            "DFLOW_CACHE_DIR": f"{cold}/dflow",
            "NUMBA_CACHE_DIR": f"{cold}/numba",
        }
        firsts = {name: first_step(name, args.model, fresh) for name in names}
        warm_first = first_step("dflow", args.model, fresh)
    print(f"{'':10} {'step':>10} {'first step':>12}")
    for name in names:
        print(f"{name:10} {per_step[name] * 1e3:8.3f} ms {firsts[name]:10.3f} s")
    print(f"{'dflow':10} {'':>10} {warm_first:10.3f} s  (first step with its on-disk cache warm)")
    for name in names[1:]:
        print(
            f"dflow / {name}: step {per_step['dflow'] / per_step[name]:.2f}, "
            f"first step {firsts['dflow'] / firsts[name]:.2f} "
            f"(cache warm: {warm_first / firsts[name]:.2f})"
        )
    print(f"full run: {full_run(args.model)}")


if __name__ == "__main__":
    main()
