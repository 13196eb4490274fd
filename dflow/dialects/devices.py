"""Device names, shared by both dialects and every pass that places or splits work:
`cpu:N` and `gpu:N`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from xdsl.ir import Operation

DEVICE_PATTERN = re.compile(r"(cpu|gpu):\d+")
"""Devices are `cpu:N` and `gpu:N`."""


def kind_of(device: str) -> str:
    """The kind of a device: `"gpu"` for `"gpu:1"`."""
    return device.partition(":")[0]


def device_key(device: str) -> tuple[str, int]:
    """Sort key of `cpu:1`: devices order by kind, then number."""
    kind, number = device.split(":")
    return kind, int(number)


DEFAULT_DEVICE = "cpu:0"
"""Where a program runs when nothing places it: an unpartitioned module, a program
without pins or `--devices`."""


@dataclass(frozen=True)
class DeviceCapabilities:
    """Which ops each kind of device can run, as a target states it: per kind, the
    op classes its code generator has no kernel for. Placement asks it; the target
    (`dflow.backend`) that has the kernels says it. The empty default runs every op
    everywhere."""

    missing: Mapping[str, frozenset[type[Operation]]] = field(
        default_factory=dict[str, frozenset[type[Operation]]]
    )

    def can_run(self, device: str, op: Operation) -> bool:
        """Whether `device` (`cpu:N`, `gpu:N`) can run `op`."""
        return type(op) not in self.missing.get(kind_of(device), frozenset())
