"""df-partition and running partitioned programs.

Random graphs with random placements over 2 to 4 devices are partitioned, checked
by the independent checker (tests/support/partition_checker.py) and run with one thread
per device; their results equal the unpartitioned run bit for bit (each op runs
the same NumPy code on the same inputs, only on another thread).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_support import run_dflow
from graphgen import place_randomly, random_graph
from partition_checker import check_partitioned
from xdsl.utils.exceptions import PassFailedException

from dflow.driver.compilation.interpreted import run_partitioned
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.partitioned import entry_signature
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import parse_module
from dflow.interpreters.df import run_function

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("pipeline", "seed"),
    [("df-partition", seed) for seed in range(12)]
    + [("df-fuse,df-partition", seed) for seed in range(4)],
)
def test_random_placements_run_like_one_device(pipeline: str, seed: int) -> None:
    module = random_graph(seed, min_ops=30)
    main = next(iter(module.ops))
    inputs = random_inputs(main, seed)  # type: ignore[arg-type]
    expected = run_function(module, "main", inputs)
    place_randomly(module, seed)
    apply_pipeline(module, pipeline)
    module.verify()
    assert check_partitioned(module) > 0
    actual = run_partitioned(module, "main", inputs, timeout=10)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    signature = entry_signature(module, "main")
    assert signature.function_type == main.function_type  # type: ignore[attr-defined]


def test_checker_catches_an_unmatched_receive() -> None:
    module = parse_module(
        TWO_PARTS.replace('key = "main.k0", from = "cpu:0"', 'key = "x", from = "cpu:0"', 1), "t"
    )
    with pytest.raises(AssertionError, match="unmatched keys"):
        check_partitioned(module)


def test_checker_catches_a_cycle() -> None:
    module = parse_module(CYCLE, "t")
    with pytest.raises(AssertionError, match="cycle"):
        check_partitioned(module)


def test_unplaced_op_is_refused() -> None:
    module = random_graph(0)
    with pytest.raises(PassFailedException, match=r"has no df\.device"):
        apply_pipeline(module, "df-partition")


TWO_PARTS = (DATA / "two_parts.mlir").read_text()

CYCLE = (DATA / "receive_cycle.mlir").read_text()


def test_cli_runs_a_partitioned_program(tmp_path: Path) -> None:
    path = tmp_path / "two.mlir"
    path.write_text(TWO_PARTS)
    result = run_dflow("run", path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("out0: shape 2 float32")


def test_cli_receive_timeout_names_key_and_devices(tmp_path: Path) -> None:
    path = tmp_path / "stuck.mlir"
    path.write_text(CYCLE)  # each device waits for the other: nothing is ever sent
    result = run_dflow("run", path, "--interpret", "--timeout", "0.3")
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert "stuck.mlir" in line and "waited 0.3 s" in line
    assert ("'k1' from cpu:1 on cpu:0" in line) or ("'k0' from cpu:0 on cpu:1" in line), line


def test_cli_compiled_run_refuses_a_receive_cycle(tmp_path: Path) -> None:
    """Compiling finds the cycle before anything runs (df-fuse orders the parts)."""
    path = tmp_path / "stuck.mlir"
    path.write_text(CYCLE)
    result = run_dflow("run", path)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert "stuck.mlir" in line and "wait on each other in a cycle" in line, line


EXAMPLES = Path(__file__).parent.parent / "examples"


def test_cli_places_partitions_and_runs_like_one_device(tmp_path: Path) -> None:
    single = run_dflow("run", EXAMPLES / "towers.mlir", "--output", tmp_path / "one.npz")
    several = run_dflow(
        "run",
        EXAMPLES / "towers.mlir",
        "--devices",
        "cpu:0,cpu:1",
        "--output",
        tmp_path / "two.npz",
    )
    assert single.returncode == several.returncode == 0, several.stderr
    with np.load(tmp_path / "one.npz") as one, np.load(tmp_path / "two.npz") as two:
        # close, not equal: OpenBLAS's last bits depend on its thread count, and two
        # CPU devices each take half the cores (runtime/blas_threads.py)
        np.testing.assert_allclose(one["out0"], two["out0"], rtol=1e-5, atol=1e-3)


def test_cli_bad_device_list_is_one_line(tmp_path: Path) -> None:
    result = run_dflow("run", EXAMPLES / "towers.mlir", "--devices", "tpu:0")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{EXAMPLES / 'towers.mlir'}: error: --devices: bad device 'tpu:0'")


CALLS = """
func.func @square(%v: tensor<4xf32>) -> tensor<4xf32> {
  %s = df.mul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %q = func.call @square(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = df.add %q, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize("engine", [(), ("--interpret",)])
def test_cli_devices_inline_calls_first(tmp_path: Path, engine: tuple[str, ...]) -> None:
    """Placement sees the callee's ops (inlined), so calls run on several devices."""
    path = tmp_path / "calls.mlir"
    path.write_text(CALLS)
    x = np.array([-2.0, -0.5, 1.5, 3.0], np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    out = tmp_path / "out.npz"
    result = run_dflow(
        "run",
        path,
        "--devices",
        "cpu:0,cpu:1",
        "--inputs",
        tmp_path / "in.npz",
        "--output",
        out,
        *engine,
    )
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(out)["out0"], x * x + x)
