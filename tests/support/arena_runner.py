"""Running a planned function inside its arena, as a check of the plan.

`run_in_arena` evaluates each op with the reference semantics, writes each arena
result at its offset into one byte array that starts as garbage, and reads operands
back from there: a plan that lets a live value be overwritten gives a wrong result.
A concatenation marked `df.view` writes nothing: its operands must already be in
place, written by their own ops at their offsets in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import SSAValue

from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.communication import SendOp
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.semantics import evaluate
from dflow.dialects.df.types import static_tensor


def _view(arena: np.ndarray[Any, Any], offset: int, value: SSAValue) -> np.ndarray[Any, Any]:
    tensor = static_tensor(value.type)
    dtype = numpy_dtype(tensor.element_type)
    count = int(np.prod(tensor.get_shape(), dtype=np.int64))
    raw = arena[offset : offset + count * dtype.itemsize]
    return raw.view(dtype).reshape(tensor.get_shape())


@dataclass
class ArenaRun:
    """One run of a planned function in its arena; `sent` keeps a copy of each value a
    `df.send` sent, as it was sent."""

    function: FuncOp
    arena: np.ndarray[Any, Any] = field(init=False)
    values: dict[SSAValue, Any] = field(default_factory=dict[SSAValue, Any])
    offset: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    sent: list[tuple[SSAValue, Any]] = field(default_factory=list[tuple[SSAValue, Any]])

    def __post_init__(self) -> None:
        size = self.function.attributes["df.arena_bytes"]
        assert isinstance(size, IntegerAttr)
        self.arena = np.random.default_rng(0).integers(0, 256, size.value.data, dtype=np.uint8)

    def run(self, inputs: list[Any]) -> list[Any]:
        self.values.update(zip(self.function.args, inputs, strict=True))
        for op in self.function.body.block.ops:
            if isinstance(op, ReturnOp):
                return [self.read(v) for v in op.arguments]
            if isinstance(op, SendOp):
                self.sent.append((op.operands[0], self.read(op.operands[0])))
                continue
            result = evaluate(op, [self.read(v) for v in op.operands])[0]
            if isinstance(op, ConstantOp):
                self.values[op.results[0]] = result
                continue
            offsets = op.attributes["df.offset"]
            assert isinstance(offsets, DenseArrayBase)
            self.offset[op.results[0]] = int(offsets.get_values()[0])  # pyright: ignore[reportArgumentType]
            if "df.view" not in op.attributes:
                self.view(op.results[0])[...] = result
        raise AssertionError("no return")

    def view(self, value: SSAValue) -> np.ndarray[Any, Any]:
        """`value`'s bytes in the arena, as its array."""
        tensor = static_tensor(value.type)
        dtype = numpy_dtype(tensor.element_type)
        count = int(np.prod(tensor.get_shape(), dtype=np.int64))
        at = self.offset[value]
        return self.arena[at : at + count * dtype.itemsize].view(dtype).reshape(tensor.get_shape())

    def read(self, value: SSAValue) -> Any:
        return self.view(value).copy() if value in self.offset else self.values[value]

    def sends_intact(self) -> bool:
        """Whether every sent value's bytes are still as they were sent."""
        return all(np.array_equal(self.read(v), copy, equal_nan=True) for v, copy in self.sent)


def run_in_arena(function: FuncOp, inputs: list[Any]) -> list[Any]:
    """Run a planned function writing every arena result into one byte array at its
    offset (the arena starts as garbage) and reading operands back from there."""
    return ArenaRun(function).run(inputs)
