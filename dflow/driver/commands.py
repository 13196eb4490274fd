"""What each `dflow` command does, once `dflow.driver.cli` has parsed its arguments
(and, for `run`, found no cached program to run at once: `dflow.driver.cached_run`).
Imported only when a command needs the compiler."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from dflow.driver import cache, feeds, memory_plot
from dflow.driver.arrays import load_inputs
from dflow.driver.cached_run import show_outputs
from dflow.driver.compiler import (
    PLAN_FIGURES,
    compile_kernels,
    compile_module,
    compiled_program,
    memory_figures,
    write_modules,
)
from dflow.driver.errors import DflowError, QuietFailureError
from dflow.driver.loading import check_runnable_module, load_module, load_text
from dflow.driver.multidevice import (
    check_gpus,
    devices_for,
    entry_signature,
    interpret,
    is_partitioned,
    place,
    split_for_devices,
)
from dflow.driver.onnx_input import import_onnx, is_model
from dflow.driver.pipeline import parsed_pipeline
from dflow.driver.profiling import MPI_PROFILE_RUNS, run_program, show, traced
from dflow.driver.program_text import display_name, read_source
from dflow.driver.timing import Timings, maybe
from dflow.driver.viz import to_dot, write_picture
from dflow.runtime import ProgramError


def cache_command(args: argparse.Namespace) -> None:
    root = cache.cache_root()
    if args.action == "clear":
        print(f"removed {cache.summary(cache.clear(root))} from {root}")
        return
    print(f"cache: {root}")
    print(
        f"entries: {cache.summary(cache.entries(root))} (kept under "
        f"{cache.size_text(cache.bound())}: DFLOW_CACHE_MAX_BYTES)"
    )


def _load(args: argparse.Namespace) -> tuple[str, ModuleOp]:
    """The program of `args.file`, read once, verified, through the passes of `-p`
    (checked before the program is read), and its cache key: its text, or for an
    ONNX model (imported in memory) a digest of the model and the shapes given."""
    parsed_pipeline(args.passes)
    shapes = _shapes(args)
    if is_model(args.file):
        key, module = import_onnx(args.file, shapes)
        return key, load_module(module, args.passes)
    if shapes:
        raise DflowError("--shape gives the input shapes of an ONNX model (.onnx) only")
    source = getattr(args, "source", None) or read_source(args.file)
    return source.text, load_text(source.text, source.name, args.passes)


def _shapes(args: argparse.Namespace) -> dict[str, list[int]]:
    shapes: dict[str, list[int]] = {}
    for name, shape in args.shape:
        if name in shapes:
            raise DflowError(f"--shape gives {name!r} twice")
        shapes[name] = shape
    return shapes


def _load_runnable(args: argparse.Namespace) -> tuple[str, ModuleOp]:
    """`_load`, for the commands that run or compile the program."""
    key, module = _load(args)
    check_runnable_module(module)
    return key, module


def import_model(args: argparse.Namespace) -> None:
    if not is_model(args.file):
        raise DflowError("dflow import reads ONNX models (a .onnx file)")
    _, module = import_onnx(args.file, _shapes(args))
    if args.output is None:
        print(module)
        return
    try:
        with Path(args.output).open("w") as file:
            print(module, file=file)
    except OSError as error:
        raise DflowError(f"cannot write {args.output}: {error.strerror}") from None


def plan(args: argparse.Namespace) -> None:
    if args.plot:
        memory_plot.check_format(Path(args.plot))
    _, module = _load_runnable(args)
    devices = devices_for(module, args.devices)
    drawn = module.clone() if args.plot else None
    figures = memory_figures(module, args.entry, devices)
    print(json.dumps({"devices": figures}) if args.json else _plan_table(figures))
    if drawn is not None:
        memory_plot.draw(memory_plot.device_plans(drawn, args.entry, devices), Path(args.plot))
        print(f"dflow: drew the plan of {len(figures)} devices in {args.plot}", file=sys.stderr)


def _plan_table(figures: dict[str, dict[str, int | None]]) -> str:
    """One row per device: the lower bound as written and in the chosen order, the
    optimum (`-` where not computed), the arena and the naive size, in bytes."""
    width = max(len("device"), *map(len, figures))
    lines = [f"{'device':<{width}}" + "".join(f"  {name}" for name in PLAN_FIGURES)]
    for device, row in figures.items():
        cells = ("-" if row[n] is None else str(row[n]) for n in PLAN_FIGURES)
        lines.append(
            f"{device:<{width}}"
            + "".join(f"  {cell:>{len(n)}}" for n, cell in zip(PLAN_FIGURES, cells, strict=True))
        )
    return "\n".join(lines)


def viz(args: argparse.Namespace) -> None:
    _, module = _load(args)
    devices = devices_for(module, args.devices)
    if args.partition:
        module = split_for_devices(module, devices)
    elif devices is not None:
        place(module, devices)
    write_picture(to_dot(module, args.entry), Path(args.output))


def compile_program(args: argparse.Namespace) -> None:
    timings = Timings() if args.time else None
    with maybe(timings, "read, parse and verify"):
        _, module = _load_runnable(args)
    devices = devices_for(module, args.devices)
    sources = compile_module(module, devices, args.parallel, timings)
    with maybe(timings, "write the modules"):
        write_modules(sources, Path(args.output))
    for name in sources:
        print(Path(args.output) / name)
    if timings is not None:
        compile_kernels(Path(args.output), timings)
        print(timings.report(), file=sys.stderr)


def _inputs(args: argparse.Namespace, function: FuncOp) -> list[Any]:
    if args.inputs is None:
        return feeds.random_inputs(function, args.seed)
    source = " ".join(args.inputs)
    return feeds.match_inputs(function, load_inputs(args.inputs), source)


def _run_compiled(
    args: argparse.Namespace, key: str, module: ModuleOp, inputs: list[Any]
) -> list[Any]:
    devices = devices_for(module, args.devices)
    check_gpus(module, devices)
    program = compiled_program(key, module, devices, args.parallel, passes=args.passes)
    try:
        return run_program(program, args, inputs)
    except ProgramError as error:
        raise DflowError(str(error), display_name(args.file)) from None


def _run_interpreted(args: argparse.Namespace, module: ModuleOp, inputs: list[Any]) -> list[Any]:
    devices = devices_for(module, args.devices)
    gpus = [d for d in (devices or "").split(",") if d.startswith("gpu:")]
    if gpus:
        print(
            f"dflow: note: --interpret runs {', '.join(gpus)} in the interpreter, on the host",
            file=sys.stderr,
        )
    try:
        return interpret(module, args.entry, inputs, devices, args.timeout)
    except DflowError as error:
        error.location = error.location or display_name(args.file)
        raise


def run(args: argparse.Namespace) -> None:
    if traced(args) and args.interpret:
        raise DflowError("--trace and --profile time the compiled program: leave out --interpret")
    if args.mpi:
        run_on_mpi(args)
        return
    key, module = _load_runnable(args)
    function = _whole_entry(module, args.entry)
    inputs = _inputs(args, function)
    if args.interpret:
        outputs = _run_interpreted(args, module, inputs)
    else:
        outputs = _run_compiled(args, key, module, inputs)
    show_outputs(args, outputs)


def run_on_mpi(args: argparse.Namespace) -> None:
    """`dflow run --mpi` on this rank: every rank reads, partitions and builds its part
    (the whole command's failures reported by rank 0 alone), then runs; rank 0 reads
    the inputs and shows the outputs."""
    from dflow.driver import ranks  # noqa: PLC0415 (imports mpi4py and starts MPI)

    world = ranks.start_world()
    root = world.rank == ranks.ROOT
    prepared: dict[str, Any] = {}
    if args.file == "-":  # mpirun gives standard input to rank 0 alone: it shares the text
        args.source = _shared_stdin(world.control, root)

    def build() -> ranks.MpiProgram:
        key, module = _load_runnable(args)
        function = _whole_entry(module, args.entry)
        prepared["types"] = ranks.entry_types(function)
        prepared["inputs"] = _inputs(args, function) if root else None
        options = ranks.RankOptions(key, args.interpret, args.passes, args.parallel)
        return ranks.rank_program(world, module, args.devices, options)

    try:
        program = ranks.ready(world, build, args.timeout)
        outputs = _run_ranked(args, program, prepared["types"], prepared["inputs"])
    except DflowError as error:
        error.location = error.location or display_name(args.file)
        raise
    if outputs is not None:
        show_outputs(args, outputs)


def _run_ranked(
    args: argparse.Namespace, program: Any, types: Any, inputs: list[Any] | None
) -> list[Any] | None:
    """This rank's part of `dflow run --mpi`'s run (rank 0 gets the outputs): plain,
    or traced and profiled as `dflow.driver.profiling` does in one process."""
    from dflow.driver import ranks  # noqa: PLC0415 (imports mpi4py)

    outputs = ranks.run_on_ranks(program, args.entry, types, inputs, args.timeout)
    if not traced(args):
        return outputs
    count = MPI_PROFILE_RUNS if args.profile else 1
    runs = [
        ranks.trace_on_ranks(program, args.entry, types, inputs, args.timeout) for _ in range(count)
    ]
    traces = [trace for trace in runs if trace is not None]
    if not traces:
        return None
    show(args, traces)
    return traces[0].results


def _whole_entry(module: ModuleOp, entry: str) -> FuncOp:
    if is_partitioned(module):
        return entry_signature(module, entry)
    return feeds.find_entry(module, entry)


def _shared_stdin(communicator: Any, root: bool) -> Any:
    """The program rank 0 reads from standard input, on every rank (collective); a
    read that fails is rank 0's one line and the others' quiet exit."""
    read: Any = None
    if root:
        try:
            read = read_source("-")
        except DflowError as error:
            read = error
    read = communicator.bcast(read, root=0)
    if isinstance(read, DflowError):
        raise read if root else QuietFailureError("rank 0 could not read the program")
    return read


def bisect_program(args: argparse.Namespace) -> None:
    """`dflow bisect`: each pass of `-p` checked against the interpreted input, then
    the compiled run; the first that differs is named and its IR written beside the
    input (`dflow.driver.bisect`). Exits 1 when one differs."""
    from dflow.driver import bisect  # noqa: PLC0415 (only this command needs it)

    parsed_pipeline(args.passes)
    module = _read_program(args)
    check_runnable_module(module)
    function = _whole_entry(module, args.entry)
    inputs = _inputs(args, function)
    devices = devices_for(module, args.devices)

    def compiled(lowered: ModuleOp) -> list[Any]:
        program = compiled_program(str(lowered), lowered, devices)
        try:
            return program.run(args.entry, inputs, args.timeout)
        except ProgramError as error:
            raise DflowError(str(error)) from None

    tolerance = bisect.Tolerance(args.rtol, args.atol)
    found = bisect.bisect(module, args.passes, args.entry, inputs, tolerance, compiled)
    print(bisect.report(found))
    written = bisect.write_around(found, args.file)
    if written:
        print("wrote " + ", ".join(map(str, written)))
    if found.culprit is not None:
        raise QuietFailureError("a stage differs")


def _read_program(args: argparse.Namespace) -> ModuleOp:
    """The program of `args.file` as written (an ONNX model imported), no pass run."""
    if is_model(args.file):
        return import_onnx(args.file, _shapes(args))[1]
    source = read_source(args.file)
    return load_text(source.text, source.name)


def reduce_program(args: argparse.Namespace) -> None:
    """`dflow reduce`: the program made as small as `--test` lets it be
    (`dflow.driver.reduce`), written to `-o` (default `FILE.reduced.mlir`)."""
    from dflow.driver import reduce  # noqa: PLC0415 (only this command needs it)

    module = _read_program(args)
    name = display_name(args.file)
    output = _reduced_path(args)
    if not output.parent.is_dir():
        raise DflowError(f"cannot write {output}: there is no folder {output.parent}", name)
    with tempfile.TemporaryDirectory(prefix="dflow-reduce-") as folder:
        test = reduce.CommandTest(args.test, Path(folder) / "candidate.mlir", args.test_timeout)
        first = test.judge(str(module))
        if not first.interesting:
            raise DflowError(f"the input is not interesting: the test {first.why}", name)
        started = time.monotonic()
        reducer = reduce.reduce(module, test, args.time_limit, name)
    before, after = reduce.op_count(module), reduce.op_count(reducer.module)
    command = " ".join(args.test.split())
    header = f"// dflow reduce {name}: {before} ops to {after}; the test: {command}"
    _write(output, f"{header}\n{reducer.module!s}\n")
    ended = "stopped at the time limit" if reducer.out_of_time() else "reduced"
    seconds = time.monotonic() - started
    print(f"{ended}: {before} ops to {after} in {reducer.tests} tests, {seconds:.1f} s: {output}")
    print("kept: " + ", ".join(f"{n} {reducer.kept[n]} of {t}" for n, t in reducer.tried.items()))


def _reduced_path(args: argparse.Namespace) -> Path:
    """`-o`, else `FILE.reduced.mlir` beside the input (`stdin.reduced.mlir` here)."""
    if args.output is not None:
        return Path(args.output)
    return Path("stdin.mlir" if args.file == "-" else args.file).with_suffix(".reduced.mlir")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as error:
        raise DflowError(f"cannot write {path}: {error.strerror}") from None
