"""Start-up of the `dflow` command, whole processes on one core: `dflow --help`, and
`dflow run examples/mlp.mlir` from a warm cache (its modules and numba's machine
code compiled by an earlier run), against the bare interpreter and the imports a
user of a peer pays before their first line (`import numpy`, `import numba`,
`import jax`, `import torch`, `import onnxruntime`), measured in interleaved rounds
(best of each).

    taskset -c 0 python bench/startup.py [--rounds 7]

The command is run as the installed console script beside this interpreter (not a
pyenv shim, which adds ~50 ms of bash before Python starts), or `python -m dflow`.
Goals (issue 16): `--help` <= 0.15 s, the cached run <= 0.35 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOALS = {"dflow --help": 0.15, "dflow run mlp.mlir (cached)": 0.35}


def _dflow() -> list[str]:
    script = Path(sys.executable).parent / "dflow"
    return [str(script)] if script.exists() else [sys.executable, "-m", "dflow"]


def _commands() -> dict[str, list[str]]:
    dflow = _dflow()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "dflow --help": [*dflow, "--help"],
        "dflow run mlp.mlir (cached)": [*dflow, "run", str(ROOT / "examples" / "mlp.mlir")],
        "import numpy": [sys.executable, "-c", "import numpy"],
        "import numba": [sys.executable, "-c", "import numba"],
    }
    for peer in ("jax", "torch", "onnxruntime"):
        if importlib.util.find_spec(peer) is not None:
            commands[f"import {peer}"] = [sys.executable, "-c", f"import {peer}"]
    return commands


def _seconds(command: list[str], environment: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=environment)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "DFLOW_CACHE_DIR": cache}
        commands = _commands()
        for command in commands.values():  # warm: the cache entry, numba's, the OS's
            _seconds(command, environment)
        best = dict.fromkeys(commands, float("inf"))
        for _ in range(rounds):
            for name, command in commands.items():
                best[name] = min(best[name], _seconds(command, environment))
    bare = best["python -c pass"]
    print(f"{'process':<30} {'best s':>7} {'over bare':>9} {'goal s':>7}")
    for name, seconds in best.items():
        goal = GOALS.get(name)
        met = "" if goal is None else f"{goal:>7.2f} {'met' if seconds <= goal else 'NOT met'}"
        print(f"{name:<30} {seconds:>7.3f} {seconds - bare:>9.3f} {met}")
    run = best["dflow run mlp.mlir (cached)"]
    print(f"cached run / import numba: {run / best['import numba']:.2f}")
    for peer in ("jax", "torch"):
        if f"import {peer}" in best:
            print(f"cached run / import {peer}: {run / best[f'import {peer}']:.2f}")


if __name__ == "__main__":
    main()
