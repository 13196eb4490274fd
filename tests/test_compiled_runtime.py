"""The runtime of compiled programs and the compile path around it.

Programs are compiled and loaded as in `test_compiled_ops.py` (`compiled_support`).
The runtime's checks: results the caller keeps are never overwritten and a dropped
one is reused, feeds are checked (shape, dtype, count, entry), a receive that never
arrives times out naming its key, and a receive cycle is refused when compiling. The
compile cache: a program compiled once is reused, written modules are stamped with
the compiler's fingerprint, and editing a placement rule or the lowering pipeline
misses the cache. Then the BLAS products refusing strided operands and the lowered
module verified only where `DFLOW_VERIFY` asks.
"""

from __future__ import annotations

import os
import re
import shutil
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import ROOT, run_dflow
from compiled_support import (
    assert_same,
    build,
    compile_to,
    # an autouse fixture: imported so that pytest runs it around each test here
    kernels_typed_as_declared,  # noqa: F401  # pyright: ignore[reportUnusedImport]
)

from dflow.driver.compilation import compiler
from dflow.driver.compilation.compiler import compile_module, compiled_program, write_modules
from dflow.driver.compilation.timing import Timings
from dflow.driver.errors import DflowError
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.source import parse_module
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function
from dflow.runtime import LoadedProgram, ProgramError
from dflow.runtime.channels import Channels
from dflow.runtime.context import ALIGNMENT, TAIL_MARGIN, CpuContext
from dflow.runtime.library import cpu as cpu_library
from dflow.runtime.library.blas import SGEMM

# ----------------------------------------------------------------------------- runtime checks


@pytest.fixture(scope="module")
def small_program(tmp_path_factory: pytest.TempPathFactory) -> LoadedProgram:
    def body(g: Graph, x: Tensor, n: Tensor) -> dict[str, Tensor]:
        return {"y": x * n.cast("f32").sum()}

    arrays = [np.zeros((2, 3), np.float32), np.zeros((4,), np.int64)]
    module, _ = build(arrays, body)
    return compile_to(module, tmp_path_factory.mktemp("small"))


def test_results_kept_by_the_caller_are_never_overwritten(small_program: LoadedProgram) -> None:
    """Results are written into output arrays the caller owns: later runs must not
    touch one the caller, or a view of it, still holds."""
    x, n = np.ones((2, 3), np.float32), np.arange(4, dtype=np.int64)
    kept = small_program.run("main", [x, n])[0]
    view = small_program.run("main", [x * 2, n])[0][1:]
    later = [small_program.run("main", [x * k, n])[0] for k in (3, 4, 5)]
    np.testing.assert_array_equal(kept, np.full((2, 3), 6.0))
    np.testing.assert_array_equal(view, np.full((1, 3), 12.0))
    for k, result in zip((3, 4, 5), later, strict=True):
        np.testing.assert_array_equal(result, np.full((2, 3), 6.0 * k))
        assert not np.shares_memory(result, kept) and not np.shares_memory(result, view)


def test_a_dropped_result_array_is_reused(small_program: LoadedProgram) -> None:
    """Once the caller drops a result, the next run writes into the same array (no
    fresh memory, no page faults); a weak reference sees it survive in the pool."""
    x, n = np.ones((2, 3), np.float32), np.arange(4, dtype=np.int64)
    first = small_program.run("main", [x, n])[0]
    handle = weakref.ref(first)
    del first
    second = small_program.run("main", [x * 2, n])[0]
    assert handle() is second
    np.testing.assert_array_equal(second, np.full((2, 3), 12.0))


