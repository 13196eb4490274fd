"""Reading `.mlir` files: parse with source locations, verify, and turn xDSL's
parse and verification errors into one-line `DflowError`s naming file and line."""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from dflow.errors import DflowError
from dflow.universe import get_all_dialects as get_dflow_dialects


def make_context() -> Context:
    """A context that knows xDSL's dialects and dflow's, loaded on first use."""
    context = Context()
    for name, factory in {**get_all_dialects(), **get_dflow_dialects()}.items():
        context.register_dialect(name, factory)
    return context


class LocatingParser(Parser):
    """A parser that records each op's file, line and column in `op.location`."""

    def parse_operation(self) -> Operation:
        where = self._current_token.span.get_location()
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(
                StringAttr(where.file), IntAttr(where.line), IntAttr(where.col)
            )
        return op


def location_of(op: Operation) -> str | None:
    """`file:line:col` of an op parsed by `LocatingParser`, else None."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def parse_module(text: str, name: str, context: Context | None = None) -> ModuleOp:
    """Parse and verify a module; errors become `DflowError` with a location."""
    parser = LocatingParser(make_context() if context is None else context, text, name)
    try:
        module = parser.parse_module()
    except ParseError as error:
        raise DflowError(error.msg, str(error.span.get_location())) from None
    verify(module)
    return module


def read_module(path: str | Path, context: Context | None = None) -> ModuleOp:
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise DflowError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise DflowError(f"cannot read {path}: it is not UTF-8 text") from None
    return parse_module(text, str(path), context)


def verify(module: ModuleOp) -> None:
    """Verify; on failure name the innermost op that does not verify, and its line."""
    try:
        module.verify()
    except (VerifyException, DiagnosticException) as error:
        culprit = _first_failing_op(module)
        message = str(culprit[1] if culprit else error).strip().splitlines()[0]
        location = location_of(culprit[0]) if culprit else None
        raise DflowError(message, location) from None


def _first_failing_op(module: ModuleOp) -> tuple[Operation, Exception] | None:
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as error:
            return op, error
    return None
