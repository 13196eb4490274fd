"""Building kernel bodies: loop nests over memrefs in `scf`, `memref` and `arith`.

`KernelBody` appends ops to a block and opens loops inside it:
`parallel(shape, build)` is an `scf.parallel` nest over a shape (a shape of rank
0 is one iteration of extent 1, so every kernel has a loop to map to a GPU
grid), `loop(extent, inits, build)` an `scf.for` carrying values. `Evaluator`
computes a value of a fusion group at an index of its own shape, loading
buffers and applying elementwise ops (`scalar_ops`), once per value and index
within a loop body; a child evaluator sees what its parent computed.

Broadcasting follows NumPy: an operand of shape `T` read at an index of the
result shape `S` drops the leading axes of `S` that `T` lacks and reads index 0
on each axis where `T` has size 1 and `S` does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import cast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
    UnrankedMemRefType,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dflow.dialects.df.types import shape_of
from dflow.lowering.kernels.scalar_ops import lower_scalar

Shape = tuple[int, ...]
Index = tuple[SSAValue, ...]


LANES = 8
"""Independent accumulators of a row fold (`KernelBody.reduce_in_lanes`) for a target
that does not fold in vector lanes itself (numba's, without fast-math flags)."""


@dataclass
class KernelBody:
    """Appends ops to one block of a kernel."""

    block: Block
    indices: dict[int, SSAValue] = field(default_factory=dict[int, SSAValue])
    """Index constants, made once per kernel at the start of its outermost block."""
    root: Block | None = None

    def nested(self, block: Block) -> KernelBody:
        return KernelBody(block, self.indices, self.root or self.block)

    def emit(self, op: Operation) -> SSAValue:
        """Append an op with one result; return the result."""
        self.block.add_op(op)
        return op.results[0]

    def add(self, op: Operation) -> None:
        self.block.add_op(op)

    def index(self, value: int) -> SSAValue:
        """The index constant `value`, shared by the whole kernel."""
        if value not in self.indices:
            root = self.root or self.block
            constant = arith.ConstantOp.create(
                properties={"value": IntegerAttr(value, IndexType())}, result_types=[IndexType()]
            )
            if root.first_op is None:
                root.add_op(constant)
            else:
                root.insert_op_before(constant, root.first_op)
            self.indices[value] = constant.result
        return self.indices[value]

    def load(self, buffer: SSAValue, index: Index) -> SSAValue:
        # `create` skips the IRDL argument checks of `LoadOp.get`, three times slower;
        # the lowered module is verified as a whole where DFLOW_VERIFY=1 (the tests).
        element = cast(MemRefType[Attribute], buffer.type).element_type
        return self.emit(memref.LoadOp.create(operands=[buffer, *index], result_types=[element]))

    def store(self, value: SSAValue, buffer: SSAValue, index: Index) -> None:
        self.add(memref.StoreOp.create(operands=[value, buffer, *index]))

    def parallel(self, shape: Shape, build: Callable[[KernelBody, Index], None]) -> None:
        """An `scf.parallel` nest over `shape`; `build` gets the body and the index
        (empty for rank 0). Loops are built with `create`, without the IRDL checks
        of their constructors, as loads and stores are: the lowered module is
        verified as a whole where `DFLOW_VERIFY=1` (the tests)."""
        extents = shape or (1,)
        inner = self.nested(Block(arg_types=[IndexType()] * len(extents)))
        build(inner, tuple(inner.block.args) if shape else ())
        inner.add(scf.ReduceOp.create())
        zero, one = self.index(0), self.index(1)
        bounds = [self.index(e) for e in extents]
        rank = len(extents)
        self.add(
            scf.ParallelOp.create(
                operands=[*[zero] * rank, *bounds, *[one] * rank],
                properties={"operandSegmentSizes": _segments(rank)},
                regions=[Region(inner.block)],
            )
        )

    def loop(
        self,
        extent: int,
        inits: Sequence[SSAValue],
        build: Callable[[KernelBody, SSAValue, Index], Sequence[SSAValue]],
    ) -> Index:
        """An `scf.for` from 0 to `extent` carrying `inits`; `build` gets the body, the
        induction variable and the carried values, and returns the next ones."""
        inner = self.nested(Block(arg_types=[IndexType(), *(v.type for v in inits)]))
        carried = build(inner, inner.block.args[0], tuple(inner.block.args[1:]))
        inner.add(scf.YieldOp.create(operands=carried))
        zero, one, bound = self.index(0), self.index(1), self.index(extent)
        op = scf.ForOp.create(
            operands=[zero, bound, one, *inits],
            result_types=[v.type for v in inits],
            regions=[Region(inner.block)],
        )
        self.add(op)
        return tuple(op.results)

    def reduce_in_lanes(
        self,
        extent: int,
        init: SSAValue,
        value: Callable[[KernelBody, SSAValue], SSAValue],
        combine: Callable[[SSAValue, SSAValue], Operation],
        lanes: int = LANES,
    ) -> SSAValue:
        """The fold by `combine` of `value(i)` for `i < extent`, in `lanes` accumulators
        (lane `k` takes the `i` with `i % lanes == k`, a tail goes to lane 0) folded
        pairwise at the end: the accumulations do not wait on each other, so a sum
        runs at the adder's throughput, not its latency. The order of a float sum
        changes (as NumPy's pairwise sum changes it); a maximum's does not matter.
        One lane is one accumulator, for a target that folds in vector lanes itself
        (LLVM's loop vectorizer, given `combine`'s fast-math flags)."""
        if lanes == 1 or extent < 2 * lanes:

            def step(b: KernelBody, iv: SSAValue, carried: Index) -> list[SSAValue]:
                return [b.emit(combine(carried[0], value(b, iv)))]

            (total,) = self.loop(extent, [init], step)
            return total
        chunks = extent // lanes

        def chunk(b: KernelBody, iv: SSAValue, carried: Index) -> list[SSAValue]:
            base = b.emit(arith.MuliOp(iv, b.index(lanes)))
            at = [b.emit(arith.AddiOp(base, b.index(k))) for k in range(lanes)]
            return [b.emit(combine(c, value(b, i))) for c, i in zip(carried, at, strict=True)]

        totals = list(self.loop(chunks, [init] * lanes, chunk))
        start = chunks * lanes

        def tail(b: KernelBody, iv: SSAValue, carried: Index) -> list[SSAValue]:
            return [b.emit(combine(carried[0], value(b, b.emit(arith.AddiOp(iv, b.index(start))))))]

        (totals[0],) = self.loop(extent - start, [totals[0]], tail)
        while len(totals) > 1:
            half = len(totals) // 2
            pairs = zip(totals[:half], totals[half:], strict=True)
            totals = [self.emit(combine(a, b)) for a, b in pairs]
        return totals[0]

    def loops(
        self,
        extents: Shape,
        inits: Sequence[SSAValue],
        build: Callable[[KernelBody, Index, Index], Sequence[SSAValue]],
    ) -> Index:
        """Nested `scf.for` loops over `extents` carrying `inits` through all of them."""
        if not extents:
            return tuple(build(self, (), tuple(inits)))

        def outer(body: KernelBody, iv: SSAValue, carried: Index) -> Sequence[SSAValue]:
            return body.loops(extents[1:], carried, lambda b, ivs, c: build(b, (iv, *ivs), c))

        return self.loop(extents[0], inits, outer)


@cache
def _segments(rank: int) -> DenseArrayBase:
    """`scf.parallel`'s operand segments: `rank` lower bounds, upper bounds and
    steps, no initial values."""
    return DenseArrayBase.from_list(i32, [rank, rank, rank, 0])


def broadcast_index(body: KernelBody, index: Index, shape: Shape, operand: Shape) -> Index:
    """The index of an operand of shape `operand` read at `index` of `shape`."""
    lead = len(shape) - len(operand)
    result: list[SSAValue] = []
    for axis, size in enumerate(operand):
        if size == 1 and shape[lead + axis] != 1:
            result.append(body.index(0))
        else:
            result.append(index[lead + axis])
    return tuple(result)


@dataclass
class Evaluator:
    """Values of a fusion group at an index, emitted into one loop body.

    `buffers` hold the values the group reads from memory (its inputs, or a
    contraction's result), `constants` the splat constants of its body."""

    body: KernelBody
    buffers: dict[SSAValue, SSAValue]
    constants: dict[SSAValue, Callable[[KernelBody], SSAValue]]
    parent: Evaluator | None = None
    memo: dict[tuple[SSAValue, Index], SSAValue] = field(
        default_factory=dict[tuple[SSAValue, Index], SSAValue]
    )

    def child(self, body: KernelBody) -> Evaluator:
        return Evaluator(body, self.buffers, self.constants, self)

    def _known(self, key: tuple[SSAValue, Index]) -> SSAValue | None:
        if key in self.memo:
            return self.memo[key]
        return self.parent._known(key) if self.parent else None

    def at(self, value: SSAValue, index: Index) -> SSAValue:
        """`value`'s element at `index` (an index of `value`'s own shape)."""
        key = (value, index)
        known = self._known(key)
        if known is not None:
            return known
        result = self._compute(value, index)
        self.memo[key] = result
        return result

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        if value in self.buffers:
            return self.body.load(self.buffers[value], index)
        if value in self.constants:
            return self.constants[value](self.body)
        op = value.owner
        assert isinstance(op, Operation), f"{value} is neither loaded nor computed"
        shape = shape_of(value.type)
        operands = [
            self.at(o, broadcast_index(self.body, index, shape, shape_of(o.type)))
            for o in op.operands
        ]
        return lower_scalar(op, operands, self.body.emit)


def element_of(type: Attribute) -> Attribute:
    """The element type of a tensor or memref type."""
    if not isinstance(type, MemRefType | TensorType | UnrankedMemRefType):
        raise TypeError(f"{type} has no element type")
    return cast(Attribute, getattr(cast(object, type), "element_type"))  # noqa: B009
