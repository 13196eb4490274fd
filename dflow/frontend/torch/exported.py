"""`torch.export`'s programs in: an `ExportedProgram` to a df module.

The program is brought to Core ATen (`run_decompositions()`); its user inputs
become the function's arguments, in order; its parameters, buffers and constants
are frozen into `df.constant`s (`freeze=True`, for inference) or become arguments
after the user's, named by their qualified names (`conv1.weight`), for a caller
that feeds them (training); its results are the user outputs (a buffer's update
in training mode is left out).
"""

from __future__ import annotations

from typing import Any

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
    program = program.run_decompositions()
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
