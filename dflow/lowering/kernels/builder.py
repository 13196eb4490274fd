"""One kernel per fusion group or lone op: a `func.func` over memrefs (level 4).

A kernel takes one memref per value the group reads (in operand order) and then
one per result it writes, and returns nothing. Its body:

- **elementwise values**: the results of one shape are computed in one
  `scf.parallel` nest over that shape, every result at an index before any
  store, the group's intermediate values staying in registers;
- **a reduction closing the group** (`reduce_sum`/`mean`/`max`): a parallel nest
  over the kept axes and `scf.for` loops over the reduced axes carrying the
  accumulator, the reduced value computed inside the loops;
- **softmax or layer_norm closing the group**: per row, three passes over the
  result's row, each fold beside a pass that stores (`_Row.store_and_fold`; five
  passes where folds are in lanes, the numba target's `lanes=8`); a float sum's
  combine `reassoc` and the softmax's maximum `nsz`, so that LLVM folds them in
  vector lanes;
- **a contraction heading the group** (`matmul`, `conv2d`), the other window
  ops and the indexing ops (`gather`, `gather_elements`, `scatter_add`: their
  indices checked as they are read): a call of a library routine
  (`func.call @dflow_<routine>_<element>` over unranked memrefs, integer
  parameters after them) writing into the group's
  result buffer, then the epilogue nest reading it back. When the contraction's
  value is not a result, it is written into the epilogue's result of the same
  type if every epilogue result has that shape (each index is read before it is
  written), else into a `memref.alloc` scratch buffer;
- **data movement** (`transpose`, `broadcast_to`, `reshape`, `slice`,
  `concat`): a nest over the result reading the input at the mapped index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import prod
from typing import cast

from xdsl.dialects import arith, func, math, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    UnrankedMemRefType,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dflow.analysis.cost_model import op_flops, value_bytes
from dflow.dialects.df import indexing, nn
from dflow.dialects.df import shape_ops as so
from dflow.dialects.df.annotations import KERNEL, SOURCE, WORK
from dflow.dialects.df.arrays import to_array
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.fusion import FusedOp
from dflow.dialects.df.traits import Reduction, has_trait
from dflow.dialects.df.types import flag, is_float, is_unsigned, shape_of, static_tensor
from dflow.lowering.kernels.loops import (
    LANES,
    Evaluator,
    Index,
    KernelBody,
    Shape,
    broadcast_index,
    element_of,
)
from dflow.lowering.kernels.names import LIBRARY_PREFIX
from dflow.lowering.kernels.scalar_ops import constant, is_scalar_lowerable


@cache
def buffer_type(type: Attribute) -> MemRefType[Attribute]:
    """The memref holding a df tensor (cached: building a MemRefType checks its
    parameters, which costs more than the lookup)."""
    tensor = static_tensor(type)
    return MemRefType(tensor.element_type, tensor.get_shape())


@dataclass
class Group:
    """What one kernel computes: `ops` in order, reading `inputs`, writing `outputs`."""

    name: str
    inputs: list[SSAValue]
    ops: list[Operation]
    outputs: list[SSAValue]

    @staticmethod
    def of(op: Operation, name: str) -> Group:
        if isinstance(op, FusedOp):
            block = op.body.block
            assert block.last_op is not None
            body = [o for o in block.ops if o is not block.last_op]
            return Group(name, list(block.args), body, list(block.last_op.operands))
        return Group(name, list(op.operands), [op], list(op.results))


@dataclass
class Library:
    """The library routines a module's kernels call, declared once each."""

    declarations: dict[str, func.FuncOp] = field(default_factory=dict[str, func.FuncOp])

    def call(
        self, body: KernelBody, routine: str, buffers: Sequence[SSAValue], params: Sequence[int]
    ) -> None:
        callee = f"{LIBRARY_PREFIX}{routine}_{element_of(buffers[0].type)}"  # computes in it
        unranked = [
            body.emit(memref.CastOp.get(b, UnrankedMemRefType.from_type(element_of(b.type))))
            for b in buffers
        ]
        integers = [body.emit(arith.ConstantOp(IntegerAttr(p, i64))) for p in params]
        arguments = [*unranked, *integers]
        types = [a.type for a in arguments]
        if callee not in self.declarations:
            self.declarations[callee] = func.FuncOp.external(callee, types, [])
        body.add(func.CallOp(callee, arguments, []))


