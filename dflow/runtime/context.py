"""The runtime ABI of emitted host functions: the `rt` object each device gets.

An emitted host function calls, in order: `rt.arena(nbytes)`, `rt.view(arena,
offset, shape, dtype)`, `rt.output(shape, dtype)`, kernels, `rt.send(key, to,
buffer)`, `rt.recv(key, from, buffer)`, `rt.to_device(array)`,
`rt.fetch(buffer)` and `rt.given(result, dtype)`. A CPU context keeps its arena
as one NumPy byte array (grown on demand and reused between calls) and hands out
result arrays, recycling one only when nothing but the context refers to it any
more; a GPU context keeps a numba device array and copies through the host on
send, receive and fetch.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from dflow.runtime.channels import Channels
from dflow.runtime.dtypes import SUB_BYTE_BITS, dtype_named

ALIGNMENT = 64
"""Arenas start on a 64-byte boundary, so every planned offset stays aligned."""

TAIL_MARGIN = 64
"""Bytes mapped after an arena's end: a kernel's masked vector load or store of a
buffer's last elements spans up to 60 bytes past them, lanes that it neither reads
nor writes, but a lane on a page not mapped costs the access a fault assist (a
convolution ran 30x slower so)."""

OUTPUTS_KEPT = 2
"""Result arrays of one shape and type a context keeps for reuse."""

_ONLY_THE_POOL = 3
"""`sys.getrefcount` of a pooled array nobody else holds: the pool's list, the loop
variable and the call's own argument."""


class CpuContext:
    """A CPU device: arena in host memory."""

    def __init__(self, device: str, channels: Channels):
        self.device = device
        self.channels = channels
        self._arena = np.empty(0, np.uint8)
        self._outputs: dict[tuple[tuple[int, ...], str], list[Any]] = {}

    def arena(self, nbytes: int) -> Any:
        if self._arena.size < nbytes:
            raw = np.empty(nbytes + ALIGNMENT + TAIL_MARGIN, np.uint8)
            start = -raw.ctypes.data % ALIGNMENT
            self._arena = raw[start : start + nbytes]
        return self._arena

    def view(self, arena: Any, offset: int, shape: tuple[int, ...], dtype: Any) -> Any:
        """The buffer at `offset` (a NumPy array here, a device array on a GPU: both
        slice and view alike)."""
        size = math.prod(shape) * np.dtype(dtype).itemsize
        return arena[offset : offset + size].view(dtype).reshape(shape)

    def output(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A host array for a result: a pooled one the caller has dropped (no view of it
        is alive either: a view holds its base), else a new one. Reusing spares the
        page faults of fresh memory on every call."""
        pool = self._outputs.setdefault((shape, np.dtype(dtype).str), [])
        for array in pool:
            if sys.getrefcount(array) <= _ONLY_THE_POOL:
                return array
        array = np.empty(shape, dtype)
        if len(pool) < OUTPUTS_KEPT:
            pool.append(array)
        return array

    def given(self, result: Any, dtype: str) -> Any:
        """A result held as its bits (f16, bf16, the 8- and 4-bit floats: numba
        computes on none of them) or in a byte (2- and 4-bit integers) seen as the
        `dtype` the user gets (`float16`, `int4`, ...). An integer's byte keeps only
        its low bits, as `ml_dtypes` holds it (an int4 -1 is 0x0F, not 0xFF)."""
        bits = SUB_BYTE_BITS.get(dtype)
        if bits is not None:
            result = result & np.array((1 << bits) - 1, result.dtype)
        return result.view(dtype_named(dtype))

    def send(self, key: str, destination: str, buffer: Any) -> None:
        self.channels.send(key, self.device, destination, buffer)

    def recv(self, key: str, source: str, buffer: Any) -> None:
        self.channels.receive(key, source, self.device, buffer)

    def to_device(self, array: Any) -> Any:
        return array

    def fetch(self, buffer: Any) -> Any:
        return np.array(buffer)

    def synchronize(self) -> None:
        """Wait for the device's work to end (a traced run's kernels): a CPU's
        kernels have ended when they return."""


class GpuContext(CpuContext):
    """A CUDA device: arena in device memory, copies through the host.

    `gpu:N` is CUDA device N: `arena` (the first call of every host function)
    makes it the calling thread's device. Under the simulator
    (`NUMBA_ENABLE_CUDASIM=1`) there is one device, `gpu:0`.
    """

    def __init__(self, device: str, channels: Channels):
        super().__init__(device, channels)
        from numba import cuda  # noqa: PLC0415 (only GPU devices need numba.cuda)

        self.cuda: Any = cuda  # untyped: its stubs know no device arrays
        self.index = int(device.partition("@")[0].partition(":")[2] or 0)  # gpu:1@2 -> 1
        self._device_arena: Any = None

    def select(self) -> None:
        """Make this device the calling thread's CUDA device."""
        count = len(self.cuda.gpus)
        if self.index >= count:
            raise RuntimeError(f"{self.device}: there are {count} CUDA devices here")
        self.cuda.select_device(self.index)

    def arena(self, nbytes: int) -> Any:
        self.select()
        if self._device_arena is None or self._device_arena.size < max(nbytes, 1):
            self._device_arena = self.cuda.device_array(max(nbytes, 1), np.uint8)
        return self._device_arena

    def send(self, key: str, destination: str, buffer: Any) -> None:
        self.channels.send(key, self.device, destination, buffer.copy_to_host(), owned=True)

    def recv(self, key: str, source: str, buffer: Any) -> None:
        host = np.empty(buffer.shape, buffer.dtype)
        self.channels.receive(key, source, self.device, host)
        buffer.copy_to_device(host)

    def to_device(self, array: Any) -> Any:
        return self.cuda.to_device(np.require(array, requirements="C"))  # keeps 0-d arrays 0-d

    def fetch(self, buffer: Any) -> Any:
        return buffer.copy_to_host()

    def synchronize(self) -> None:
        self.cuda.synchronize()


def context_for(device: str, channels: Channels) -> CpuContext:
    """The context of `cpu:N` or `gpu:N`."""
    return (
        GpuContext(device, channels) if device.startswith("gpu") else CpuContext(device, channels)
    )
