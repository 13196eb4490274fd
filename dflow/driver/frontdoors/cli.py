"""The `dflow` command line.

`dflow run FILE [--entry NAME] [--inputs X.npz] [--output Y.npz] [--interpret]
[--devices cpu:0,cpu:1] [--timeout S] [--parallel] [--mpi] [-p PIPELINE]
[--trace T.json] [--profile]` parses and
verifies the program, runs the passes of `-p`, compiles it (once: the emitted
modules are cached, see `dflow.driver.compilation.compiler`) and runs its entry function;
`--interpret` runs the reference interpreter instead. With `--devices`, or pins in
the program, or a program already partitioned, each device's part runs in its own
thread; with `--mpi`, under `mpirun -n N`, each on an MPI rank (`dflow.driver.compilation.ranks`).
`dflow bisect FILE -p PIPELINE` names the first pass whose output the interpreter
finds computing something else (`dflow.driver.tools.bisect`); `dflow reduce FILE --test CMD`
shrinks it while `CMD` says it is still interesting (`dflow.driver.tools.reduce`).
`dflow compile FILE -o DIR`
writes each device's Python module
(`DIR/cpu_0.py`, ...). `dflow plan FILE [--json]` prints each device's memory plan:
the lower bound as written and in the order `df-schedule` chooses, the optimum, the
arena and the naive size (`df-plan-buffers`). `dflow viz FILE -o G.svg` draws
the graph. `dflow opt FILE -p PIPELINE` is `xdsl-opt` with one-line errors
(`dflow.driver.tools.opt`). FILE is a path, or `-` for standard input, read once.

Bad input is reported as one line, `FILE:LINE:COL: error: ...`, with exit status
1; a failure of dflow itself as one line naming it an internal error, exit status
2 (`DFLOW_TRACEBACK=1` shows the traceback).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback
from collections.abc import Sequence
from importlib import import_module
from typing import NoReturn

from dflow.driver.errors import DflowError, LeftToRankZeroError, QuietFailureError, first_line
from dflow.driver.loading.arrays import DEFAULT_SEED
from dflow.driver.loading.onnx_input import parse_shape
from dflow.driver.loading.program_text import display_name
from dflow.driver.loading.targets import CPU_TARGETS, TARGET_VARIABLE
from dflow.runtime.channels import DEFAULT_RECV_TIMEOUT_S

COMMANDS = "dflow.driver.frontdoors.commands"
"""The module of the commands' handlers, imported once a command needs it."""
TARGETS = ("numba", "df-llvm")
"""The targets of `dflow opt -t` besides `mlir`: those of `dflow.driver.universe`
(named here so that `--help` does not import xDSL; a test keeps them equal)."""


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{seed} is negative: a seed is 0 or more")
    return seed


