"""The placement cost model: work per op from its shapes, time per device kind.

Each op's `Work` is its floating-point operations and the bytes it reads and
writes, counted from the static shapes:

- elementwise: elements of the result times a small factor: 1; 4 for div,
  reciprocal, sqrt, rsqrt; 8 for exp, log, tanh, sigmoid, pow; n-1 for addn;
- `matmul`: 2·M·N·K·batch;
- `conv2d`, `conv2d_grad_input`, `conv2d_grad_filter`: 2·N·O·OH·OW·C·KH·KW / groups
  (C / groups being the filter's channels; plus one per output element for a bias);
- pooling and its gradients: elements of the pooled output times KH·KW;
- reductions: elements of the input; `softmax` 4 per element;
- `transpose broadcast_to concat slice send recv`: no flops, bytes only;
- `constant`, `reshape`: nothing at all, no kernel is launched.

Bytes are those of every operand and result. On a device kind with throughput
F (flop/s), memory bandwidth B (byte/s) and launch overhead L, an op takes
`L + max(flops / F, bytes / B)`; moving a value of S bytes between two devices
takes `latency + S / link bandwidth`, and nothing on one device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from math import prod

from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike, OpTrait

from dflow.dialects.df import communication, indexing, nn, shape_ops
from dflow.dialects.df.traits import Elementwise, FlopsPerElement, Reduction, ViewLike, has_trait
from dflow.dialects.df.types import shape_of, tensor_bytes


@dataclass(frozen=True)
class Work:
    """What one op does: flops, bytes moved through memory, and whether it is a kernel
    launch at all (constants and reshapes are not)."""

    flops: int
    bytes: int
    kernel: bool = True


NO_WORK = Work(0, 0, kernel=False)


@dataclass(frozen=True)
class DeviceSpeed:
    """One device kind: flop/s, byte/s of memory, seconds per kernel launch."""

    flops_per_s: float
    bytes_per_s: float
    launch_s: float


@dataclass(frozen=True)
class CostModel:
    """Speeds of the device kinds and of the links between devices.

    The defaults are round numbers for one CPU socket and one data-centre GPU:
    CPU 50 GFLOP/s, 15 GB/s, 1 µs per kernel; GPU 5000 GFLOP/s, 1000 GB/s,
    10 µs per launch; links 10 GB/s with 10 µs latency.
    """

    cpu_gflops: float = 50.0
    gpu_gflops: float = 5000.0
    cpu_gbps: float = 15.0
    gpu_gbps: float = 1000.0
    link_gbps: float = 10.0
    link_latency_us: float = 10.0
    launch_us_cpu: float = 1.0
    launch_us_gpu: float = 10.0

    def speed(self, kind: str) -> DeviceSpeed:
        """The speeds of device kind `cpu` or `gpu`."""
        if kind == "gpu":
            return DeviceSpeed(
                self.gpu_gflops * 1e9, self.gpu_gbps * 1e9, self.launch_us_gpu * 1e-6
            )
        return DeviceSpeed(self.cpu_gflops * 1e9, self.cpu_gbps * 1e9, self.launch_us_cpu * 1e-6)

    def compute_time(self, work: Work, kind: str) -> float:
        """Seconds `work` takes on a device of `kind`."""
        if not work.kernel:
            return 0.0
        speed = self.speed(kind)
        return speed.launch_s + max(work.flops / speed.flops_per_s, work.bytes / speed.bytes_per_s)

    def transfer_time(self, nbytes: int) -> float:
        """Seconds to move `nbytes` from one device to another."""
        return self.link_latency_us * 1e-6 + nbytes / (self.link_gbps * 1e9)

    def invalid_parameter(self) -> str | None:
        """The name of a parameter that is not a positive number (latency and launch
        times may be 0), or None."""
        for name, value in asdict(self).items():
            may_be_zero = name.startswith(("launch", "link_latency"))
            if not (value >= 0 if may_be_zero else value > 0):
                return name
        return None

    def as_dict(self) -> dict[str, float]:
        return {name: float(value) for name, value in asdict(self).items()}


def value_bytes(value: SSAValue) -> int:
    """Bytes a tensor value holds."""
    return tensor_bytes(value.type)


def _elements(value: SSAValue) -> int:
    return prod(shape_of(value.type))


def _shape(value: SSAValue) -> tuple[int, ...]:
    return shape_of(value.type)


def _memory(op: Operation) -> int:
    return sum(value_bytes(v) for v in (*op.operands, *op.results))


def _elementwise_flops(op: Operation) -> int:
    """Result elements times the op's `FlopsPerElement` (1 when it states none)."""
    trait = op.get_trait(FlopsPerElement)
    return _elements(op.results[0]) * (1 if trait is None else trait.count(op))


