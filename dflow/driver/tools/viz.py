"""`dflow viz`: draw a program's dataflow graph with Graphviz.

Ops are boxes filled with their device's colour (white when unplaced), function
arguments and results are ovals; an edge that crosses devices is drawn bold, red
and dashed, labelled with the bytes it moves. A partitioned module is drawn as
one cluster per device, its `df.send` → `df.recv` pairs as the crossing edges.
The DOT text is written by this module; `.svg` and `.png` need Graphviz's `dot`.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from dflow.dialects.df import RecvOp, SendOp, annotations
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.shapes import format_shape, num_elements
from dflow.dialects.df.symbols import device_modules, function_named
from dflow.dialects.df.types import shape_of, static_tensor
from dflow.driver.errors import DflowError

PALETTE = ("#8ecae6", "#ffb703", "#90be6d", "#f4a261", "#cdb4db", "#e9c46a", "#a8dadc")
FORMATS = {".dot", ".svg", ".png"}
LOWERED = ("dfrt.", "df.fused", "memref.", "scf.")
"""Ops that exist only below the graph level, which viz does not draw."""


def _device(op: Operation) -> str | None:
    device = op.attributes.get(annotations.DEVICE)
    return device.data if isinstance(device, StringAttr) else None


def _bytes(value: SSAValue) -> int:
    tensor = static_tensor(value.type)
    return num_elements(shape_of(tensor)) * numpy_dtype(tensor.element_type).itemsize


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


class DotWriter:
    """Accumulates the DOT text of one graph; node names are stable per op/value."""

    def __init__(self, devices: Iterable[str]):
        self.colours = {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(devices)}
        self.lines: list[str] = [
            "digraph dflow {",
            "  rankdir=TB;",
            '  node [fontname="Helvetica"];',
        ]
        self.names: dict[object, str] = {}

    def name(self, thing: object) -> str:
        return self.names.setdefault(thing, f"n{len(self.names)}")

    def node(self, thing: object, label: str, shape: str, device: str | None) -> None:
        colour = self.colours.get(device or "", "white")
        self.lines.append(
            f"  {self.name(thing)} [label={_quote(label)}, shape={shape}, style=filled, "
            f'fillcolor="{colour}"];'
        )

    def edge(self, source: object, target: object, value: SSAValue, crossing: bool) -> None:
        style = ""
        if crossing:
            style = f' [color=red, penwidth=2, style=dashed, label="{_bytes(value)} B"]'
        self.lines.append(f"  {self.name(source)} -> {self.name(target)}{style};")

    def legend(self) -> None:
        for device, colour in self.colours.items():
            self.lines.append(
                f"  {_quote('legend ' + device)} [label={_quote(device)}, shape=box, "
                f'style=filled, fillcolor="{colour}"];'
            )

    def text(self) -> str:
        return "\n".join([*self.lines, "}"]) + "\n"


def _label(op: Operation) -> str:
    names = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
    shapes = ", ".join(format_shape(shape_of(r.type)) for r in op.results)
    return "\n".join(part for part in (op.name.removeprefix("df."), names, shapes) if part)


def _draw_function(writer: DotWriter, function: FuncOp, device: str | None = None) -> None:
    producers: dict[SSAValue, tuple[object, str | None]] = {}
    for argument in function.args:
        writer.node(argument, f"%{argument.name_hint or argument.index}", "oval", None)
        producers[argument] = (argument, None)
    for op in function.body.block.ops:
        target_device = _device(op) or device
        if isinstance(op, ReturnOp):
            writer.node(op, f"@{function.sym_name.data} results", "oval", None)
        else:
            writer.node(op, _label(op), "box", target_device)
        for operand in op.operands:
            source, source_device = producers[operand]
            crossing = not isinstance(operand, BlockArgument) and source_device != target_device
            writer.edge(source, op, operand, crossing and not isinstance(op, ReturnOp))
        for result in op.results:
            producers[result] = (op, target_device)


def _draw_partitioned(writer: DotWriter, parts: list[tuple[str, ModuleOp]], entry: str) -> None:
    sends: dict[str, SendOp] = {}
    recvs: dict[str, RecvOp] = {}
    for index, (device, part) in enumerate(parts):
        writer.lines.append(f"  subgraph cluster_{index} {{ label={_quote(device)};")
        if (function := function_named(part, entry)) is not None:
            _draw_function(writer, function, device)
            sends |= {op.key.data: op for op in function.walk() if isinstance(op, SendOp)}
            recvs |= {op.key.data: op for op in function.walk() if isinstance(op, RecvOp)}
        writer.lines.append("  }")
    for key in sorted(sends.keys() & recvs.keys()):
        writer.edge(sends[key], recvs[key], sends[key].input, crossing=True)


def to_dot(module: ModuleOp, entry: str = "main") -> str:
    """The DOT text of `entry` (of each device's part of it, when partitioned)."""
    lowered = next((op for op in module.walk() if op.name.startswith(LOWERED)), None)
    if lowered is not None:
        raise DflowError(f"viz draws df graphs; this module is lowered past them ({lowered.name})")
    parts = device_modules(module)
    devices = sorted({d for op in module.walk() if (d := _device(op)) is not None})
    writer = DotWriter(devices)
    if parts:
        _draw_partitioned(writer, parts, entry)
    else:
        function = function_named(module, entry)
        if function is None:
            raise DflowError(f"no function @{entry} to draw")
        _draw_function(writer, function)
    writer.legend()
    return writer.text()


def write_picture(dot: str, output: Path) -> None:
    """Write `dot` as `output`: DOT text, or SVG/PNG through Graphviz's `dot`."""
    if output.suffix not in FORMATS:
        raise DflowError(f"cannot draw {output}: the file must end in .dot, .svg or .png")
    if not output.parent.is_dir():
        raise DflowError(f"cannot draw {output}: there is no folder {output.parent}")
    if output.suffix == ".dot":
        try:
            output.write_text(dot)
        except OSError as error:
            raise DflowError(f"cannot write {output}: {error.strerror}") from None
        return
    program = shutil.which("dot")
    if program is None:
        raise DflowError(
            f"cannot draw {output}: Graphviz's `dot` is not installed (apt install graphviz); "
            ".dot output works without it"
        )
    result = subprocess.run(
        [program, f"-T{output.suffix[1:]}", "-o", str(output)],
        input=dot,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise DflowError(f"dot failed to draw {output}: {result.stderr.strip()}")
