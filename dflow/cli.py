"""The `dflow` command line.

`dflow run FILE.mlir [--entry NAME] [--inputs X.npz] [--output Y.npz] [--interpret]`
parses and verifies the program and runs its entry function. Bad input is
reported as one line, `FILE:LINE:COL: error: ...`, with exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import InterpretationError

from dflow import feeds
from dflow.errors import DflowError
from dflow.source import read_module
from dialects.df.interpreter import run_function


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
        help="run in the reference interpreter (the only engine until the lowering lands)",
    )
    run.set_defaults(handler=_run)
    return parser


def _run(args: argparse.Namespace) -> None:
    module = read_module(args.file)
    function = feeds.find_entry(module, args.entry)
    if args.inputs is None:
        inputs = feeds.random_inputs(function, args.seed)
    else:
        inputs = feeds.match_inputs(function, feeds.load_npz(args.inputs), args.inputs)
    try:
        outputs = run_function(module, args.entry, inputs)
    except InterpretationError as error:
        raise DflowError(str(error).splitlines()[0], args.file) from None
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
