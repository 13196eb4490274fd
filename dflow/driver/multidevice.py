"""Running a partitioned module in the interpreter: one thread per device.

Each nested `builtin.module {df.device = ...}` runs its part of the entry in its
own interpreter; `df.send`/`df.recv` meet in one set of channels (the runtime's)
keyed by the channel keys. A receive that waits past `timeout` seconds fails naming its key and
both devices; when one device fails, the others are woken and stop at once, and
the first real failure (not a receive abandoned because of it) is reported.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import DenseArrayBase, FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Region
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from dflow.backend.numba.capabilities import NumbaPlaceDevicesPass
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df import annotations
from dflow.dialects.df.symbols import device_modules, require_function
from dflow.driver.errors import DflowError, first_line
from dflow.driver.feeds import find_entry
from dflow.driver.run_options import checked_device_option, require_gpus
from dflow.driver.source import location_of, make_context
from dflow.lowering.inline import InlinePass
from dflow.lowering.partition import PartitionPass
from dflow.runtime.blas_threads import SHARE
from dflow.runtime.channels import (
    DEFAULT_RECV_TIMEOUT_S,
    ChannelAbandonedError,
    ChannelError,
    Channels,
)
from dflow.transforms.prune import PrunePass

Array = Any


def split_for_devices(module: ModuleOp, devices: str | None) -> ModuleOp:
    """`module` partitioned for `devices`: calls inlined (each device runs straight-line
    parts) and values nothing uses dropped (so that none is sent between devices),
    then placed; a module that is already partitioned is returned as it is."""
    if is_partitioned(module):
        return module
    try:
        InlinePass().apply(make_context(), module)
        PrunePass().apply(make_context(), module)
        place(module, devices or DEFAULT_DEVICE)
        PartitionPass().apply(make_context(), module)
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None
    return module


def place(module: ModuleOp, devices: str) -> None:
    """Place every unplaced op of `module` on `devices` (the cost strategy). Pins are
    kept and checked even when every op has one: each pinned device must be listed,
    and colocated ops must agree."""
    try:
        NumbaPlaceDevicesPass(devices=devices).apply(make_context(), module)
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None


def devices_for(module: ModuleOp, requested: str | None) -> str | None:
    """The devices a program runs on: `requested` (`--devices`) when given, checked;
    else those the program's pins name, in order of first appearance; None (one
    device, cpu:0, no partitioning) for a program that names none, and for one that
    is partitioned already (its parts name their devices)."""
    if requested is not None:
        return _checked_devices(module, requested)
    if is_partitioned(module):
        return None
    named: dict[str, None] = {}
    for op in module.walk():
        device = annotations.device_of(op)
        if device is not None and op.name.startswith("df."):
            named[device] = None
    return ",".join(named) or None


def _checked_devices(module: ModuleOp, requested: str) -> str:
    devices = checked_device_option(requested)
    parts = [device for device, _ in device_modules(module)]
    if parts and sorted(parts) != sorted(devices.split(",")):
        raise DflowError(
            f"the program is partitioned for {','.join(parts)}, not for --devices {requested}"
        )
    return devices


def is_partitioned(module: ModuleOp) -> bool:
    return bool(device_modules(module))


def part_indices(function: FuncOp, name: str) -> tuple[int, ...]:
    attribute = function.attributes.get(name)
    if not isinstance(attribute, DenseArrayBase):
        raise DflowError(f"@{function.sym_name.data} has no {name}: not made by df-partition")
    return tuple(int(value) for value in attribute.get_values())


def _entry(part: ModuleOp, entry: str, device: str) -> FuncOp:
    return require_function(part, entry, DflowError, f"in the module of {device}")


@dataclass
class PartitionedRun:
    """The state shared by the device threads of one run."""

    entry: str
    inputs: Sequence[Array]
    channels: Channels
    results: dict[int, Array] = field(default_factory=dict[int, Array])
    errors: list[tuple[str, Exception]] = field(default_factory=list[tuple[str, Exception]])
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run_device(self, device: str, part: ModuleOp) -> None:
        try:
            function = _entry(part, self.entry, device)
            arguments = [self.inputs[i] for i in part_indices(function, annotations.ARGUMENTS)]
            interpreter = _interpreter(part, self.channels)
            outputs = interpreter.call_op(self.entry, tuple(arguments))
            with self.lock:
                self.results.update(
                    zip(part_indices(function, annotations.RESULTS), outputs, strict=True)
                )
        except (InterpretationError, ChannelError, DflowError, ValueError, KeyError) as error:
            with self.lock:
                self.errors.append((device, error))
            self.channels.abandon()

    def first_error(self) -> DflowError | None:
        """The first real failure (not a receive abandoned because of one), if any."""
        real = [(d, e) for d, e in self.errors if not isinstance(e, ChannelAbandonedError)]
        if not (real or self.errors):
            return None
        device, error = (real or self.errors)[0]
        return DflowError(f"on {device}: {error}")

    @property
    def abandoned(self) -> bool:
        """Whether every device that failed only stopped because of another's failure."""
        return all(isinstance(e, ChannelAbandonedError) for _, e in self.errors)

    def run(self, parts: Sequence[tuple[str, ModuleOp]]) -> dict[int, Array]:
        """Run each device's part in its own thread: the results, by index in the
        entry's; the first failure raised as one `DflowError`. Every part runs NumPy on
        the host, so each gets its share of BLAS's threads (`runtime/blas_threads.py`)."""
        threads = [
            threading.Thread(target=self.run_device, args=(device, part), name=device)
            for device, part in parts
        ]
        with SHARE.sharing(len(threads)):
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        if (error := self.first_error()) is not None:
            raise error
        return self.results


