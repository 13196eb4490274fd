"""`dflow run` of a program compiled before, without the compiler.

A compiled program's cache entry (`dflow.driver.compiler.compiled_program`) is keyed
by its text and options, and holds, beside the device modules, the signatures of its
entry functions. When the entry of a run is there, the program needs no parsing,
verifying or lowering: this module reads the entry, makes or loads the feeds against
the stored signature and runs the loaded modules, importing neither xDSL nor any
compiler module. Anything else (no entry yet, `--interpret`, an ONNX model, a GPU, a
partitioned program, an entry it does not know) goes the whole way, which also gives
the errors of a program that does not parse.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dflow.driver.arrays import (
    Array,
    EntrySignature,
    in_full,
    load_inputs,
    save_outputs,
    summarize,
)
from dflow.driver.cache import SIGNATURES, mark_used, private_cache_entry, program_key
from dflow.driver.errors import DflowError
from dflow.driver.onnx_input import is_model
from dflow.driver.profiling import run_program
from dflow.driver.program_text import Source, display_name, read_source
from dflow.runtime import ProgramError, load_program


def run_from_cache(args: argparse.Namespace) -> bool:
    """Whether `dflow run` (`args`) ran from the cache; the text it read (once, as a
    pipe is) is left in `args.source` for the whole way."""
    if is_model(args.file) or args.mpi:  # under MPI only rank 0 reads (`run_on_mpi`)
        return False
    args.source = read_source(args.file)
    outputs = run_cached(args, args.source)
    if outputs is None:
        return False
    show_outputs(args, outputs)
    return True


def show_outputs(args: argparse.Namespace, outputs: list[Array]) -> None:
    """Save the outputs (`--output`) and print them (`--print`: in full; else one line
    each, unless they went into a file and the inputs came from files)."""
    if args.output is not None:
        save_outputs(args.output, outputs)
    if args.print:
        print("\n".join(in_full(outputs)))
    elif args.inputs is None or args.output is None:
        print("\n".join(summarize(outputs)))


def run_cached(args: argparse.Namespace, source: Source) -> list[Array] | None:
    """The outputs of `dflow run` (`args`) of `source` from its cache entry, or None
    when it has no entry that can run it so."""
    if args.interpret or args.shape:
        return None
    directory = private_cache_entry(
        program_key(source.text, args.devices, args.parallel, args.passes)
    )
    signature = _stored_signature(directory, args.entry)
    if signature is None or any(directory.glob("gpu_*.py")):
        return None  # a GPU run first checks that numba finds one
    mark_used(directory)
    program = load_program(directory)
    if args.inputs is None:
        inputs = signature.random_inputs(args.seed)
    else:
        inputs = signature.match_inputs(load_inputs(args.inputs), " ".join(args.inputs))
    try:
        return run_program(program, args, inputs)
    except ProgramError as error:
        raise DflowError(str(error), display_name(args.file)) from None


def _stored_signature(directory: Path, entry: str) -> EntrySignature | None:
    try:
        stored: dict[str, Any] = json.loads((directory / SIGNATURES).read_text())
    except (OSError, ValueError):  # no entry, or one written before signatures were kept
        return None
    found = stored.get(entry)
    return None if found is None else EntrySignature.from_json(found)
