"""Start-up: `dflow --help` and a cached `dflow run` import neither xDSL nor the
compiler, and a run from the cache does what the whole way does.

Each run is a fresh `python -m dflow` whose imports are listed at exit (a wrapper
prints `sys.modules`), against its own cache folder; the first run of a program
compiles it, the second finds its entry. The times themselves are measured by
`bench/startup.py`, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dflow.driver.frontdoors.cli import TARGETS
from dflow.driver.universe import get_all_targets

ROOT = Path(__file__).resolve().parent.parent

WRAPPER = """
import atexit, json, sys
from dflow.driver.frontdoors.cli import main
atexit.register(lambda: print("MODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr))
code = main(sys.argv[1:])
sys.stdout.flush()
sys.exit(code)
"""

PROGRAM = """func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %y = "df.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %unused = "df.exp"(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %z = "df.tanh"(%y) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %z : tensor<4x2xf32>
}

func.func @twice(%v: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>) {
  %d = "df.add"(%v, %v) : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  func.return %d, %d : tensor<5xf64>, tensor<5xf64>
}
"""


def _dflow(
    cache: Path, *args: str | Path, stdin: str | None = None
) -> tuple[int, str, str, set[str]]:
    """Exit status, stdout, stderr (less the module list) and the modules imported."""
    environment = {**os.environ, "DFLOW_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=environment,
        timeout=300,
    )
    lines = done.stderr.splitlines()
    modules = [line for line in lines if line.startswith("MODULES ")]
    assert modules, done.stderr
    imported = set(json.loads(modules[-1].removeprefix("MODULES ")))
    stderr = "\n".join(line for line in lines if not line.startswith("MODULES "))
    return done.returncode, done.stdout, stderr, imported


NAMES_ONLY = {"dflow.dialects", "dflow.dialects.devices"}
"""What a cached run may import of the dialects: the device names (no xDSL)."""


def _compiler_modules(imported: set[str]) -> list[str]:
    compiler = ("xdsl", "dflow.dialects", "dflow.transforms", "dflow.lowering", "dflow.backend")
    return sorted(m for m in imported if m.startswith(compiler) and m not in NAMES_ONLY)


def test_help_imports_no_compiler_nor_numba(tmp_path: Path) -> None:
    code, out, _, imported = _dflow(tmp_path, "--help")
    assert code == 0 and "run" in out and "compile" in out
    assert not _compiler_modules(imported)
    assert "numba" not in imported


def test_opt_help_names_every_target_of_the_universe() -> None:
    """The parser names the targets without importing xDSL: they must stay those of
    `dflow.driver.universe`."""
    assert set(TARGETS) == set(get_all_targets())


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("startup") / "program.mlir"
    path.write_text(PROGRAM)
    return path


def test_a_cached_run_imports_no_compiler_and_prints_the_same(
    tmp_path: Path, program: Path
) -> None:
    first = _dflow(tmp_path, "run", program, "--print")
    assert first[0] == 0, first[2]
    assert _compiler_modules(first[3])  # the first run compiles
    second = _dflow(tmp_path, "run", program, "--print")
    assert second[0] == 0, second[2]
    assert not _compiler_modules(second[3])
    assert second[1] == first[1]
    interpreted = _dflow(tmp_path, "run", program, "--print", "--interpret")
    assert interpreted[0] == 0 and interpreted[1] != ""
    assert _compiler_modules(interpreted[3])  # --interpret always parses


def test_cached_feeds_by_name_and_their_errors_match_the_whole_way(
    tmp_path: Path, program: Path
) -> None:
    """`--inputs` by argument name, and an input that matches no argument, give the
    same output and the same one-line error with and without the cache."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    np.savez(good, x=x, w=w)
    np.savez(bad, x=x, v=w)
    out = tmp_path / "out.npz"
    cold = _dflow(tmp_path / "cache", "run", program, "--inputs", good, "--output", out)
    assert cold[0] == 0, cold[2]
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["out0"], np.tanh(x @ w), rtol=1e-5, atol=1e-6)
    out.unlink()
    warm = _dflow(tmp_path / "cache", "run", program, "--inputs", good, "--output", out)
    assert warm[0] == 0 and not _compiler_modules(warm[3]), warm[2]
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["out0"], np.tanh(x @ w), rtol=1e-5, atol=1e-6)
    failed_warm = _dflow(tmp_path / "cache", "run", program, "--inputs", bad)
    assert not _compiler_modules(failed_warm[3])
    failed_cold = _dflow(tmp_path / "other", "run", program, "--inputs", bad)
    assert failed_warm[0] == failed_cold[0] == 1
    assert failed_warm[2] == failed_cold[2]
    assert "input 'v' in " in failed_warm[2] and "(arguments: x, w)" in failed_warm[2]


