"""Kernels written with explicit vectors: xDSL's `vector` dialect as LLVM vectors.

A kernel may hold 1-D `vector<NxT>` values (LLVM's `<N x T>`) where its author
(a microkernel generator, a hand-written kernel) wants a tile of accumulators kept
in registers rather than left to LLVM's loop vectorizer: `vector.load` and
`vector.store` of N contiguous elements at an index of a buffer, `vector.broadcast`
of a scalar, `vector.fma` (LLVM's `llvm.fma`, one instruction where the CPU has
FMA), and the `arith` ops, which take vectors as LLVM's instructions do. A splat
`arith.constant` is LLVM's `splat` (`types.literal`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from xdsl.dialects import vector
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute

from dflow.backend.llvm.types import llvm_type, suffix

if TYPE_CHECKING:
    from dflow.backend.llvm.kernel import KernelPrinter


def _address(printer: KernelPrinter, op: vector.LoadOp | vector.StoreOp) -> tuple[str, str]:
    """The address of the first element an access reads or writes, and its type."""
    buffer = cast(MemRefType[Attribute], op.base.type)
    element = llvm_type(buffer.element_type)
    offset = printer.offset(tuple(buffer.get_shape()), [printer.value(i) for i in op.indices])
    address = printer.fresh("p")
    printer.emit(f"{address} = getelementptr {element}, ptr {printer.value(op.base)}, i64 {offset}")
    return address, element


def _alignment(element: str) -> int:
    return {"half": 2, "bfloat": 2, "float": 4, "double": 8}.get(element, 1)


def load(printer: KernelPrinter, op: vector.LoadOp) -> None:
    address, element = _address(printer, op)
    name = printer.fresh()
    printer.names[op.result] = name
    ty = llvm_type(op.result.type)
    printer.emit(f"{name} = load {ty}, ptr {address}, align {_alignment(element)}")


def store(printer: KernelPrinter, op: vector.StoreOp) -> None:
    address, element = _address(printer, op)
    ty = llvm_type(op.vector.type)
    value = printer.value(op.vector)
    printer.emit(f"store {ty} {value}, ptr {address}, align {_alignment(element)}")


def broadcast(printer: KernelPrinter, op: vector.BroadcastOp) -> None:
    """A scalar in every lane: inserted in lane 0, then shuffled everywhere."""
    ty, scalar = llvm_type(op.vector.type), llvm_type(op.source.type)
    count = ty.strip("<>").partition(" x ")[0]
    inserted = printer.fresh()
    printer.emit(
        f"{inserted} = insertelement {ty} poison, {scalar} {printer.value(op.source)}, i64 0"
    )
    name = printer.fresh()
    printer.names[op.vector] = name
    printer.emit(
        f"{name} = shufflevector {ty} {inserted}, {ty} poison, <{count} x i32> zeroinitializer"
    )


def fma(printer: KernelPrinter, op: vector.FMAOp) -> None:
    """`lhs·rhs + acc`, rounded once."""
    ty = llvm_type(op.res.type)
    operands = [printer.value(v) for v in (op.lhs, op.rhs, op.acc)]
    name = printer.fresh()
    printer.names[op.res] = name
    printer.emit(f"{name} = {printer.call(f'llvm.fma.{suffix(ty)}', ty, operands)}")
