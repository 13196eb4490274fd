"""The kernel store (`dflow/runtime/kernel_cache.py`): a CPU kernel is compiled once
for every program that contains it, whatever its name there; an edit recompiles
only the kernels it changed; a changed runtime or a store others could write is
never read.

The programs here are written by hand so that which kernels they share is known
without the compiler: `A` and `B` have the same matrix product (named `matmul_0`
in one and `matmul_1` in the other) and differ in their elementwise op.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.driver.loading.source import parse_module
from dflow.runtime import kernel_cache, load_program

ROOT = Path(__file__).resolve().parent.parent

A = """func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %u: tensor<5xf32>)
    -> (tensor<4x2xf32>, tensor<5xf32>) {
  %p = "df.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = "df.relu"(%p) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %t = "df.tanh"(%u) : (tensor<5xf32>) -> tensor<5xf32>
  func.return %y, %t : tensor<4x2xf32>, tensor<5xf32>
}
"""

B = """func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %u: tensor<5xf32>)
    -> (tensor<4x2xf32>, tensor<5xf32>) {
  %e = "df.exp"(%u) : (tensor<5xf32>) -> tensor<5xf32>
  %t = "df.neg"(%e) : (tensor<5xf32>) -> tensor<5xf32>
  %p = "df.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = "df.relu"(%p) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %y, %t : tensor<4x2xf32>, tensor<5xf32>
}
"""

RUN = """
import json, sys
import numpy as np
from dflow.runtime import load_program
from dflow.runtime.warm_start import preload_kernels
program = load_program(sys.argv[1], warm_start=False)
module = program.parts[0].module
preload_kernels(module)
loaded = sorted(k for k in module.KERNEL_ARGUMENTS if getattr(module, k).overloads)
rng = np.random.default_rng(0)
signature = program.signature("main")["entry_arguments"]
arguments = [rng.standard_normal(s).astype(d) for s, d in signature]
results = program.run("main", arguments)
print(json.dumps({"loaded": loaded, "arguments": [a.tolist() for a in arguments],
                  "results": [r.tolist() for r in results]}))
"""


@pytest.fixture(autouse=True)
def numba_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests check numba's kernel store: on the numba target, whatever
    `$DFLOW_TARGET` the suite runs under."""
    monkeypatch.setenv("DFLOW_TARGET", "numba")


def _write(text: str, directory: Path) -> Path:
    write_modules(compile_module(parse_module(text, "<test>")), directory)
    return directory


def _run_fresh(directory: Path, cache: Path) -> dict[str, Any]:
    """Load `directory` in a new process with the kernel store under `cache`, load
    what the store has, run `@main`: the kernels loaded, the arguments, the results."""
    environment = {**os.environ, "DFLOW_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(directory)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
        cwd=ROOT,
    )
    return json.loads(done.stdout) | {"stderr": done.stderr}


def _check(run: dict[str, Any], elementwise: Any) -> None:
    """The results are `relu(x @ w)` and `elementwise(u)`, computed here by NumPy."""
    x, w, u = (np.array(a, np.float32) for a in run["arguments"])
    product, other = (np.array(r, np.float32) for r in run["results"])
    np.testing.assert_allclose(product, np.maximum(x @ w, 0), rtol=1e-5)
    np.testing.assert_allclose(other, elementwise(u), rtol=1e-5)


def test_an_edit_recompiles_only_the_kernel_it_changed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _run_fresh(_write(A, tmp_path / "a"), cache)
    assert first["loaded"] == []  # an empty store: everything compiled
    _check(first, np.tanh)
    folders = [cache / "kernels", *(cache / "kernels").iterdir()]
    assert len(folders) == 3  # the store and a folder per kernel, private
    assert all(stat.S_IMODE(folder.stat().st_mode) == 0o700 for folder in folders)
    edited = _run_fresh(_write(B, tmp_path / "b"), cache)
    # the product's epilogue (relu) is the same kernel, named after fused_matmul_0 in A
    assert edited["loaded"] == ["fused_matmul_1_epilogue"]  # fused_exp_0 is new
    _check(edited, lambda u: -np.exp(u))
    again = _run_fresh(tmp_path / "a", cache)
    assert again["loaded"] == ["fused_matmul_0_epilogue", "tanh_0"]
    _check(again, np.tanh)


def test_one_process_makes_one_dispatcher_per_kernel(tmp_path: Path) -> None:
    a = load_program(_write(A, tmp_path / "a")).parts[0].module
    b = load_program(_write(B, tmp_path / "b")).parts[0].module
    assert a.fused_matmul_0_epilogue is b.fused_matmul_1_epilogue
    assert a.tanh_0 is not b.fused_exp_0


def test_another_runtime_keeps_its_kernels_apart(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path))
    here = kernel_cache.kernel_folder("0123456789abcdef01234567")
    monkeypatch.setattr(kernel_cache, "runtime_fingerprint", lambda: "another runtime")
    there = kernel_cache.kernel_folder("0123456789abcdef01234567")
    assert here is not None and there is not None
    assert here.parent == there.parent == tmp_path / "kernels" and here != there


def test_a_store_others_can_write_is_not_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    directory = _write(A, tmp_path / "a")
    _run_fresh(directory, cache)  # fills the store
    (cache / "kernels").chmod(0o777)
    run = _run_fresh(directory, cache)
    assert run["loaded"] == []
    assert f"not caching kernels in {cache / 'kernels'}" in run["stderr"]
    _check(run, np.tanh)


def test_a_kernel_folder_others_can_write_is_not_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    directory = _write(A, tmp_path / "a")
    _run_fresh(directory, cache)
    folders = sorted((cache / "kernels").iterdir())
    assert len(folders) == 2
    folders[0].chmod(0o777)
    run = _run_fresh(directory, cache)
    assert len(run["loaded"]) == 1
    assert f"not caching kernels in {folders[0]}" in run["stderr"]
    _check(run, np.tanh)


PARALLEL = """
import json, sys
from dflow.runtime import load_program
from dflow.runtime.parallel_compile import compile_in_parallel
module = load_program(sys.argv[1], warm_start=False).parts[0].module
workers = compile_in_parallel(module, workers=int(sys.argv[2]))
ready = sorted(k for k in module.KERNEL_ARGUMENTS if getattr(module, k).overloads)
print(json.dumps({"workers": workers, "ready": ready}))
"""


@pytest.mark.parametrize("workers", [1, 2])
def test_new_kernels_compile_in_forked_workers(tmp_path: Path, workers: int) -> None:
    """With two workers, each process compiles one of A's two kernels into the
    store, and this one loads the other's: both ready before the first call, and
    the store holds both; with one, nothing happens before the first call."""
    cache = tmp_path / "cache"
    directory = _write(A, tmp_path / "a")
    done = subprocess.run(
        [sys.executable, "-c", PARALLEL, str(directory), str(workers)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DFLOW_CACHE_DIR": str(cache)},
        cwd=ROOT,
    )
    report = json.loads(done.stdout)
    if workers == 1:
        assert report == {"workers": 1, "ready": []}
        return
    assert report == {"workers": 2, "ready": ["fused_matmul_0_epilogue", "tanh_0"]}
    assert len(list((cache / "kernels").iterdir())) == 2
    run = _run_fresh(directory, cache)
    assert run["loaded"] == ["fused_matmul_0_epilogue", "tanh_0"]
    _check(run, np.tanh)
