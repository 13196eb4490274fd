"""The runtime's warm start (`runtime/warm_start.py`): cached CPU kernels are
installed when a program loads, without numba's compiler registries.

A first process compiles and runs the program (filling numba's cache); a second,
fresh one loads it and reports, before running, which kernels already have code
and whether numba's registries were imported (`numba.np.arraymath` is one of the
modules only a registry refresh imports), then runs it; its results must equal
the interpreter's, and where NumPy's own BLAS was found (`runtime/library/blas.py`)
its matrix product must not have imported SciPy. Kernels the kernel store does not
hold load nothing ahead and still run (numba's lazy path). Each test has a kernel
store of its own (`DFLOW_CACHE_DIR`): the store is shared by every program whose
kernels are the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import ROOT
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp

from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.frontend import Graph
from dflow.interpreters.df import run_function
from dflow.runtime import load_program
from dflow.runtime.library.blas import SGEMM

Array = NDArray[Any]

FRESH_PROCESS = """
import json, sys
import numpy as np
from dflow.runtime import load_program
from dflow.runtime.library.blas import SGEMM
program = load_program(sys.argv[1])
report = {
    "preloaded": sorted(
        name
        for part in program.parts
        for name in part.module.KERNEL_ARGUMENTS
        if getattr(part.module, name).overloads
    ),
    "registries_loaded": "numba.np.arraymath" in sys.modules,
    "library_preloaded": sorted(
        routine
        for part in program.parts
        for routine in part.module.LIBRARY_CALLS
        if getattr(part.module.lib, routine).overloads
    ),
}
with np.load(sys.argv[2]) as feeds:
    results = program.run("main", [feeds[f"a{i}"] for i in range(len(feeds.files))])
report["scipy_linalg_loaded"] = "scipy.linalg" in sys.modules  # numba's np.dot needs it
np.savez(sys.argv[3], *results)
print(json.dumps(report))
"""


@pytest.fixture(autouse=True)
def numba_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests check the warm start of numba kernels: on the numba target,
    whatever `$DFLOW_TARGET` the suite runs under."""
    monkeypatch.setenv("DFLOW_TARGET", "numba")


def mixed_program() -> tuple[ModuleOp, list[Array]]:
    """Kernels of several element types and ranks: a matmul with an epilogue, an
    integer kernel, a comparison to booleans, a select and a full reduction to 0-d."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    k = rng.integers(-5, 5, (3, 2, 5)).astype(np.int32)
    g = Graph("main")
    gx, gw, gk = g.input("a0", x.shape), g.input("a1", w.shape), g.input("a2", k.shape, "i32")
    h = (gx @ gw).tanh()
    positive = h > 0.0
    g.output(h, gk * gk + gk, positive, h.relu().sum([0, 1]), (gk * 2).transpose([2, 0, 1]))
    return g.module(), [x, w, k]


def kernel_names(directory: Path) -> list[str]:
    program = load_program(directory, warm_start=False)
    return sorted(name for part in program.parts for name in part.module.KERNEL_ARGUMENTS)


def run_fresh(
    directory: Path, feeds: list[Array], tmp_path: Path, store: str = "cache"
) -> tuple[dict[str, Any], Any]:
    """Run the program in a new process whose cache is `tmp_path / store`."""
    np.savez(tmp_path / "feeds.npz", **{f"a{i}": a for i, a in enumerate(feeds)})  # pyright: ignore[reportArgumentType]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, directory, tmp_path / "feeds.npz", tmp_path / "out"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "DFLOW_CACHE_DIR": str(tmp_path / store)},
    )
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as saved:
        results = [saved[f"arr_{i}"] for i in range(len(saved.files))]
    return json.loads(done.stdout), results


def assert_equal_results(actual: Sequence[Array], expected: Sequence[Array]) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_a_fresh_process_starts_with_the_cached_kernels(tmp_path: Path, parallel: bool) -> None:
    module, feeds = mixed_program()
    expected = run_function(module, "main", feeds)
    directory = tmp_path / "program"
    write_modules(compile_module(module, parallel=parallel), directory)
    first, first_results = run_fresh(directory, feeds, tmp_path)  # compiles, fills the cache
    assert first["preloaded"] == []
    second, second_results = run_fresh(directory, feeds, tmp_path)
    names = kernel_names(directory)
    assert len(names) >= 4
    assert second == {
        "preloaded": names,
        "library_preloaded": ["matmul_f32"],  # the product, called from Python
        "registries_loaded": False,
        "scipy_linalg_loaded": SGEMM is None,  # the products use NumPy's BLAS when found
    }
    assert_equal_results(first_results, expected)
    assert_equal_results(second_results, expected)


def test_kernels_the_store_lacks_load_lazily(tmp_path: Path) -> None:
    module, feeds = mixed_program()
    expected = run_function(module, "main", feeds)
    directory = tmp_path / "program"
    write_modules(compile_module(module), directory)
    run_fresh(directory, feeds, tmp_path, store="filled")
    report, results = run_fresh(directory, feeds, tmp_path, store="empty")
    assert report["preloaded"] == []
    assert_equal_results(results, expected)
