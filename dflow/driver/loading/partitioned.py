"""A partitioned module's shape: its device parts (`is_partitioned`), the indices that
map a part's arguments and results into the whole function's (`part_indices`), the
whole entry a run feeds (`whole_entry`, `entry_signature`, `entry_names`), and the
check that the parts agree with their wholes (`check_parts`), made when a program is
loaded.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Region

from dflow.dialects.df import annotations
from dflow.dialects.df.symbols import device_modules, require_function
from dflow.driver.errors import DflowError
from dflow.driver.loading.feeds import find_entry
from dflow.driver.loading.source import location_of
from dflow.lowering.partition import PartitionPass


def is_partitioned(module: ModuleOp) -> bool:
    return bool(device_modules(module))


def part_indices(function: FuncOp, name: str) -> tuple[int, ...]:
    attribute = function.attributes.get(name)
    if not isinstance(attribute, DenseArrayBase):
        raise DflowError(
            f"@{function.sym_name.data} has no {name}: not made by {PartitionPass.name}"
        )
    return tuple(int(value) for value in attribute.get_values())


def part_entry(part: ModuleOp, entry: str, device: str) -> FuncOp:
    return require_function(part, entry, DflowError, f"in the module of {device}")


def entry_signature(module: ModuleOp, entry: str) -> FuncOp:
    """A declaration of the whole entry function of a partitioned module (its arguments
    named as in the parts that take them), to match and check feeds against."""
    parts = [part_entry(part, entry, device) for device, part in device_modules(module)]
    whole = parts[0].attributes.get(annotations.FUNCTION_TYPE)
    if not isinstance(whole, FunctionType):
        raise DflowError(
            f"@{entry} has no {annotations.FUNCTION_TYPE}: not made by {PartitionPass.name}"
        )
    block = Block(arg_types=whole.inputs.data)
    for part in parts:
        for local, index in zip(part.args, part_indices(part, annotations.ARGUMENTS), strict=True):
            block.args[index].name_hint = local.name_hint
    return FuncOp(entry, whole, Region(block))


def whole_entry(module: ModuleOp, entry: str) -> FuncOp:
    """The function `entry` as a run feeds it: the function itself, or for a
    partitioned module a declaration of the whole of it (`entry_signature`)."""
    if is_partitioned(module):
        return entry_signature(module, entry)
    return find_entry(module, entry)


def entry_names(module: ModuleOp) -> list[str]:
    """The names of the functions a run of `module` can start at (for a partitioned
    module, those of its parts)."""
    scopes = [part for _, part in device_modules(module)] or [module]
    names = {op.sym_name.data: None for part in scopes for op in part.ops if isinstance(op, FuncOp)}
    return list(names)


def check_parts(module: ModuleOp) -> None:
    """The device parts of a partitioned module agree with the whole functions they
    are parts of (df-partition makes them so; a hand-edited module may not): every
    part of a function records the same whole type, and its `df.arguments` and
    `df.results` give, for each of its own arguments and results, an index into the
    whole function's of the same type."""
    wholes: dict[str, FunctionType] = {}
    for device, part in device_modules(module):
        for function in part.ops:
            if isinstance(function, FuncOp) and not function.is_declaration:
                whole = _check_part(device, function)
                first = wholes.setdefault(function.sym_name.data, whole)
                if whole != first:
                    raise DflowError(
                        f"@{function.sym_name.data} on {device} records {whole} as the whole "
                        f"function's type, another part {first}",
                        location_of(function),
                    )


def _check_part(device: str, function: FuncOp) -> FunctionType:
    whole = function.attributes.get(annotations.FUNCTION_TYPE)
    where = f"@{function.sym_name.data} on {device}"
    if not isinstance(whole, FunctionType):
        raise DflowError(
            f"{where} has no {annotations.FUNCTION_TYPE}: not made by {PartitionPass.name}"
        )
    own = function.function_type
    for attribute, kind, local, full in (
        (annotations.ARGUMENTS, "argument", own.inputs.data, whole.inputs.data),
        (annotations.RESULTS, "result", own.outputs.data, whole.outputs.data),
    ):
        indices = part_indices(function, attribute)
        problem = _index_problem(indices, local, full, kind)
        if problem is not None:
            raise DflowError(f"{where}: {attribute} {problem}", location_of(function))
    return whole


def _index_problem(
    indices: Sequence[int], local: Sequence[Attribute], full: Sequence[Attribute], kind: str
) -> str | None:
    if len(indices) != len(local):
        return f"gives {len(indices)} indices for {len(local)} {kind}s of this part"
    for index, type in zip(indices, local, strict=True):
        if not 0 <= index < len(full):
            return f"holds {index}, but the whole function has {len(full)} {kind}s"
        if full[index] != type:
            return f"maps a {type} {kind} to the whole's {kind} {index}, of type {full[index]}"
    return None
