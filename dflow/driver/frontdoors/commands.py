"""What each `dflow` command does, once `dflow.driver.frontdoors.cli` has parsed its arguments
(`dflow run` the whole way, once `dflow.driver.frontdoors.cached_run` has checked its options and
found no cache entry to run at once). Imported only when a command needs the compiler."""

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

from dflow.dialects.devices import DeviceList
from dflow.driver.compilation import cache
from dflow.driver.compilation.compiler import (
    compile_kernels,
    compiled_program,
    emitted,
    write_modules,
)
from dflow.driver.compilation.devices import check_gpus, devices_for, place, split_for_devices
from dflow.driver.compilation.interpreted import interpret
from dflow.driver.compilation.timing import Timings, maybe
from dflow.driver.errors import DflowError, QuietFailureError
from dflow.driver.loading import feeds
from dflow.driver.loading.checked import check_runnable_module, load
from dflow.driver.loading.onnx_input import import_onnx, is_model
from dflow.driver.loading.partitioned import is_partitioned, whole_entry
from dflow.driver.loading.pipeline import parsed_pipeline
from dflow.driver.loading.program_text import Source, display_name, read_source
from dflow.driver.loading.run_options import (
    RunOptions,
    checked_device_option,
    checked_shapes,
    request_text,
)
from dflow.driver.loading.targets import cpu_target
from dflow.driver.tools import memory_plot, memory_report
from dflow.driver.tools.profiling import MPI_PROFILE_RUNS, run_program, show
from dflow.driver.tools.viz import to_dot, write_picture
from dflow.runtime import ProgramError


def cache_command(args: argparse.Namespace) -> None:
    root = cache.made_root(make=False)
    if args.action == "clear":
        print(f"removed {cache.summary(cache.clear(root))} from {root}")
        return
    print(f"cache: {root}")
    print(
        f"entries: {cache.summary(cache.entries(root))} (kept under "
        f"{cache.size_text(cache.bound())}: DFLOW_CACHE_MAX_BYTES)"
    )


def _load(args: argparse.Namespace) -> tuple[str, ModuleOp]:
    """The program of `args.file` (`load_program`), its `--shape`s checked first."""
    shapes = checked_shapes(args.shape, is_model(args.file))
    return load_program(args.file, None, args.passes, shapes)


def load_program(
    file: str, source: Source | None, passes: str, shapes: dict[str, list[int]]
) -> tuple[str, ModuleOp]:
    """The program of `file` (its text `source` when read already) through the one
    front door (`loading.checked.load`), the passes of `-p` parsed once, before the
    program is read; its cache key (its text, or for an ONNX model a digest of the
    model and the shapes given) and its module."""
    pipeline = parsed_pipeline(passes)
    loaded = load(file, pipeline, shapes=shapes, source=source)
    return loaded.key, loaded.module


def _load_runnable(args: argparse.Namespace) -> tuple[str, ModuleOp]:
    """`_load`, for the commands that run or compile the program."""
    key, module = _load(args)
    check_runnable_module(module)
    return key, module


def import_model(args: argparse.Namespace) -> None:
    if not is_model(args.file):
        raise DflowError("dflow import reads ONNX models (a .onnx file)")
    _, module = import_onnx(args.file, checked_shapes(args.shape, model=True))
    if args.output is None:
        print(module)
        return
    try:
        with Path(args.output).open("w") as file:
            print(module, file=file)
    except OSError as error:
        raise DflowError(f"cannot write {args.output}: {error.strerror}") from None


def requested_devices(args: argparse.Namespace) -> DeviceList | None:
    """`--devices` parsed once, at the edge (None where not given)."""
    return None if args.devices is None else checked_device_option(args.devices)


def plan(args: argparse.Namespace) -> None:
    """`dflow plan`: each device's memory figures, as a table or JSON, and with
    `--plot` the picture of its arena, from one plan per device; a plot that cannot
    be written fails before anything is printed."""
    if args.plot:
        memory_plot.check_plot(Path(args.plot))
    _, module = _load_runnable(args)
    devices = devices_for(module, requested_devices(args))
    plans = memory_report.device_plans(module, args.entry, devices)
    if args.plot:
        memory_plot.draw(plans, Path(args.plot))
    if args.json:
        print(json.dumps({"devices": {plan.device: plan.figures() for plan in plans}}))
    else:
        print(memory_report.plan_table(plans))
    if args.plot:
        count = f"{len(plans)} device" + ("" if len(plans) == 1 else "s")
        print(f"dflow: drew the plan of {count} in {args.plot}", file=sys.stderr)


def viz(args: argparse.Namespace) -> None:
    _, module = _load(args)
    devices = devices_for(module, requested_devices(args))
    if args.partition:
        module = split_for_devices(module, devices)
    elif devices is not None:
        place(module, devices)
    write_picture(to_dot(module, args.entry), Path(args.output))


def compile_program(args: argparse.Namespace) -> None:
    timings = Timings() if args.time else None
    with maybe(timings, "read, parse and verify"):
        _, module = _load_runnable(args)
    devices = devices_for(module, requested_devices(args))
    sources = emitted(module, devices, args.parallel, timings, target=cpu_target(args.target))
    with maybe(timings, "write the modules"):
        write_modules(sources, Path(args.output))
    for name in sources:
        print(Path(args.output) / name)
    if timings is not None:
        compile_kernels(Path(args.output), timings)
        print(timings.report(), file=sys.stderr)


def _inputs(args: argparse.Namespace, function: FuncOp) -> list[Any]:
    return feeds.signature(function).inputs(args.inputs, args.seed)


