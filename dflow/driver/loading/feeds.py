"""The entry function of a parsed program and its signature, for feeds: the IR
side of `dflow.driver.loading.arrays` (which checks, makes and loads the arrays without
the IR)."""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.utils.hints import isa

from dflow.dialects import df
from dflow.dialects.df import annotations
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.indexing import INDEX_ELEMENTS
from dflow.dialects.df.symbols import require_function
from dflow.driver.errors import DflowError
from dflow.driver.loading.arrays import DEFAULT_SEED, Array, EntrySignature, Parameter
from dflow.driver.loading.source import location_of


def find_entry(module: ModuleOp, name: str) -> FuncOp:
    function = require_function(module, name, DflowError, "to run")
    if function.is_declaration:
        raise DflowError(
            f"@{name} is a declaration without a body: there is nothing to run",
            location_of(function),
        )
    return function


def argument_name(argument: BlockArgument) -> str:
    """`x` for `%x`, else `argN`."""
    return argument.name_hint or f"arg{argument.index}"


def argument_alias(function: FuncOp, argument: BlockArgument) -> str | None:
    """The name `argument` had where the program came from (its `df.name`, as an
    imported ONNX input keeps it), which feeds may use too; None when it has none."""
    if function.arg_attrs is None:
        return None
    alias = function.arg_attrs.data[argument.index].data.get(annotations.NAME)
    return alias.data if isinstance(alias, StringAttr) else None


def argument_tensor(function: FuncOp, argument: BlockArgument) -> TensorType[Attribute]:
    """The tensor type of `argument`, or a one-line error for one that is no tensor or
    has a dynamic size."""
    if not isa(argument.type, TensorType[Attribute]):
        raise DflowError(
            f"argument {argument.index} of @{function.sym_name.data} has type {argument.type}; "
            "only tensors can be fed",
            location_of(function),
        )
    if any(size < 0 for size in argument.type.get_shape()):
        raise DflowError(
            f"argument {argument.index} of @{function.sym_name.data} has type {argument.type}; "
            "only static shapes can be fed",
            location_of(function),
        )
    return argument.type


PASSING_VALUES = (
    df.ReshapeOp, df.TransposeOp, df.BroadcastToOp, df.SliceOp, df.CastOp, df.IdentityOp,
)  # fmt: skip
"""Ops whose result holds operand values unchanged (for integers), followed to find
where an argument is used as indices."""


def index_bound(argument: SSAValue) -> int | None:
    """The smallest size of an axis that the values of `argument` index, through ops
    that pass values on unchanged (an ONNX model's token ids, reshaped, into its
    embedding's `df.gather`); None when they index nothing."""
    bounds: list[int] = []
    pending, seen = [argument], set[SSAValue]()
    while pending:
        value = pending.pop()
        seen.add(value)
        for use in value.uses:
            op = use.operation
            if isinstance(op, df.IndexingOp) and use.index == 1:
                bounds.append(op.indexed_shape[op.axis_value])
            elif isinstance(op, PASSING_VALUES):
                pending.extend(r for r in op.results if r not in seen)
    return min(bounds) if bounds else None


def parameter(function: FuncOp, argument: BlockArgument) -> Parameter:
    type = argument_tensor(function, argument)
    return Parameter(
        function.sym_name.data,
        argument.index,
        argument_name(argument),
        argument_alias(function, argument),
        str(type),
        type.get_shape(),
        numpy_dtype(type.element_type),
        location_of(function),
        index_bound(argument) if type.element_type in INDEX_ELEMENTS else None,
    )


def signature(function: FuncOp) -> EntrySignature:
    """What feeds are checked against: every argument a tensor (else a one-line error)."""
    parameters = tuple(parameter(function, argument) for argument in function.args)
    return EntrySignature(function.sym_name.data, location_of(function), parameters)


def random_inputs(function: FuncOp, seed: int = DEFAULT_SEED) -> list[Array]:
    """`EntrySignature.random_inputs` of `function`."""
    return signature(function).random_inputs(seed)


def match_inputs(function: FuncOp, feeds: Mapping[str, Array], source: str) -> list[Array]:
    """`EntrySignature.match_inputs` of `function`."""
    return signature(function).match_inputs(feeds, source)
