"""Grappler's recomputation groups: which forward ops to recompute, and where.

The targets are the backward ops (`df.backward`). An op may be recomputed when it is
pure, is not itself a target, does not depend on one, is not fed (a `df.recv`) and
is worth recomputing (a constant is not: it takes no arena memory). Each mode adds
its own test of which such ops are candidates (a `df.recompute` hint; cheap ops).

The groups follow Grappler's MemoryOptimizer: a candidate that feeds a target seeds
a group; the group grows over candidate inputs and outputs (its connected candidate
subgraph), then keeps only the ops that feed a target directly or through other ops
of the group. Each group is cloned once, just before the earliest target that uses
it, and the targets read the clones: the forward values then die after the forward
pass, and the clones live only while the backward pass needs them. In straight-line
code a clone must come after its inputs, so only targets placed after the group's
last op count (a graph from `df-autodiff`, forward then backward, always has them
all); a target placed earlier keeps reading the originals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import Pure

from dflow.dialects.df import annotations
from dflow.dialects.df.communication import RecvOp
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.traits import has_trait

Predicate = Callable[[Operation], bool]


def is_target(op: Operation) -> bool:
    return annotations.BACKWARD in op.attributes


def users(op: Operation) -> set[Operation]:
    return {use.operation for result in op.results for use in result.uses}


def producers(op: Operation) -> set[Operation]:
    return {v.owner for v in op.operands if isinstance(v.owner, Operation)}


def target_dependents(block: Block) -> set[Operation]:
    """The ops that depend, directly or not, on a target (targets included)."""
    found: set[Operation] = set()
    for op in block.ops:
        if is_target(op) or producers(op) & found:
            found.add(op)
    return found


def recomputable(block: Block) -> Predicate:
    """Whether an op of `block` may be recomputed at all, whatever the mode."""
    excluded = target_dependents(block)

    def test(op: Operation) -> bool:
        return (
            op not in excluded
            and has_trait(op, Pure)
            and not isinstance(op, ConstantOp | RecvOp)
            and annotations.RECOMPUTED not in op.attributes
            and bool(op.results)
        )

    return test


def connected(
    seeds: Iterable[Operation], inputs: bool, outputs: bool, belongs: Predicate
) -> set[Operation]:
    """The seeds and every op reached from them through inputs and/or outputs that
    `belongs` (Grappler's connected_subgraph)."""
    found: set[Operation] = set()
    to_visit = list(seeds)
    while to_visit:
        op = to_visit.pop()
        if op in found:
            continue
        found.add(op)
        neighbours: set[Operation] = set()
        if inputs:
            neighbours |= producers(op)
        if outputs:
            neighbours |= users(op)
        to_visit.extend(n for n in neighbours if n not in found and belongs(n))
    return found


@dataclass(frozen=True)
class RecomputeGroup:
    """Forward ops recomputed together, and the targets that read the recomputed values."""

    ops: tuple[Operation, ...]
    """In program order."""
    targets: tuple[Operation, ...]
    """In program order: the clones go just before the first."""


def _feeds_target(op: Operation) -> bool:
    return any(is_target(user) for user in users(op))


def recompute_groups(block: Block, should_recompute: Predicate) -> list[RecomputeGroup]:
    """Grappler's groups over the ops of `block` for which `should_recompute` holds."""
    order = {op: index for index, op in enumerate(block.ops)}
    candidates = [op for op in block.ops if should_recompute(op) and _feeds_target(op)]
    visited: set[Operation] = set()
    groups: list[RecomputeGroup] = []
    for seed in candidates:
        if seed in visited:
            continue
        unpruned = connected([seed], inputs=True, outputs=True, belongs=should_recompute)
        visited |= unpruned
        sources = [op for op in unpruned if _feeds_target(op)]
        ops = connected(sources, inputs=True, outputs=False, belongs=unpruned.__contains__)
        last = max(order[op] for op in ops)
        targets = {
            user
            for op in ops
            for user in users(op)
            if is_target(user) and order[user] > last  # the clones must see their inputs
        }
        if targets:
            groups.append(
                RecomputeGroup(
                    tuple(sorted(ops, key=order.__getitem__)),
                    tuple(sorted(targets, key=order.__getitem__)),
                )
            )
    return groups


def clone_before(
    ops: Iterable[Operation], anchor: Operation, provenance: str, mapping: dict[SSAValue, SSAValue]
) -> None:
    """Clone `ops` (in program order) just before `anchor`, reading earlier clones
    through `mapping` (which gains each clone's results), each marked
    `df.recomputed = provenance` so that `cse` keeps it apart from its original."""
    block = anchor.parent_block()
    assert block is not None
    for op in ops:
        clone = op.clone(value_mapper=mapping)
        clone.attributes[annotations.RECOMPUTED] = StringAttr(provenance)
        block.insert_op_before(clone, anchor)


def read_clones(op: Operation, mapping: dict[SSAValue, SSAValue]) -> None:
    """Make `op` read the clone of every operand that has one."""
    for index, operand in enumerate(op.operands):
        if operand in mapping:
            op.operands[index] = mapping[operand]


def apply_group(group: RecomputeGroup, provenance: str) -> None:
    """Clone the group before its first target and rewire all its targets."""
    mapping: dict[SSAValue, SSAValue] = {}
    clone_before(group.ops, group.targets[0], provenance, mapping)
    for target in group.targets:
        read_clones(target, mapping)