def _run_compiled(options: RunOptions, key: str, module: ModuleOp, inputs: list[Any]) -> list[Any]:
    devices = devices_for(module, options.devices)
    check_gpus(module, devices)
    program = compiled_program(
        key,
        module,
        devices,
        options.parallel,
        passes=options.passes,
        request=request_text(options, key, ordered=not is_partitioned(module)),
        target=options.target,
    )
    try:
        return run_program(program, options, inputs)
    except ProgramError as error:
        raise DflowError(str(error), options.name) from None


def _run_interpreted(options: RunOptions, module: ModuleOp, inputs: list[Any]) -> list[Any]:
    devices = devices_for(module, options.devices)
    gpus = devices.gpus() if devices is not None else ()
    if gpus:
        print(
            f"dflow: note: --interpret runs {', '.join(gpus)} in the interpreter, on the host",
            file=sys.stderr,
        )
    try:
        return interpret(module, options.entry, inputs, devices, options.timeout)
    except DflowError as error:
        error.location = error.location or options.name
        raise


def run_whole(options: RunOptions) -> list[Any] | None:
    """`dflow run` the whole way (`cached_run.run` found no cache entry for it): read,
    verify, lower, compile (or interpret) and run; the outputs (None on an MPI rank
    other than 0)."""
    if options.mpi:
        return run_on_mpi(options)
    key, module = load_program(options.file, options.source, options.passes, options.shapes)
    check_runnable_module(module)
    function = whole_entry(module, options.entry)
    inputs = feeds.signature(function).inputs(options.inputs, options.seed)
    if options.interpret:
        return _run_interpreted(options, module, inputs)
    return _run_compiled(options, key, module, inputs)


def run_on_mpi(options: RunOptions) -> list[Any] | None:
    """`dflow run --mpi` on this rank: every rank reads, partitions and builds its part
    (the whole command's failures reported by rank 0 alone), then runs; rank 0 reads
    the inputs and gets the outputs."""
    from dflow.driver.compilation import ranks  # noqa: PLC0415 (imports mpi4py and starts MPI)

    world = ranks.start_world()
    root = world.rank == ranks.ROOT
    prepared: dict[str, Any] = {}
    source = options.source
    if options.file == "-":  # mpirun gives standard input to rank 0 alone: it shares the text
        source = _shared_stdin(world.control, root)

    def build() -> ranks.MpiProgram:
        key, module = load_program(options.file, source, options.passes, options.shapes)
        check_runnable_module(module)
        function = whole_entry(module, options.entry)
        prepared["types"] = ranks.entry_types(function)
        signature = feeds.signature(function)
        prepared["inputs"] = signature.inputs(options.inputs, options.seed) if root else None
        rank_options = ranks.RankOptions(
            key, options.interpret, options.passes, options.parallel, options.target
        )
        return ranks.rank_program(world, module, options.devices, rank_options)

    try:
        program = ranks.ready(world, build, options.timeout)
        return _run_ranked(options, program, prepared["types"], prepared["inputs"])
    except DflowError as error:
        error.location = error.location or options.name
        raise


def _run_ranked(
    options: RunOptions, program: Any, types: Any, inputs: list[Any] | None
) -> list[Any] | None:
    """This rank's part of `dflow run --mpi`'s run (rank 0 gets the outputs): plain,
    or traced and profiled as `dflow.driver.tools.profiling` does in one process."""
    from dflow.driver.compilation import ranks  # noqa: PLC0415 (imports mpi4py)

    entry, timeout = options.entry, options.timeout
    outputs = ranks.run_on_ranks(program, entry, types, inputs, timeout)
    if not options.traced():
        return outputs
    count = MPI_PROFILE_RUNS if options.profile else 1
    runs = [ranks.trace_on_ranks(program, entry, types, inputs, timeout) for _ in range(count)]
    traces = [trace for trace in runs if trace is not None]
    if not traces:
        return None
    show(options, traces)
    return traces[0].results


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
    input (`dflow.driver.tools.bisect`). Exits 1 when one differs."""
    from dflow.driver.tools import bisect  # noqa: PLC0415 (only this command needs it)

    pipeline = parsed_pipeline(args.passes)
    module = _read_program(args)
    check_runnable_module(module)
    function = whole_entry(module, args.entry)
    inputs = _inputs(args, function)
    devices = devices_for(module, requested_devices(args))

    def compiled(lowered: ModuleOp) -> list[Any]:
        program = compiled_program(str(lowered), lowered, devices)
        try:
            return program.run(args.entry, inputs, args.timeout)
        except ProgramError as error:
            raise DflowError(str(error)) from None

    tolerance = bisect.Tolerance(args.rtol, args.atol)
    found = bisect.bisect(module, pipeline, args.entry, inputs, tolerance, compiled)
    print(bisect.report(found))
    written = bisect.write_around(found, args.file)
    if written:
        print("wrote " + ", ".join(map(str, written)))
    if found.culprit is not None:
        raise QuietFailureError("a stage differs")


def _read_program(args: argparse.Namespace) -> ModuleOp:
    """The program of `args.file` as written (an ONNX model imported), no pass run."""
    return load(args.file, shapes=checked_shapes(args.shape, is_model(args.file))).module


def reduce_program(args: argparse.Namespace) -> None:
    """`dflow reduce`: the program made as small as `--test` lets it be
    (`dflow.driver.tools.reduce`), written to `-o` (default `FILE.reduced.mlir`)."""
    from dflow.driver.tools import reduce  # noqa: PLC0415 (only this command needs it)

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