def test_runtime_checks_feeds(small_program: LoadedProgram) -> None:
    x, n = np.ones((2, 3), np.float32), np.arange(4, dtype=np.int64)
    np.testing.assert_array_equal(small_program.run("main", [x, n])[0], np.full((2, 3), 6.0))
    # strided and transposed feeds are taken as the arrays they are
    strided_x = np.arange(6, dtype=np.float32).reshape(3, 2).T
    strided_n = np.arange(8, dtype=np.int64)[::2]
    np.testing.assert_array_equal(
        small_program.run("main", [strided_x, strided_n])[0], strided_x * 12
    )
    with pytest.raises(ProgramError, match=r"@main argument 0: expected \(2, 3\) float32, got "):
        small_program.run("main", [np.ones((3, 2), np.float32), n])
    with pytest.raises(ProgramError, match=r"argument 1: expected \(4,\) int64, got \(4,\) int32"):
        small_program.run("main", [x, n.astype(np.int32)])
    with pytest.raises(ProgramError, match=r"argument 0: .* got \(2, 3\) float64"):
        small_program.run("main", [x.astype(np.float64), n])
    with pytest.raises(ProgramError, match=r"@main takes 2 arguments, 1 given"):
        small_program.run("main", [x])
    with pytest.raises(ProgramError, match=r"@main takes 2 arguments, 3 given"):
        small_program.run("main", [x, n, n])
    with pytest.raises(ProgramError, match=r"no entry @nope"):
        small_program.run("nope", [x, n])


# ----------------------------------------------------------------------------- receives

LOST_SEND = """
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> attributes {
        df.arguments = array<i64: 0>, df.results = array<i64: 0>,
        df.function_type = (tensor<2xf32>) -> tensor<2xf32>} {
      %b = df.recv {df.device = "cpu:0", key = "never_sent", from = "cpu:1", to = "cpu:0"}
          : () -> tensor<2xf32>
      %a = df.add %x, %b {df.device = "cpu:0"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      func.return %a : tensor<2xf32>
    }
  }
  builtin.module attributes {df.device = "cpu:1"} {
    func.func @main(%x: tensor<2xf32>) attributes {
        df.arguments = array<i64: 0>, df.results = array<i64>,
        df.function_type = (tensor<2xf32>) -> tensor<2xf32>} {
      %n = df.neg %x {df.device = "cpu:1"} : (tensor<2xf32>) -> tensor<2xf32>
      df.send %n {df.device = "cpu:1", key = "other", from = "cpu:1", to = "cpu:0"}
          : (tensor<2xf32>) -> ()
      func.return
    }
  }
}
"""


def test_a_receive_that_never_arrives_times_out_naming_its_key(tmp_path: Path) -> None:
    program = compile_to(parse_module(LOST_SEND, "lost.mlir"), tmp_path)
    with pytest.raises(
        ProgramError, match=r"key 'never_sent' from cpu:1 on cpu:0 waited .* s and no send arrived"
    ):
        program.run("main", [np.ones(2, np.float32)], timeout=0.3)


def test_a_receive_cycle_is_refused_when_compiling(tmp_path: Path) -> None:
    """Devices that wait on each other never reach the runtime: lowering refuses them."""
    text = (Path(__file__).parent / "data" / "receive_cycle.mlir").read_text()
    with pytest.raises(DflowError, match=r"wait on each other in a cycle"):
        compile_module(parse_module(text, "cycle.mlir"))


# ---------------------------------------------------- the compile cache, the compiler's fingerprint


def test_compiled_program_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path))
    text = (ROOT / "examples" / "mlp.mlir").read_text()
    first = compiled_program(text, parse_module(text, "mlp.mlir"))
    written = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("cpu_0.py")}
    assert len(written) == 1
    second = compiled_program(text, parse_module(text, "mlp.mlir"))
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("cpu_0.py")} == written
    module = parse_module(text, "mlp.mlir")
    inputs = random_inputs(next(iter(module.ops)), 3)  # type: ignore[arg-type]
    expected = run_function(module, "main", inputs)
    assert_same(first.run("main", inputs), expected, ["loss", "p"])
    assert_same(second.run("main", inputs), expected, ["loss", "p"])


