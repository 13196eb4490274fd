"""Running a partitioned module in the interpreter: one thread per device.

Each nested `builtin.module {df.device = ...}` runs its part of the entry in its
own interpreter; `df.send`/`df.recv` meet in one in-process mailbox keyed by the
channel keys. A receive that waits past `timeout` seconds fails naming its key and
both devices; when one device fails, the others are woken and stop at once, and
the first real failure (not a receive abandoned because of it) is reported.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import DenseArrayBase, FunctionType, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from dflow.errors import DflowError
from dflow.source import make_context
from dialects.df import annotations
from dialects.df.functions import function_named
from dialects.df.interpreter import (
    DEFAULT_RECV_TIMEOUT_S,
    DfFunctions,
    QueueMailbox,
    RecvAbandonedError,
    make_interpreter,
)
from lowering.inline import InlinePass
from lowering.partition import ARGUMENTS, FUNCTION_TYPE, RESULTS, PartitionPass
from transforms.placement import PlaceDevicesPass

Array = Any


def split_for_devices(module: ModuleOp, devices: str | None) -> ModuleOp:
    """`module` partitioned for `devices`: calls inlined (each device runs straight-line
    parts), then placed unless every op is placed; a module that is already partitioned
    is returned as it is."""
    if is_partitioned(module):
        return module
    try:
        InlinePass().apply(make_context(), module)
    except DiagnosticException as error:
        raise DflowError(str(error)) from None
    place(module, devices or "cpu:0")
    try:
        PartitionPass().apply(make_context(), module)
    except DiagnosticException as error:
        raise DflowError(str(error)) from None
    return module


def place(module: ModuleOp, devices: str) -> None:
    """Place every unplaced op of `module` on `devices` (the cost strategy); a module
    whose ops are all placed is left as it is."""
    unplaced = [
        op
        for op in module.walk()
        if op.name.startswith("df.") and annotations.DEVICE not in op.attributes
    ]
    if not unplaced:
        return
    try:
        PlaceDevicesPass(devices=devices).apply(make_context(), module)
    except DiagnosticException as error:
        raise DflowError(str(error)) from None


def device_modules(module: ModuleOp) -> list[tuple[str, ModuleOp]]:
    """The (device, nested module) pairs of a partitioned module, in order."""
    parts: list[tuple[str, ModuleOp]] = []
    for op in module.ops:
        device = op.attributes.get(annotations.DEVICE)
        if isinstance(op, ModuleOp) and isinstance(device, StringAttr):
            parts.append((device.data, op))
    return parts


def is_partitioned(module: ModuleOp) -> bool:
    return bool(device_modules(module))


def _indices(function: FuncOp, name: str) -> tuple[int, ...]:
    attribute = function.attributes.get(name)
    if not isinstance(attribute, DenseArrayBase):
        raise DflowError(f"@{function.sym_name.data} has no {name}: not made by df-partition")
    return tuple(int(value) for value in attribute.get_values())


def _entry(part: ModuleOp, entry: str, device: str) -> FuncOp:
    function = function_named(part, entry)
    if function is None:
        raise DflowError(f"no function @{entry} in the module of {device}")
    return function


@dataclass
class PartitionedRun:
    """The state shared by the device threads of one run."""

    entry: str
    inputs: Sequence[Array]
    timeout: float
    mailbox: QueueMailbox = field(default_factory=QueueMailbox)
    results: dict[int, Array] = field(default_factory=dict[int, Array])
    errors: list[tuple[str, Exception]] = field(default_factory=list[tuple[str, Exception]])
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run_device(self, device: str, part: ModuleOp) -> None:
        try:
            function = _entry(part, self.entry, device)
            arguments = [self.inputs[i] for i in _indices(function, ARGUMENTS)]
            interpreter = make_interpreter(part, DfFunctions(self.mailbox, self.timeout))
            outputs = interpreter.call_op(self.entry, tuple(arguments))
            with self.lock:
                self.results.update(zip(_indices(function, RESULTS), outputs, strict=True))
        except (InterpretationError, DflowError, ValueError, KeyError) as error:
            with self.lock:
                self.errors.append((device, error))
            self.mailbox.abandon()

    def first_error(self) -> DflowError | None:
        real = [(d, e) for d, e in self.errors if not isinstance(e, RecvAbandonedError)]
        if not (real or self.errors):
            return None
        device, error = (real or self.errors)[0]
        return DflowError(f"on {device}: {error}")


def entry_signature(module: ModuleOp, entry: str) -> FuncOp:
    """A declaration of the whole entry function of a partitioned module (its arguments
    named as in the parts that take them), to match and check feeds against."""
    parts = [_entry(part, entry, device) for device, part in device_modules(module)]
    whole = parts[0].attributes.get(FUNCTION_TYPE)
    if not isinstance(whole, FunctionType):
        raise DflowError(f"@{entry} has no {FUNCTION_TYPE}: not made by df-partition")
    block = Block(arg_types=whole.inputs.data)
    for part in parts:
        for local, index in zip(part.args, _indices(part, ARGUMENTS), strict=True):
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
    run = PartitionedRun(entry, inputs, timeout)
    threads = [
        threading.Thread(target=run.run_device, args=(device, part), name=device)
        for device, part in device_modules(module)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if (error := run.first_error()) is not None:
        raise error
    return [run.results[index] for index in sorted(run.results)]
