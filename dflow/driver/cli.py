"""The `dflow` command line.

`dflow run FILE [--entry NAME] [--inputs X.npz] [--output Y.npz] [--interpret]
[--devices cpu:0,cpu:1] [--timeout S] [--parallel] [-p PIPELINE]` parses and
verifies the program, runs the passes of `-p`, compiles it (once: the emitted
modules are cached, see `dflow.driver.compiler`) and runs its entry function;
`--interpret` runs the reference interpreter instead. With `--devices`, or pins in
the program, or a program already partitioned, each device's part runs in its own
thread. `dflow compile FILE -o DIR` writes each device's Python module
(`DIR/cpu_0.py`, ...). `dflow plan FILE [--json]` prints each device's arena, its
lower bound and the naive size (`df-plan-buffers`). `dflow viz FILE -o G.svg` draws
the graph. `dflow opt FILE -p PIPELINE` is `xdsl-opt` with one-line errors
(`dflow.driver.opt`). FILE is a path, or `-` for standard input, read once.

Bad input is reported as one line, `FILE:LINE:COL: error: ...`, with exit status
1; a failure of dflow itself as one line naming it an internal error, exit status
2 (`DFLOW_TRACEBACK=1` shows the traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from dflow.driver import cache, feeds
from dflow.driver.compiler import (
    PLAN_FIGURES,
    compile_kernels,
    compile_module,
    compiled_program,
    memory_figures,
    write_modules,
)
from dflow.driver.errors import DflowError, first_line
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
from dflow.driver.onnx_input import import_onnx, is_model, parse_shape
from dflow.driver.opt import add_opt_arguments, run_opt
from dflow.driver.pipeline import parsed_pipeline
from dflow.driver.source import display_name, read_source
from dflow.driver.timing import Timings, maybe
from dflow.driver.viz import to_dot, write_picture
from dflow.interpreters.df import DEFAULT_RECV_TIMEOUT_S
from dflow.runtime import ProgramError


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{seed} is negative: a seed is 0 or more")
    return seed


def _timeout(text: str) -> float:
    try:
        timeout = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not timeout > 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return timeout


def _shape(text: str) -> tuple[str, list[int]]:
    try:
        return parse_shape(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _shape_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--shape",
        action="append",
        type=_shape,
        default=[],
        metavar="NAME=D0,D1,...",
        help="the static shape of an ONNX model's input (one per input with symbolic "
        "dimensions, e.g. input=1,3,224,224)",
    )


def _program_arguments(command: argparse.ArgumentParser, devices_help: str) -> None:
    """What every command that takes a program shares: the file, passes, devices,
    and the shapes of an ONNX model's inputs."""
    command.add_argument(
        "file",
        metavar="FILE",
        help="the program (.mlir, or an ONNX model .onnx; - for standard input)",
    )
    command.add_argument(
        "-p", "--passes", default="", metavar="PIPELINE", help="passes to run first (xdsl-opt's -p)"
    )
    command.add_argument("--devices", metavar="LIST", help=devices_help)
    _shape_argument(command)


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line (no usage block), exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dflow", description="A multi-level compiler for tensor dataflow graphs.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    _run_arguments(commands.add_parser("run", help="run a program's entry function"))
    compile_ = commands.add_parser("compile", help="emit each device's Python module")
    _program_arguments(compile_, "place and partition on these first")
    compile_.add_argument("-o", "--output", required=True, metavar="DIR", help="where to write")
    compile_.add_argument("--parallel", action="store_true", help="parallel=True CPU kernels")
    compile_.add_argument(
        "--time",
        action="store_true",
        help="print the time of every pass and of numba's compile of the CPU kernels",
    )
    compile_.set_defaults(handler=_compile)
    viz = commands.add_parser("viz", help="draw the dataflow graph (.dot, .svg or .png)")
    _program_arguments(viz, "place on these devices first")
    viz.add_argument("-o", "--output", required=True, metavar="GRAPH.svg", help="the picture")
    viz.add_argument("--entry", default="main", help="function to draw (default: main)")
    viz.add_argument(
        "--partition", action="store_true", help="draw each device's part (with --devices)"
    )
    viz.set_defaults(handler=_viz)
    plan = commands.add_parser("plan", help="report each device's arena size")
    _program_arguments(plan, "place and partition on these first")
    plan.add_argument("--entry", default="main", help="function to plan (default: main)")
    plan.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    plan.set_defaults(handler=_plan)
    opt = commands.add_parser("opt", help="run passes and print the IR (xdsl-opt)")
    add_opt_arguments(opt)
    opt.set_defaults(handler=run_opt)
    import_ = commands.add_parser("import", help="import an ONNX model as a df program (.mlir)")
    import_.add_argument("file", metavar="MODEL.onnx", help="the ONNX model")
    import_.add_argument(
        "-o", "--output", metavar="OUT.mlir", help="where to write (default: stdout)"
    )
    _shape_argument(import_)
    import_.set_defaults(handler=_import)
    cache = commands.add_parser("cache", help="the compile cache: its size, or empty it")
    cache.add_argument("action", choices=("info", "clear"), help="info: report; clear: empty it")
    cache.set_defaults(handler=_cache, file="cache")
    return parser


def _version() -> str:
    """`dflow 0.1.0 (xDSL 0.74.0, numba 0.68.1, NumPy 2.4.6, Python 3.11.7)`."""
    found = [f"{name} {_installed(name)}" for name in ("xdsl", "numba", "numpy")]
    shown = ", ".join(found).replace("xdsl", "xDSL").replace("numpy", "NumPy")
    return f"dflow {_installed('dflow')} ({shown}, Python {sys.version.split()[0]})"


