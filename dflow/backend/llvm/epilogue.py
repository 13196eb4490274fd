"""A generated convolution's elementwise rest, fused into it: which loop of a kernel
after its convolution (or max pool) can run on each piece of the output as the
convolution writes it, while that piece is in the cache, instead of in a second pass
over the whole output.

A kernel that `df-fuse` made of a convolution and its consumers (the activation, a
residual add, a scale) calls the convolution into its output buffer `y`, then runs
one `scf.parallel` over `y`'s elements that reads them back and stores the result
into `y` again. That loop is fusable when:

- only views and constants come between the call and the loop (so the call can be
  made where the loop was);
- its iteration space is `y`'s elements in row-major order (its extents `y`'s shape,
  or `y`'s shape with neighbouring axes merged by `df-collapse-loops`): every
  access to `y` is through a view of exactly those extents, at the loop's induction
  variables in order, so iteration `f` touches only `y`'s element `f`;
- it stores into `y` only, so that what the convolution still reads (its input)
  is never written before it is read;
- its body has no region and no call, and uses from outside only constants and
  buffers.

The printer (`kernel.py`) then prints the loop's body as a function of the
elements `[f0, f1)`: one run of the innermost loop after the other, the outer
induction variables rebuilt from each run's first element. The convolution calls it
on each piece it hands over (`convolution.py`, `DirectConv.fused`): an output row as
it copies it out, or written in place, a tile's positions of one channel (several
rows of a small image, part of a row of a large one).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from dflow.backend.llvm.nchwc import GeneratedConvolution

VIEWS = (memref.CastOp, memref.CollapseShapeOp)
"""Ops that name a buffer another way, the same memory in the same order."""


@dataclass(frozen=True)
class Elementwise:
    """The fusable loop of a convolution's kernel, its extents and the buffers its
    body reads or writes (the arguments of its function, in order)."""

    loop: scf.ParallelOp
    extents: tuple[int, ...]
    buffers: tuple[SSAValue, ...]


def fusable(call: func.CallOp, conv: GeneratedConvolution) -> Elementwise | None:
    """The loop after the convolution `call` makes that it can run as it writes its
    output, else None."""
    output = root(call.arguments[1 if conv.pool else 3 if conv.bias else 2])
    loop = _following_loop(call)
    if loop is None:
        return None
    extents = _extents(loop)
    oh, ow = conv.out
    if extents is None or prod(extents) != conv.n * conv.k * oh * ow:
        return None
    buffers = _buffers(loop, output, extents)
    if buffers is None:
        return None
    return Elementwise(loop, extents, buffers)


def root(value: SSAValue) -> SSAValue:
    """The buffer `value` is a view of (itself, if none)."""
    while isinstance(value.owner, VIEWS):
        value = value.owner.operands[0]
    return value


def _following_loop(call: func.CallOp) -> scf.ParallelOp | None:
    """The `scf.parallel` after `call`, with only views and constants between."""
    op = call.next_op
    while isinstance(op, (*VIEWS, arith.ConstantOp)):
        op = op.next_op
    return op if isinstance(op, scf.ParallelOp) else None


def _extents(loop: scf.ParallelOp) -> tuple[int, ...] | None:
    """The trip counts of `loop`, where it runs from constant 0 by 1 to constants."""
    lower, upper, step = (
        [_constant(v) for v in values] for values in (loop.lowerBound, loop.upperBound, loop.step)
    )
    if any(b != 0 for b in lower) or any(s != 1 for s in step) or None in upper:
        return None
    return tuple(b for b in upper if b is not None)


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _buffers(
    loop: scf.ParallelOp, output: SSAValue, extents: tuple[int, ...]
) -> tuple[SSAValue, ...] | None:
    """The buffers `loop`'s body accesses, where it is elementwise in `output` and
    otherwise self-contained, else None."""
    body = loop.body.block
    induction: list[SSAValue] = list(body.args)
    buffers: dict[SSAValue, None] = {}
    for op in body.ops:
        if op.regions or isinstance(op, func.CallOp):
            return None
        if isinstance(op, scf.ReduceOp):
            if op.operands:
                return None
            continue
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            if not _elementwise_access(op, output, induction, extents):
                return None
            buffers[op.memref] = None
        if not all(_available(v, body, buffers) for v in op.operands):
            return None
    return tuple(buffers)


def _elementwise_access(
    op: memref.LoadOp | memref.StoreOp,
    output: SSAValue,
    induction: list[SSAValue],
    extents: tuple[int, ...],
) -> bool:
    """Whether `op` is allowed in the fused rest: a store only to `output`, and an
    access to `output` only at the loop's own element."""
    writes = isinstance(op, memref.StoreOp)
    if root(op.memref) is not output:
        return not writes
    shape = tuple(_shape(op.memref))
    return shape == extents and list(op.indices) == induction


def _shape(buffer: SSAValue) -> tuple[int, ...]:
    return tuple(cast(MemRefType[Attribute], buffer.type).get_shape())


def _available(value: SSAValue, body: Block, buffers: dict[SSAValue, None]) -> bool:
    """Whether the body may use `value`: its own, a constant, or a buffer it accesses."""
    owner = value.owner
    if value in buffers or isinstance(owner, arith.ConstantOp):
        return True
    if isinstance(owner, Operation):
        return owner.parent_block() is body
    return owner is body
