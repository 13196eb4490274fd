"""What a converter works with: the graph under construction, which folds as it
goes, and one ONNX node's inputs, attributes and opset.

The graph (`FoldingGraph`) folds an op whose operands are all constants as it is
emitted, so the shape arithmetic exporters write (`Shape` → `Gather` → `Concat` →
`Reshape`) becomes constants while the model is imported, and a converter that needs a value at
import time (`Reshape`'s shape, `Slice`'s starts) reads it with `Node.constant`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onnx import AttributeProto, NodeProto, helper
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df.folding import constant_operand
from dflow.dialects.df.reference import Array
from dflow.frontend.builder import Tensor
from dflow.frontend.folding_graph import FoldingGraph
from dflow.frontend.onnx.errors import OnnxImportError
from dflow.frontend.onnx.model import node_name

Converter = Callable[["Node"], Sequence[Tensor | None]]
"""Builds the df ops of one ONNX node; returns a tensor per output (None: absent)."""


@dataclass(frozen=True)
class Registered:
    convert: Converter
    attributes: frozenset[str]


CONVERTERS: dict[str, Registered] = {}
"""The converter of each ONNX op type dflow imports."""


def converter(*op_types: str, attributes: Iterable[str] = ()) -> Callable[[Converter], Converter]:
    """Register a converter for `op_types`, which handles exactly `attributes`: a node
    with another attribute is refused rather than imported with it ignored."""

    def register(convert: Converter) -> Converter:
        for op_type in op_types:
            CONVERTERS[op_type] = Registered(convert, frozenset(attributes))
        return convert

    return register


@dataclass
class Node:
    """One ONNX node while it is converted."""

    proto: NodeProto
    opset: int
    graph: FoldingGraph
    inputs: list[Tensor | None]
    folder: Path | None
    """The model's folder, where external data lies."""
    attributes: dict[str, AttributeProto] = field(init=False)

    def __post_init__(self) -> None:
        self.attributes = {attribute.name: attribute for attribute in self.proto.attribute}

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @property
    def describe(self) -> str:
        """`node 'conv1' (Conv, opset 17)`."""
        return f"node {node_name(self.proto)} ({self.op_type}, opset {self.opset})"

    def error(self, message: str) -> OnnxImportError:
        """An error naming this node, its op type and opset."""
        return OnnxImportError(f"{self.describe}: {message}")

    def emit(self, op: Operation) -> Tensor:
        return self.graph.emit(op)

    # --------------------------------------------------------------------- inputs

    def input(self, index: int) -> Tensor:
        """Input `index`, which the node must have."""
        tensor = self.optional(index)
        if tensor is None:
            raise self.error(f"input {index} is missing")
        return tensor

    def optional(self, index: int) -> Tensor | None:
        """Input `index`, or None when the node leaves it out (absent or `""`)."""
        return self.inputs[index] if index < len(self.inputs) else None

    def constant(self, index: int, what: str) -> Array | None:
        """The value of input `index` known at import time (an initializer, a
        constant, or shape arithmetic folded to one); None when the input is absent;
        an error when it is computed at run time."""
        tensor = self.optional(index)
        if tensor is None:
            return None
        value = constant_operand(tensor.value)
        if value is None:
            raise self.error(
                f"{what} (input {index}) is computed at run time; dflow needs it as a "
                "constant (its tensors have static shapes)"
            )
        return value

    def required_constant(self, index: int, what: str) -> Array:
        """The value of input `index`, which the node must have, known at import time."""
        self.input(index)
        value = self.constant(index, what)
        assert value is not None  # the input is there
        return value

    def ints_input(self, index: int, what: str) -> list[int] | None:
        """A constant integer input as a list (`Reshape`'s shape, `Slice`'s starts)."""
        value = self.constant(index, what)
        if value is None:
            return None
        if value.dtype.kind not in "iu":
            raise self.error(f"{what} (input {index}) must be integers, got {value.dtype}")
        return [int(v) for v in value.reshape(-1)]

    # --------------------------------------------------------------------- attributes

    def attribute(self, name: str, default: Any = None) -> Any:
        """An attribute's value (strings decoded), or `default` when it is absent."""
        attribute = self.attributes.get(name)
        if attribute is None:
            return default
        value = helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            return value.decode(errors="replace")
        return value

    def int(self, name: str, default: int) -> int:
        value = self.attribute(name, default)
        if not isinstance(value, int):
            raise self.error(f"attribute {name} must be an integer, got {value!r}")
        return value

    def float(self, name: str, default: float) -> float:
        value = self.attribute(name, default)
        if not isinstance(value, int | float):
            raise self.error(f"attribute {name} must be a number, got {value!r}")
        return float(value)

    def ints(self, name: str, default: Sequence[int] | None = None) -> list[int] | None:
        value = self.attribute(name, default)
        if value is None:
            return None
        if not isinstance(value, list | tuple) or not all(isinstance(v, int) for v in value):  # pyright: ignore[reportUnknownVariableType]
            raise self.error(f"attribute {name} must be a list of integers, got {value!r}")
        return [int(v) for v in value]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]

    def string(self, name: str, default: str) -> str:
        value = self.attribute(name, default)
        if not isinstance(value, str):
            raise self.error(f"attribute {name} must be a string, got {value!r}")
        return value

    # --------------------------------------------------------------------- helpers

    def scalar(self, value: float | int | bool, like: Tensor) -> Tensor:
        """A rank-0 constant of `like`'s element type."""
        return like.lift(value)

    def axis(self, axis: int, rank: int, what: str = "axis") -> int:
        """`axis` counted from the front, after checking it is within `rank`."""
        if not -rank <= axis < max(rank, 1):
            raise self.error(f"{what} {axis} is out of range for rank {rank}")
        return axis % rank if rank else 0

    def element(self, tensor: Tensor) -> Attribute:
        return tensor.type.element_type


def convert_node(node: Node) -> Sequence[Tensor | None]:
    """The outputs of `node` by its registered converter; every failure one line that
    names the node."""
    registered = CONVERTERS.get(node.op_type)
    if registered is None:
        raise node.error(
            f"dflow does not import {node.op_type} (the ops it imports are listed in the "
            "README, under ONNX import)"
        )
    unknown = sorted(set(node.attributes) - registered.attributes)
    if unknown:
        raise node.error(f"attribute {unknown[0]} is not supported")
    try:
        return registered.convert(node)
    except VerifyException as error:
        raise node.error(str(error).splitlines()[0]) from None
