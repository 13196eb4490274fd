"""`torch.export`'s programs in: an `ExportedProgram` to a df module.

The program is brought to Core ATen (`run_decompositions()`); its user inputs
become the function's arguments, in order; its parameters, buffers and constants
are frozen into `df.constant`s (`freeze=True`, for inference) or become arguments
named by their qualified names (`conv1.weight`), for a caller that feeds them
(training), in `torch.export`'s order: parameters, buffers, then the user's
inputs. Its results are the user outputs (a buffer's update in training mode is
left out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from xdsl.dialects.builtin import ModuleOp

from dflow.frontend.torch.importer import import_graph

_STATE = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def import_exported(
    program: ExportedProgram, *, freeze: bool = True, name: str = "main"
) -> ModuleOp:
    """The df module of an exported program (`torch.export.export(model, args)`)."""
    program = program.run_decompositions()  # pyright: ignore[reportUnknownMemberType]
    specs = program.graph_signature.input_specs
    constants: dict[int, torch.Tensor] = {}
    for position, spec in enumerate(specs):
        if spec.kind in _STATE and (freeze or spec.kind == InputKind.CONSTANT_TENSOR):
            constants[position] = _state(program, str(spec.target))
    outputs = [
        i
        for i, spec in enumerate(program.graph_signature.output_specs)
        if spec.kind == OutputKind.USER_OUTPUT
    ]
    names = {
        position: str(spec.target) for position, spec in enumerate(specs) if spec.kind in _STATE
    }
    imported = import_graph(
        program.graph_module, constants, name=name, outputs=outputs, names=names
    )
    return imported.module


def _state(program: ExportedProgram, target: str) -> Any:
    if target in program.state_dict:
        return program.state_dict[target]
    return program.constants[target]


def export(model: torch.nn.Module, args: Sequence[Any], *, freeze: bool = True) -> ModuleOp:
    """`model` exported by `torch.export.export` for `args` (tensors or NumPy
    arrays) and imported: a df module that `dflow opt`, `dflow run` and
    `dflow.compile` take like any other program (`print(module)` writes its text)."""
    tensors = tuple(  # pyright: ignore[reportUnknownMemberType]
        torch.from_numpy(np.asarray(a)) if not isinstance(a, torch.Tensor) else a  # pyright: ignore[reportUnknownMemberType]
        for a in args
    )
    return import_exported(torch.export.export(model, tensors), freeze=freeze)
