"""The one front door for a program of any kind, for the command line and the Python
API alike: a path (`.mlir`, `-` for standard input, an `.onnx` model), MLIR text, a
`dflow.Graph`, an xDSL module or an `onnx.ModelProto` becomes a verified module
(`load`), with the same checks and messages whichever door it came in by: the text
read once (`program_text`: folders, encodings, standard input, an ONNX model given as
text), parsed and verified (`source`), run through the `-p` passes parsed once per
command (`pipeline.parsed_pipeline`) and verified again. For what will run,
`check_runnable_module` refuses what cannot: a call of a declaration, a receive no send
matches, a partitioned module whose parts disagree with their whole functions."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from dflow.driver.errors import DflowError
from dflow.driver.loading.onnx_input import Shapes, import_onnx, is_model, model_name
from dflow.driver.loading.partitioned import check_parts
from dflow.driver.loading.pipeline import run_parsed
from dflow.driver.loading.program_text import Source, display_name, read_source
from dflow.driver.loading.source import location_of, parse_module, verify
from dflow.driver.loading.wellformed import check_runnable
from dflow.frontend.builder import Graph

ProgramLike = Graph | ModuleOp | str | os.PathLike[str] | Any
"""What a program can be given as: a builder graph, a module, MLIR text, a path
(`.mlir`, `.onnx`, `-`), or an `onnx.ModelProto`."""


@dataclass(frozen=True)
class Loaded:
    """A program, loaded: what the compile cache keys it by (its text; for an ONNX
    model a digest of it and the shapes given), how messages name it, and its
    verified module, through the passes."""

    key: str
    name: str
    module: ModuleOp


def load(
    program: ProgramLike,
    pipeline: PassPipeline | None = None,
    *,
    shapes: Shapes | None = None,
    source: Source | None = None,
) -> Loaded:
    """`program` loaded and verified, through `pipeline` (parsed by the caller, once
    per command) and verified again; `source`: its text where the caller read it
    already (a path is read once). `shapes` give an ONNX model's symbolic input
    dimensions (the command line checks `--shape` against the file before this)."""
    try:
        key, name, module = _read(program, shapes, source)
    except DflowError as error:  # named as the command line names it, by the file
        if error.location is None and isinstance(program, str | os.PathLike):
            error.location = display_name(os.fspath(program))
        raise
    return Loaded(key, name, run_passes(module, pipeline))


def _read(
    program: ProgramLike, shapes: Shapes | None, source: Source | None
) -> tuple[str, str, ModuleOp]:
    """The cache key, the name and the verified module of `program`."""
    if is_model(program):
        key, module = import_onnx(program, shapes)
        return key, model_name(program), _verified(module)
    if shapes:
        raise DflowError("shapes give the input shapes of an ONNX model only")
    if isinstance(program, Graph):
        module = program.module()
        return str(module), f"<graph {program.name}>", _verified(module)
    if isinstance(program, ModuleOp):
        return str(program), "<module>", _verified(program.clone())
    if source is None:
        source = _text_or_file(program)
    return source.text, source.name, parse_module(source.text, source.name)  # verifies


def _text_or_file(program: str | os.PathLike[str]) -> Source:
    """MLIR text given as a string (it has a line break or a brace, which no path
    of a program has), else the file at the path, read once."""
    if isinstance(program, str) and ("\n" in program or "{" in program):
        return Source("<text>", program)
    return read_source(Path(program))


def _verified(module: ModuleOp) -> ModuleOp:
    """A module built in Python (not parsed), verified as parsed text is."""
    verify(module)
    return module


def run_passes(module: ModuleOp, pipeline: PassPipeline | None) -> ModuleOp:
    """`module`, verified already, through `pipeline` and verified again."""
    if pipeline is not None and pipeline.passes:
        run_parsed(module, pipeline)
        verify(module)
    return module


def check_runnable_module(module: ModuleOp) -> None:
    """A one-line error for a module that could not run (see the module docstring)."""
    check_parts(module)
    failure = check_runnable(module)
    if failure is not None:
        op, message = failure
        raise DflowError(message, location_of(op))
