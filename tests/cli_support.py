"""Running the real `dflow` command in a subprocess, for the command-line tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def run_dflow(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m dflow ARGS` from the repository root; never raises on failure."""
    return subprocess.run(
        [sys.executable, "-m", "dflow", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=timeout,
    )
