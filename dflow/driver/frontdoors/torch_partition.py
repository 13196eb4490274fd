"""The partition of a training step: which forward values the backward graph reads
(saved, held in memory between the two) and which it computes again.

`aot_autograd` traces the step as one joint graph and asks its partition function
to split it. dflow's starts from PyTorch's default split (save every forward value
the backward reads) and then, as `df-recompute` does for dflow's own programs:

- recomputes a saved value whose op is cheap to compute again (an elementwise op
  or a view: the converter's `cheap` mark, df's `CheapToRecompute`) where the
  operands it needs, beyond what is saved already, take fewer bytes than it does
  (a ReLU's output, when its input is saved anyway, costs nothing to recompute);
- under a memory budget (`memory_budget`, bytes), goes on recomputing until the
  saved bytes fit, the values freeing the most bytes per unit of recomputation
  first (a cheap op costs its elements, any other op ten times them), and warns
  when even recomputing everything possible does not fit.

The graph is checked whole first (`check_graph`), so an op dflow cannot import
makes the whole step fall back to eager PyTorch before anything is compiled.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from torch import fx
from torch._functorch.partitioners import (  # the split by a chosen saved set: PyTorch's own
    _extract_fwd_bwd_modules,  # pyright: ignore[reportPrivateUsage]
    default_partition,
)

from dflow.frontend.torch import check_graph
from dflow.frontend.torch.call import CHEAP_TO_RECOMPUTE

Modules = tuple[fx.GraphModule, fx.GraphModule]

EXPENSIVE = 10
"""The recomputation cost of an op that is not cheap, per element of its result,
in units of a cheap op's."""


def dflow_partition(
    joint: fx.GraphModule,
    joint_inputs: Any,
    *,
    num_fwd_outputs: int,
    memory_budget: int | None = None,
    **options: Any,
) -> Modules:
    """The forward and backward graphs of `joint` (see the module's docstring)."""
    check_graph(joint.graph)
    forward, backward = default_partition(
        joint, joint_inputs, num_fwd_outputs=num_fwd_outputs, **options
    )
    nodes = {node.name: node for node in joint.graph.nodes}
    saved = [nodes[n.name] for n in _saved(forward, num_fwd_outputs)]
    if any(not _is_tensor(node) for node in saved):
        return forward, backward
    chosen = _recomputed(saved, memory_budget)
    if chosen == saved:
        return forward, backward
    return _extract_fwd_bwd_modules(
        joint, chosen, [], num_fwd_outputs=num_fwd_outputs,
        static_lifetime_input_nodes=_static_nodes(joint, options),
    )  # fmt: skip


def _saved(forward: fx.GraphModule, outputs: int) -> list[fx.Node]:
    (output,) = (node for node in forward.graph.nodes if node.op == "output")
    return [value for value in output.args[0][outputs:] if isinstance(value, fx.Node)]  # pyright: ignore[reportIndexIssue, reportOptionalSubscript, reportUnknownVariableType]


def _static_nodes(joint: fx.GraphModule, options: dict[str, Any]) -> Any:
    indices: list[int] = list(options.get("static_lifetime_input_indices") or [])
    placeholders = [node for node in joint.graph.nodes if node.op == "placeholder"]
    from torch.utils._ordered_set import OrderedSet  # noqa: PLC0415 (PyTorch's own)

    return OrderedSet(placeholders[i] for i in indices)


def _is_tensor(node: fx.Node) -> bool:
    return isinstance(node.meta.get("val"), torch.Tensor)


def _bytes(node: fx.Node) -> int:
    """What keeping `node` for the backward costs: its bytes, none for an input
    (the caller holds the inputs anyway)."""
    if node.op == "placeholder":
        return 0
    value = node.meta["val"]
    return int(math.prod(value.shape)) * value.element_size()


def _operands(node: fx.Node) -> list[fx.Node]:
    """The tensors `node` computes from."""
    found: list[fx.Node] = []
    for value in (*node.args, *node.kwargs.values()):
        for item in value if isinstance(value, list | tuple) else [value]:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(item, fx.Node) and _is_tensor(item) and item not in found:
                found.append(item)
    return found


def _recomputation(node: fx.Node, saved: list[fx.Node]) -> tuple[list[fx.Node], list[fx.Node]]:
    """What recomputing `node` from `saved` and the inputs needs: the values it
    reads (saved ones, inputs) and the ops it runs (`node` and the unsaved ones
    between); empty when it reads a tangent (a backward value)."""
    leaves: list[fx.Node] = []
    ops: list[fx.Node] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if current in ops:
            continue
        if current.op != "call_function":
            return [], []
        ops.append(current)
        for operand in _operands(current):
            if operand in saved or operand.op == "placeholder":
                if operand not in leaves and not str(operand.name).startswith("tangents"):
                    leaves.append(operand)
                if str(operand.name).startswith("tangents"):
                    return [], []
            else:
                pending.append(operand)
    return leaves, ops


def _freed(saved: list[fx.Node], node: fx.Node) -> int:
    leaves, ops = _recomputation(node, saved)
    if not ops:
        return 0
    return _bytes(node) - sum(_bytes(n) for n in leaves if n not in saved)


def _replacing(saved: list[fx.Node], node: fx.Node) -> list[fx.Node]:
    """`saved` with `node` replaced by what recomputing it reads."""
    leaves, _ = _recomputation(node, saved)
    kept = [n for n in saved if n is not node]
    return kept + [n for n in leaves if n not in kept]


def _cost(node: fx.Node, saved: list[fx.Node]) -> int:
    """The recomputation's work: per op run, its result's elements, times
    `EXPENSIVE` for an op that is not cheap."""
    _, ops = _recomputation(node, saved)
    total = 0
    for op in ops:
        elements = max(1, math.prod(op.meta["val"].shape) if _is_tensor(op) else 1)
        total += elements if str(op.target) in CHEAP_TO_RECOMPUTE else EXPENSIVE * elements
    return max(1, total)


def _recomputed(saved: list[fx.Node], budget: int | None) -> list[fx.Node]:
    """The saved values after recomputation: the cheap ones that free bytes alone,
    then, under a budget, the best ratio of bytes freed to cost until the rest fits."""
    chosen = list(saved)
    while True:
        free = [
            n for n in chosen
            if str(n.target) in CHEAP_TO_RECOMPUTE and _freed(chosen, n) > 0
            and len(_recomputation(n, chosen)[1]) == 1
        ]  # fmt: skip
        if not free:
            break
        chosen = _replacing(chosen, max(free, key=lambda n: _freed(chosen, n)))
    while budget is not None and sum(map(_bytes, chosen)) > budget:
        candidates = [n for n in chosen if _freed(chosen, n) > 0]
        if not candidates:
            warnings.warn(
                f"dflow: the saved values take {sum(map(_bytes, chosen))} bytes, over the "
                f"memory budget of {budget}, with everything recomputable recomputed",
                stacklevel=2,
            )
            break
        best = max(candidates, key=lambda n: _freed(chosen, n) / _cost(n, chosen))
        chosen = _replacing(chosen, best)
    return chosen
