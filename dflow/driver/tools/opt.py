"""`dflow opt`: the `xdsl-opt` of dflow, whose every failure is one line.

`dflow opt FILE|- -p PIPELINE [-t TARGET] [-o OUT] [--split-input-file]
[--verify-diagnostics]` parses and verifies the program through dflow's front door,
runs the passes and prints the module (or emits it with a target such as
`numba`). Errors have MLIR's diagnostic form, `FILE:LINE:COL: error: message`
(`FILE: error: message` where no line applies, as for a pass option).

As with `xdsl-opt`, `--split-input-file` treats each `// -----`-separated chunk
as its own program (lines still counted in the whole file) and separates the
outputs with `// -----`; `--verify-diagnostics` prints each chunk's error in its
place on standard output, exit status 0, for FileCheck to read.
"""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import Callable
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.utils.target import Target

from dflow.driver.compilation.compiler import LOWERING_PIPELINE
from dflow.driver.errors import DflowError, first_line
from dflow.driver.loading.checked import run_passes
from dflow.driver.loading.pipeline import parsed_pipeline
from dflow.driver.loading.program_text import read_source
from dflow.driver.loading.source import make_context, parse_module
from dflow.driver.universe import get_all_targets

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.MULTILINE)
DEFAULT_TARGET = "mlir"


def run_opt(args: argparse.Namespace) -> None:
    """The `dflow opt` command: every chunk through the passes, then printed."""
    pipeline = parsed_pipeline(args.passes)
    emit = _emitter(args.target)
    source = read_source(args.file)
    chunks = split_input(source.text) if args.split_input_file else [(1, source.text)]
    outputs: list[str] = []
    for first_line_of_chunk, text in chunks:
        try:
            module = parse_module(text, source.name, first_line=first_line_of_chunk)
            outputs.append(emit(run_passes(module, pipeline)))
        except DflowError as error:
            if not args.verify_diagnostics:
                raise
            error.location = error.location or source.name
            outputs.append(f"{error}\n")
    _write("// -----\n".join(outputs), args.output)


def split_input(text: str) -> list[tuple[int, str]]:
    """The `// -----`-separated chunks of `text`, each with the line it starts on."""
    chunks: list[tuple[int, str]] = []
    start, line = 0, 1
    for marker in SPLIT_MARKER.finditer(text):
        chunks.append((line, text[start : marker.start()]))
        line += text.count("\n", start, marker.end()) + 1
        start = marker.end() + 1
    chunks.append((line, text[start:]))
    return chunks


def _emitter(name: str) -> Callable[[ModuleOp], str]:
    """A function from a module to the text of target `name`."""
    if name == DEFAULT_TARGET:
        return _print_module
    target = _target(name)

    def emit(module: ModuleOp) -> str:
        stream = io.StringIO()
        try:
            target.emit(make_context(), module, stream)
        except NotImplementedError as error:  # what a target cannot print yet
            raise DflowError(f"-t {target.name}: {first_line(error)}") from None
        except (DiagnosticException, ValueError) as error:
            raise DflowError(
                f"-t {target.name}: {first_line(error)}; it prints lowered modules: "
                f"run -p {LOWERING_PIPELINE} first"
            ) from None
        return stream.getvalue()

    return emit


def _target(spec: str) -> Target:
    targets = get_all_targets()
    try:
        arguments = parse_spec(spec)
    except ArgSpecParseError as error:
        raise DflowError(f"-t {spec}: {first_line(error)}") from None
    if arguments.name not in targets:
        known = ", ".join([DEFAULT_TARGET, *targets])
        raise DflowError(f"unknown target {arguments.name!r} (targets: {known})")
    try:
        return targets[arguments.name]().from_spec(arguments)
    except ValueError as error:
        raise DflowError(f"-t {spec}: {error}") from None


def _print_module(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream).print_op(module)
    return stream.getvalue() + "\n"


def _write(text: str, output: str | None) -> None:
    if output is None:
        print(text, end="")
        return
    try:
        Path(output).write_text(text)
    except OSError as error:
        raise DflowError(f"cannot write {output}: {error.strerror}") from None