def _matmul_flops(op: Operation) -> int:
    assert isinstance(op, nn.MatmulOp)
    lhs = _shape(op.lhs)
    inner = lhs[-2] if op.transpose_a.value.data else lhs[-1]
    return 2 * _elements(op.result) * inner


def _convolution_flops(op: Operation) -> int:
    """2 · (conv output elements) · C·KH·KW / groups, whichever two tensors are the
    operands: the product of the filter's dimensions after O (its channels are
    C / groups, the ones each output reads)."""
    if isinstance(op, nn.Conv2DOp):
        output, filter = op.result, op.filter
        bias = _elements(op.result) if op.bias is not None else 0
        return 2 * _elements(output) * prod(_shape(filter)[1:]) + bias
    if isinstance(op, nn.Conv2DGradInputOp):
        return 2 * _elements(op.output_grad) * prod(_shape(op.filter)[1:])
    assert isinstance(op, nn.Conv2DGradFilterOp)
    return 2 * _elements(op.output_grad) * prod(_shape(op.result)[1:])


def _pooling_flops(op: Operation) -> int:
    assert isinstance(op, nn.PoolingOp)
    pooled = op.results[0] if isinstance(op, nn.Pool2DOp) else op.operands[-1]
    return _elements(pooled) * prod(op.kernel_values)


def _reduction_flops(op: Operation) -> int:
    """Operand elements times the `Reduction` trait's flops per element."""
    trait = op.get_trait(Reduction)
    assert trait is not None
    return _elements(op.operands[0]) * trait.flops


def _scatter_add_flops(op: Operation) -> int:
    """One addition per element of the updates."""
    return _elements(op.operands[0])


def _no_flops(op: Operation) -> int:
    return 0


Family = type[OpTrait] | tuple[type[Operation], ...]
"""Ops with a trait, or of one of some op classes."""

FLOP_RULES: tuple[tuple[Family, Callable[[Operation], int]], ...] = (
    (Elementwise, _elementwise_flops),
    (Reduction, _reduction_flops),
    ((nn.MatmulOp,), _matmul_flops),
    ((nn.ConvolutionOp,), _convolution_flops),
    ((nn.PoolingOp,), _pooling_flops),
    ((indexing.ScatterAddOp,), _scatter_add_flops),
    (
        (
            shape_ops.TransposeOp,
            shape_ops.BroadcastToOp,
            shape_ops.ConcatOp,
            shape_ops.SliceOp,
            indexing.GatherOp,
            indexing.GatherElementsOp,
            communication.TransferOp,
        ),
        _no_flops,
    ),
)
"""Op families with the rule counting their flops; the first match wins."""


def _in_family(op: Operation, family: Family) -> bool:
    return isinstance(op, family) if isinstance(family, tuple) else has_trait(op, family)


def _flop_rule(op: Operation) -> Callable[[Operation], int] | None:
    """The rule counting `op`'s flops; None for an op that does no work (a constant,
    loaded with the program; a view, a new name for the same buffer) or that the model
    does not know."""
    if has_trait(op, ConstantLike) or has_trait(op, ViewLike):
        return None
    for family, flops in FLOP_RULES:
        if _in_family(op, family):
            return flops
    return None


def work_of(op: Operation) -> Work:
    """The work of a `df` op (nothing for ops the model does not know)."""
    rule = _flop_rule(op)
    return NO_WORK if rule is None else Work(rule(op), _memory(op))


def op_flops(op: Operation) -> int:
    """`work_of(op).flops`, without counting the bytes it moves."""
    rule = _flop_rule(op)
    return 0 if rule is None else rule(op)
