"""dflow joins xdsl-opt through the `xdsl.universe` entry point."""

import subprocess
import sys
from pathlib import Path

from xdsl.universe import Universe

from dflow.driver.universe import DFLOW_UNIVERSE

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_entry_point_is_discovered_without_clashes() -> None:
    multiverse = Universe.get_multiverse()  # raises on a duplicate dialect or pass name
    assert "df" in multiverse.all_dialects
    assert set(DFLOW_UNIVERSE.all_passes) <= set(multiverse.all_passes)


def test_registry_keys_match_what_they_load() -> None:
    for name, factory in DFLOW_UNIVERSE.all_dialects.items():
        assert factory().name == name
    for name, factory in DFLOW_UNIVERSE.all_passes.items():
        assert factory().name == name
        assert name.startswith("df-"), "dflow's passes are named df-*"


def test_plain_xdsl_opt_round_trips_an_example() -> None:
    source = EXAMPLES / "mlp.mlir"
    first = subprocess.run(
        [sys.executable, "-m", "xdsl.tools.xdsl_opt", str(source)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    second = subprocess.run(
        [sys.executable, "-m", "xdsl.tools.xdsl_opt"],
        input=first,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "df.softmax" in first
    assert first == second


def test_placement_in_pipelines_knows_the_numba_targets_capabilities() -> None:
    """`df-place-devices` as xdsl-opt and `dflow opt` load it keeps the ops the CUDA
    library lacks (a convolution's input gradient) off a GPU."""
    program = """
    func.func @main(%dy: tensor<1x2x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x6x6xf32> {
      %dx = df.conv2d_grad_input %dy, %w
        : (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x6x6xf32>
      func.return %dx : tensor<1x3x6x6xf32>
    }
    """
    placed = subprocess.run(
        [
            sys.executable,
            "-m",
            "xdsl.tools.xdsl_opt",
            "-p",
            'df-place-devices{devices="gpu:0,cpu:0"}',
        ],
        input=program,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert 'df.conv2d_grad_input %dy, %w {df.device = "cpu:0"}' in placed
