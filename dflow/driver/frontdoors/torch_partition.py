"""The partition of a training step: which forward values the backward graph reads
(saved, held in memory between the two) and which it computes again, chosen by
`df-recompute`.

`aot_autograd` traces the step as one joint graph and asks its partition function
to split it. dflow's imports the joint graph as one df function, each op marked
with its FX node (`df.torch_node`) and the backward ones `df.backward`, and lets
`df-recompute` decide on it, as it does for dflow's own training programs: its
heuristic mode (cheap ops recomputed where that lowers the planner's peak), or,
with `memory_budget`, its budget mode (the least recomputation whose planned arena
fits the budget; a budget no plan meets is a warning, and the heuristic's choice
is used). The decision comes back to the FX graph as the saved set:

- PyTorch's default split (every forward value the backward reads) less the
  values `df-recompute` cloned for the backward,
- plus the forward values the backward ops and the clones read in the df function
  (a value made inside a node's composition counts as the node's; an input as its
  placeholder),
- each view that holds all of its base's elements (a transposed weight, an alias,
  a reshape) replaced by its base, which the backward views again for nothing,

and PyTorch's `_extract_fwd_bwd_modules` builds the two graphs for it (the
backward recomputing what is not saved). The graph is checked whole first
(`check_graph`), so that an op dflow cannot import makes the whole step fall back
to eager PyTorch before anything is compiled.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import fx
from torch._functorch.partitioners import (  # the split by a chosen saved set: PyTorch's own
    _extract_fwd_bwd_modules,  # pyright: ignore[reportPrivateUsage]
    default_partition,
)
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.utils._ordered_set import OrderedSet
from xdsl.dialects.builtin import StringAttr, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from dflow.dialects.df import annotations
from dflow.frontend.torch import Imported, check_graph, import_graph
from dflow.transforms.recompute.budget import STRATEGIES
from dflow.transforms.recompute.recompute import recompute_heuristic, recompute_to_budget

Modules = tuple[fx.GraphModule, fx.GraphModule]

ORIGIN = "df.torch_node"
"""String, on the ops imported for the partition: the FX node they were built for."""


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
    default = [nodes[n.name] for n in _saved(forward, num_fwd_outputs)]
    forward_names = {node.name for node in forward.graph.nodes}
    chosen = _chosen(joint, forward_names, default, memory_budget)
    if set(chosen) == set(default):
        return forward, backward
    return _extract_fwd_bwd_modules(
        joint, chosen, [], num_fwd_outputs=num_fwd_outputs,
        static_lifetime_input_nodes=_static_nodes(joint, options),
    )  # fmt: skip


def _saved(forward: fx.GraphModule, outputs: int) -> list[fx.Node]:
    (output,) = (node for node in forward.graph.nodes if node.op == "output")
    values: list[Any] = list(output.args[0])[outputs:]  # pyright: ignore[reportArgumentType]
    return [value for value in values if isinstance(value, fx.Node)]


def _static_nodes(joint: fx.GraphModule, options: dict[str, Any]) -> OrderedSet[fx.Node]:
    indices: list[int] = list(options.get("static_lifetime_input_indices") or [])
    placeholders = [node for node in joint.graph.nodes if node.op == "placeholder"]
    return OrderedSet(placeholders[i] for i in indices)


def _chosen(
    joint: fx.GraphModule, forward: set[str], default: list[fx.Node], budget: int | None
) -> list[fx.Node]:
    """The saved set `df-recompute` decides on the joint graph imported."""
    backward = {
        node.name for node in joint.graph.nodes
        if node.op == "call_function" and node.name not in forward
    }  # fmt: skip

    def marks(node: fx.Node) -> dict[str, Attribute]:
        found: dict[str, Attribute] = {ORIGIN: StringAttr(node.name)}
        if node.name in backward:
            found[annotations.BACKWARD] = UnitAttr()
        return found

    with unset_fake_temporarily():  # the importer computes constants (`arange`) for real
        imported = import_graph(joint, marks=marks)
    (function,) = (op for op in imported.module.ops if isinstance(op, FuncOp))
    _recompute(function, budget)
    decision = _Decision(joint, imported)
    recomputed = decision.recomputed(function)
    kept = [node for node in default if node.name not in recomputed]
    return _bases(kept + [node for node in decision.read(function) if node not in kept])


def _bases(saved: list[fx.Node]) -> list[fx.Node]:
    """`saved` with each view that holds no fewer elements than its base (a
    transposed weight, an alias, a reshape) replaced by the base: the backward
    takes the view again for nothing, where saving it would copy it."""
    found: list[fx.Node] = []
    for node in saved:
        base = node
        while (viewed := _whole_view_base(base)) is not None:
            base = viewed
        if base not in found:
            found.append(base)
    return found


def _whole_view_base(node: fx.Node) -> fx.Node | None:
    """The base of `node` where `node` is a view holding all of its elements."""
    if node.op != "call_function" or not getattr(node.target, "is_view", False):
        return None
    base = node.args[0] if node.args else None
    if not isinstance(base, fx.Node) or not _is_tensor(base) or not _is_tensor(node):
        return None
    return base if base.meta["val"].numel() <= node.meta["val"].numel() else None


def _recompute(function: FuncOp, budget: int | None) -> None:
    if budget is not None:
        try:
            recompute_to_budget(function, budget, tuple(STRATEGIES))
            return
        except PassFailedException as error:
            warnings.warn(f"dflow: {error}; recomputing as without a budget", stacklevel=2)
    recompute_heuristic(function)


def _is_tensor(node: fx.Node) -> bool:
    return isinstance(node.meta.get("val"), torch.Tensor)


class _Decision:
    """Reads the FX nodes back from the df function `df-recompute` rewrote."""

    def __init__(self, joint: fx.GraphModule, imported: Imported):
        self.nodes = {node.name: node for node in joint.graph.nodes}
        placeholders = [node for node in joint.graph.nodes if node.op == "placeholder"]
        self.arguments = [placeholders[i] for i in imported.arguments]

    def recomputed(self, function: FuncOp) -> set[str]:
        """The FX nodes (and their `getitem`s) whose ops were cloned."""
        names: set[str] = set()
        for op in function.body.walk():
            if annotations.RECOMPUTED in op.attributes:
                node = self._origin(op)
                if node is not None:
                    names.update(n.name for n in self._values(node))
        return names

    def read(self, function: FuncOp) -> list[fx.Node]:
        """The forward values the backward ops and the clones read."""
        found: list[fx.Node] = []
        for op in function.body.walk():
            if not _backward_side(op):
                continue
            for operand in op.operands:
                found.extend(n for n in self._producers(operand) if n not in found)
        return found

    def _origin(self, op: Operation) -> fx.Node | None:
        name = op.attributes.get(ORIGIN)
        return self.nodes.get(name.data) if isinstance(name, StringAttr) else None

    def _producers(self, value: SSAValue) -> list[fx.Node]:
        if isinstance(value, BlockArgument):
            node = self.arguments[value.index]
            return [] if node.name.startswith("tangents") else [node]
        owner = value.owner
        if not isinstance(owner, Operation) or _backward_side(owner):
            return []
        node = self._origin(owner)
        return [] if node is None else self._values(node)

    def _values(self, node: fx.Node) -> list[fx.Node]:
        """The FX nodes holding `node`'s tensors: itself, or its `getitem`s."""
        if _is_tensor(node):
            return [node]
        return [user for user in node.users if _is_tensor(user)]


def _backward_side(op: Operation) -> bool:
    return annotations.BACKWARD in op.attributes or annotations.RECOMPUTED in op.attributes
