"""Train a classifier of handwritten digits with a compiled training step.

    python examples/train_digits.py [--model mlp|conv] [--epochs N] [--steps N]

The data is scikit-learn's bundled digits set (1,797 8x8 images, no download),
split 80/20 with a fixed seed. The model is an MLP (64-128-10, ReLU) or a small
conv net (3x3 conv to 8 channels, ReLU, 2x2 max pool, dense 128-10). One training
step is one `dflow.jit` function: the forward pass, softmax cross-entropy, its
gradient by `dflow.value_and_grad` (df-autodiff) and the SGD update with momentum,
all in one compiled graph. A progress bar per epoch shows the loss, then the
epoch's mean loss and test accuracy, which a line per epoch repeats; the last line
is `test accuracy 0.9xx`.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import dflow

Params = dict[str, Any]


def load(model: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Images scaled to [0, 1] (flat for the MLP, NCHW for the conv net) and one-hot
    labels, as (train images, train labels, test images, test labels)."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    images = images.reshape(-1, 64) if model == "mlp" else images.reshape(-1, 1, 8, 8)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    order = np.random.default_rng(seed).permutation(len(images))
    cut = int(0.8 * len(images))
    train, test = order[:cut], order[cut:]
    return images[train], labels[train], images[test], labels[test]


def init(model: str, seed: int) -> Params:
    """He-initialized weights, zero biases."""
    rng = np.random.default_rng(seed)

    def he(*shape: int) -> np.ndarray:
        fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    if model == "mlp":
        return {"w1": he(64, 128), "b1": np.zeros(128, np.float32), "w2": he(128, 10),
                "b2": np.zeros(10, np.float32)}  # fmt: skip
    return {"k": he(8, 1, 3, 3), "c": np.zeros(8, np.float32), "w": he(128, 10),
            "b": np.zeros(10, np.float32)}  # fmt: skip


def logits(params: Params, images: Any) -> Any:
    """The model's class scores for a batch."""
    if "w1" in params:
        hidden = dflow.relu(images @ params["w1"] + params["b1"])
        return hidden @ params["w2"] + params["b2"]
    features = dflow.relu(dflow.conv2d(images, params["k"], params["c"], pads=(1, 1, 1, 1)))
    pooled = dflow.max_pool2d(features, (2, 2), strides=(2, 2))
    flat = dflow.reshape(pooled, (pooled.shape[0], 128))
    return flat @ params["w"] + params["b"]


def cross_entropy(params: Params, images: Any, labels: Any) -> Any:
    """Mean softmax cross-entropy, through a stable log-sum-exp."""
    scores = logits(params, images)
    shifted = scores - dflow.reduce_max(scores, 1, keepdims=True)
    log_total = dflow.log(dflow.reduce_sum(dflow.exp(shifted), 1, keepdims=True))
    return -dflow.reduce_mean(dflow.reduce_sum(labels * (shifted - log_total), 1))


@dflow.jit(static_argnames=("rate", "momentum"))
def train_step(
    params: Params, velocity: Params, images: Any, labels: Any, rate: float, momentum: float
) -> tuple[Any, Params, Params]:
    """One SGD step with momentum: the loss, the new parameters and velocities."""
    loss, grads = dflow.value_and_grad(cross_entropy)(params, images, labels)
    velocity = {name: velocity[name] * momentum + grads[name] for name in params}
    params = {name: params[name] - velocity[name] * rate for name in params}
    return loss, params, velocity


@dflow.jit
def predict(params: Params, images: Any) -> Any:
    """The class probabilities of a batch."""
    return dflow.softmax(logits(params, images))


def accuracy(params: Params, images: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(predict(params, images).argmax(1) == labels.argmax(1)))


def train(args: argparse.Namespace) -> float:
    x_train, y_train, x_test, y_test = load(args.model, args.seed)
    params = init(args.model, args.seed)
    velocity = {name: np.zeros_like(value) for name, value in params.items()}
    rng = np.random.default_rng(args.seed)
    batches = len(x_train) // args.batch
    steps = 0
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(x_train))
        bar = tqdm(range(batches), desc=f"epoch {epoch:2d}", unit="step", leave=False)
        losses: list[float] = []
        started = time.perf_counter()
        for batch in bar:
            chosen = order[batch * args.batch : (batch + 1) * args.batch]
            loss, params, velocity = train_step(
                params, velocity, x_train[chosen], y_train[chosen], args.rate, args.momentum
            )
            losses.append(float(loss))
            bar.set_postfix(loss=f"{losses[-1]:.4f}", refresh=False)
            steps += 1
            if args.steps and steps >= args.steps:
                break
        seconds = time.perf_counter() - started
        tested = accuracy(params, x_test, y_test)
        bar.set_postfix(loss=f"{np.mean(losses):.4f}", accuracy=f"{tested:.3f}")
        bar.close()
        print(
            f"epoch {epoch:2d}  loss {np.mean(losses):.4f}  test accuracy {tested:.3f}  "
            f"({seconds * 1e3:.1f} ms)",
            flush=True,
        )
        if args.steps and steps >= args.steps:
            break
    final = accuracy(params, x_test, y_test)
    print(f"test accuracy {final:.3f}")
    return final


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", choices=("mlp", "conv"), default="mlp")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--steps", type=int, default=0, help="stop after this many steps")
    parser.add_argument("--seed", type=int, default=0)
    train(parser.parse_args())


if __name__ == "__main__":
    main()
