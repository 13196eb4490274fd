"""From a checked ONNX model to a `builtin.module` holding `func.func @main`.

The function's arguments are the graph's inputs that no initializer defines, in
order, with the static shapes the model declares or the caller gives (`shapes`,
by ONNX name); its results are the graph's outputs. An argument is named after
its ONNX name where that is a valid SSA name, else a cleaned one, and keeps the
ONNX name in its `df.name` attribute, which feeds by name also accept.
Initializers become `df.constant`s straight from their bytes when first used.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, ValueInfoProto
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import BlockArgument

from dflow.dialects.df.arrays import element_type_of
from dflow.dialects.df.arrays import numpy_dtype as df_numpy_dtype
from dflow.frontend.builder import Tensor
from dflow.frontend.folding_graph import FoldingGraph
from dflow.frontend.onnx.errors import OnnxImportError
from dflow.frontend.onnx.graph import Node, convert_node
from dflow.frontend.onnx.model import (
    Model,
    checked_count,
    numpy_dtype,
    ordered_nodes,
    read_model,
    tensor_array,
)

NAME_ATTRIBUTE = "df.name"
"""The argument attribute keeping an input's ONNX name."""

Shapes = Mapping[str, Sequence[int]]

_INVALID = re.compile(r"[^\w$.-]")


def import_model(
    source: str | os.PathLike[str] | bytes | ModelProto,
    shapes: Shapes | None = None,
    *,
    name: str = "main",
) -> ModuleOp:
    """The df module of an ONNX model (a path, serialized bytes or a `ModelProto`);
    `shapes` gives inputs with symbolic dimensions their static shape. Raises
    `OnnxImportError`, one line, for a model dflow cannot or will not import."""
    return build_module(read_model(source), shapes or {}, name)


def build_module(model: Model, shapes: Shapes, name: str = "main") -> ModuleOp:
    """The df module of a model `read_model` checked."""
    return _Importer(model, dict(shapes), FoldingGraph(name)).module()


def ssa_name(name: str) -> str:
    """An ONNX name as a valid SSA name: other characters become `_`, and a name
    starting with a digit gains a `v` in front."""
    cleaned = _INVALID.sub("_", name) or "v"
    return cleaned if not cleaned[0].isdigit() else f"v{cleaned}"


