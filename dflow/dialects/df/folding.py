"""Constant folding of `df` ops through their reference semantics, under a size policy.

One implementation serves both the ops' `fold()` (so upstream `canonicalize` folds
them) and the `df-fold-constants` pass, which adds a module-wide byte budget.
A constant's size is what it takes in the module: its element count times its
element type's width, or one element when it is a splat (printed `dense<v>`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects.builtin import AnyDenseElement, DenseIntOrFPElementsAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import ConstantLike

from dflow.dialects.df.arrays import from_array, to_array
from dflow.dialects.df.reference import Array
from dflow.dialects.df.semantics import evaluate, has_semantics
from dflow.dialects.df.traits import has_trait
from dflow.dialects.df.types import static_tensor

DEFAULT_MAX_BYTES = 10 * 2**20
"""The largest constant a fold may create, as Grappler's constant folding."""

SMALL_BYTES = 1024
"""A fold that grows its inputs (a broadcast) is still done below this size."""


def is_splat(array: Array) -> bool:
    """Whether every element has the same bits as the first (NaN and -0.0 included).
    An empty array is none: it has no element to repeat."""
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.size == 0:
        return False
    rows = flat.view(np.uint8).reshape(flat.size, -1)
    return bool((rows == rows[0]).all())


def stored_bytes(array: Array) -> int:
    """The bytes a constant holding `array` takes in the module."""
    if array.size == 0:
        return 0
    return array.dtype.itemsize * (1 if is_splat(array) else array.size)


def constant_operand(value: SSAValue) -> Array | None:
    """The elements of `value` when a constant (a `ConstantLike` op with a dense
    value, as `df.constant`) defines it, else None."""
    attribute = ConstantLike.get_constant_value(value)
    if isinstance(attribute, DenseIntOrFPElementsAttr):  # as isa(...), but fast
        return to_array(cast(DenseIntOrFPElementsAttr[AnyDenseElement], attribute))
    return None


@dataclass(frozen=True)
class FoldPolicy:
    """Which folds are worth doing: none past `max_bytes`, and none that turns small
    constants into a much larger one (a broadcast) unless the result is small."""

    max_bytes: int = DEFAULT_MAX_BYTES

    def allows(self, inputs: Sequence[Array], result: Array) -> bool:
        size = stored_bytes(result)
        if size > self.max_bytes:
            return False
        grows = size > sum(stored_bytes(array) for array in inputs)
        return not grows or size <= SMALL_BYTES


def evaluate_constant_op(op: Operation) -> tuple[list[Array], Array] | None:
    """The constant inputs and the result of `op` when all its operands are constant."""
    if has_trait(op, ConstantLike) or len(op.results) != 1 or not has_semantics(op):
        return None
    inputs: list[Array] = []
    for operand in op.operands:
        array = constant_operand(operand)
        if array is None:
            return None
        inputs.append(array)
    try:
        return inputs, evaluate(op, inputs)[0]
    except IndexError:  # an index out of range: not folded, the run reports it
        return None


def fold_op(op: Operation, policy: FoldPolicy = FoldPolicy()) -> Sequence[Attribute] | None:
    """The folded result of `op` as a dense attribute, or None when it does not fold.

    An op with discardable attributes (a placement, a hint) does not fold here: the
    constant that upstream folding materializes could not keep them.
    `df-fold-constants` folds such ops and moves their attributes to the constant.
    """
    if op.attributes:
        return None
    evaluated = evaluate_constant_op(op)
    if evaluated is None or not policy.allows(*evaluated):
        return None
    return (from_array(evaluated[1], static_tensor(op.results[0].type)),)
