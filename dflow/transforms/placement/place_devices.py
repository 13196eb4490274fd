"""`df-place-devices`: set `df.device` on every `df` op (TensorFlow's placer and cost model).

    xdsl-opt prog.mlir -p 'df-place-devices{devices="cpu:0,gpu:0" report="p.json" stats=true}'

The device list must be quoted (it holds `:` and `,`). Every top-level
`func.func` is placed on its own; `func.return` and other non-`df` ops are left
alone. The rules, in order:

1. An op's own `df.device` is kept; a device not in the list is an error.
2. Ops join colocation groups (union-find, `colocation.py`): equal `df.colocate`
   names, a generator with one consumer joins it, a reshape joins its input's
   producer. Two different pins in one group are an error that shows the chain
   of constraints joining them.
3. A group may go only to devices whose kind can run all its ops
   (`capabilities`, which the target states: the pass the driver runs is the
   numba target's, `backend/numba/capabilities.py`); a pin onto a device that
   cannot, or a group no listed device can run, is an error.
4. Groups that form a cycle in the group graph (x → y → z with x and z in one
   group) are placed as one unit: its pinned groups stay, the others share a device.
5. `strategy=single` puts every unpinned unit on the first listed device that can
   run it; `strategy=cost` places units by HEFT (`heft.py`) under the cost
   model (`analysis/cost_model.py`), each to the device where it finishes earliest.
6. The report (`report.py`) gives each op's device and rule, and per device its ops,
   busy time and bytes sent and received, with the estimated makespan.

Function arguments live on the host: the first listed `cpu`, else the first device.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from dflow.analysis.cost_model import CostModel
from dflow.dialects.devices import DeviceCapabilities, DeviceList, kind_of
from dflow.dialects.df import annotations
from dflow.dialects.df.base import DfOp
from dflow.passes import statistics
from dflow.passes.failures import pass_failure
from dflow.transforms.placement.colocation import (
    COLOCATION,
    ColocationGraph,
    build_colocation,
    format_chain,
    strongly_connected,
)
from dflow.transforms.placement.heft import Dataflow, Unit, heft_timeline, loads, makespan
from dflow.transforms.placement.report import FunctionReport, OpNames, OpPlacement, PlacementReport

STRATEGIES = ("cost", "single")


fail = pass_failure("df-place-devices")


def parse_devices(spec: str) -> tuple[str, ...]:
    """`"cpu:0, gpu:0"` → `("cpu:0", "gpu:0")`, as `DeviceList.parse` reads the
    command line's `--devices`, with the same messages (naming `devices`)."""
    try:
        return DeviceList.parse(spec, "devices").names
    except ValueError as error:
        raise fail(str(error)) from None


def host_of(devices: Sequence[str]) -> str:
    """Where arguments live and results go: the first CPU listed, else the first device."""
    return next((d for d in devices if kind_of(d) == "cpu"), devices[0])


@dataclass
class Group:
    """A colocation group: its ops, its pin (if any) and the devices that can run it."""

    ops: list[Operation]
    pin: str | None
    allowed: tuple[str, ...]