def _number_of_seconds(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None


def _seconds(text: str) -> float:
    """A time of 0 seconds or more."""
    seconds = _number_of_seconds(text)
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds: 0 or more")
    return seconds


def _timeout(text: str) -> float:
    timeout = _number_of_seconds(text)
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
        metavar="NAME=D0,D1",
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


def parser() -> argparse.ArgumentParser:
    """The `dflow` command line: a subparser per command (`tests/support/readme_synopsis.py`
    writes the README's synopsis from it)."""
    parser = _Parser(prog="dflow", description="A multi-level compiler for tensor dataflow graphs.")
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    _run_arguments(commands.add_parser("run", help="run a program's entry function"))
    compile_ = commands.add_parser("compile", help="emit each device's Python module")
    _program_arguments(compile_, "place and partition on these first")
    compile_.add_argument("-o", "--output", required=True, metavar="DIR", help="where to write")
    compile_.add_argument("--parallel", action="store_true", help="parallel=True CPU kernels")
    _target_argument(compile_)
    compile_.add_argument(
        "--time",
        action="store_true",
        help="print the time of every pass and of numba's compile of the CPU kernels",
    )
    compile_.set_defaults(handler=f"{COMMANDS}:compile_program")
    viz = commands.add_parser("viz", help="draw the dataflow graph (.dot, .svg or .png)")
    _program_arguments(viz, "place on these devices first")
    viz.add_argument("-o", "--output", required=True, metavar="GRAPH.svg", help="the picture")
    viz.add_argument(
        "--entry", default="main", metavar="NAME", help="function to draw (default: main)"
    )
    viz.add_argument(
        "--partition", action="store_true", help="draw each device's part (with --devices)"
    )
    viz.set_defaults(handler=f"{COMMANDS}:viz")
    plan = commands.add_parser("plan", help="report each device's arena size")
    _program_arguments(plan, "place and partition on these first")
    plan.add_argument(
        "--entry", default="main", metavar="NAME", help="function to plan (default: main)"
    )
    plan.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    plan.add_argument(
        "--plot",
        metavar="MEMORY.png",
        help="draw each device's arena as planned (.png, .svg, .pdf, .jpg, ...; needs dflow[plot])",
    )
    plan.set_defaults(handler=f"{COMMANDS}:plan")
    _bisect_arguments(
        commands.add_parser("bisect", help="find the first pass that changes the results")
    )
    _reduce_arguments(
        commands.add_parser("reduce", help="shrink a program while a test command holds")
    )
    opt = commands.add_parser("opt", help="run passes and print the IR (xdsl-opt)")
    _opt_arguments(opt)
    opt.set_defaults(handler="dflow.driver.tools.opt:run_opt")
    import_ = commands.add_parser("import", help="import an ONNX model as a df program (.mlir)")
    import_.add_argument("file", metavar="MODEL.onnx", help="the ONNX model")
    import_.add_argument(
        "-o", "--output", metavar="OUT.mlir", help="where to write (default: stdout)"
    )
    _shape_argument(import_)
    import_.set_defaults(handler=f"{COMMANDS}:import_model")
    cache = commands.add_parser("cache", help="the compile cache: its size, or empty it")
    cache.add_argument("action", choices=("info", "clear"), help="info: report; clear: empty it")
    cache.set_defaults(handler=f"{COMMANDS}:cache_command", file="cache")
    return parser


def _target_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--target",
        choices=CPU_TARGETS,
        help="what CPU devices compile for: numba kernels or one LLVM module per device "
        f"(default: ${TARGET_VARIABLE}, else llvm)",
    )


def _opt_arguments(opt: argparse.ArgumentParser) -> None:
    """`dflow opt`'s arguments (`dflow.driver.tools.opt` runs it)."""
    opt.add_argument("file", metavar="FILE", help="the program (- for standard input)")
    opt.add_argument("-p", "--passes", default="", metavar="PIPELINE", help="passes to run")
    opt.add_argument(
        "-t",
        "--target",
        default="mlir",
        metavar="TARGET",
        help=f"output: mlir (default) or {', '.join(TARGETS)}",
    )
    opt.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    opt.add_argument(
        "--split-input-file", action="store_true", help="one program per // ----- chunk"
    )
    opt.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="print each chunk's error in its place on stdout and exit 0",
    )


