"""`df-simplify-arith`: algebraic rewrites, one pattern per identity.

As Grappler's arithmetic optimizer. Every rewrite keeps the result's exact type:
`x * 1` where the 1 broadcasts `x` to a larger shape is not `x`, and is left alone.

By default no rewrite changes a result when an input is NaN or ±Inf: `x * 0 → 0`,
`x - x → 0` and `x / x → 1` are wrong for such inputs and only run with
`fastmath=true` (they always run on integers, where they are exact). Some
rewrites may change the sign of a zero (`x + 0 → x` turns `-0 + 0 = +0` into
`-0`; `0 - y → neg y` turns `+0` into `-0`), as in Grappler; rewrites that
reassociate (`x*a + x*b → x*(a+b)`, scales folded into weights) may round
differently or overflow at other points.

    xdsl-opt prog.mlir -p 'df-simplify-arith{fastmath=false stats=true}'

The pass also applies the dialect's canonical forms (double negation, transpose
and reshape chains, no-op casts, ...; see `transforms/canonicalization_patterns/df.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df import elementwise as ew
from dflow.dialects.df import nn
from dflow.dialects.df.arrays import from_array, numpy_dtype
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.folding import constant_operand, is_splat
from dflow.dialects.df.reference import Array
from dflow.dialects.df.types import flag, is_float, shape_of, static_tensor
from dflow.passes.statistics import PassStatistics
from dflow.transforms.canonicalization_patterns.df import all_canonicalization_patterns
from dflow.transforms.canonicalization_patterns.utils import (
    forward,
    producer,
    replace_keeping_annotations,
)
from dflow.transforms.rewriting import apply_patterns

OpT = TypeVar("OpT", bound=Operation)

# --- matching helpers -------------------------------------------------------------


def splat_value(value: SSAValue) -> Any | None:
    """The repeated element of a splat `df.constant`, as a Python number, else None."""
    array = constant_operand(value)
    if array is None or not is_splat(array):
        return None
    return array.reshape(-1)[0].item()


def is_splat_of(value: SSAValue, number: float) -> bool:
    element = splat_value(value)
    return element is not None and element == number


def either_order(op: Operation) -> Iterator[tuple[SSAValue, SSAValue]]:
    """(lhs, rhs), then (rhs, lhs): the two readings of a commutative binary op."""
    lhs, rhs = op.operands
    yield lhs, rhs
    yield rhs, lhs


def sole_user(value: SSAValue, kind: type[Operation]) -> Operation | None:
    """The op of `kind` defining `value`, when `value` has exactly one use."""
    owner = value.owner
    if isinstance(owner, kind) and value.has_one_use():
        return owner
    return None


def splat_constant(number: float, type: Attribute) -> ConstantOp:
    """A `df.constant` of `type` with every element `number`."""
    tensor = static_tensor(type)
    array = np.full(tensor.get_shape(), number, numpy_dtype(tensor.element_type))
    return ConstantOp(from_array(array, tensor))


def inherit(new_op: OpT, old_op: Operation) -> OpT:
    """`new_op` with the discardable attributes (placement, hints) of the op it replaces."""
    for name, value in old_op.attributes.items():
        new_op.attributes.setdefault(name, value)
    return new_op


def exact_for_all_inputs(op: Operation, fastmath: bool) -> bool:
    """Whether a rewrite that is wrong for NaN/Inf may run: on integers, or with fastmath."""
    return fastmath or not is_float(static_tensor(op.results[0].type).element_type)


# --- identities with a neutral constant ------------------------------------------------


class RemoveMulByOne(RewritePattern):
    """x * 1 = 1 * x = x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.MulOp, rewriter: PatternRewriter) -> None:
        for x, one in either_order(op):
            if is_splat_of(one, 1) and forward(rewriter, op, x):
                return


class RemoveAddZero(RewritePattern):
    """x + 0 = 0 + x = x (the sign of a zero x may change)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.AddOp, rewriter: PatternRewriter) -> None:
        for x, zero in either_order(op):
            if is_splat_of(zero, 0) and forward(rewriter, op, x):
                return


class RemoveSubZero(RewritePattern):
    """x - 0 = x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.SubOp, rewriter: PatternRewriter) -> None:
        if is_splat_of(op.rhs, 0):
            forward(rewriter, op, op.lhs)


class RemoveDivByOne(RewritePattern):
    """x / 1 = x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.DivOp, rewriter: PatternRewriter) -> None:
        if is_splat_of(op.rhs, 1):
            forward(rewriter, op, op.lhs)


class RemovePowOne(RewritePattern):
    """pow(x, 1) = x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.PowOp, rewriter: PatternRewriter) -> None:
        if is_splat_of(op.rhs, 1):
            forward(rewriter, op, op.lhs)


