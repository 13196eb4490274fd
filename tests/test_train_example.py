"""The training example (`examples/train_digits.py`) trains: a few compiled steps of
each model lower the loss, and the script runs end to end. The full run, to an
accuracy of at least 0.95, is `bench/train.py`'s."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from cli_support import ROOT

sys.path.insert(0, str(ROOT / "examples"))

import train_digits


@pytest.mark.parametrize("model", ["mlp", "conv"])
def test_a_few_steps_lower_the_loss(model: str) -> None:
    images, labels, _, _ = train_digits.load(model, 0)
    params = train_digits.init(model, 0)
    velocity = {name: np.zeros_like(value) for name, value in params.items()}
    losses: list[float] = []
    for step in range(40):
        batch = slice(32 * (step % 8), 32 * (step % 8 + 1))
        loss, params, velocity = train_digits.train_step(
            params, velocity, images[batch], labels[batch], 0.05, 0.9
        )
        losses.append(float(loss))
    assert np.mean(losses[-8:]) < 0.5 * np.mean(losses[:8]), losses
    assert train_digits.train_step.traces <= 2  # one per model, none per step


def test_the_script_runs_and_reports_accuracy() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_digits.py"), "--epochs", "2"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line.split()[:2] for line in lines[:2]] == [["epoch", "1"], ["epoch", "2"]]
    assert lines[-1].startswith("test accuracy 0.")
    assert float(lines[-1].split()[-1]) > 0.9  # two epochs already do this well