def test_written_modules_are_stamped_with_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numba checks a cached kernel against its own file only, though the kernel holds
    the library routines it calls: a new compiler or runtime must rewrite the file."""
    sources = {"cpu_0.py": '"""a module"""\nDEVICE = "cpu:0"\n'}
    monkeypatch.setattr(compiler, "compiler_fingerprint", lambda: "a" * 64)
    write_modules(sources, tmp_path)
    first = (tmp_path / "cpu_0.py").read_text()
    monkeypatch.setattr(compiler, "compiler_fingerprint", lambda: "b" * 64)
    write_modules(sources, tmp_path)
    second = (tmp_path / "cpu_0.py").read_text()
    assert first.startswith("# dflow compiler and runtime aaaa") and first.endswith(
        sources["cpu_0.py"]
    )
    assert second.startswith("# dflow compiler and runtime bbbb") and second != first


def test_editing_placement_or_the_pipeline_misses_the_cache(tmp_path: Path) -> None:
    """The cache key covers every module whose change alters what is compiled: a
    copy of dflow run twice hits its entry; after an edit of a placement rule, and
    again after one of the lowering pipeline's definition, it compiles a new one."""
    package = tmp_path / "src" / "dflow"
    shutil.copytree(ROOT / "dflow", package, ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    environment = {**os.environ, "PYTHONPATH": str(package.parent), "DFLOW_CACHE_DIR": str(cache)}
    program = ROOT / "examples" / "towers.mlir"

    def entries_after_a_run() -> set[str]:
        run = run_dflow("run", program, "--devices", "cpu:0,cpu:1", env=environment, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        return {entry.name for entry in cache.iterdir() if re.fullmatch("[0-9a-f]{24}", entry.name)}

    first = entries_after_a_run()
    assert entries_after_a_run() == first and len(first) == 1
    rule = package / "transforms" / "placement" / "colocation.py"
    rule.write_text(rule.read_text() + "\n# an edited placement rule\n")
    second = entries_after_a_run()
    assert len(second) == 2 and first < second
    pipeline = package / "driver" / "compilation" / "compiler.py"
    text = pipeline.read_text()
    assert "def lowering_pipeline(" in text
    pipeline.write_text(text + "\n# an edited lowering pipeline\n")
    assert len(entries_after_a_run()) == 3


# ------------------------------------------------------------------- library routines, verification


@pytest.mark.skipif(SGEMM is None, reason="NumPy has no bundled OpenBLAS: np.dot is used")
def test_blas_products_refuse_strided_operands() -> None:
    """The CBLAS path reads rows by their length: kernels always pass C-contiguous
    buffers, and anything else is refused, never read with the wrong strides."""
    matmul: Any = getattr(cpu_library, "matmul_f32")  # noqa: B009 (untyped numba dispatcher)
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.empty((3, 4), np.float32)
    with pytest.raises(ValueError, match="C-contiguous"):
        matmul(a[:3, :4], a[:4, :4].copy(), out, 0, 0)
    matmul(a[:3, :4].copy(), a[:4, :4].copy(), out, 0, 0)
    np.testing.assert_array_equal(out, a[:3, :4] @ a[:4, :4])


@pytest.mark.parametrize("setting", ["1", None])
def test_lowered_module_is_verified_only_where_asked(
    monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    """`DFLOW_VERIFY=1` (the tests' setting) verifies the lowered module; unset, the
    step is skipped, and a builder's invalid op would go unreported until numba."""
    if setting is None:
        monkeypatch.delenv(compiler.VERIFY_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(compiler.VERIFY_VARIABLE, setting)
    timings = Timings()
    compile_module(
        parse_module((ROOT / "examples" / "mlp.mlir").read_text(), "mlp.mlir"), timings=timings
    )
    steps = [what for what, _ in timings.rows]
    assert ("verify the lowered module" in steps) == (setting == "1")
    assert "df-bufferize" in steps and steps[-1].startswith("emit ")


@pytest.mark.parametrize("nbytes", [1, 64, 4096, 100_003])
def test_an_arena_is_aligned_and_mapped_past_its_end(nbytes: int) -> None:
    """A CPU arena starts on a 64-byte boundary and has `TAIL_MARGIN` bytes of its own
    memory after its end, where a kernel's masked vector access of the last buffer's
    last elements spans lanes it does not touch (on an unmapped page, a fault
    assist each time)."""
    arena = CpuContext("cpu:0", Channels(1.0)).arena(nbytes)
    base = arena.base
    assert arena.nbytes == nbytes and arena.ctypes.data % ALIGNMENT == 0
    end, mapped_end = arena.ctypes.data + nbytes, base.ctypes.data + base.nbytes
    assert mapped_end - end >= TAIL_MARGIN
