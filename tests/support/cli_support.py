"""Running the real `dflow` command in a subprocess, for the command-line tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_dflow(
    *args: str | Path,
    timeout: float = 120,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
) -> subprocess.CompletedProcess[str]:
    """`python -m dflow ARGS` from `cwd` (the repository root by default), with
    `stdin` as its standard input and `env` as its environment (default: this one);
    never raises on failure."""
    return subprocess.run(
        [sys.executable, "-m", "dflow", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )
