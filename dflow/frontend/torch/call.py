"""What a converter works with: one FX node's arguments, by the names of its ATen
schema, as dflow tensors and Python values, and what PyTorch says its results are.

A converter is registered for ATen overloads by name (`@converter("relu.default")`)
and returns a tensor, or a sequence of them (None where an output is not computed),
for the node's results. The importer checks each result against the node's
recorded value (`node.meta["val"]`): a converter whose result has another shape
is a bug named as such; one of another element type is cast to PyTorch's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import fx
from xdsl.ir import Attribute

from dflow.frontend.builder import Graph, Tensor, element_type
from dflow.frontend.torch.errors import TorchImportError

Result = Tensor | Sequence[Tensor | None]
Converter = Callable[["Call"], Result]

CONVERTERS: dict[str, Converter] = {}
"""The converter of each ATen overload dflow imports, by name (`aten.relu.default`)."""

DTYPES: dict[torch.dtype, str] = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "ui8",
    torch.bool: "i1",
}
"""Each PyTorch dtype dflow imports, as its df element type's name."""

IGNORED = frozenset(
    {
        "aten._assert_tensor_metadata.default",
        "aten._assert_scalar.default",
        "aten.sym_constrain_range_for_size.default",
        "aten._assert_async.msg",
    }
)
"""Checks PyTorch records in a graph that compute nothing."""


def converter(*overloads: str) -> Callable[[Converter], Converter]:
    """Register a converter for ATen `overloads` (`"relu.default"`, ...)."""

    def register(convert: Converter) -> Converter:
        for overload in overloads:
            CONVERTERS[f"aten.{overload}"] = convert
        return convert

    return register


def element_of(dtype: torch.dtype, where: str) -> Attribute:
    """The df element type of a PyTorch dtype."""
    name = DTYPES.get(dtype)
    if name is None:
        raise TorchImportError(f"{where}: dflow has no element type for {dtype}")
    return element_type(name)


def numpy_of(dtype: torch.dtype) -> np.dtype[Any]:
    """The NumPy dtype a constant of a PyTorch dtype is built from."""
    if dtype == torch.bfloat16:
        import ml_dtypes  # noqa: PLC0415 (NumPy has no bfloat16)

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(torch.empty(0, dtype=dtype).numpy().dtype)


def array_of(tensor: torch.Tensor) -> np.ndarray[Any, Any]:
    """A tensor's values as a NumPy array (bfloat16 as `ml_dtypes`')."""
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(numpy_of(torch.bfloat16))
    return tensor.numpy()


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in .*\n\s*(.*)')


def source_line(node: fx.Node) -> str | None:
    """`model.py:12 (y = foo(x))`: the innermost line of the user's code PyTorch
    recorded for the node, or None."""
    trace = node.meta.get("stack_trace")
    if not isinstance(trace, str):
        return None
    frames = [f for f in _FRAME.findall(trace) if "/torch/" not in f[0].replace("\\", "/")]
    if not frames:
        return None
    path, line, code = frames[-1]
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line} ({code.strip()})"


def describe(node: fx.Node) -> str:
    """`aten.foo.default at model.py:12 (y = foo(x))`."""
    where = source_line(node)
    return f"{node.target}" + (f" at {where}" if where else "")


@dataclass
class Call:
    """One `call_function` node while it is converted."""

    node: fx.Node
    graph: Graph
    arguments: Mapping[str, Any]
    """The node's arguments by their schema names, FX nodes replaced by what they
    hold (tensors, lists of tensors), absent ones by their defaults."""

    def error(self, message: str) -> TorchImportError:
        return TorchImportError(f"{describe(self.node)}: {message}")

    def __getitem__(self, name: str) -> Any:
        return self.arguments[name]

    def tensor(self, name: str) -> Tensor:
        value = self.arguments[name]
        if not isinstance(value, Tensor):
            raise self.error(f"argument {name} is {value!r}, not a tensor")
        return value

    def ints(self, name: str) -> list[int]:
        value: Any = self.arguments[name]
        listed: list[Any] = list(value) if isinstance(value, list | tuple) else [value]  # pyright: ignore[reportUnknownArgumentType]
        return [int(v) for v in listed]

    @property
    def value(self) -> Any:
        """What PyTorch recorded for the node's result (a fake tensor, or a tuple)."""
        return self.node.meta.get("val")

    def result(self, index: int | None = None) -> torch.Tensor:
        """The recorded result (result `index` of several; by default the first
        that is a tensor)."""
        value = self.value
        if isinstance(value, list | tuple):
            tensors = [v for v in value if isinstance(v, torch.Tensor)]  # pyright: ignore[reportUnknownVariableType]
            value = value[index] if index is not None else (tensors or [None])[0]  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(value, torch.Tensor):
            raise self.error("PyTorch recorded no tensor for its result")
        return value

    @property
    def shape(self) -> tuple[int, ...]:
        """The result's shape (the first tensor's, for several)."""
        return shape_of(self.result())

    @property
    def dtype(self) -> torch.dtype:
        return self.result().dtype

    @property
    def element(self) -> Attribute:
        return element_of(self.dtype, describe(self.node))

    def cast(self, tensor: Tensor, dtype: torch.dtype | None = None) -> Tensor:
        """`tensor` in `dtype` (the result's by default), cast where it is not."""
        element = element_of(dtype or self.dtype, describe(self.node))
        return tensor if tensor.type.element_type == element else tensor.cast(element)

    def scalar(self, value: float | int | bool, dtype: torch.dtype | None = None) -> Tensor:
        """A rank-0 constant of `dtype` (the result's by default)."""
        return self.graph.constant(np.asarray(value, dtype=numpy_of(dtype or self.dtype)))

    def operand(self, value: Any, dtype: torch.dtype | None = None) -> Tensor:
        """A tensor or a Python number, as a tensor of `dtype` (the result's)."""
        if isinstance(value, Tensor):
            return self.cast(value, dtype)
        return self.scalar(value, dtype)

    def axis(self, axis: int, rank: int) -> int:
        return axis % rank if rank else 0


def shape_of(value: torch.Tensor) -> tuple[int, ...]:
    """A recorded tensor's static shape; symbolic sizes are refused."""
    if any(isinstance(d, torch.SymInt) for d in value.shape):
        raise TorchImportError(
            f"a tensor of shape {list(value.shape)} has symbolic sizes: dflow compiles "
            "static shapes (torch.compile(..., dynamic=False))"
        )
    return tuple(int(d) for d in value.shape)