_WINDOW_ROUTINES: dict[type[Operation], str] = {
    nn.Conv2DGradInputOp: "conv2d_grad_input",
    nn.Conv2DGradFilterOp: "conv2d_grad_filter",
    nn.MaxPool2DOp: "max_pool2d",
    nn.AvgPool2DOp: "avg_pool2d",
    nn.MaxPool2DNchwcOp: "max_pool2d_nchwc",
    nn.AvgPool2DNchwcOp: "avg_pool2d_nchwc",
    nn.MaxPool2DGradOp: "max_pool2d_grad",
    nn.MaxPool2DIndicesOp: "max_pool2d_indices",
    nn.MaxPool2DGradIndicesOp: "max_pool2d_grad_indices",
    nn.AvgPool2DGradOp: "avg_pool2d_grad",
}

_INDEXING_ROUTINES: dict[type[Operation], str] = {  # called as <routine>_<index>_<element>
    indexing.GatherOp: "gather",
    indexing.GatherElementsOp: "gather_elements",
    indexing.ScatterAddOp: "scatter_add",
}


def _library_call(op: Operation) -> tuple[str, list[int]]:
    """The routine computing `op` and its integer parameters."""
    match op:
        case nn.MatmulOp():
            batched = any(len(shape_of(o.type)) != 2 for o in op.operands)
            routine = "batch_matmul" if batched else "matmul"
            return routine, [int(flag(op.transpose_a)), int(flag(op.transpose_b))]
        case nn.Conv2DOp():
            routine = "conv2d_bias" if len(op.operands) == 3 else "conv2d"
            return routine, _convolution_params(op)
        case nn.Conv2DNchwcOp():
            routine = "conv2d_nchwc_bias" if len(op.operands) == 3 else "conv2d_nchwc"
            return routine, [*op.stride_values, *op.pad_values, op.group_count]
        case nn.ConvolutionOp():
            return _WINDOW_ROUTINES[type(op)], _convolution_params(op)
        case nn.PoolingOp():
            params = [*op.kernel_values, *op.stride_values, *op.pad_values]
            return _WINDOW_ROUTINES[type(op)], params
        case indexing.IndexingOp():
            return f"{_INDEXING_ROUTINES[type(op)]}_{op.index_element}", [op.axis_value]
        case _:
            raise ValueError(f"{op.name} has no library routine")


def _convolution_params(op: nn.ConvolutionOp) -> list[int]:
    """A convolution routine's integer arguments: strides, pads, dilations, groups."""
    return [*op.stride_values, *op.pad_values, *op.dilation_values, op.group_count]


def is_library_op(op: Operation) -> bool:
    library = nn.MatmulOp | nn.ConvolutionOp | nn.Conv2DNchwcOp | nn.PoolingOp | indexing.IndexingOp
    return isinstance(op, library)


def _splat_constants(ops: Sequence[Operation]) -> dict[SSAValue, Callable[[KernelBody], SSAValue]]:
    """The splat constants of a fused body, as scalar constants."""
    constants: dict[SSAValue, Callable[[KernelBody], SSAValue]] = {}
    for op in ops:
        if isinstance(op, ConstantOp):
            value = to_array(op.value).reshape(-1)[0].item()
            element = static_tensor(op.result.type).element_type
            constants[op.result] = _scalar_constant(float(value), element)
    return constants


def _scalar_constant(value: float, element: Attribute) -> Callable[[KernelBody], SSAValue]:
    return lambda body: constant(value, element, body.emit)


