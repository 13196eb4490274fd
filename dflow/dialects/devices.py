"""Device names, shared by both dialects and every pass that places or splits work:
`cpu:N` and `gpu:N`, optionally naming the MPI rank they run on: `cpu:0@1` is CPU 0
of rank 1, so two ranks can each have a `cpu:0` (`gpu:1@2`: CUDA device 1 of rank 2's
host). Without `@`, a run across ranks puts device `i` of its list on rank `i mod N`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names alone are read without xDSL (a cached `dflow run`)
    from xdsl.ir import Operation

DEVICE_PATTERN = re.compile(r"(cpu|gpu):\d+(@\d+)?")
"""Devices are `cpu:N` and `gpu:N`, each optionally `@RANK`."""

DEVICE_FORM = "cpu:N or gpu:N (optionally @RANK, as in cpu:0@1)"
"""How messages about a bad device name say what a device looks like."""


def kind_of(device: str) -> str:
    """The kind of a device: `"gpu"` for `"gpu:1"`."""
    return device.partition(":")[0]


def device_key(device: str) -> tuple[int, str, int]:
    """Sort key of `cpu:1`: devices order by rank (none first), kind, then number."""
    local, _, rank = device.partition("@")
    kind, number = local.split(":")
    return int(rank or -1), kind, int(number)


def rank_of(device: str) -> int | None:
    """The rank a device names (`cpu:0@1` -> 1), None where it names none."""
    _, at, rank = device.partition("@")
    return int(rank) if at else None


def local_index(device: str) -> int:
    """The device's number on its own host: `gpu:1@2` -> 1."""
    return int(device.partition("@")[0].partition(":")[2])


DEFAULT_DEVICE = "cpu:0"
"""Where a program runs when nothing places it: an unpartitioned module, a program
without pins or `--devices`."""


@dataclass(frozen=True)
class DeviceList:
    """The devices a program is asked to run on, parsed once where the user gives them
    (`--devices`, `dflow.compile(devices=...)`, the pass option `devices=`) and carried
    as this value to placement; written back as text (`str`) only where a pass option
    needs it. The order is kept: device `i` runs on MPI rank `i mod N`, and placement
    breaks its ties in this order."""

    names: tuple[str, ...]

    @classmethod
    def parse(cls, given: str, option: str = "--devices") -> DeviceList:
        """`cpu:0, gpu:0` as `("cpu:0", "gpu:0")`; a ValueError naming `option` (as the
        user spelled it) for an empty list, an empty entry, a bad or a repeated name."""
        names = tuple(part.strip() for part in given.split(","))
        if not any(names):
            example = f"{option} cpu:0" if option.startswith("-") else f"{option}=cpu:0"
            raise ValueError(f"{option} is empty: name at least one device, e.g. {example}")
        if not all(names):
            raise ValueError(f"{option} {given!r} has an empty entry between commas")
        for name in names:
            if not DEVICE_PATTERN.fullmatch(name):
                raise ValueError(f"{option}: bad device {name!r}: each must be {DEVICE_FORM}")
            if names.count(name) > 1:
                raise ValueError(f"{option}: device {name} is listed twice in {given!r}")
        return cls(names)

    def __str__(self) -> str:
        """The list as a pass option writes it: `cpu:0,gpu:0`."""
        return ",".join(self.names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def gpus(self) -> tuple[str, ...]:
        """The GPUs listed, in order."""
        return tuple(name for name in self.names if kind_of(name) == "gpu")

    def same_set(self, other: Iterable[str]) -> bool:
        """Whether `other` names the same devices, in any order."""
        return sorted(self.names) == sorted(other)


def _none() -> dict[str, frozenset[type[Operation]]]:
    return {}


@dataclass(frozen=True)
class DeviceCapabilities:
    """Which ops each kind of device can run, as a target states it: per kind, the
    op classes its code generator has no kernel for. Placement asks it; the target
    (`dflow.backend`) that has the kernels says it. The empty default runs every op
    everywhere."""

    missing: Mapping[str, frozenset[type[Operation]]] = field(default_factory=_none)

    def can_run(self, device: str, op: Operation) -> bool:
        """Whether `device` (`cpu:N`, `gpu:N`) can run `op`."""
        return type(op) not in self.missing.get(kind_of(device), frozenset())