@dataclass
class FunctionPlacer:
    """Places the `df` ops of one function."""

    function: FuncOp
    devices: tuple[str, ...]
    strategy: str
    model: CostModel
    capabilities: DeviceCapabilities

    def __post_init__(self) -> None:
        self.ops: list[Operation] = [op for op in self.function.walk() if isinstance(op, DfOp)]
        self.names = OpNames(self.function.sym_name.data, self.ops)
        self.pins = self.read_pins()
        self.graph: ColocationGraph = build_colocation(self.ops, self.pins)

    def read_pins(self) -> dict[Operation, str]:
        """Rule 1: the ops' own devices, each in the list."""
        pins: dict[Operation, str] = {}
        for op in self.ops:
            attr = op.attributes.get(annotations.DEVICE)
            if not isinstance(attr, StringAttr):
                continue
            if attr.data not in self.devices:
                raise fail(
                    f"{self.names.describe(op)} is pinned to {attr.data}, which is not in "
                    f"the device list {','.join(self.devices)}"
                )
            pins[op] = attr.data
        return pins

    def chain(self, start: Operation, end: Operation) -> str:
        return format_chain(self.graph, start, end, self.names.short)

    def group(self, members: list[Operation]) -> Group:
        """Rules 2 and 3 for one group: one pin at most, runnable where it may go."""
        pinned = [op for op in members if op in self.pins]
        for op in pinned[1:]:
            if self.pins[op] != self.pins[pinned[0]]:
                first = pinned[0]
                raise fail(
                    "conflicting devices in one colocation group: "
                    f"{self.names.describe(first)} is pinned to {self.pins[first]} and "
                    f"{self.names.describe(op)} to {self.pins[op]}; "
                    f"joined by: {self.chain(first, op)}"
                )
        pin = self.pins[pinned[0]] if pinned else None
        if pinned:
            self.check_pin(members, pinned[0])
        allowed = tuple(
            d for d in self.devices if all(self.capabilities.can_run(d, op) for op in members)
        )
        if not allowed:
            raise fail(
                f"no device of {','.join(self.devices)} can run every op of a colocation "
                f"group: {self.restrictions(members)}"
            )
        return Group(members, pin, allowed)

    def runs_all(self, device: str, ops: Sequence[Operation]) -> bool:
        return all(self.capabilities.can_run(device, op) for op in ops)

    def check_pin(self, members: Sequence[Operation], pinned: Operation) -> None:
        """Rule 3 for a pinned group: its device can run all its ops."""
        device = self.pins[pinned]
        for op in members:
            if self.capabilities.can_run(device, op):
                continue
            if op in self.pins:
                raise fail(
                    f"{self.names.describe(op)} is pinned to {device}, but "
                    f"{kind_of(device)} devices cannot run {op.name}"
                )
            raise fail(
                f"{self.names.describe(op)} cannot run on {device}, where its colocation "
                f"group is pinned by {self.names.describe(pinned)}; joined by: "
                f"{self.chain(op, pinned)}"
            )

    def restrictions(self, members: Sequence[Operation]) -> str:
        """`df.x (%a) runs on cpu:0; df.y (%b) runs on none of them` for the ops that
        some listed device cannot run."""
        parts: list[str] = []
        for op in members:
            able = [d for d in self.devices if self.capabilities.can_run(d, op)]
            if len(able) < len(self.devices):
                where = ", ".join(able) or "none of them"
                parts.append(f"{self.names.describe(op)} runs on {where}")
        return "; ".join(parts)

    def units(self, groups: Sequence[Group]) -> list[tuple[list[Group], Unit]]:
        """Rule 4: the groups of each cycle of the group graph become one unit;
        units come in a topological order."""
        group_of = {op: index for index, group in enumerate(groups) for op in group.ops}
        successors: list[dict[int, None]] = [{} for _ in groups]
        for op in self.ops:
            for value in op.operands:
                owner = value.owner
                if isinstance(owner, Operation) and owner in group_of:
                    source, target = group_of[owner], group_of[op]
                    if source != target:
                        successors[source][target] = None
        position = {op: index for index, op in enumerate(self.ops)}
        result: list[tuple[list[Group], Unit]] = []
        for component in strongly_connected([list(targets) for targets in successors]):
            members = [groups[index] for index in component]
            result.append((members, self.unit(members, position)))
        return result

    def unit(self, members: Sequence[Group], position: Mapping[Operation, int]) -> Unit:
        """One unit: pinned groups fixed, the others on one device they all allow."""
        ops = sorted((op for group in members for op in group.ops), key=position.__getitem__)
        fixed = {op: group.pin for group in members if group.pin for op in group.ops}
        free = [group for group in members if group.pin is None]
        candidates = tuple(d for d in self.devices if all(d in g.allowed for g in free))
        if free and not candidates:
            shown = "; ".join(self.restrictions(g.ops) for g in free)
            raise fail(f"no device can run every op of a cycle of colocation groups: {shown}")
        pins = {group.pin for group in members if group.pin}
        if len(pins) == 1 and pins <= set(candidates):
            candidates = tuple(pins)
        return Unit(tuple(ops), fixed, candidates)

    def rules(self, units: Sequence[tuple[list[Group], Unit]]) -> dict[Operation, str]:
        """Rule 6: why each op is where it is (see `report.RULES`)."""
        rules: dict[Operation, str] = {}
        for members, _ in units:
            for group in members:
                if group.pin is not None:
                    reached = self.graph.reached_by(op for op in group.ops if op in self.pins)
                    for op in group.ops:
                        rules[op] = "pin" if op in self.pins else reached.get(op, COLOCATION)
                else:
                    for op in group.ops:
                        rules[op] = self.free_rule(op, group, merged=len(members) > 1)
        return rules

    def free_rule(self, op: Operation, group: Group, merged: bool) -> str:
        """The rule for an op of an unpinned group."""
        if not all(self.capabilities.can_run(d, op) for d in self.devices):
            return "capability"
        if merged:
            return "cycle"
        if op in self.graph.followers:
            return self.graph.followers[op]
        if len(group.allowed) < len(self.devices):
            return COLOCATION
        return self.strategy

    def place(self) -> FunctionReport:
        """Decide, annotate the ops, and report."""
        groups = [self.group(members) for members in self.graph.groups()]
        units = self.units(groups)
        dataflow = Dataflow(self.ops)
        host = host_of(self.devices)
        timeline = heft_timeline(
            [unit for _, unit in units], dataflow, self.model, self.devices, host, self.strategy
        )
        rules = self.rules(units)
        placements: list[OpPlacement] = []
        for index, op in enumerate(self.ops):
            device = timeline.device[op]
            op.attributes[annotations.DEVICE] = StringAttr(device)
            placements.append(
                OpPlacement(
                    index,
                    op.name,
                    self.names.name(op),
                    self.names.location(op),
                    device,
                    rules[op],
                    timeline.start[op],
                    timeline.finish[op],
                )
            )
        return FunctionReport(
            self.function.sym_name.data,
            makespan(timeline, dataflow),
            loads(timeline, dataflow, self.devices),
            placements,
        )