def entry_signature(module: ModuleOp, entry: str) -> FuncOp:
    """A declaration of the whole entry function of a partitioned module (its arguments
    named as in the parts that take them), to match and check feeds against."""
    parts = [_entry(part, entry, device) for device, part in device_modules(module)]
    whole = parts[0].attributes.get(annotations.FUNCTION_TYPE)
    if not isinstance(whole, FunctionType):
        raise DflowError(f"@{entry} has no {annotations.FUNCTION_TYPE}: not made by df-partition")
    block = Block(arg_types=whole.inputs.data)
    for part in parts:
        for local, index in zip(part.args, part_indices(part, annotations.ARGUMENTS), strict=True):
            block.args[index].name_hint = local.name_hint
    return FuncOp(entry, whole, Region(block))


def run_partitioned(
    module: ModuleOp,
    entry: str,
    inputs: Sequence[Array],
    timeout: float = DEFAULT_RECV_TIMEOUT_S,
) -> list[Array]:
    """Run `entry` of a partitioned module with every device in its own thread; the
    entry's results in their original order."""
    results = PartitionedRun(entry, inputs, Channels(timeout)).run(device_modules(module))
    return [results[index] for index in sorted(results)]


def check_gpus(module: ModuleOp, devices: str | None) -> None:
    """Fail in one line, before compiling, when the program would run on a GPU and
    numba finds none (`run_options.require_gpus`)."""
    require_gpus(_device_list(module, devices))


def whole_entry(module: ModuleOp, entry: str) -> FuncOp:
    """The function `entry` as a run feeds it: the function itself, or for a
    partitioned module a declaration of the whole of it (`entry_signature`)."""
    if is_partitioned(module):
        return entry_signature(module, entry)
    return find_entry(module, entry)


def entry_names(module: ModuleOp) -> list[str]:
    """The names of the functions a run of `module` can start at (for a partitioned
    module, those of its parts)."""
    scopes = [part for _, part in device_modules(module)] or [module]
    names = {op.sym_name.data: None for part in scopes for op in part.ops if isinstance(op, FuncOp)}
    return list(names)


def _device_list(module: ModuleOp, devices: str | None) -> list[str]:
    if devices is not None:
        return devices.split(",")
    return [device for device, _ in device_modules(module)]


def check_parts(module: ModuleOp) -> None:
    """The device parts of a partitioned module agree with the whole functions they
    are parts of (df-partition makes them so; a hand-edited module may not): every
    part of a function records the same whole type, and its `df.arguments` and
    `df.results` give, for each of its own arguments and results, an index into the
    whole function's of the same type."""
    wholes: dict[str, FunctionType] = {}
    for device, part in device_modules(module):
        for function in part.ops:
            if isinstance(function, FuncOp) and not function.is_declaration:
                whole = _check_part(device, function)
                first = wholes.setdefault(function.sym_name.data, whole)
                if whole != first:
                    raise DflowError(
                        f"@{function.sym_name.data} on {device} records {whole} as the whole "
                        f"function's type, another part {first}",
                        location_of(function),
                    )


def _check_part(device: str, function: FuncOp) -> FunctionType:
    whole = function.attributes.get(annotations.FUNCTION_TYPE)
    where = f"@{function.sym_name.data} on {device}"
    if not isinstance(whole, FunctionType):
        raise DflowError(f"{where} has no {annotations.FUNCTION_TYPE}: not made by df-partition")
    own = function.function_type
    for attribute, kind, local, full in (
        (annotations.ARGUMENTS, "argument", own.inputs.data, whole.inputs.data),
        (annotations.RESULTS, "result", own.outputs.data, whole.outputs.data),
    ):
        indices = part_indices(function, attribute)
        problem = _index_problem(indices, local, full, kind)
        if problem is not None:
            raise DflowError(f"{where}: {attribute} {problem}", location_of(function))
    return whole


def _index_problem(
    indices: Sequence[int], local: Sequence[Attribute], full: Sequence[Attribute], kind: str
) -> str | None:
    if len(indices) != len(local):
        return f"gives {len(indices)} indices for {len(local)} {kind}s of this part"
    for index, type in zip(indices, local, strict=True):
        if not 0 <= index < len(full):
            return f"holds {index}, but the whole function has {len(full)} {kind}s"
        if full[index] != type:
            return f"maps a {type} {kind} to the whole's {kind} {index}, of type {full[index]}"
    return None


def interpret(
    module: ModuleOp,
    entry: str,
    inputs: Sequence[Array],
    devices: str | None = None,
    timeout: float = DEFAULT_RECV_TIMEOUT_S,
) -> list[Array]:
    """`entry` of `module` run by the reference interpreter on `inputs` (one thread
    per device when `devices` are given or the module is partitioned); a failure is
    one `DflowError` line."""
    try:
        if devices is not None or is_partitioned(module):
            split = split_for_devices(module, devices)
            return run_partitioned(split, entry, inputs, timeout)
        interpreter = _interpreter(module, Channels(timeout))
        return list(interpreter.call_op(entry, tuple(inputs)))
    except (InterpretationError, ChannelError) as error:
        raise DflowError(first_line(error)) from None


def _interpreter(module: ModuleOp, channels: Channels) -> Any:
    """The reference interpreter of `module` on `channels`, imported on first need
    (with xDSL's interpreters, 0.1 s): compiling through this module needs none."""
    from dflow.interpreters.df import DfFunctions, make_interpreter  # noqa: PLC0415

    return make_interpreter(module, DfFunctions(channels))