class _Version(argparse.Action):
    """`--version`: the versions are looked up when asked for, not on every start."""

    def __init__(self, option_strings: Sequence[str], dest: str) -> None:
        super().__init__(
            option_strings, dest, nargs=0, help="show dflow's version and its dependencies'"
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(_version())
        parser.exit()


def _version() -> str:
    """`dflow 0.1.0 (xDSL 0.74.0, numba 0.68.1, NumPy 2.4.6, Python 3.11.7)`."""
    found = [f"{name} {_installed(name)}" for name in ("xdsl", "numba", "numpy")]
    shown = ", ".join(found).replace("xdsl", "xDSL").replace("numpy", "NumPy")
    return f"dflow {_installed('dflow')} ({shown}, Python {sys.version.split()[0]})"


def _installed(distribution: str) -> str:
    from importlib import metadata  # noqa: PLC0415 (only for --version)

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a tolerance: 0 or more")
    return value


def _bisect_arguments(bisect: argparse.ArgumentParser) -> None:
    bisect.add_argument("file", metavar="FILE", help="the program (.mlir, .onnx; - for stdin)")
    bisect.add_argument(
        "-p", "--passes", required=True, metavar="PIPELINE", help="the pipeline to bisect"
    )
    bisect.add_argument(
        "--entry", default="main", metavar="NAME", help="function to run (default: main)"
    )
    bisect.add_argument(
        "--inputs", action="append", metavar="FILE", help="the inputs, as dflow run takes them"
    )
    bisect.add_argument(
        "--seed", type=_seed, default=DEFAULT_SEED, metavar="N", help="seed of random inputs"
    )
    bisect.add_argument("--devices", metavar="LIST", help="compile the end for these devices")
    bisect.add_argument(
        "--rtol", type=_tolerance, default=1e-5, metavar="R", help="relative (default 1e-5)"
    )
    bisect.add_argument(
        "--atol", type=_tolerance, default=1e-8, metavar="A", help="absolute (default 1e-8)"
    )
    bisect.add_argument(
        "--timeout",
        type=_timeout,
        default=DEFAULT_RECV_TIMEOUT_S,
        metavar="S",
        help=f"fail a receive that waits longer (default {DEFAULT_RECV_TIMEOUT_S:g} s)",
    )
    _shape_argument(bisect)
    bisect.set_defaults(handler=f"{COMMANDS}:bisect_program")


def _reduce_arguments(reduce: argparse.ArgumentParser) -> None:
    reduce.add_argument("file", metavar="FILE", help="the program (.mlir, .onnx; - for stdin)")
    reduce.add_argument(
        "--test",
        required=True,
        metavar="COMMAND",
        help="a shell command given a candidate's path (at {}, else at the end): "
        "exit status 0 while the candidate is still interesting",
    )
    reduce.add_argument(
        "-o", "--output", metavar="OUT.mlir", help="where to write (default: FILE.reduced.mlir)"
    )
    reduce.add_argument(
        "--time-limit",
        type=_seconds,
        default=600.0,
        metavar="S",
        help="stop after this long, with the smallest program so far (default 600 s)",
    )
    reduce.add_argument(
        "--test-timeout",
        type=_timeout,
        default=60.0,
        metavar="S",
        help="a test running longer says not interesting (default 60 s)",
    )
    _shape_argument(reduce)
    reduce.set_defaults(handler=f"{COMMANDS}:reduce_program")


def _run_arguments(run: argparse.ArgumentParser) -> None:
    _program_arguments(
        run,
        "place, partition and run on these devices, "
        "e.g. cpu:0,cpu:1 (default: the devices the program's pins name, else cpu:0)",
    )
    run.add_argument(
        "--entry", default="main", metavar="NAME", help="function to run (default: main)"
    )
    run.add_argument(
        "--inputs",
        action="append",
        metavar="FILE",
        help="an .npz archive of the inputs by argument name (x for %%x) or position (arg0); "
        "or, repeated, one .npy file per argument in order (or NAME=FILE.npy)",
    )
    run.add_argument("--output", metavar="Y.npz", help="save the results as out0, out1, ...")
    run.add_argument(
        "--seed", type=_seed, default=DEFAULT_SEED, metavar="N", help="seed of random inputs"
    )
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
    _target_argument(run)
    run.add_argument(
        "--mpi",
        action="store_true",
        help="run under mpirun, each device on an MPI rank: device i of --devices on rank "
        "i mod N, or the rank it names (cpu:0@1); rank 0 reads the inputs and writes the results",
    )
    run.add_argument(
        "--trace",
        metavar="TRACE.json",
        help="write a Chrome trace of one run (after a warm-up): a track per device, a slice "
        "per kernel, library call, transfer and copy (ui.perfetto.dev opens it)",
    )
    run.add_argument(
        "--profile",
        action="store_true",
        help="print, to standard error, the time of each kernel and transfer over traced runs, "
        "with its GFLOP/s and GB/s against this machine's measured roofline",
    )
    run.set_defaults(handler="dflow.driver.frontdoors.cached_run:run")


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


def _handle(args: argparse.Namespace) -> None:
    """Run the command's handler (`dflow run`'s imports the compiler only when the
    cache cannot answer it: `dflow.driver.frontdoors.cached_run`)."""
    module, function = args.handler.split(":")
    getattr(import_module(module), function)(args)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        _handle(args)
    except KeyboardInterrupt:
        print("dflow: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout went away (`dflow import m.onnx | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except LeftToRankZeroError:  # rank 0 fails the run and says why
        return 0
    except QuietFailureError:  # another MPI rank reports why
        return 1
    except Exception as error:
        print(_failure(display_name(args.file), error), file=sys.stderr)
        return 1 if isinstance(error, KNOWN_FAILURES) else 2
    return 0


def console_main() -> int:
    """The `dflow` command: `main`, then the objects it leaves frozen (`gc.freeze`),
    so that the interpreter's exit does not walk them all in its last collections:
    that walk took 50 of the 115 ms between the end of a compiled run and the exit
    of its process (2026-11-29). Atexit handlers still run."""
    code = main()
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(console_main())