# --- cheaper unary forms ------------------------------------------------------------


class SubFromZeroToNeg(RewritePattern):
    """0 - y = neg(y) (the sign of a zero result may change)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.SubOp, rewriter: PatternRewriter) -> None:
        if is_splat_of(op.lhs, 0):
            replace_keeping_annotations(rewriter, op, [ew.NegOp(op.rhs)])


class MulByMinusOneToNeg(RewritePattern):
    """x * -1 = -1 * x = neg(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.MulOp, rewriter: PatternRewriter) -> None:
        for x, minus_one in either_order(op):
            if is_splat_of(minus_one, -1) and replace_keeping_annotations(
                rewriter, op, [ew.NegOp(x)]
            ):
                return


class DivOfOneToReciprocal(RewritePattern):
    """1 / y = reciprocal(y)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.DivOp, rewriter: PatternRewriter) -> None:
        if is_splat_of(op.lhs, 1):
            replace_keeping_annotations(rewriter, op, [ew.ReciprocalOp(op.rhs)])


class MulSelfToSquare(RewritePattern):
    """x * x = square(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.MulOp, rewriter: PatternRewriter) -> None:
        if op.lhs is op.rhs:
            replace_keeping_annotations(rewriter, op, [ew.SquareOp(op.lhs)])


class PowTwoToSquare(RewritePattern):
    """pow(x, 2) = square(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.PowOp, rewriter: PatternRewriter) -> None:
        if is_splat_of(op.rhs, 2):
            replace_keeping_annotations(rewriter, op, [ew.SquareOp(op.lhs)])


class PowMinusOneToReciprocal(RewritePattern):
    """pow(x, -1) = reciprocal(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.PowOp, rewriter: PatternRewriter) -> None:
        if is_splat_of(op.rhs, -1):
            replace_keeping_annotations(rewriter, op, [ew.ReciprocalOp(op.lhs)])


class DivBySqrtToMulRsqrt(RewritePattern):
    """x / sqrt(y) = x * rsqrt(y), when the sqrt has no other use."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.DivOp, rewriter: PatternRewriter) -> None:
        root = sole_user(op.rhs, ew.SqrtOp)
        if root is None:
            return
        rsqrt = inherit(ew.RsqrtOp(root.operands[0]), root)
        replace_keeping_annotations(rewriter, op, [rsqrt, ew.MulOp(op.lhs, rsqrt.result)])


def _has_exact_reciprocal(divisor: Array) -> bool:
    """Whether `divisor` is a power of two whose reciprocal its type holds exactly."""
    if not np.isfinite(divisor) or divisor == 0:
        return False
    with np.errstate(over="ignore"):
        reciprocal = np.reciprocal(divisor)
    mantissa, _ = np.frexp(divisor)
    return bool(abs(mantissa) == 0.5 and np.isfinite(reciprocal) and reciprocal * divisor == 1)


class DivByPowerOfTwoToMul(RewritePattern):
    """x / 2^k = x * 2^-k: the reciprocal of a power of two is exact."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.DivOp, rewriter: PatternRewriter) -> None:
        divisor = splat_value(op.rhs)
        dtype = numpy_dtype(static_tensor(op.rhs.type).element_type)
        if divisor is None or not _has_exact_reciprocal(np.asarray(divisor, dtype)):
            return
        scale = splat_constant(1 / divisor, op.rhs.type)
        replace_keeping_annotations(rewriter, op, [scale, ew.MulOp(op.lhs, scale.result)])


class CancelDoubleReciprocal(RewritePattern):
    """reciprocal(reciprocal(x)) = x, up to rounding (1/(1/x) may differ from x in the
    last bit; a subnormal x, whose reciprocal overflows, comes back as x, not 0).
    Exact for zeros, infinities and NaN."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.ReciprocalOp, rewriter: PatternRewriter) -> None:
        if inner := producer(op.input, ew.ReciprocalOp):
            forward(rewriter, op, inner.operands[0])


# --- negations --------------------------------------------------------------------


class AddNegToSub(RewritePattern):
    """x + neg(y) = neg(y) + x = x - y."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.AddOp, rewriter: PatternRewriter) -> None:
        for x, negated in either_order(op):
            if isinstance(neg := negated.owner, ew.NegOp) and replace_keeping_annotations(
                rewriter, op, [ew.SubOp(x, neg.input)]
            ):
                return


