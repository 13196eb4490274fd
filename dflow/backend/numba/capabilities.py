"""What the numba target's devices can run, and placement for it.

Every `df` op runs on a CPU. On a GPU, every op but the gradients of convolutions
and pools (with `df.max_pool2d_indices`) and the blocked ops of `df-layout`
(`df.conv2d_nchwc`, the NCHWc pools): their CUDA library routines are not written
yet (`runtime/library/gpu.py`), so placement keeps them on a CPU. Change
`GPU_PENDING`, not the placer, when the CUDA library learns an op.

`NumbaPlaceDevicesPass` is `df-place-devices` asking these capabilities: the pass
the driver and `xdsl-opt` run.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.ir import Operation

from dflow.dialects.devices import DeviceCapabilities
from dflow.dialects.df.nn import (
    AvgPool2DGradOp,
    AvgPool2DNchwcOp,
    Conv2DGradFilterOp,
    Conv2DGradInputOp,
    Conv2DNchwcOp,
    MaxPool2DGradIndicesOp,
    MaxPool2DGradOp,
    MaxPool2DIndicesOp,
    MaxPool2DNchwcOp,
)
from dflow.transforms.placement import PlaceDevicesPass

GPU_PENDING: frozenset[type[Operation]] = frozenset(
    {
        Conv2DGradInputOp,
        Conv2DGradFilterOp,
        Conv2DNchwcOp,
        MaxPool2DGradOp,
        MaxPool2DIndicesOp,
        MaxPool2DGradIndicesOp,
        AvgPool2DGradOp,
        MaxPool2DNchwcOp,
        AvgPool2DNchwcOp,
    }
)
"""Ops the CUDA lowering does not generate yet; they run on the CPU."""

NUMBA_CAPABILITIES = DeviceCapabilities({"gpu": GPU_PENDING})
"""The numba target's devices: CPUs run every op, GPUs all but `GPU_PENDING`."""


class NumbaPlaceDevicesPass(PlaceDevicesPass):
    """`df-place-devices` for the numba target: ops go only where it has kernels."""

    capabilities: ClassVar[DeviceCapabilities] = NUMBA_CAPABILITIES
