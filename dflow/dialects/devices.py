"""Device names, shared by both dialects and every pass that places or splits work:
`cpu:N` and `gpu:N`."""

from __future__ import annotations

import re

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
