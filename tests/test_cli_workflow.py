"""The command line's workflow options: `--version`, `run --print`, inputs from
`.npy` files, `compile --time`, and `dflow cache info|clear` with its size bound."""

from __future__ import annotations

import os
import re
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import ROOT, run_dflow

from dflow.driver.compilation import cache as compile_cache

SCALE = """
func.func @main(%x: tensor<2x3xf32>, %k: tensor<f32>) -> tensor<2x3xf32> {
  %y = df.mul %x, %k : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""


def _program(tmp_path: Path, text: str = SCALE, name: str = "scale.mlir") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_version_names_dflow_and_what_it_runs_on() -> None:
    run = run_dflow("--version")
    assert run.returncode == 0
    assert run.stdout.startswith(f"dflow {metadata.version('dflow')} (xDSL ")
    assert f"numba {metadata.version('numba')}" in run.stdout


def test_print_shows_every_result_in_full(tmp_path: Path) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.savez(tmp_path / "in.npz", x=x, k=np.float32(0.5))
    run = run_dflow("run", _program(tmp_path), "--inputs", tmp_path / "in.npz", "--print")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"out0: shape 2x3 float32\n{np.array2string(x * 0.5)}\n"
    big = run_dflow("run", ROOT / "examples" / "mlp.mlir", "--print")
    assert "..." not in big.stdout and big.stdout.count("\n") > 8  # no elision


def test_inputs_from_npy_files_by_position_and_name(tmp_path: Path) -> None:
    x = np.ones((2, 3), np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "k.npy", np.float32(3))
    program = _program(tmp_path)
    positional = [str(tmp_path / "x.npy"), str(tmp_path / "k.npy")]
    named = [f"k={tmp_path / 'k.npy'}", f"x={tmp_path / 'x.npy'}"]
    for files in (positional, named):
        repeated = [part for file in files for part in ("--inputs", file)]
        run = run_dflow("run", "--print", *repeated, program)
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines()[1:] == np.array2string(x * 3).splitlines()


def test_bad_input_files_are_one_line(tmp_path: Path) -> None:
    program = _program(tmp_path)
    (tmp_path / "x.txt").write_text("1 2 3")
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY garbage")
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    cases = {
        "x.txt": "cannot read inputs from {}/x.txt: it is not an .npz archive",
        "bad.npy": "cannot read inputs from {}/bad.npy: ",
        "none.npy": "cannot read inputs from {}/none.npy: no such file",
    }
    for name, message in cases.items():
        run = run_dflow("run", program, "--inputs", tmp_path / name)
        assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert message.format(tmp_path) in run.stderr
    mixed = run_dflow(
        "run", program, "--inputs", tmp_path / "x.npy", "--inputs", tmp_path / "x.txt"
    )
    assert "give one .npz archive, or .npy files" in mixed.stderr


@pytest.mark.parametrize(
    ("target", "compile_step"),
    [("numba", "numba: compile 1 CPU kernels of cpu:0"),
     ("llvm", "LLVM: optimize and compile cpu_0.ll")],
)  # fmt: skip
def test_compile_time_reports_every_pass_and_numba(
    tmp_path: Path, target: str, compile_step: str
) -> None:
    """Every pass, and the target's own compile of the kernels (numba's, or LLVM's)."""
    out = tmp_path / "out"
    run = run_dflow("compile", _program(tmp_path), "-o", out, "--time", "--target", target)
    assert run.returncode == 0, run.stderr
    steps = [line.split(maxsplit=2)[2] for line in run.stderr.splitlines()[1:]]
    for name in ("df-inline", "df-fuse", "df-bufferize", "df-plan-buffers", "df-lower-host"):
        assert name in steps
    assert compile_step in steps and steps[-1] == "total"
    seconds = [float(line.split()[0]) for line in run.stderr.splitlines()[1:]]
    assert abs(sum(seconds[:-1]) - seconds[-1]) < 1e-3 * len(seconds)


def _entries(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if re.fullmatch(r"[0-9a-f]{24}", p.name))


def test_cache_info_clear_and_its_bound(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    # numba's kernel store: one kernel for the three programs (the llvm target's keeps
    # a unit per kernel and one for the host)
    environment = {**os.environ, "DFLOW_CACHE_DIR": str(cache), "DFLOW_TARGET": "numba"}
    for factor in range(3):
        text = SCALE.replace("df.mul %x, %k", "df.mul %x, %k" + " " * factor)
        program = _program(tmp_path, text, f"p{factor}.mlir")
        assert run_dflow("run", program, env=environment).returncode == 0
    assert len(_entries(cache)) == 3
    info = run_dflow("cache", "info", env=environment)
    assert info.stdout.splitlines()[0] == f"cache: {cache}"
    # the three programs differ in their text only: one kernel serves them all
    summary = r"entries: 3 programs, 1 kernels, [0-9.]+ (KiB|MiB) \(kept under 1\.0 GiB: .*\)"
    assert re.fullmatch(summary, info.stdout.splitlines()[1])
    bounded = {**environment, "DFLOW_CACHE_MAX_BYTES": "1"}
    newest = run_dflow("run", _program(tmp_path, SCALE + "\n", "p3.mlir"), env=bounded)
    assert newest.returncode == 0 and len(_entries(cache)) == 1  # the older ones went
    cleared = run_dflow("cache", "clear", env=environment)
    assert cleared.stdout.startswith("removed 1 programs, 1 kernels, ")
    assert _entries(cache) == [] and not (cache / "kernels").exists()


def test_a_trim_leaves_other_processes_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several processes compiling at once (MPI ranks): a trim removes an old entry
    and a scratch folder left long ago, never one written just now (another
    process's compile in progress); a folder that vanishes while the cache is
    measured (renamed onto its key meanwhile) is skipped, not an error."""
    monkeypatch.setenv("DFLOW_CACHE_MAX_BYTES", "1")
    old_entry, left, fresh, kept = (
        tmp_path / ("0" * 24),
        tmp_path / f"{compile_cache.SCRATCH_PREFIX}left",
        tmp_path / f"{compile_cache.SCRATCH_PREFIX}fresh",
        tmp_path / ("1" * 24),
    )
    for folder in (old_entry, left, fresh, kept):
        folder.mkdir()
        (folder / "cpu_0.py").write_text("x = 1\n")
    long_ago = time.time() - 2 * compile_cache.SCRATCH_GRACE_S
    for folder in (old_entry, left):
        os.utime(folder, (long_ago, long_ago))
    compile_cache.trim(keep=kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, kept.name])
    assert compile_cache.entries(tmp_path / "absent") == []
    vanished = tmp_path / f"{compile_cache.SCRATCH_PREFIX}gone"
    real_rglob = Path.rglob

    def rglob(self: Path, pattern: str) -> Any:
        if self == vanished:
            raise FileNotFoundError(2, "renamed meanwhile", str(self))
        return real_rglob(self, pattern)

    vanished.mkdir()
    monkeypatch.setattr(Path, "rglob", rglob)
    assert {e.path.name for e in compile_cache.entries(tmp_path)} == {fresh.name, kept.name}
