"""From an FX graph of ATen ops to a `builtin.module` holding `func.func @main`.

The graphs are those `torch.export` gives after `run_decompositions()` and those
`aot_autograd` hands a backend (forward, backward, or inference): `call_function`
nodes of Core ATen overloads, functional, with static shapes recorded on each node
(`node.meta["val"]`). Each placeholder becomes a function argument, or, where the
caller gives its value (`constants`: frozen parameters and buffers), a
`df.constant`; the graph's output list becomes the function's results, its `None`
entries (inputs a backward graph gives no gradient) left out. Ops whose operands are
all constants fold as they are built (`FoldingGraph`), so a frozen model's
parameter arithmetic (a batch norm's scale and shift) arrives folded.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation
from xdsl.utils.exceptions import VerifyException

from dflow.frontend.builder import Tensor
from dflow.frontend.folding_graph import FoldingGraph
from dflow.frontend.torch.call import (
    CONVERTERS,
    IGNORED,
    Call,
    array_of,
    describe,
    element_of,
    shape_of,
)
from dflow.frontend.torch.errors import TorchImportError
from dflow.frontend.torch.ops import SUPPORTED_OPS  # (importing them registers the converters)

Marks = Callable[[fx.Node], dict[str, Attribute]]
"""Attributes for the ops built for a node."""

_INVALID = re.compile(r"[^\w$.-]")


@dataclass(frozen=True)
class Imported:
    """A graph's df module and how its function lines up with the FX graph."""

    module: ModuleOp
    arguments: tuple[int, ...]
    """The placeholders (by position) that are the function's arguments, in order."""
    results: tuple[int | None, ...]
    """Per entry of the FX graph's output list, the function result it is (None:
    an entry that is None, or one of `passed`)."""
    passed: tuple[int | None, ...]
    """Per entry of the output list, the placeholder (by position) it returns as it
    is, where the caller asked for inputs to be passed through (`pass_inputs`)."""


def check_graph(graph: fx.Graph) -> None:
    """Raise the `TorchImportError` of the first node dflow has no converter for
    (without importing anything: a training graph is checked whole before it is
    split)."""
    for node in graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        name = str(node.target)
        if name not in CONVERTERS and name not in IGNORED:
            raise _unsupported(node)


def _unsupported(node: fx.Node) -> TorchImportError:
    return TorchImportError(
        f"{describe(node)}: dflow does not import {node.target} (the {len(SUPPORTED_OPS)} "
        "ATen ops it imports: dflow.frontend.torch.SUPPORTED_OPS)"
    )


def import_graph(
    graph: fx.Graph | fx.GraphModule,
    constants: Mapping[int, torch.Tensor] | None = None,
    *,
    name: str = "main",
    outputs: Sequence[int] | None = None,
    names: Mapping[int, str] | None = None,
    marks: Marks | None = None,
    pass_inputs: bool = False,
) -> Imported:
    """The df module of an FX graph of ATen ops; `constants` gives placeholders (by
    position) the values they are frozen to, `outputs` the entries of the graph's
    output list that are results (all by default), `names` arguments' names other
    than their placeholders' (by position), `marks` the attributes to set on the
    ops built for each node (the training partition's `df.torch_node` and
    `df.backward`); `pass_inputs`: an output that is an input is no result (the
    caller returns the input it gave: no copy). Raises `TorchImportError`, one
    line, for a node dflow cannot import."""
    fx_graph = graph.graph if isinstance(graph, fx.GraphModule) else graph
    importer = _Importer(
        fx_graph, dict(constants or {}), FoldingGraph(name), dict(names or {}), marks, pass_inputs
    )
    return importer.imported(outputs)