class KernelLowering:
    """Lowers one group into the body of its kernel."""

    def __init__(self, group: Group, body: KernelBody, library: Library, lanes: int = 1):
        self.group = group
        self.body = body
        self.library = library
        self.lanes = lanes
        """Independent accumulators of a row fold (`KernelBody.reduce_in_lanes`)."""
        kernel_args = list(body.block.args)
        self.buffers: dict[SSAValue, SSAValue] = dict(zip(group.inputs, kernel_args, strict=False))
        self.results = dict(zip(group.outputs, kernel_args[len(group.inputs) :], strict=True))
        self.constants = _splat_constants(group.ops)

    def evaluator(self, body: KernelBody) -> Evaluator:
        return Evaluator(body, self.buffers, self.constants)

    def lower(self) -> None:
        ops = [op for op in self.group.ops if not isinstance(op, ConstantOp)]
        head, tail = ops[0], ops[-1]
        if len(ops) == 1 and _DATA_MOVEMENT.get(type(head)):
            _DATA_MOVEMENT[type(head)](self, head)
            return
        if is_library_op(head):
            self.contraction(head)
        closer = tail if isinstance(tail, so.ReduceOp | so.SoftmaxOp | so.LayerNormOp) else None
        self.elementwise_results(exclude={head} if is_library_op(head) else set(), closer=closer)
        if isinstance(closer, so.ReduceOp):
            self.reduce(closer)
        elif isinstance(closer, so.SoftmaxOp):
            self.softmax(closer)
        elif isinstance(closer, so.LayerNormOp):
            self.layer_norm(closer)

    def contraction(self, head: Operation) -> None:
        result = head.results[0]
        host = self.results.get(result) or self._epilogue_host(result)
        routine, params = _library_call(head)
        inputs = [self.buffers[o] for o in head.operands]
        self.library.call(self.body, routine, [*inputs, host], params)
        self.buffers[result] = host

    def _epilogue_host(self, result: SSAValue) -> SSAValue:
        others = [v for v in self.results if v.owner is not result.owner]
        same = [v for v in others if v.type == result.type]
        if same and all(shape_of(v.type) == shape_of(result.type) for v in others):
            return self.results[same[0]]
        scratch = memref.AllocOp.get(
            buffer_type(result.type).element_type, shape=shape_of(result.type)
        )
        return self.body.emit(scratch)

    def elementwise_results(self, exclude: set[Operation], closer: Operation | None) -> None:
        by_shape: dict[Shape, list[SSAValue]] = {}
        for value in self.results:
            if value.owner in exclude or value.owner is closer or value in self.buffers:
                continue
            by_shape.setdefault(shape_of(value.type), []).append(value)
        for shape, values in by_shape.items():
            self.body.parallel(shape, lambda b, index, vs=values: self._store_all(b, index, vs))

    def _store_all(self, body: KernelBody, index: Index, values: list[SSAValue]) -> None:
        evaluator = self.evaluator(body)
        computed = [evaluator.at(v, index) for v in values]
        for value, scalar in zip(values, computed, strict=True):
            body.store(scalar, self.results[value], index)

    def reduce(self, op: so.ReduceOp) -> None:
        shape = shape_of(op.input.type)
        axes = op.reduced_axes
        kept = [a for a in range(len(shape)) if a not in axes]
        if kept and list(axes) == list(range(len(axes))) and prod(shape[a] for a in axes) > 1:
            self.reduce_leading(op, shape, axes, kept)
        else:
            self.reduce_rows(op, shape, axes, kept)

    def _result_index(
        self,
        op: so.ReduceOp,
        body: KernelBody,
        axes: Sequence[int],
        kept: Sequence[int],
        kept_index: Index,
    ) -> Index:
        if not flag(op.keepdims):
            return kept_index
        return _merge(kept, kept_index, axes, tuple(body.index(0) for _ in axes))

    def reduce_leading(
        self, op: so.ReduceOp, shape: Shape, axes: Sequence[int], kept: Sequence[int]
    ) -> None:
        """Reduce the leading axes (a column sum, as a bias gradient's) into the result in
        memory: initialize it, then add each row of the input to it in row order, so
        the input is read contiguously and the inner loop vectorizes. The sums are
        the same, in the same order, as one accumulator per result element."""
        element = static_tensor(op.result.type).element_type
        out = self.results[op.result]
        kept_shape = tuple(shape[a] for a in kept)

        def initialize(body: KernelBody, kept_index: Index) -> None:
            init = _reduction_init(op, element, body)
            body.store(init, out, self._result_index(op, body, axes, kept, kept_index))

        def accumulate(body: KernelBody, reduced: Index, carried: Index) -> list[SSAValue]:
            def row(b: KernelBody, kept_index: Index) -> None:
                value = self.evaluator(b).at(op.input, _merge(kept, kept_index, axes, reduced))
                at = self._result_index(op, b, axes, kept, kept_index)
                b.store(_combine(op, b.load(out, at), value, b), out, at)

            body.parallel(kept_shape, row)
            return []

        self.body.parallel(kept_shape, initialize)
        self.body.loops(tuple(shape[a] for a in axes), [], accumulate)
        if isinstance(op, so.ReduceMeanOp):
            count = prod(shape[a] for a in axes)

            def divide(body: KernelBody, kept_index: Index) -> None:
                at = self._result_index(op, body, axes, kept, kept_index)
                body.store(_divide(body.load(out, at), count, element, body), out, at)

            self.body.parallel(kept_shape, divide)

    def reduce_rows(
        self, op: so.ReduceOp, shape: Shape, axes: Sequence[int], kept: Sequence[int]
    ) -> None:
        """One accumulator per result element, carried through loops over the reduced axes."""
        element = static_tensor(op.result.type).element_type

        def outer(body: KernelBody, kept_index: Index) -> None:
            evaluator = self.evaluator(body)
            init = _reduction_init(op, element, body)

            def inner(b: KernelBody, reduced: Index, carried: Index) -> list[SSAValue]:
                full = _merge(kept, kept_index, axes, reduced)
                value = evaluator.child(b).at(op.input, full)
                return [_combine(op, carried[0], value, b)]

            if len(axes) == 1:  # one axis: in independent lanes (`reduce_in_lanes`)
                exact = isinstance(op, so.ReduceMaxOp) and is_float(element)
                total = body.reduce_in_lanes(
                    shape[axes[0]],
                    init,
                    lambda b, iv: evaluator.child(b).at(
                        op.input, _merge(kept, kept_index, axes, (iv,))
                    ),
                    _combiner(op, element),
                    LANES if exact else self.lanes,  # NumPy's maximum: no vector fold
                )
            else:
                (total,) = body.loops(tuple(shape[a] for a in axes), [init], inner)
            if isinstance(op, so.ReduceMeanOp):
                count = prod(shape[a] for a in axes)
                total = _divide(total, count, element, body)
            out_index = self._result_index(op, body, axes, kept, kept_index)
            body.store(total, self.results[op.result], out_index)

        self.body.parallel(tuple(shape[a] for a in kept), outer)

    def softmax(self, op: so.SoftmaxOp) -> None:
        """Each row in three passes over the result's own row: the fused input stored
        (its prologue computed once per element) and its maximum taken, `exp(x - max)`
        stored and summed, the division (`_Row.store_and_fold`; five passes where the
        folds are in lanes, numba's)."""
        element = static_tensor(op.result.type).element_type

        def passes(row: _Row, input: RowValue) -> None:
            largest = row.store_and_fold(input, _shift_maximum, float("-inf"))
            total = row.store_and_fold(
                lambda b, iv: b.emit(math.ExpOp(b.emit(arith.SubfOp(row.load(b, iv), largest)))),
                _sum,
                0,
            )
            row.update(lambda b, iv: b.emit(arith.DivfOp(row.load(b, iv), total)))

        self.rows(op, op.axis_value, element, passes)

    def layer_norm(self, op: so.LayerNormOp) -> None:
        """Each row in three passes over the result's own row, as `softmax`: the fused
        input stored and summed (the mean, once), `x - mean` stored and its squares
        summed (the variance, once), `(x - mean) · rsqrt(var + ε) · scale + bias`
        stored. (Recomputing `x - mean` in the last pass instead of storing it ran
        a fifth slower: `bench/layer_norm.py`.)"""
        element = static_tensor(op.result.type).element_type
        axis = len(shape_of(op.input.type)) - 1
        length = shape_of(op.input.type)[axis]

        def passes(row: _Row, input: RowValue) -> None:
            body = row.body
            count = constant(length, element, body.emit)
            mean = body.emit(arith.DivfOp(row.store_and_fold(input, _sum, 0), count))

            def centered(b: KernelBody, iv: SSAValue) -> SSAValue:
                return b.emit(arith.SubfOp(row.load(b, iv), mean))

            def square(b: KernelBody, value: SSAValue) -> SSAValue:
                return b.emit(arith.MulfOp(value, value))

            total = row.store_and_fold(centered, _sum, 0, square)
            variance = body.emit(arith.DivfOp(total, count))
            epsilon = constant(op.epsilon_value, element, body.emit)
            inverse = body.emit(math.RsqrtOp(body.emit(arith.AddfOp(variance, epsilon))))

            def normalized(b: KernelBody, iv: SSAValue) -> SSAValue:
                evaluator = self.evaluator(b)
                scaled = b.emit(arith.MulfOp(b.emit(arith.MulfOp(row.load(b, iv), inverse)),
                                             evaluator.at(op.scale, (iv,))))  # fmt: skip
                return b.emit(arith.AddfOp(scaled, evaluator.at(op.bias, (iv,))))

            row.update(normalized)

        self.rows(op, axis, element, passes)

    def rows(
        self,
        op: Operation,
        axis: int,
        element: Attribute,
        passes: Callable[[_Row, RowValue], None],
    ) -> None:
        """A parallel loop over the rows of `op`'s operand 0 along `axis`, `passes` over
        each row given its fused input (which their first pass stores)."""
        shape = shape_of(op.operands[0].type)
        kept = [a for a in range(len(shape)) if a != axis]

        def row(body: KernelBody, kept_index: Index) -> None:
            evaluator = self.evaluator(body)
            out = self.results[op.results[0]]
            current = _Row(body, out, shape[axis], axis, kept, kept_index, element, self.lanes)
            passes(current, lambda b, iv: evaluator.child(b).at(op.operands[0], current.at(iv)))

        self.body.parallel(tuple(shape[a] for a in kept), row)

    def copy_mapped(self, op: Operation, input_index: Callable[[KernelBody, Index], Index]) -> None:
        """A nest over the result storing the input at the mapped index."""
        source, out = self.buffers[op.operands[0]], self.results[op.results[0]]

        def build(body: KernelBody, index: Index) -> None:
            body.store(body.load(source, input_index(body, index)), out, index)

        self.body.parallel(shape_of(op.results[0].type), build)


