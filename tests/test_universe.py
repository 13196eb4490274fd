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