def test_every_entry_and_standard_input_run_from_the_cache(tmp_path: Path) -> None:
    """A second entry of a cached program runs without the compiler too (with its
    repeated result), and so does a program read from a pipe; an entry that does not
    exist goes the whole way and fails there in one line."""
    first = _dflow(tmp_path, "run", "-", "--entry", "twice", stdin=PROGRAM)
    assert first[0] == 0, first[2]
    again = _dflow(tmp_path, "run", "-", "--entry", "twice", stdin=PROGRAM)
    assert again[0] == 0 and again[1] == first[1], again[2]
    assert not _compiler_modules(again[3])
    assert again[1].count("shape 5 float64") == 2
    main = _dflow(tmp_path, "run", "-", stdin=PROGRAM)
    assert main[0] == 0 and not _compiler_modules(main[3]), main[2]
    missing = _dflow(tmp_path, "run", "-", "--entry", "nowhere", stdin=PROGRAM)
    assert missing[0] == 1 and "nowhere" in missing[2] and "Traceback" not in missing[2]
    assert len(missing[2].splitlines()) == 1


PINNED = """func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4xf32> {
  %a = df.tanh %x {df.device = "cpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.sigmoid %y {df.device = "cpu:1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = df.sub %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = df.reduce_max %c {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}
"""


def _twice_from_the_cache(cache: Path, *args: str | Path) -> None:
    """The first run compiles; the second, alike, imports no compiler and prints the
    same."""
    first = _dflow(cache, "run", *args, "--print")
    assert first[0] == 0, first[2]
    assert _compiler_modules(first[3])
    second = _dflow(cache, "run", *args, "--print")
    assert second[0] == 0, second[2]
    assert not _compiler_modules(second[3]), _compiler_modules(second[3])
    assert second[1] == first[1]


def test_a_pinned_program_runs_from_the_cache(tmp_path: Path) -> None:
    """Pins name the devices (no --devices): the entry is keyed by the request, so the
    cache answers it (it never did: the entry was keyed by the devices the pins gave)."""
    path = tmp_path / "pinned.mlir"
    path.write_text(PINNED)
    _twice_from_the_cache(tmp_path / "cache", path)


def test_a_partitioned_program_runs_from_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "partitioned.mlir"
    pipeline = "df-place-devices{devices=cpu:0,cpu:1},df-partition"
    towers = ROOT / "examples" / "towers.mlir"
    assert _dflow(tmp_path, "opt", towers, "-p", pipeline, "-o", path)[0] == 0
    _twice_from_the_cache(tmp_path / "cache", path)


def _from_the_cache(cache: Path, *args: str | Path) -> str:
    """A run that must take the fast path: its stdout."""
    status, out, err, imported = _dflow(cache, "run", *args, "--print")
    assert status == 0, err
    assert not _compiler_modules(imported), _compiler_modules(imported)
    return out


def test_spaces_in_the_device_list_take_the_same_entry(tmp_path: Path) -> None:
    """`--devices` is parsed once into a list of names, so `cpu:0, cpu:1` is the
    request `cpu:0,cpu:1` was."""
    path = tmp_path / "pinned.mlir"
    path.write_text(PINNED)
    _twice_from_the_cache(tmp_path / "cache", path, "--devices", "cpu:0,cpu:1")
    first = _from_the_cache(tmp_path / "cache", path, "--devices", "cpu:0,cpu:1")
    assert _from_the_cache(tmp_path / "cache", path, "--devices", " cpu:0 , cpu:1") == first


def test_another_order_takes_the_entry_where_the_order_cannot_matter(tmp_path: Path) -> None:
    """A partitioned module's parts fix where everything runs, so `--devices` in any
    order is one request; for a program still to be placed, the order decides where
    the arguments live (the first CPU listed) and is another request."""
    cache = tmp_path / "cache"
    path = tmp_path / "partitioned.mlir"
    pipeline = "df-place-devices{devices=cpu:0,cpu:1},df-partition"
    assert (
        _dflow(tmp_path, "opt", ROOT / "examples" / "towers.mlir", "-p", pipeline, "-o", path)[0]
        == 0
    )
    _twice_from_the_cache(cache, path, "--devices", "cpu:0,cpu:1")
    first = _from_the_cache(cache, path, "--devices", "cpu:0,cpu:1")
    assert _from_the_cache(cache, path, "--devices", "cpu:1,cpu:0") == first
    placed = tmp_path / "pinned.mlir"
    placed.write_text(PINNED)
    _twice_from_the_cache(cache, placed, "--devices", "cpu:0,cpu:1")
    reordered = _dflow(cache, "run", placed, "--devices", "cpu:1,cpu:0", "--print")
    assert reordered[0] == 0 and _compiler_modules(reordered[3])  # compiled: another request


def test_an_onnx_model_runs_from_the_cache(tmp_path: Path) -> None:
    """A model that keeps its data inside runs from the cache, keyed by its bytes and
    `--shape`; another shape is another entry."""
    pytest.importorskip("onnx")
    from onnx_models import mlp  # noqa: PLC0415 (imports onnx)

    path = tmp_path / "mlp.onnx"
    path.write_bytes(mlp(sizes=(16, 8, 4)).SerializeToString())
    _twice_from_the_cache(tmp_path / "cache", path, "--shape", "input=3,16")
    other = _dflow(tmp_path / "cache", "run", path, "--shape", "input=5,16")
    assert other[0] == 0 and _compiler_modules(other[3]) and "shape 5x4 float32" in other[1]