RowValue = Callable[[KernelBody, SSAValue], SSAValue]
"""A value at element `i` of a row, built into a loop's body."""


@dataclass
class _Row:
    """One row of a row op's result (`softmax`, `layer_norm`) inside the parallel
    loop over rows: passes that store into it, and folds over it."""

    body: KernelBody
    out: SSAValue
    length: int
    axis: int
    kept: Sequence[int]
    kept_index: Index
    element: Attribute
    lanes: int

    def at(self, iv: SSAValue) -> Index:
        return _merge(self.kept, self.kept_index, (self.axis,), (iv,))

    def load(self, body: KernelBody, iv: SSAValue) -> SSAValue:
        return body.load(self.out, self.at(iv))

    def update(self, function: Callable[[KernelBody, SSAValue], SSAValue]) -> None:
        """A loop storing `function(i)` into element `i` of the row."""

        def store(b: KernelBody, iv: SSAValue, carried: Index) -> list[SSAValue]:
            b.store(function(b, iv), self.out, self.at(iv))
            return []

        self.body.loop(self.length, [], store)

    def store_and_fold(
        self,
        function: RowValue,
        combine: Callable[[SSAValue, SSAValue], Operation],
        init: float,
        of: Callable[[KernelBody, SSAValue], SSAValue] | None = None,
    ) -> SSAValue:
        """Store `function(i)` into element `i` of the row, and fold `of(stored)` (the
        stored value itself by default) by `combine`: one pass where the fold is one
        accumulator (LLVM folds in vector lanes beside the stores), else a pass that
        stores, then a fold in lanes of what it stored (numba: the stores' work, an
        `exp`, vectorizes in a pass of its own only)."""

        def folded(b: KernelBody, value: SSAValue) -> SSAValue:
            return value if of is None else of(b, value)

        if self.lanes > 1:
            self.update(function)
            return self.fold(combine, init, lambda b, iv: folded(b, self.load(b, iv)))

        def stored(b: KernelBody, iv: SSAValue) -> SSAValue:
            value = function(b, iv)
            b.store(value, self.out, self.at(iv))
            return folded(b, value)

        return self.fold(combine, init, stored)

    def fold(
        self,
        combine: Callable[[SSAValue, SSAValue], Operation],
        init: float,
        value: Callable[[KernelBody, SSAValue], SSAValue],
    ) -> SSAValue:
        """The fold of `value(i)` over the row by `combine`, in independent lanes."""
        start = constant(init, self.element, self.body.emit)
        return self.body.reduce_in_lanes(self.length, start, value, combine, self.lanes)