@dataclass
class _Importer:
    model: Model
    shapes: dict[str, Sequence[int]]
    graph: FoldingGraph
    values: dict[str, Tensor] = field(default_factory=dict[str, Tensor])

    def module(self) -> ModuleOp:
        onnx_names = self._arguments()
        for node in ordered_nodes(self.model.graph):
            self._convert(node)
        outputs = [self._output(value) for value in self.model.graph.output]
        self.graph.output(*outputs)
        function = self.graph.function()
        if any(onnx_names):
            function.arg_attrs = ArrayAttr(
                DictionaryAttr({NAME_ATTRIBUTE: StringAttr(n)} if n else {}) for n in onnx_names
            )
        module = ModuleOp([function])
        module.verify()
        return module

    # --------------------------------------------------------------------- inputs

    def _arguments(self) -> list[str | None]:
        """Make the function's arguments; for each, its ONNX name where the argument's
        own name differs from it."""
        initializers = {tensor.name for tensor in self.model.graph.initializer}
        inputs = [value for value in self.model.graph.input if value.name not in initializers]
        unknown = sorted(set(self.shapes) - {value.name for value in inputs})
        if unknown:
            known = ", ".join(value.name for value in inputs) or "none"
            raise OnnxImportError(
                f"a shape is given for {unknown[0]!r}, which is no input of the model "
                f"(inputs: {known})"
            )
        names: list[str | None] = []
        for value in inputs:
            dtype = numpy_dtype(value.type.tensor_type.elem_type, f"input {value.name!r}")
            shape = self._input_shape(value, dtype.itemsize)
            tensor = self.graph.input(ssa_name(value.name), shape, element_type_of(dtype))
            self.values[value.name] = tensor
            names.append(None if tensor.value.name_hint == value.name else value.name)
        return names

    def _input_shape(self, value: ValueInfoProto, itemsize: int) -> tuple[int, ...]:
        what = f"input {value.name!r}"
        if not value.type.HasField("tensor_type"):
            raise OnnxImportError(f"{what} is not a tensor (dflow imports tensors only)")
        declared = _declared(value)
        given = self.shapes.get(value.name)
        if given is not None:
            shape = tuple(int(d) for d in given)
            _check_given(what, shape, declared)
        elif declared is None:
            raise OnnxImportError(f"{what} declares no shape: {_give(value.name)}")
        elif not all(isinstance(d, int) for d in declared):
            shown = ", ".join(map(str, declared))
            raise OnnxImportError(f"{what} has shape [{shown}]: {_give(value.name)}")
        else:
            shape = tuple(int(d) for d in declared)
        checked_count(shape, what, itemsize)
        return shape

    # --------------------------------------------------------------------- nodes

    def _value(self, name: str) -> Tensor | None:
        """The tensor an ONNX name holds (an initializer is made a constant when first
        read); None for the empty name of an absent optional input."""
        if not name:
            return None
        found = self.values.get(name)
        if found is None:
            tensor = next(t for t in self.model.graph.initializer if t.name == name)
            array = tensor_array(tensor, self.model.folder, f"initializer {name!r}")
            found = self.values[name] = self.graph.constant(array)
        return found

    def _convert(self, proto: NodeProto) -> None:
        inputs = [self._value(name) for name in proto.input]
        node = Node(proto, self.model.opset, self.graph, inputs, self.model.folder)
        results = convert_node(node)
        for index, name in enumerate(proto.output):
            if not name:
                continue
            result = results[index] if index < len(results) else None
            if result is None:
                raise node.error(f"output {index} ({name!r}) is not supported")
            if result.value.name_hint is None:
                result.value.name_hint = ssa_name(name)
            self.values[name] = result

    def _output(self, value: ValueInfoProto) -> Tensor:
        tensor = self._value(value.name)
        assert tensor is not None
        declared = _declared(value)
        element = value.type.tensor_type.elem_type
        if element and numpy_dtype(element, f"output {value.name!r}") != _dtype(tensor):
            raise OnnxImportError(
                f"output {value.name!r} is declared {numpy_dtype(element, '')} but computes "
                f"{_dtype(tensor)}"
            )
        if declared is not None and not _fits(tensor.shape, declared):
            raise OnnxImportError(
                f"output {value.name!r} is declared of shape {list(declared)} but computes "
                f"{list(tensor.shape)}"
            )
        return tensor.identity() if isinstance(tensor.value, BlockArgument) else tensor


def _declared(value: ValueInfoProto) -> list[int | str] | None:
    """A value's declared dimensions (a name, or `?`, where not fixed), or None."""
    tensor_type = value.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    return [
        dim.dim_value if dim.HasField("dim_value") else (dim.dim_param or "?")
        for dim in tensor_type.shape.dim
    ]


def _fits(shape: Sequence[int], declared: Sequence[int | str]) -> bool:
    return len(shape) == len(declared) and all(
        isinstance(d, str) or d == s for s, d in zip(shape, declared, strict=True)
    )


def _check_given(what: str, shape: Sequence[int], declared: Sequence[int | str] | None) -> None:
    if declared is not None and not _fits(shape, declared):
        shown = ", ".join(map(str, declared))
        raise OnnxImportError(
            f"the shape given for {what}, {list(shape)}, contradicts its declared shape [{shown}]"
        )


def _give(name: str) -> str:
    return (
        f"give its static shape (--shape {name}=D0,D1,... on the command line, "
        f"shapes={{{name!r}: (...)}} in Python)"
    )


def _dtype(tensor: Tensor) -> np.dtype[Any]:
    return df_numpy_dtype(tensor.type.element_type)
