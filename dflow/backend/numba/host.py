"""Host functions: each `dfrt` op of a device's host function as one call of the
runtime context `rt` (arena, views, launches, send/recv, copies), and `ENTRIES`,
what the runtime needs to route and check a call of each.

    def main(rt, x, w):
        arena = rt.arena(4096)
        v = rt.view(arena, 128, (4, 8), np.float32)
        fused_matmul_0(x, w, v)
        ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseArrayBase, FunctionType, IntegerAttr, MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from dflow.backend.numba.names import (
    DTYPES,
    GIVEN_DTYPES,
    HELD_AS_BITS,
    HELD_IN_BYTES,
    Names,
    dtype_of,
    element_name,
)
from dflow.backend.numba.printer import Lines, PythonPrinter, dispatch_on_op
from dflow.dialects import dfrt
from dflow.dialects.df import annotations


class HostPrinter(PythonPrinter):
    """A host function: one runtime call per `dfrt` op; a launch calls the kernel
    by its Python name (`kernels`, by symbol)."""

    def __init__(self, out: Lines, names: Names, kernels: Mapping[str, str]):
        super().__init__(out, names)
        self.kernels = kernels

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        super().print_op(op)

    @print_op.register
    def _(self, op: dfrt.ArenaOp) -> None:
        self.assign(op, f"rt.arena({op.result.type.get_shape()[0]})", "arena")

    @print_op.register
    def _(self, op: dfrt.OutputOp) -> None:
        type = op.result.type
        self.assign(op, f"rt.output({tuple(type.get_shape())}, {dtype_of(type)})")

    @print_op.register
    def _(self, op: dfrt.ViewOp) -> None:
        type = op.result.type
        shape = tuple(type.get_shape())
        self.assign(
            op,
            f"rt.view({self.value(op.arena)}, {op.offset.value.data}, {shape}, {dtype_of(type)})",
        )

    @print_op.register
    def _(self, op: dfrt.LaunchOp) -> None:
        kernel = self.kernels[op.callee.root_reference.data]
        self.out(f"{kernel}({', '.join(self.value(a) for a in op.arguments)})")

    @print_op.register
    def _(self, op: dfrt.SendOp) -> None:
        self.out(f"rt.send({op.key.data!r}, {op.destination.data!r}, {self.value(op.buffer)})")

    @print_op.register
    def _(self, op: dfrt.RecvOp) -> None:
        self.out(f"rt.recv({op.key.data!r}, {op.source.data!r}, {self.value(op.buffer)})")

    @print_op.register
    def _(self, op: dfrt.ToDeviceOp) -> None:
        self.assign(op, f"rt.to_device({self.value(op.source)})")

    @print_op.register
    def _(self, op: dfrt.FetchOp) -> None:
        self.assign(op, f"rt.fetch({self.value(op.source)})")

    @print_op.register
    def _(self, op: memref.GetGlobalOp) -> None:
        self.names.alias(op.memref, op.name_.root_reference.data)

    @print_op.register
    def _(self, op: func.ReturnOp) -> None:
        """The results, f16 and bf16 ones seen as such (`rt.given`) again."""
        values = [_given(self.value(v), v.type) for v in op.operands]
        self.out(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")


def _given(value: str, type: Attribute) -> str:
    element = element_name(type)
    held = HELD_AS_BITS.get(element) or HELD_IN_BYTES.get(element)
    return f"rt.given({value}, {held!r})" if held else value


def _held(element: str) -> str:
    """How an argument of `element` becomes what the module holds: f16, bf16 and the
    8- and 4-bit floats are viewed as their bits; 2- and 4-bit integers converted to
    a byte each. Empty for every other type."""
    if element in HELD_AS_BITS:
        return f".view(np.{DTYPES[element]})"
    if element in HELD_IN_BYTES:
        return f".astype(np.{DTYPES[element]})"
    return ""


def held_argument(argument: SSAValue) -> str:
    """How a host function's argument becomes what the module holds (`_held`)."""
    return _held(element_name(argument.type))


def _signature(types: Sequence[Attribute]) -> list[tuple[tuple[int, ...], str]]:
    result: list[tuple[tuple[int, ...], str]] = []
    for type in types:
        assert isinstance(type, TensorType | MemRefType)
        type = cast(TensorType[Attribute] | MemRefType[Attribute], type)
        result.append((tuple(type.get_shape()), GIVEN_DTYPES[element_name(type)]))
    return result


def entry_record(op: func.FuncOp) -> dict[str, Any]:
    """What the runtime needs to route and check a call of this part of the entry."""
    whole = op.attributes.get(annotations.FUNCTION_TYPE)
    function_type = whole if isinstance(whole, FunctionType) else op.function_type
    arguments = op.attributes.get(annotations.ARGUMENTS)
    results = op.attributes.get(annotations.RESULTS)
    arena = op.attributes.get(annotations.ARENA_BYTES)
    return {
        "arguments": list(arguments.get_values())
        if isinstance(arguments, DenseArrayBase)
        else list(range(len(op.args))),
        "results": list(results.get_values())
        if isinstance(results, DenseArrayBase)
        else list(range(len(op.function_type.outputs))),
        "entry_arguments": _signature(function_type.inputs.data),
        "entry_results": _signature(function_type.outputs.data),
        "arena_bytes": arena.value.data if isinstance(arena, IntegerAttr) else 0,
    }


def print_host_function(
    out: Lines, function: func.FuncOp, names: Names, python_name: str, kernels: Mapping[str, str]
) -> dict[str, Any]:
    """`function` as `def <python_name>(rt, ...)`, launching kernels by their Python
    names (`kernels`, by symbol); returns its `ENTRIES` record."""
    arguments = [names.define(a, f"arg{i}") for i, a in enumerate(function.args)]
    out(f"def {python_name}({', '.join(['rt', *arguments])}):")
    with out.indented():
        for name, argument in zip(arguments, function.args, strict=True):
            held = held_argument(argument)
            if held:
                out(f"{name} = {name}{held}")
        HostPrinter(out, names, kernels).block(function.body.block)
    return {**entry_record(function), "function": python_name}