def _sum(a: SSAValue, b: SSAValue) -> Operation:
    return arith.AddfOp(a, b, REASSOC)


def _shift_maximum(a: SSAValue, b: SSAValue) -> Operation:
    return arith.MaximumfOp(a, b, SHIFT)


def _merge(kept: Sequence[int], kept_index: Index, axes: Sequence[int], axes_index: Index) -> Index:
    """The full index from the indices of the kept axes and of `axes`."""
    by_axis = dict(zip(kept, kept_index, strict=True)) | dict(zip(axes, axes_index, strict=True))
    return tuple(by_axis[a] for a in sorted(by_axis))


REASSOC = arith.FastMathFlagsAttr([FastMathFlag.REASSOC])
"""On a float sum's combine: the sum may be taken in any order, so LLVM's loop
vectorizer folds it in vector lanes (the order changes, as NumPy's pairwise sum
changes it; the numba target ignores the flag)."""
SHIFT = arith.FastMathFlagsAttr([FastMathFlag.NO_SIGNED_ZEROS])
"""On a softmax's row maximum: the sign of a zero maximum does not matter (the shift
`x - max` is the same), so the llvm target folds it with `llvm.maximum`, which its
loop vectorizer folds in vector lanes."""


def _reduction_init(op: so.ReduceOp, element: Attribute, body: KernelBody) -> SSAValue:
    if not isinstance(op, so.ReduceMaxOp):
        return constant(0, element, body.emit)
    if is_float(element):
        return constant(float("-inf"), element, body.emit)
    if is_unsigned(element):
        return constant(0, element, body.emit)
    width = cast(IntegerType, element).bitwidth
    return constant(-(2 ** (width - 1)), element, body.emit)


