"""Everything dflow installs lives under the one `dflow` package: a user's own
`runtime.py`, `transforms.py` or `frontend.py` beside their program shadows none of
it, and the old bare top-level packages are gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_support import ROOT, run_dflow

FORMER_TOP_LEVEL = ("dialects", "transforms", "lowering", "runtime", "frontend", "analysis")


def test_no_bare_top_level_package_is_installed(tmp_path: Path) -> None:
    """From a folder of the user's, none of the old top-level names imports."""
    probe = "import importlib.util as u, sys; print([n for n in sys.argv[1:] if u.find_spec(n)])"
    found = subprocess.run(
        [sys.executable, "-c", probe, *FORMER_TOP_LEVEL],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert found == "[]"


def test_a_users_modules_do_not_shadow_dflow(tmp_path: Path) -> None:
    """`python -m dflow run` from a folder holding `runtime.py`, `transforms.py`,
    `frontend.py` (and the other old names), each of which would fail loudly if
    imported, runs the example compiled and interpreted."""
    for name in FORMER_TOP_LEVEL:
        (tmp_path / f"{name}.py").write_text(f"raise ImportError('the user\\'s {name}.py')\n")
    environment = {**os.environ, "DFLOW_CACHE_DIR": str(tmp_path / "cache")}
    for mode in ([], ["--interpret"]):
        run = run_dflow("run", ROOT / "examples" / "mlp.mlir", *mode, env=environment, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("out0: shape scalar float32 value 40.2"), run.stdout