class SubNegToAdd(RewritePattern):
    """x - neg(y) = x + y."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.SubOp, rewriter: PatternRewriter) -> None:
        if isinstance(neg := op.rhs.owner, ew.NegOp):
            replace_keeping_annotations(rewriter, op, [ew.AddOp(op.lhs, neg.input)])


class MulOfNegsToMul(RewritePattern):
    """neg(x) * neg(y) = x * y."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.MulOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = op.lhs.owner, op.rhs.owner
        if isinstance(lhs, ew.NegOp) and isinstance(rhs, ew.NegOp):
            replace_keeping_annotations(rewriter, op, [ew.MulOp(lhs.input, rhs.input)])


# --- aggregation ------------------------------------------------------------------


def _addition_terms(value: SSAValue, type: Attribute, root: bool) -> list[SSAValue]:
    """The terms of a tree of adds/addns of one type, flattened left to right; an inner
    sum is only opened when this tree is its sole user."""
    owner = value.owner
    opens = isinstance(owner, ew.AddOp | ew.AddNOp) and value.type == type
    if not opens or not (root or value.has_one_use()):
        return [value]
    assert isinstance(owner, Operation)
    terms = [term for operand in owner.operands for term in _addition_terms(operand, type, False)]
    return terms if all(term.type == type for term in terms) else [value]


def _is_inner_sum(op: Operation) -> bool:
    """Whether `op`'s sum is opened by the one sum of its type that uses it."""
    result = op.results[0]
    user = result.get_user_of_unique_use()
    if not isinstance(user, ew.AddOp | ew.AddNOp) or user.results[0].type != result.type:
        return False
    total = user.results[0]
    return _addition_terms(total, total.type, True) != [total]


class MergeAddChainIntoAddN(RewritePattern):
    """((a + b) + c) + d = addn(a, b, c, d), when every term has the sum's type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ew.AddOp | ew.AddNOp):
            return
        if _is_inner_sum(op):
            return  # rewrite the whole chain once, from its root
        terms = _addition_terms(op.results[0], op.results[0].type, True)
        if len(terms) > len(op.operands):
            replace_keeping_annotations(rewriter, op, [ew.AddNOp(terms)])


class HoistCommonFactor(RewritePattern):
    """x*a + x*b = x*(a + b) and x*a - x*b = x*(a - b), when both products have no
    other use."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ew.AddOp | ew.SubOp):
            return
        left, right = (sole_user(value, ew.MulOp) for value in op.operands)
        if left is None or right is None:
            return
        for x, a in either_order(left):
            for y, b in either_order(right):
                if x is y and self._hoist(op, x, a, b, rewriter):
                    return

    @staticmethod
    def _hoist(
        op: ew.AddOp | ew.SubOp, x: SSAValue, a: SSAValue, b: SSAValue, rewriter: PatternRewriter
    ) -> bool:
        try:
            combined = type(op)(a, b)
            product = ew.MulOp(x, combined.results[0])
        except VerifyException:  # a and b do not broadcast together
            return False
        return replace_keeping_annotations(rewriter, op, [combined, product])


# --- scales folded into constant weights -------------------------------------------


def _per_axis_scale(scale: Array, result_shape: tuple[int, ...], axis: int) -> Array | None:
    """`scale` as a vector along `axis` of the result, when it broadcasts along no other
    axis and is finite and nonzero (so the rewrite creates no NaN)."""
    rank = len(result_shape)
    if scale.ndim > rank or not np.all(np.isfinite(scale)) or np.any(scale == 0):
        return None
    shape = (1,) * (rank - scale.ndim) + scale.shape
    if any(size != 1 for index, size in enumerate(shape) if index != axis % rank):
        return None
    return np.broadcast_to(scale.reshape(-1), (result_shape[axis],))


def _scaled_weight(weight: SSAValue, factor: Array, axis: int) -> ConstantOp | None:
    """A new constant: `weight` (constant, used once) times `factor` along `axis`."""
    array = constant_operand(weight)
    if array is None or not weight.has_one_use():
        return None
    shape = [1] * array.ndim
    shape[axis] = factor.size
    return ConstantOp(from_array(array * factor.reshape(shape), static_tensor(weight.type)))


