"""Fixtures shared by test modules, and the helpers' folder on the import path.

`tests/` holds the suites (`test_*.py`) and `tests/support/` the helpers they share
(program generators, checkers, the CLI runner, ONNX and torch models), imported by
name (`from cli_support import run_dflow`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

# Every lowered module is verified in tests, however pytest was started
# (tests/run.sh sets it too, for lit): see dflow.driver.compilation.compiler.
os.environ.setdefault("DFLOW_VERIFY", "1")


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A compile cache of the test module's own (`DFLOW_CACHE_DIR`), so that the
    hundreds of programs a suite compiles leave the user's cache alone."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DFLOW_CACHE_DIR", str(tmp_path_factory.mktemp("dflow-cache")))
        yield
