"""What `df-place-devices` decided, as JSON (`report=FILE.json`) or a table (`stats=true`).

The JSON object:

    {
      "pass": "df-place-devices",
      "strategy": "cost",                      # or "single"
      "devices": ["cpu:0", "gpu:0"],           # as listed
      "ranks": {"cpu:0": null, "gpu:0@1": 1},  # the MPI rank each names (`dflow run --mpi`
                                               # names every one), or null
      "host": "cpu:0",                         # where arguments live and results go
      "cost_model": {"cpu_gflops": 50.0, ...}, # the CostModel parameters
      "makespan_s": 0.00123,                   # sum over the functions
      "device_totals": {"cpu:0": LOAD, ...},   # summed over the functions
      "functions": [
        {
          "name": "main",
          "makespan_s": 0.00123,               # estimated time of one run
          "devices": {"cpu:0": LOAD, ...},
          "ops": [
            {
              "index": 0,                      # position among the function's df ops
              "op": "df.matmul",
              "name": "m",                     # the result's name, or null
              "location": "prog.mlir:4:3",     # or null
              "device": "gpu:0",
              "rule": "cost",                  # one of RULES
              "start_s": 1.0e-05,
              "finish_s": 0.00045
            }
          ]
        }
      ]
    }

where LOAD is `{"ops": 3, "busy_s": 4.2e-06, "bytes_sent": 64, "bytes_received": 128}`.
Times are estimates of the cost model, in seconds; bytes are those crossing
between devices (one value sent to one device counts once).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from dflow.dialects.devices import rank_of
from dflow.transforms.placement.heft import DeviceLoad

RULES = ("pin", "colocation", "heuristic", "capability", "cycle", "cost", "single")
"""Why an op is where it is:
- `pin`: its own `df.device`;
- `colocation`: it shares a `df.colocate` group with a pinned op, or with ops that
  only some devices can run;
- `heuristic`: a generator following its one consumer, or a reshape its producer;
- `capability`: some listed device cannot run it;
- `cycle`: its group forms a cycle with others in the group graph and goes with them;
- `cost`, `single`: the strategy chose its group's device."""


class OpNames:
    """How messages and reports name the ops of one function."""

    def __init__(self, function_name: str, ops: Sequence[Operation]):
        self.function_name = function_name
        self.index = {op: position for position, op in enumerate(ops)}

    @staticmethod
    def name(op: Operation) -> str | None:
        """The name of the op's first result, as written in the source (`s` for `%s`)."""
        return op.results[0].name_hint if op.results else None

    @staticmethod
    def location(op: Operation) -> str | None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        return None

    def short(self, op: Operation) -> str:
        """`%s`, or `df.neg#3` (the op's position) for an unnamed result."""
        name = self.name(op)
        return f"%{name}" if name else f"{op.name}#{self.index[op]}"

    def describe(self, op: Operation) -> str:
        """`df.add (%s, line 4)`."""
        name = self.name(op)
        parts = [f"%{name}" if name else f"#{self.index[op]} in @{self.function_name}"]
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            parts.append(f"line {loc.line.data}")
        return f"{op.name} ({', '.join(parts)})"


@dataclass(frozen=True)
class OpPlacement:
    """One op's device, the rule that put it there, and its estimated run."""

    index: int
    op: str
    name: str | None
    location: str | None
    device: str
    rule: str
    start_s: float
    finish_s: float


@dataclass(frozen=True)
class FunctionReport:
    name: str
    makespan_s: float
    devices: dict[str, DeviceLoad]
    ops: list[OpPlacement]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "makespan_s": self.makespan_s,
            "devices": {device: asdict(load) for device, load in self.devices.items()},
            "ops": [asdict(op) for op in self.ops],
        }


def _add(a: DeviceLoad, b: DeviceLoad) -> DeviceLoad:
    return DeviceLoad(
        a.ops + b.ops,
        a.busy_s + b.busy_s,
        a.bytes_sent + b.bytes_sent,
        a.bytes_received + b.bytes_received,
    )


def format_seconds(seconds: float) -> str:
    """`0 s`, `12.50 us`, `3.100 ms`, `2.000 s`."""
    if seconds == 0:
        return "0 s"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds:.3f} s"


@dataclass(frozen=True)
class PlacementReport:
    """Every function's placement under one run of the pass."""

    strategy: str
    devices: tuple[str, ...]
    host: str
    cost_model: dict[str, float]
    functions: list[FunctionReport]

    @property
    def makespan_s(self) -> float:
        """The functions' makespans added up (as if each ran once, one after another)."""
        return sum(function.makespan_s for function in self.functions)

    def totals(self) -> dict[str, DeviceLoad]:
        totals = {device: DeviceLoad() for device in self.devices}
        for function in self.functions:
            for device, load in function.devices.items():
                totals[device] = _add(totals[device], load)
        return totals

    def to_json(self) -> dict[str, Any]:
        return {
            "pass": "df-place-devices",
            "strategy": self.strategy,
            "devices": list(self.devices),
            "ranks": {device: rank_of(device) for device in self.devices},
            "host": self.host,
            "cost_model": self.cost_model,
            "makespan_s": self.makespan_s,
            "device_totals": {device: asdict(load) for device, load in self.totals().items()},
            "functions": [function.to_json() for function in self.functions],
        }

    def write(self, path: str) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n")

    def table(self) -> str:
        """The readable summary `stats=true` prints."""
        lines = [
            f"df-place-devices: strategy {self.strategy} on {', '.join(self.devices)} "
            f"(host {self.host}); estimated makespan {format_seconds(self.makespan_s)}"
        ]
        for function in self.functions:
            lines += _function_table(function)
        return "\n".join(lines)


def _function_table(function: FunctionReport) -> list[str]:
    lines = [f"  @{function.name}: makespan {format_seconds(function.makespan_s)}"]
    lines.append(f"    {'device':<8} {'ops':>5} {'busy':>12} {'sent':>12} {'received':>12}")
    for device, load in function.devices.items():
        lines.append(
            f"    {device:<8} {load.ops:>5} {format_seconds(load.busy_s):>12} "
            f"{load.bytes_sent:>10} B {load.bytes_received:>10} B"
        )
    for op in function.ops:
        label = f"{op.op} %{op.name}" if op.name else f"{op.op} #{op.index}"
        lines.append(f"    {label:<32} {op.device:<8} {op.rule}")
    return lines