class FoldScaleIntoMatmul(RewritePattern):
    """matmul(x, W) * s = matmul(x, W * s) for constant W and a constant s that scales
    whole output columns (a scalar or a vector over the last axis)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.MulOp, rewriter: PatternRewriter) -> None:
        for product, scale in either_order(op):
            matmul = sole_user(product, nn.MatmulOp)
            scale_array = constant_operand(scale)
            if not isinstance(matmul, nn.MatmulOp) or scale_array is None:
                continue
            factor = _per_axis_scale(scale_array, shape_of(product.type), -1)
            column_axis = -2 if flag(matmul.transpose_b) else -1
            weight = None if factor is None else _scaled_weight(matmul.rhs, factor, column_axis)
            if weight is None:
                continue
            new_matmul = nn.MatmulOp(
                matmul.lhs,
                weight.result,
                transpose_a=flag(matmul.transpose_a),
                transpose_b=flag(matmul.transpose_b),
            )
            inherit(new_matmul, matmul)
            if replace_keeping_annotations(rewriter, op, [weight, new_matmul]):
                return


class FoldScaleIntoConv(RewritePattern):
    """conv2d(x, W, b) * s = conv2d(x, W * s, b * s) for constant W (and b) and a
    constant s that scales whole output channels (Grappler's FoldMultiplyIntoConv)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.MulOp, rewriter: PatternRewriter) -> None:
        for output, scale in either_order(op):
            conv = sole_user(output, nn.Conv2DOp)
            scale_array = constant_operand(scale)
            if not isinstance(conv, nn.Conv2DOp) or scale_array is None:
                continue
            factor = _per_axis_scale(scale_array, shape_of(output.type), 1)
            new_ops = None if factor is None else _scaled_conv(conv, factor)
            if new_ops is not None and replace_keeping_annotations(rewriter, op, new_ops):
                return


def _scaled_conv(conv: nn.Conv2DOp, factor: Array) -> list[Operation] | None:
    weight = _scaled_weight(conv.filter, factor, 0)
    if weight is None:
        return None
    new_ops: list[Operation] = [weight]
    bias = None
    if conv.bias is not None:
        scaled_bias = _scaled_weight(conv.bias, factor, 0)
        if scaled_bias is None:
            return None
        new_ops.append(scaled_bias)
        bias = scaled_bias.result
    new_ops.append(inherit(nn.Conv2DOp(conv.input, weight.result, bias, **conv.window), conv))
    return new_ops


# --- rewrites that are wrong for NaN or Inf (fastmath, or integers) -----------------


@dataclass
class MulByZeroToZero(RewritePattern):
    """x * 0 = 0 (not for x NaN or ±Inf: fastmath or integers only)."""

    fastmath: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.MulOp, rewriter: PatternRewriter) -> None:
        if not exact_for_all_inputs(op, self.fastmath):
            return
        if any(is_splat_of(value, 0) for value in op.operands):
            replace_keeping_annotations(rewriter, op, [splat_constant(0, op.result.type)])


@dataclass
class SubSelfToZero(RewritePattern):
    """x - x = 0 (not for x NaN or ±Inf: fastmath or integers only)."""

    fastmath: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.SubOp, rewriter: PatternRewriter) -> None:
        if op.lhs is op.rhs and exact_for_all_inputs(op, self.fastmath):
            replace_keeping_annotations(rewriter, op, [splat_constant(0, op.result.type)])


@dataclass
class DivSelfToOne(RewritePattern):
    """x / x = 1 (not for x zero, NaN or ±Inf: fastmath only)."""

    fastmath: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.DivOp, rewriter: PatternRewriter) -> None:
        if op.lhs is op.rhs and self.fastmath:
            replace_keeping_annotations(rewriter, op, [splat_constant(1, op.result.type)])


def arith_patterns(fastmath: bool) -> list[RewritePattern]:
    """The arithmetic optimizer's patterns, after the dialect's canonical forms."""
    return [
        *all_canonicalization_patterns(),
        RemoveMulByOne(),
        RemoveAddZero(),
        RemoveSubZero(),
        RemoveDivByOne(),
        RemovePowOne(),
        SubFromZeroToNeg(),
        MulByMinusOneToNeg(),
        DivOfOneToReciprocal(),
        MulSelfToSquare(),
        PowTwoToSquare(),
        PowMinusOneToReciprocal(),
        DivBySqrtToMulRsqrt(),
        DivByPowerOfTwoToMul(),
        CancelDoubleReciprocal(),
        AddNegToSub(),
        SubNegToAdd(),
        MulOfNegsToMul(),
        MergeAddChainIntoAddN(),
        HoistCommonFactor(),
        FoldScaleIntoMatmul(),
        FoldScaleIntoConv(),
        MulByZeroToZero(fastmath),
        SubSelfToZero(fastmath),
        DivSelfToOne(fastmath),
    ]


@dataclass(frozen=True)
class SimplifyArithPass(ModulePass):
    """Apply the algebraic rewrites until none fires."""

    name = "df-simplify-arith"

    fastmath: bool = False
    """Also rewrite where NaN or ±Inf inputs would change the result (x*0, x-x, x/x)."""

    stats: bool = False
    """Print how many times each rewrite fired and the ops and bytes before and after."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        apply_patterns(op, arith_patterns(self.fastmath), statistics)
        statistics.finish(op)
