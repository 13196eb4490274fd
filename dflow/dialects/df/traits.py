"""Facts about `df` ops that passes ask for, kept on the op classes as traits.

A pass asks `has_trait(op, Elementwise)` (`op.has_trait`, remembered per class)
rather than keeping its own list of op classes, so a new op states its facts once,
where it is defined:

- `Elementwise` (unary, binary, comparisons, `select`, `cast`, `addn`): they join
  `df-fuse` groups; the kernel builder computes them one element at a time;
- `FlopsPerElement` (the elementwise ops dearer than one flop): the cost model;
- `InPlace` (the elementwise ops; `cast` between types of one width): the memory
  plan writes the result over an operand that dies there;
- `ViewLike` (`reshape`): the memory plan makes it a view (no copy), `df-bufferize`
  builds no kernel for it, the cost model counts nothing, placement keeps it with
  its producer;
- `CheapToRecompute` (the elementwise ops, `reshape`, `transpose`,
  `broadcast_to`): `df-recompute{mode=heuristic}` recomputes them unhinted;
- `Reduction` (`reduce_sum`, `reduce_mean`, `reduce_max`, `softmax`): it closes a
  `df-fuse` group; the cost model's flops per input element;
- `EpilogueHead` (`matmul`, `conv2d`): it heads a `df-fuse` group that its
  elementwise consumers join.

Traits of a base class are inherited (xDSL merges `traits_def` along the class
hierarchy), so a parameterized trait sits on the concrete op only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.traits import OpTrait

from dflow.dialects.df.types import element_bytes


def has_trait(op: Operation, trait: type[OpTrait]) -> bool:
    """`op.has_trait(trait)`, remembered per op class: xDSL looks through the class's
    traits each time, and the lowering asks tens of thousands of times (7% of its
    time at 5,000 ops)."""
    return _class_has_trait(type(op), trait)


@functools.cache
def _class_has_trait(op_class: type[Operation], trait: type[OpTrait]) -> bool:
    return op_class.has_trait(trait)


class Elementwise(OpTrait):
    """Each result element is computed from the operand elements at the same index
    (after NumPy broadcasting), so a chain of such ops fuses into one loop nest that
    keeps its intermediate values in registers."""


@dataclass(frozen=True)
class FlopsPerElement(OpTrait):
    """The floating-point operations an elementwise op spends per result element,
    for the cost model (an op without this trait counts 1): 4 for divisions and
    roots, 8 for transcendental functions."""

    flops: int = 1

    def count(self, op: Operation) -> int:
        """The flops per result element of `op`."""
        return self.flops


@dataclass(frozen=True)
class FlopPerAddedOperand(FlopsPerElement):
    """`addn`: one addition per result element for each operand after the first."""

    def count(self, op: Operation) -> int:
        return max(len(op.operands) - 1, 0)


class InPlace(OpTrait):
    """The result may be written over an operand of exactly its type (shape and
    element) once that operand is dead: each result element depends only on the
    operand element at the same position, read before it is written."""

    def operands(self, op: Operation) -> list[SSAValue]:
        """The operands `op` may overwrite with its single result."""
        if len(op.results) != 1:
            return []
        result = op.results[0].type
        return [operand for operand in op.operands if operand.type == result]


class InPlaceOfSameWidth(InPlace):
    """`cast`: the result may be written over its operand when both element types
    have one width (the shape is the operand's by the op's rule)."""

    def operands(self, op: Operation) -> list[SSAValue]:
        if len(op.results) != 1 or len(op.operands) != 1:
            return []
        source, result = op.operands[0], op.results[0]
        return [source] if element_bytes(source.type) == element_bytes(result.type) else []


class ViewLike(OpTrait):
    """The result is the operand's bytes, in the same row-major order, seen under
    another shape: no element is computed or moved."""


class NarrowAsIs(OpTrait):
    """The op means the same on f16, bf16 and 8- and 16-bit integer values as they
    are (a cast, a constant, a reshape): it does not compute in the wider type of
    `types.COMPUTE_TYPES` as every other op on narrow values does."""


class CheapToRecompute(OpTrait):
    """The op costs one pass over its data, so recomputing it next to a late user
    is cheaper than keeping its result alive."""


@dataclass(frozen=True)
class Reduction(OpTrait):
    """Each result element combines a whole axis (or axes) of the operand; a group
    of elementwise ops that feeds it can be fused in front of it, and nothing after
    it. `flops` per operand element, for the cost model."""

    flops: int = 1


class EpilogueHead(OpTrait):
    """A contraction computed by a library routine into its result buffer; the
    elementwise ops that consume it (bias, activation) can run in the same kernel
    as its epilogue."""