def _combiner(op: so.ReduceOp, element: Attribute) -> Callable[[SSAValue, SSAValue], Operation]:
    """The op that folds one more value into a reduction's accumulator."""
    floating = is_float(element)
    if isinstance(op, so.ReduceMaxOp):
        return arith.MaximumfOp if floating else arith.MaxSIOp
    return _sum if floating else arith.AddiOp


def _combine(op: so.ReduceOp, total: SSAValue, value: SSAValue, body: KernelBody) -> SSAValue:
    return body.emit(_combiner(op, value.type)(total, value))


def _divide(total: SSAValue, count: int, element: Attribute, body: KernelBody) -> SSAValue:
    divisor = constant(count, element, body.emit)
    if is_float(element):
        return body.emit(arith.DivfOp(total, divisor))
    return body.emit(arith.DivSIOp(total, divisor))


def _transpose(lowering: KernelLowering, op: Operation) -> None:
    assert isinstance(op, so.TransposeOp)
    perm = op.perm_values

    def index(body: KernelBody, out: Index) -> Index:
        by_axis = {perm[k]: out[k] for k in range(len(perm))}
        return tuple(by_axis[a] for a in range(len(perm)))

    lowering.copy_mapped(op, index)


def _broadcast_to(lowering: KernelLowering, op: Operation) -> None:
    assert isinstance(op, so.BroadcastToOp)
    shape, operand = shape_of(op.result.type), shape_of(op.input.type)
    lowering.copy_mapped(op, lambda body, out: broadcast_index(body, out, shape, operand))


def _slice(lowering: KernelLowering, op: Operation) -> None:
    assert isinstance(op, so.SliceOp)
    starts = op.start_values

    def index(body: KernelBody, out: Index) -> Index:
        return tuple(
            body.emit(arith.AddiOp(i, body.index(s))) if s else i
            for i, s in zip(out, starts, strict=True)
        )

    lowering.copy_mapped(op, index)


