"""`dflow run`: its options checked once (`dflow.driver.loading.run_options`), then the run
answered from the cache when it can, else the whole way (`dflow.driver.frontdoors.commands`).

A run's cache entry (`dflow.driver.compilation.compiler.compiled_program`) is keyed by the request:
the program (its text, or an ONNX model's bytes and `--shape`s), the devices as asked
for, the pipeline and the compiler; beside the device modules it holds the signatures
of the entry functions. When the entry of a run is there, the program needs no parsing,
verifying or lowering: this module makes or loads the feeds against the stored
signature and runs the loaded modules, importing neither xDSL nor any compiler module.
That holds for programs with pins, partitioned ones, ONNX models and GPU programs
(numba is asked for a GPU first, as the whole way asks it). `--interpret`, `--mpi`, a
request not compiled before, an entry the program lacks go the whole way, which also
gives the errors of a program that does not parse.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dflow.driver.compilation.cache import (
    mark_used,
    private_cache_entry,
    program_key,
    stored_signatures,
)
from dflow.driver.errors import DflowError, LeftToRankZeroError
from dflow.driver.loading.arrays import (
    Array,
    EntrySignature,
    in_full,
    save_outputs,
    summarize,
)
from dflow.driver.loading.run_options import RunOptions, request_text, require_gpus, run_options
from dflow.driver.tools.profiling import run_program
from dflow.runtime import ProgramError, load_program
from dflow.runtime.launcher import launched_rank
from dflow.runtime.program import DEVICE_MODULE


def run(args: argparse.Namespace) -> None:
    """`dflow run`: from the cache, else the whole way; the outputs shown (none on an
    MPI rank other than 0)."""
    try:
        options = run_options(args)
    except DflowError as error:  # every rank checks the options: rank 0 alone says why
        if args.mpi and launched_rank() not in (None, 0):
            raise LeftToRankZeroError(error.message) from None
        raise
    outputs = run_cached(options)
    if outputs is None:
        from dflow.driver.frontdoors.commands import run_whole  # noqa: PLC0415 (imports the compiler)

        outputs = run_whole(options)
    if outputs is not None:
        show_outputs(options, outputs)


def show_outputs(options: RunOptions, outputs: list[Array]) -> None:
    """Save the outputs (`--output`) and print them (`--print`: in full; else one line
    each, unless they went into a file and the inputs came from files)."""
    if options.output is not None:
        save_outputs(options.output, outputs)
    if options.print:
        print("\n".join(in_full(outputs)))
    elif options.inputs is None or options.output is None:
        print("\n".join(summarize(outputs)))


def run_cached(options: RunOptions) -> list[Array] | None:
    """The outputs of the run `options` asks for, from its cache entry; None when no
    entry can answer it."""
    if options.interpret or options.mpi:
        return None
    found = _entry(options)
    if found is None:
        return None
    directory, signature = found
    mark_used(directory)
    inputs = signature.inputs(options.inputs, options.seed)
    require_gpus(_devices(directory))
    program = load_program(directory)
    try:
        return run_program(program, options, inputs)
    except ProgramError as error:
        raise DflowError(str(error), options.name) from None


def _entry(options: RunOptions) -> tuple[Path, EntrySignature] | None:
    """The cache entry of the run, and its entry's signature: keyed by the devices in
    their order, or, for a program partitioned already (whose parts fix where
    everything runs), by the devices in any order."""
    text = options.program_text()
    orders = [True, False] if options.devices is not None and len(options.devices) > 1 else [True]
    for ordered in orders:
        request = request_text(options, text, ordered=ordered)
        key = program_key(request, None, options.parallel, options.passes, target=options.target)
        directory = private_cache_entry(key)
        signature = _stored_signature(directory, options.entry)
        if signature is not None:
            return directory, signature
    return None


def _devices(directory: Path) -> list[str]:
    """The devices whose modules `directory` holds (`gpu_1.py`: gpu:1)."""
    names = (path.name for path in directory.iterdir())
    return [name.replace("_", ":", 1)[:-3] for name in names if DEVICE_MODULE.fullmatch(name)]


def _stored_signature(directory: Path, entry: str) -> EntrySignature | None:
    found = stored_signatures(directory).get(entry)
    return None if found is None else EntrySignature.from_json(found)
