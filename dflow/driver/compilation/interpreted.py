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

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import InterpretationError

from dflow.dialects.devices import DeviceList
from dflow.dialects.df import annotations
from dflow.dialects.df.symbols import device_modules
from dflow.driver.compilation.devices import split_for_devices
from dflow.driver.errors import DflowError, first_line
from dflow.driver.loading.partitioned import is_partitioned, part_entry, part_indices
from dflow.runtime.blas_threads import SHARE
from dflow.runtime.channels import (
    DEFAULT_RECV_TIMEOUT_S,
    ChannelAbandonedError,
    ChannelError,
    Channels,
)

Array = Any


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
            function = part_entry(part, self.entry, device)
            arguments = [self.inputs[i] for i in part_indices(function, annotations.ARGUMENTS)]
            interpreter = _interpreter(part, self.channels)
            outputs = interpreter.call_op(self.entry, tuple(arguments))
            with self.lock:
                self.results.update(
                    zip(part_indices(function, annotations.RESULTS), outputs, strict=True)
                )
        except (
            InterpretationError,
            ChannelError,
            DflowError,
            ValueError,
            KeyError,
            IndexError,
        ) as error:
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


def interpret(
    module: ModuleOp,
    entry: str,
    inputs: Sequence[Array],
    devices: DeviceList | None = None,
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
    except (InterpretationError, ChannelError, IndexError) as error:
        raise DflowError(first_line(error)) from None  # an IndexError: a df.gather's index


def _interpreter(module: ModuleOp, channels: Channels) -> Any:
    """The reference interpreter of `module` on `channels`, imported on first need
    (with xDSL's interpreters, 0.1 s): compiling through this module needs none."""
    from dflow.interpreters.df import DfFunctions, make_interpreter  # noqa: PLC0415

    return make_interpreter(module, DfFunctions(channels))