def _strides(shape: Shape) -> list[int]:
    strides = [1] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    return strides


def _reshape(lowering: KernelLowering, op: Operation) -> None:
    """Through the row-major position: `p = sum(out[k] * stride_out[k])`, then
    `in[k] = (p / stride_in[k]) % in_shape[k]`."""
    assert isinstance(op, so.ReshapeOp)
    out_shape, in_shape = shape_of(op.result.type), shape_of(op.input.type)

    def index(body: KernelBody, out: Index) -> Index:
        position = body.index(0)
        for i, stride in zip(out, _strides(out_shape), strict=True):
            position = body.emit(
                arith.AddiOp(position, body.emit(arith.MuliOp(i, body.index(stride))))
            )
        return tuple(
            body.emit(
                arith.RemUIOp(
                    body.emit(arith.DivUIOp(position, body.index(stride))), body.index(size)
                )
            )
            for stride, size in zip(_strides(in_shape), in_shape, strict=True)
        )

    lowering.copy_mapped(op, index)


def _concat(lowering: KernelLowering, op: Operation) -> None:
    """One nest per input, storing it at its offset along the axis."""
    assert isinstance(op, so.ConcatOp)
    axis, out = op.axis_value, lowering.results[op.result]
    offset = 0
    for operand in op.operands:
        source = lowering.buffers[operand]

        def build(
            body: KernelBody, index: Index, source: SSAValue = source, at: int = offset
        ) -> None:
            shifted = list(index)
            if at:
                shifted[axis] = body.emit(arith.AddiOp(index[axis], body.index(at)))
            body.store(body.load(source, index), out, tuple(shifted))

        lowering.body.parallel(shape_of(operand.type), build)
        offset += shape_of(operand.type)[axis]


_DATA_MOVEMENT: dict[type[Operation], Callable[[KernelLowering, Operation], None]] = {
    so.TransposeOp: _transpose,
    so.BroadcastToOp: _broadcast_to,
    so.SliceOp: _slice,
    so.ReshapeOp: _reshape,
    so.ConcatOp: _concat,
}


def is_kernel_op(op: Operation) -> bool:
    """Whether `op` becomes a kernel (every computing df op; not constants,
    send/recv or terminators)."""
    return (
        isinstance(op, FusedOp)
        or has_trait(op, Reduction)
        or is_library_op(op)
        or is_scalar_lowerable(op)
        or type(op) in _DATA_MOVEMENT
    )


def is_kernel(function: func.FuncOp) -> bool:
    """Whether `function` is a kernel rather than a graph function."""
    return KERNEL in function.attributes


def graph_functions(scope: ModuleOp) -> list[func.FuncOp]:
    """The defined graph functions of a module (kernels excluded)."""
    return [
        op
        for op in scope.ops
        if isinstance(op, func.FuncOp) and not op.is_declaration and not is_kernel(op)
    ]


def build_kernel(group: Group, library: Library, lanes: int = 1) -> func.FuncOp:
    """The kernel computing `group`: inputs then outputs as memref arguments; `lanes`:
    the independent accumulators of its row folds (`reduce_in_lanes`)."""
    types = [buffer_type(v.type) for v in (*group.inputs, *group.outputs)]
    block = Block(arg_types=types)
    for argument, value in zip(block.args, (*group.inputs, *group.outputs), strict=True):
        if value.name_hint:
            argument.name_hint = value.name_hint
    body = KernelBody(block)
    KernelLowering(group, body, library, lanes).lower()
    body.add(func.ReturnOp())
    kernel = func.FuncOp(group.name, (types, []), Region(block), visibility="private")
    kernel.attributes[KERNEL] = UnitAttr()
    kernel.attributes[SOURCE] = ArrayAttr([StringAttr(op.name) for op in group.ops])
    flops = sum(op_flops(op) for op in group.ops)
    moved = sum(value_bytes(v) for v in (*group.inputs, *group.outputs))
    kernel.attributes[WORK] = DenseArrayBase.from_list(i64, [flops, moved])
    return kernel
