"""The devices a program runs on, chosen and placed: the `--devices` list checked
against the parts of a partitioned module, else the devices its pins name
(`devices_for`); every op placed (`place`, the numba target's cost placement) and
the module partitioned (`split_for_devices`); a GPU asked for where numba finds none
refused before compiling (`check_gpus`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from dflow.backend.numba.capabilities import NumbaPlaceDevicesPass
from dflow.dialects.devices import DEFAULT_DEVICE, DeviceList
from dflow.dialects.df import annotations
from dflow.dialects.df.symbols import device_modules
from dflow.driver.errors import DflowError, first_line
from dflow.driver.loading.partitioned import is_partitioned
from dflow.driver.loading.run_options import require_gpus
from dflow.driver.loading.source import make_context
from dflow.lowering.inline import InlinePass
from dflow.lowering.partition import PartitionPass
from dflow.transforms.prune import PrunePass

DEFAULT = DeviceList((DEFAULT_DEVICE,))
"""Where a program runs that names no device."""


def split_for_devices(module: ModuleOp, devices: DeviceList | None) -> ModuleOp:
    """`module` partitioned for `devices` (None: `cpu:0`): calls inlined (each device
    runs straight-line parts) and values nothing uses dropped (so that none is sent
    between devices), then placed; a module that is already partitioned is returned as
    it is."""
    if is_partitioned(module):
        return module
    try:
        InlinePass().apply(make_context(), module)
        PrunePass().apply(make_context(), module)
        place(module, devices or DEFAULT)
        PartitionPass().apply(make_context(), module)
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None
    return module


def place(module: ModuleOp, devices: DeviceList) -> None:
    """Place every unplaced op of `module` on `devices` (the cost strategy). Pins are
    kept and checked even when every op has one: each pinned device must be listed,
    and colocated ops must agree. The list becomes text here only, as the pass's
    option."""
    try:
        NumbaPlaceDevicesPass(devices=str(devices)).apply(make_context(), module)
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None


def devices_for(module: ModuleOp, requested: DeviceList | None) -> DeviceList | None:
    """The devices a program runs on: `requested` (`--devices`, parsed where it was
    given) when given, checked against a partitioned module's parts; else those the
    program's pins name, in order of first appearance; None (one device, cpu:0, no
    partitioning) for a program that names none, and for one that is partitioned
    already (its parts name their devices). Resolved once per command: what it returns
    is what the compile path and the interpreter take."""
    if requested is not None:
        return _checked_devices(module, requested)
    if is_partitioned(module):
        return None
    named: dict[str, None] = {}
    for op in module.walk():
        device = annotations.device_of(op)
        if device is not None and op.name.startswith("df."):
            named[device] = None
    return DeviceList(tuple(named)) if named else None


def _checked_devices(module: ModuleOp, requested: DeviceList) -> DeviceList:
    parts = [device for device, _ in device_modules(module)]
    if parts and not requested.same_set(parts):
        raise DflowError(
            f"the program is partitioned for {','.join(parts)}, not for --devices {requested}"
        )
    return requested


def check_gpus(module: ModuleOp, devices: DeviceList | None) -> None:
    """Fail in one line, before compiling, when the program would run on a GPU and
    numba finds none (`run_options.require_gpus`)."""
    require_gpus(devices if devices is not None else [d for d, _ in device_modules(module)])