def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _cache(args: argparse.Namespace) -> None:
    root = cache.cache_root()
    if args.action == "clear":
        count, size = cache.clear(root)
        print(f"removed {count} entries ({cache.size_text(size)}) from {root}")
        return
    found = cache.entries(root)
    size = sum(entry.bytes for entry in found)
    print(f"cache: {root}")
    print(
        f"entries: {len(found)}, {cache.size_text(size)} (kept under "
        f"{cache.size_text(cache.bound())}: DFLOW_CACHE_MAX_BYTES)"
    )


def _run_arguments(run: argparse.ArgumentParser) -> None:
    _program_arguments(
        run,
        "place, partition and run on these devices, "
        "e.g. cpu:0,cpu:1 (default: the devices the program's pins name, else cpu:0)",
    )
    run.add_argument("--entry", default="main", help="function to run (default: main)")
    run.add_argument(
        "--inputs",
        action="append",
        metavar="FILE",
        help="an .npz archive of the inputs by argument name (x for %%x) or position (arg0); "
        "or, repeated, one .npy file per argument in order (or NAME=FILE.npy)",
    )
    run.add_argument("--output", metavar="Y.npz", help="save the results as out0, out1, ...")
    run.add_argument("--seed", type=_seed, default=feeds.DEFAULT_SEED, help="seed of random inputs")
    run.add_argument(
        "--print", action="store_true", help="print every result in full (NumPy's formatting)"
    )
    run.add_argument(
        "--interpret",
        action="store_true",
        help="run in the reference interpreter (NumPy on the host, for every device) instead "
        "of the compiled code",
    )
    run.add_argument(
        "--timeout",
        type=_timeout,
        default=DEFAULT_RECV_TIMEOUT_S,
        metavar="S",
        help=f"fail a receive that waits longer (default {DEFAULT_RECV_TIMEOUT_S:g} s)",
    )
    run.add_argument(
        "--parallel",
        action="store_true",
        help="compile CPU kernels with numba's parallel=True (prange over the outer loop)",
    )
    run.set_defaults(handler=_run)


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
    source = read_source(args.file)
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


def _import(args: argparse.Namespace) -> None:
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


def _plan(args: argparse.Namespace) -> None:
    _, module = _load_runnable(args)
    figures = memory_figures(module, args.entry, devices_for(module, args.devices))
    print(json.dumps({"devices": figures}) if args.json else _plan_table(figures))


def _plan_table(figures: dict[str, dict[str, int]]) -> str:
    """One row per device: the arena, its lower bound and the naive size, in bytes."""
    width = max(len("device"), *map(len, figures))
    lines = [f"{'device':<{width}}" + "".join(f"  {name}" for name in PLAN_FIGURES)]
    for device, row in figures.items():
        lines.append(f"{device:<{width}}" + "".join(f"  {row[n]:>{len(n)}}" for n in PLAN_FIGURES))
    return "\n".join(lines)


def _viz(args: argparse.Namespace) -> None:
    _, module = _load(args)
    devices = devices_for(module, args.devices)
    if args.partition:
        module = split_for_devices(module, devices)
    elif devices is not None:
        place(module, devices)
    write_picture(to_dot(module, args.entry), Path(args.output))


def _compile(args: argparse.Namespace) -> None:
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
    return feeds.match_inputs(function, feeds.load_inputs(args.inputs), source)


def _run_compiled(
    args: argparse.Namespace, key: str, module: ModuleOp, inputs: list[Any]
) -> list[Any]:
    devices = devices_for(module, args.devices)
    check_gpus(module, devices)
    program = compiled_program(key, module, devices, args.parallel, passes=args.passes)
    try:
        return program.run(args.entry, inputs, args.timeout)
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


def _run(args: argparse.Namespace) -> None:
    key, module = _load_runnable(args)
    if is_partitioned(module):
        function = entry_signature(module, args.entry)
    else:
        function = feeds.find_entry(module, args.entry)
    inputs = _inputs(args, function)
    if args.interpret:
        outputs = _run_interpreted(args, module, inputs)
    else:
        outputs = _run_compiled(args, key, module, inputs)
    if args.output is not None:
        feeds.save_outputs(args.output, outputs)
    if args.print:
        print("\n".join(feeds.in_full(outputs)))
    elif args.inputs is None or args.output is None:
        print("\n".join(feeds.summarize(outputs)))


KNOWN_FAILURES = (DflowError, RecursionError, MemoryError)


def _failure(name: str, error: Exception) -> str:
    """The one line that reports `error` (exit 1 for a known failure, 2 for a bug)."""
    if isinstance(error, DflowError):
        error.location = error.location or name
        return str(error)
    if isinstance(error, RecursionError):
        return (
            f"{name}: error: the program nests too deeply for dflow (calls or regions past "
            "Python's recursion limit)"
        )
    if isinstance(error, MemoryError):
        return f"{name}: error: out of memory"
    if os.environ.get("DFLOW_TRACEBACK"):
        traceback.print_exception(error)
    return (
        f"{name}: internal error: {type(error).__name__}: {first_line(error)} "
        "(a bug in dflow; DFLOW_TRACEBACK=1 shows where)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.handler(args)
    except KeyboardInterrupt:
        print("dflow: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout went away (`dflow import m.onnx | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:
        print(_failure(display_name(args.file), error), file=sys.stderr)
        return 1 if isinstance(error, KNOWN_FAILURES) else 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