@dataclass
class _Importer:
    fx_graph: fx.Graph
    constants: dict[int, torch.Tensor]
    graph: FoldingGraph
    names: dict[int, str]
    marks: Marks | None
    pass_inputs: bool

    def __post_init__(self) -> None:
        self.values: dict[fx.Node, Any] = {}
        self.arguments: list[int] = []

    def imported(self, selected: Sequence[int] | None) -> Imported:
        placeholders = 0
        outputs: list[Any] = []
        for node in self.fx_graph.nodes:
            if node.op == "placeholder":
                self.values[node] = self._placeholder(node, placeholders)
                placeholders += 1
            elif node.op == "output":
                outputs = list(_flat(node.args[0]))
            else:
                last = self.graph.block.last_op
                self.values[node] = self._compute(node)
                self._mark(node, last)
        if selected is not None:
            outputs = [outputs[i] for i in selected]
        results, passed = self._results(outputs)
        module = ModuleOp([self.graph.function()])
        module.verify()
        return Imported(module, tuple(self.arguments), results, passed)

    def _placeholder(self, node: fx.Node, position: int) -> Tensor | int | None:
        value = node.meta.get("val")
        frozen = self.constants.get(position)
        if frozen is not None:
            return self.graph.constant(array_of(frozen))
        if isinstance(value, int | float | torch.SymInt) or value is None:
            return None if value is None else _static_int(value, node)
        if not isinstance(value, torch.Tensor):
            raise TorchImportError(f"input {node.name} is a {type(value).__name__}, not a tensor")
        self.arguments.append(position)
        element = element_of(value.dtype, f"input {node.name}")
        name = _ssa_name(self.names.get(position, node.name))
        return self.graph.input(name, shape_of(value), element)

    def _mark(self, node: fx.Node, last: Operation | None) -> None:
        """Set `marks(node)` on the ops built for `node` (those after `last`)."""
        if self.marks is None:
            return
        attributes = self.marks(node)
        op = self.graph.block.first_op if last is None else last.next_op
        while op is not None:
            op.attributes.update(attributes)
            op = op.next_op

    def _compute(self, node: fx.Node) -> Any:
        if node.op == "get_attr":
            owner = node.graph.owning_module
            attribute = getattr(owner, str(node.target), None)
            if not isinstance(attribute, torch.Tensor):
                raise TorchImportError(f"{node.name}: attribute {node.target} is not a tensor")
            return self.graph.constant(array_of(attribute))
        if node.op != "call_function":
            raise TorchImportError(f"{node.name}: a {node.op} node (dflow imports ATen graphs)")
        if node.target is operator.getitem:
            return self._item(node)
        return self._call(node)

    def _item(self, node: fx.Node) -> Any:
        source, index = node.args
        found = self.values[source][index]  # pyright: ignore[reportArgumentType, reportIndexIssue]
        if found is None:
            raise TorchImportError(f"{describe(source)}: output {index} is not supported")  # pyright: ignore[reportArgumentType]
        return found

    def _call(self, node: fx.Node) -> Any:
        name = str(node.target)
        if name in IGNORED:
            return None
        convert = CONVERTERS.get(name)
        if convert is None:
            raise _unsupported(node)
        call = Call(node, self.graph, self._arguments(node))
        try:
            return _checked(call, convert(call))
        except VerifyException as error:
            raise call.error(str(error).splitlines()[0]) from None

    def _arguments(self, node: fx.Node) -> dict[str, Any]:
        schema = getattr(node.target, "_schema", None)
        if schema is None:
            raise TorchImportError(f"{describe(node)}: not an ATen operator")
        bound: dict[str, Any] = {}
        for index, argument in enumerate(schema.arguments):
            if index < len(node.args):
                value = node.args[index]
            elif argument.name in node.kwargs:
                value = node.kwargs[argument.name]
            else:
                value = argument.default_value if argument.has_default_value() else None
            bound[argument.name] = self._resolved(value)
        return bound

    def _resolved(self, value: Any) -> Any:
        if isinstance(value, fx.Node):
            return self.values[value]
        if isinstance(value, list | tuple):
            return [self._resolved(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, torch.SymInt | torch.SymFloat):
            raise TorchImportError(f"the size {value} is symbolic: dflow compiles static shapes")
        return value

    def _results(
        self, outputs: Sequence[Any]
    ) -> tuple[tuple[int | None, ...], tuple[int | None, ...]]:
        positions: list[int | None] = []
        passed: list[int | None] = []
        tensors: list[Tensor] = []
        for output in outputs:
            value = self.values[output] if isinstance(output, fx.Node) else output
            if value is not None and not isinstance(value, Tensor):
                raise TorchImportError(f"output {output} is {value!r}, not a tensor")
            argument = value.value if value is not None else None
            is_input = isinstance(argument, BlockArgument)
            passed.append(self.arguments[argument.index] if is_input and self.pass_inputs else None)
            if value is None or passed[-1] is not None:
                positions.append(None)
                continue
            positions.append(len(tensors))
            tensors.append(value.identity() if is_input else value)
        self.graph.output(*tensors)
        return tuple(positions), tuple(passed)


def _checked(call: Call, result: Any) -> Any:
    """`result` checked against what PyTorch recorded: each tensor of the recorded
    shape (else the converter is wrong), cast to the recorded element type."""
    if isinstance(result, Tensor):
        return _fitted(call, result, call.result(0) if _is_sequence(call.value) else call.value)
    recorded = call.value if _is_sequence(call.value) else [call.value]
    return [
        None if tensor is None else _fitted(call, tensor, recorded[index])
        for index, tensor in enumerate(result)
    ]


def _fitted(call: Call, tensor: Tensor, recorded: Any) -> Tensor:
    if not isinstance(recorded, torch.Tensor):
        return tensor
    shape = shape_of(recorded)
    if tensor.shape != shape:
        raise call.error(
            f"dflow's converter made shape {list(tensor.shape)} where PyTorch records "
            f"{list(shape)} (a dflow bug: please report it)"
        )
    return call.cast(tensor, recorded.dtype)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _flat(value: Any) -> Any:
    if isinstance(value, list | tuple):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from _flat(item)
    else:
        yield value


def _static_int(value: Any, node: fx.Node) -> int:
    try:
        return int(value)
    except (TypeError, RuntimeError, ValueError):
        raise TorchImportError(
            f"input {node.name} is a symbolic size: dflow compiles static shapes"
        ) from None


def _ssa_name(name: str) -> str:
    cleaned = _INVALID.sub("_", name) or "v"
    return cleaned if not cleaned[0].isdigit() else f"v{cleaned}"
