"""The `dflow` command line.

`dflow run FILE.mlir [--entry NAME] [--inputs X.npz] [--output Y.npz] [--interpret]
[--devices cpu:0,cpu:1] [--timeout S] [--parallel]` parses and verifies the program,
compiles it (once: the emitted modules are cached, see `dflow.compiler`) and runs
its entry function; `--interpret` runs the reference interpreter instead. With
`--devices` (or a program already partitioned) each device's part runs in its own
thread. `dflow compile FILE.mlir -o DIR [--devices LIST] [--parallel]` writes each
device's Python module (`DIR/cpu_0.py`, ...). `dflow plan FILE.mlir [--entry NAME] [--devices LIST]
[--json]` partitions (on cpu:0 without `--devices`) and prints each device's arena,
its lower bound and the naive size (`df-plan-buffers`). Bad input is reported as one line,
`FILE:LINE:COL: error: ...`, with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from dflow import feeds
from dflow.compiler import compile_module, compiled_program, write_modules
from dflow.errors import DflowError
from dflow.multidevice import (
    entry_signature,
    is_partitioned,
    place,
    run_partitioned,
    split_for_devices,
)
from dflow.source import read_module
from dflow.viz import to_dot, write_picture
from dialects.df.interpreter import DEFAULT_RECV_TIMEOUT_S, run_function
from lowering.plan_buffers import plan_entry
from runtime import ProgramError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dflow", description="A multi-level compiler for tensor dataflow graphs."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run a program's entry function")
    run.add_argument("file", metavar="FILE.mlir", help="the program")
    run.add_argument("--entry", default="main", help="function to run (default: main)")
    run.add_argument(
        "--inputs", metavar="X.npz", help="inputs by argument name (x for %%x) or position (arg0)"
    )
    run.add_argument("--output", metavar="Y.npz", help="save the results as out0, out1, ...")
    run.add_argument("--seed", type=int, default=feeds.DEFAULT_SEED, help="seed of random inputs")
    run.add_argument(
        "--interpret",
        action="store_true",
        help="run in the reference interpreter instead of the compiled code",
    )
    run.add_argument(
        "--devices",
        metavar="LIST",
        help="place (unless every op is placed), partition and run on these devices, "
        "e.g. cpu:0,cpu:1",
    )
    run.add_argument(
        "--timeout",
        type=float,
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
    compile_ = commands.add_parser("compile", help="emit each device's Python module")
    compile_.add_argument("file", metavar="FILE.mlir", help="the program")
    compile_.add_argument("-o", "--output", required=True, metavar="DIR", help="where to write")
    compile_.add_argument("--devices", metavar="LIST", help="place and partition on these first")
    compile_.add_argument("--parallel", action="store_true", help="parallel=True CPU kernels")
    compile_.set_defaults(handler=_compile)
    viz = commands.add_parser("viz", help="draw the dataflow graph (.dot, .svg or .png)")
    viz.add_argument("file", metavar="FILE.mlir", help="the program")
    viz.add_argument("-o", "--output", required=True, metavar="GRAPH.svg", help="the picture")
    viz.add_argument("--entry", default="main", help="function to draw (default: main)")
    viz.add_argument("--devices", metavar="LIST", help="place on these devices first")
    viz.add_argument(
        "--partition", action="store_true", help="draw each device's part (with --devices)"
    )
    viz.set_defaults(handler=_viz)
    _plan_arguments(commands.add_parser("plan", help="report each device's arena size"))
    return parser


def _plan_arguments(plan: argparse.ArgumentParser) -> None:
    plan.add_argument("file", metavar="FILE.mlir", help="the program")
    plan.add_argument("--entry", default="main", help="function to plan (default: main)")
    plan.add_argument("--devices", metavar="LIST", help="place and partition on these first")
    plan.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    plan.set_defaults(handler=_plan)


PLAN_FIGURES = ("arena_bytes", "lower_bound_bytes", "naive_bytes")


def _plan(args: argparse.Namespace) -> None:
    module = split_for_devices(read_module(args.file), args.devices)
    try:
        plans = plan_entry(module, args.entry)
    except DiagnosticException as error:
        raise DflowError(str(error)) from None
    figures = {
        device: {name: getattr(memory, name) for name in PLAN_FIGURES}
        for device, memory in plans.items()
    }
    print(json.dumps({"devices": figures}) if args.json else _plan_table(figures))


def _plan_table(figures: dict[str, dict[str, int]]) -> str:
    """One row per device: the arena, its lower bound and the naive size, in bytes."""
    width = max(len("device"), *map(len, figures))
    lines = [f"{'device':<{width}}" + "".join(f"  {name}" for name in PLAN_FIGURES)]
    for device, row in figures.items():
        lines.append(f"{device:<{width}}" + "".join(f"  {row[n]:>{len(n)}}" for n in PLAN_FIGURES))
    return "\n".join(lines)


def _viz(args: argparse.Namespace) -> None:
    module = read_module(args.file)
    if args.partition:
        module = split_for_devices(module, args.devices)
    elif args.devices is not None:
        place(module, args.devices)
    write_picture(to_dot(module, args.entry), Path(args.output))


def _compile(args: argparse.Namespace) -> None:
    sources = compile_module(read_module(args.file), args.devices, args.parallel)
    write_modules(sources, Path(args.output))
    for name in sources:
        print(Path(args.output) / name)


def _inputs(args: argparse.Namespace, function: FuncOp) -> list[Any]:
    if args.inputs is None:
        return feeds.random_inputs(function, args.seed)
    return feeds.match_inputs(function, feeds.load_npz(args.inputs), args.inputs)


def _run_compiled(args: argparse.Namespace, module: ModuleOp, inputs: list[Any]) -> list[Any]:
    text = Path(args.file).read_text()
    program = compiled_program(text, module, args.devices, args.parallel)
    try:
        return program.run(args.entry, inputs, args.timeout)
    except ProgramError as error:
        raise DflowError(str(error), args.file) from None


def _run_interpreted(args: argparse.Namespace, module: ModuleOp, inputs: list[Any]) -> list[Any]:
    several = args.devices is not None or is_partitioned(module)
    try:
        if several:
            split = split_for_devices(module, args.devices)
            return run_partitioned(split, args.entry, inputs, args.timeout)
        return list(run_function(module, args.entry, inputs))
    except InterpretationError as error:
        raise DflowError(str(error).splitlines()[0], args.file) from None


def _run(args: argparse.Namespace) -> None:
    module = read_module(args.file)
    if is_partitioned(module):
        function = entry_signature(module, args.entry)
    else:
        function = feeds.find_entry(module, args.entry)
    inputs = _inputs(args, function)
    if args.interpret:
        outputs = _run_interpreted(args, module, inputs)
    else:
        outputs = _run_compiled(args, module, inputs)
    if args.output is not None:
        feeds.save_outputs(args.output, outputs)
    if args.inputs is None or args.output is None:
        print("\n".join(feeds.summarize(outputs)))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.handler(args)
    except DflowError as error:
        if error.location is None:
            error.location = args.file
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
