"""Which device kinds can run which `df` ops.

One data table, `CAPABILITIES`, maps each device kind (`cpu`, `gpu`) to the op
classes its code generator can run. Placement (`df-place-devices`) reads it to
keep ops off devices that cannot run them, and the lowering (issue 5) shares it
to decide which kernels each target must provide: change the table, not the
callers, when a target learns an op.

    can_run("gpu", op)          # False for df.conv2d_grad_input, for now
    device_can_run("cpu:1", op) # every df op runs on the CPU
"""

from __future__ import annotations

from xdsl.ir import Operation

from dflow.dialects.df import DF
from dflow.dialects.df.nn import (
    AvgPool2DGradOp,
    Conv2DGradFilterOp,
    Conv2DGradInputOp,
    MaxPool2DGradOp,
)

ALL_OPS: frozenset[type[Operation]] = frozenset(DF.operations)
"""Every op class of the `df` dialect."""

GPU_PENDING: frozenset[type[Operation]] = frozenset(
    {Conv2DGradInputOp, Conv2DGradFilterOp, MaxPool2DGradOp, AvgPool2DGradOp}
)
"""Ops the CUDA lowering does not generate yet; they run on the CPU."""

CAPABILITIES: dict[str, frozenset[type[Operation]]] = {
    "cpu": ALL_OPS,
    "gpu": ALL_OPS - GPU_PENDING,
}
"""For each device kind, the op classes it can run."""


def kind_of(device: str) -> str:
    """The kind of a device: `"gpu"` for `"gpu:1"`."""
    return device.partition(":")[0]


def can_run(kind: str, op: Operation) -> bool:
    """Whether devices of `kind` can run `op` (False for unknown kinds and non-df ops)."""
    return type(op) in CAPABILITIES.get(kind, frozenset())


def device_can_run(device: str, op: Operation) -> bool:
    """Whether `device` (`cpu:N`, `gpu:N`) can run `op`."""
    return can_run(kind_of(device), op)
