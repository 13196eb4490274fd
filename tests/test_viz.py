"""`dflow viz`: the DOT text of placed and partitioned graphs, and the pictures."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cli_support import run_dflow

from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import parse_module
from dflow.driver.tools.viz import to_dot

PLACED = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.exp %x {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.add %a, %y {df.device = "gpu:0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = df.neg %b {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
"""


def _edges(dot: str) -> list[str]:
    return [line.strip() for line in dot.splitlines() if "->" in line]


def test_placed_graph_colours_devices_and_marks_crossing_edges() -> None:
    dot = to_dot(parse_module(PLACED, "placed.mlir"))
    assert dot.startswith("digraph dflow {")
    fills = dict(
        re.findall(r'label="(\w+)\\n%\w+[^"]*", shape=box, style=filled, fillcolor="(#\w+)"', dot)
    )
    assert fills["exp"] != fills["add"] == fills["neg"]
    crossing = [edge for edge in _edges(dot) if "color=red" in edge]
    assert len(crossing) == 1 and 'label="16 B"' in crossing[0]  # 4 f32 from exp to add
    assert len(_edges(dot)) == 5  # x->exp, exp->add, y->add, add->neg, neg->results


def test_partitioned_graph_draws_one_cluster_per_device_and_send_recv_edges() -> None:
    module = apply_pipeline(parse_module(PLACED, "placed.mlir"), "df-partition")
    dot = to_dot(module)
    assert dot.count("subgraph cluster_") == 2
    assert 'label="cpu:0"' in dot and 'label="gpu:0"' in dot
    crossing = [edge for edge in _edges(dot) if "color=red" in edge]
    assert len(crossing) == 1  # the one send -> recv pair


def test_cli_writes_dot(tmp_path: Path) -> None:
    source = tmp_path / "placed.mlir"
    source.write_text(PLACED)
    result = run_dflow("viz", source, "-o", tmp_path / "g.dot")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "g.dot").read_text().startswith("digraph dflow {")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
@pytest.mark.parametrize(("suffix", "magic"), [(".svg", b"<?xml"), (".png", b"\x89PNG")])
def test_cli_draws_pictures(tmp_path: Path, suffix: str, magic: bytes) -> None:
    source = tmp_path / "placed.mlir"
    source.write_text(PLACED)
    result = run_dflow("viz", source, "-o", tmp_path / f"g{suffix}", "--partition")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / f"g{suffix}").read_bytes().startswith(magic)


def test_cli_rejects_an_unknown_picture_format(tmp_path: Path) -> None:
    source = tmp_path / "placed.mlir"
    source.write_text(PLACED)
    result = run_dflow("viz", source, "-o", tmp_path / "g.jpg")
    assert result.returncode == 1
    assert result.stderr.strip().endswith("the file must end in .dot, .svg or .png")
    assert "Traceback" not in result.stderr