@dataclass(frozen=True)
class PlaceDevicesPass(ModulePass):
    """Set `df.device` on every `df` op: pins kept, colocation and capabilities
    respected, the rest placed by a cost model (or all on one device)."""

    name = "df-place-devices"

    capabilities: ClassVar[DeviceCapabilities] = DeviceCapabilities()
    """What each device kind can run: as the target states it (a subclass per
    target sets it; this class alone runs every op everywhere)."""

    devices: str = "cpu:0"
    """The devices to use, comma-separated (`"cpu:0,cpu:1,gpu:0"`); quote it on the
    command line. The first `cpu` is the host, where arguments live."""

    strategy: Literal["cost", "single"] = "cost"
    """`cost`: HEFT under the cost model; `single`: every unpinned group on the first
    listed device that can run it (the baseline)."""

    report: str | None = None
    """A JSON file to write the placement report to (schema in `report.py`)."""

    stats: bool = False
    """Print the placement table to stderr."""

    cpu_gflops: float | int = 50.0
    """CPU arithmetic throughput, GFLOP/s."""
    gpu_gflops: float | int = 5000.0
    """GPU arithmetic throughput, GFLOP/s."""
    cpu_gbps: float | int = 15.0
    """CPU memory bandwidth, GB/s."""
    gpu_gbps: float | int = 1000.0
    """GPU memory bandwidth, GB/s."""
    link_gbps: float | int = 10.0
    """Bandwidth of the link between two devices, GB/s."""
    link_latency_us: float | int = 10.0
    """Latency of one transfer between two devices, µs."""
    launch_us_cpu: float | int = 1.0
    """Overhead of one CPU kernel, µs."""
    launch_us_gpu: float | int = 10.0
    """Overhead of one GPU kernel launch, µs."""

    def cost_model(self) -> CostModel:
        """The cost model with this pass's parameters; a non-positive one is an error."""
        model = CostModel(
            float(self.cpu_gflops),
            float(self.gpu_gflops),
            float(self.cpu_gbps),
            float(self.gpu_gbps),
            float(self.link_gbps),
            float(self.link_latency_us),
            float(self.launch_us_cpu),
            float(self.launch_us_gpu),
        )
        bad = model.invalid_parameter()
        if bad is not None:
            raise fail(f"{bad}={getattr(model, bad)} must be a positive number")
        return model

    def place(self, module: ModuleOp) -> PlacementReport:
        """Place every top-level function of `module` and return the report."""
        devices = parse_devices(self.devices)
        if self.strategy not in STRATEGIES:
            raise fail(f'unknown strategy "{self.strategy}": use cost or single')
        model = self.cost_model()
        functions = [
            FunctionPlacer(function, devices, self.strategy, model, self.capabilities).place()
            for function in module.ops
            if isinstance(function, FuncOp) and not function.is_declaration
        ]
        return PlacementReport(self.strategy, devices, host_of(devices), model.as_dict(), functions)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        report = self.place(op)
        if self.report is not None:
            try:
                report.write(self.report)
            except OSError as error:
                raise fail(f"cannot write {self.report}: {error.strerror}") from None
        if self.stats:
            statistics.report(report.table())
