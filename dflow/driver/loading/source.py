"""The front door for programs: the text read once (`dflow.driver.loading.program_text`),
parsed with source locations and verified, every failure turned into a one-line
`DflowError` naming file and line.

Verification is xDSL's verifier plus what it leaves out and the compiler relies
on (`dflow.driver.loading.wellformed`): every value defined before its uses in a block, and no
recursive calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ComplexType,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import AttributeInvT, Operation, Region, SSAValue
from xdsl.irdl import base
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.parser.generic_parser import ParserState
from xdsl.traits import IsolatedFromAbove
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind

from dflow.driver.errors import DflowError, first_line
from dflow.driver.loading.program_text import read_source
from dflow.driver.loading.wellformed import check_wellformed
from dflow.driver.universe import get_all_dialects as get_dflow_dialects


def make_context() -> Context:
    """A context that knows xDSL's dialects and dflow's, loaded on first use."""
    context = Context()
    for name, factory in {**get_all_dialects(), **get_dflow_dialects()}.items():
        context.register_dialect(name, factory)
    return context


class _PlacedParseError(ParseError):
    """A parse error already placed at the right op: outer ops leave it as it is."""


class _LinearLexer(MLIRLexer):
    """xDSL's lexer with its string-literal pattern made possessive: xDSL's
    `"(?:[^"...]+|...)*"` backtracks exponentially over a string left open
    (`"cpu:0 attributes {...` took minutes at 50 characters), and matching one
    character per step instead took 1.7 s per 10 MB of a large constant's hex.
    Possessive quantifiers (Python 3.11) never backtrack: linear, and 100 times
    faster on long strings."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')

    def _lex_prefixed_ident(self, start_pos: Position) -> MLIRToken:
        """`#name`, `%name`, `^name`, `!name`; a prefix with no name after it is
        placed at the prefix (xDSL's own message leaves `{first_char}` unfilled)."""
        if self._suffix_id.match(self.input.content, self.pos) is None:
            prefix = self.input.content[start_pos]
            message = (
                "unexpected character '#' (comments start with //)"
                if prefix == "#"
                else f"expected a name after '{prefix}'"
            )
            raise _PlacedParseError(Span(start_pos, start_pos + 1, self.input), message)
        return super()._lex_prefixed_ident(start_pos)


_DENSE_LITERAL = base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])
"""What xDSL's parser requires of a dense constant's type."""


@dataclass(eq=False)
class _OpenOp:
    """An op being parsed: where it starts, how many of its regions are open, and
    where its first region starts (None before it)."""

    start: Span[str]
    regions: int = 0
    body: int | None = None


class LocatingParser(Parser):
    """A parser that records each op's file, line and column in `op.location`, and
    places its errors on the op being parsed where xDSL points past it. It keeps
    the ops still open and each undefined name's first use, to say what is wrong
    where xDSL reports at the end of the file."""

    def __init__(self, ctx: Context, text: str, name: str) -> None:
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(_LinearLexer(Input(text, name)))
        self._open: list[_OpenOp] = []
        self._first_uses: dict[str, Span[str]] = {}

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """The module; an error at the end of the file said where it belongs: a
        value never defined at its first use, a file cut short by what it leaves
        open."""
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as error:
            raise self._explained(error) from None

    def _explained(self, error: ParseError) -> ParseError:
        undefined = [self._first_uses[name] for name in self.forward_ssa_references]
        if undefined and error.msg.startswith("values used but not defined"):
            use = min(undefined, key=lambda span: span.start)
            return _PlacedParseError(use, f"{use.text} is used but never defined")
        if self._current_token.kind is MLIRTokenKind.EOF and self._open:
            return _PlacedParseError(self._current_token.span, _cut_short(self._open))
        return error

    def resolve_operand(
        self, operand: UnresolvedOperand, type: AttributeInvT
    ) -> SSAValue[AttributeInvT]:
        """The value `operand` names; the first use of a name not defined yet is
        kept, to report it there if it is never defined."""
        name = operand.operand_name
        if name not in self.ssa_values and name not in self.forward_ssa_references:
            self._first_uses[name] = operand.span
        return super().resolve_operand(operand, type)

    def parse_optional_region(
        self, arguments: Iterable[Parser.Argument] | None = None
    ) -> Region | None:
        """A region of the innermost op being parsed, counted open while it is read."""
        owner = self._open[-1] if self._open else None
        if owner is not None:
            owner.regions += 1
            if owner.body is None:
                owner.body = self._current_token.span.start
        region = super().parse_optional_region(arguments)
        if owner is not None:
            owner.regions -= 1
        return region

    def _parse_dense_literal_type(
        self,
    ) -> RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType]:
        """A dense constant's type, checked against a constraint built once: xDSL
        builds it again for every constant (a quarter of the parse time of a program
        of 200 ops and 40 constants)."""
        type = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
        if not _DENSE_LITERAL.verifies(type):
            self.raise_error(
                "Expected memref, vector or tensor type of integer, index, float, or complex type"
            )
        if any(dim == DYNAMIC_INDEX for dim in type.get_shape()):
            self.raise_error("Dense literal attribute should have a static shape.")
        return type

    def parse_operation(self) -> Operation:
        opened = _OpenOp(self._current_token.span)
        self._open.append(opened)
        op = self._parse_located(opened)
        del self._open[self._open.index(opened) :]  # and any left by a failure undone
        if opened.body is not None and op.has_trait(IsolatedFromAbove):
            self._check_defined_within(opened)
        return op

    def _parse_located(self, opened: _OpenOp) -> Operation:
        where = opened.start
        try:
            op = super().parse_operation()
        except _PlacedParseError:
            raise
        except ParseError as error:
            if opened.regions:  # found between the ops of its body: where xDSL says
                raise _PlacedParseError(error.span, error.msg) from None
            raise _placed(error, where) from None
        except (VerifyException, ValueError, OverflowError) as error:
            # an attribute that cannot be built (of the wrong kind, a number out of its
            # type's range), found while parsing
            raise _PlacedParseError(where, first_line(error)) from None
        except MemoryError:
            raise _PlacedParseError(where, "this op's constant does not fit in memory") from None
        if isinstance(op.location, UnknownLoc):
            start = where.get_location()
            op.location = FileLineColLoc(
                StringAttr(start.file), IntAttr(start.line), IntAttr(start.col)
            )
        return op

    def _check_defined_within(self, opened: _OpenOp) -> None:
        """No name used in the body of an op isolated from above (a function) is left
        undefined at its end: no later definition, elsewhere, can be the one meant
        (xDSL would take one in a later function, its verifier then failing)."""
        body = opened.body
        inside = [
            use
            for name in self.forward_ssa_references
            if body is not None and (use := self._first_uses[name]).start >= body
        ]
        if inside:
            use = min(inside, key=lambda span: span.start)
            raise _PlacedParseError(
                use, f"{use.text} is used but never defined in {_title(opened)}"
            )

    def _parse_alias_def(self) -> None:
        """`#name = attribute` or `!name = type` at the top level; a name not followed
        by `=` is reported at the name (xDSL points at the next token, perhaps on the
        next line), with a hint where it reads as a comment."""
        name = self._current_token
        try:
            super()._parse_alias_def()
        except ParseError as error:
            if "after attribute alias name" not in error.msg:
                raise
            hint = " (comments start with //)" if name.text.startswith("#") else ""
            raise _PlacedParseError(
                name.span, f"expected '=' after {name.text}, to define an alias{hint}"
            ) from None


_OP_NAME = re.compile(r'(?:%[\w$.:#-]+\s*,?\s*)*=?\s*"?([\w$.]+)"?')
"""An op's results, if any, then its name (custom or generic form)."""
_SYMBOL = re.compile(r"(?:\s+[a-z_]+)*?\s+(@[\w$.-]+)")
"""The symbol right after an op's name: `func.func private @f`."""


def _title(op: _OpenOp) -> str:
    """How a message names an op being parsed: its symbol (`@main`), else its name."""
    text = op.start.input.content
    name = _OP_NAME.match(text, op.start.start)
    if name is None:
        return "an op"
    symbol = _SYMBOL.match(text, name.end())
    return symbol.group(1) if symbol else name.group(1)


def _cut_short(open_ops: list[_OpenOp]) -> str:
    """What a file that ends too early leaves open: the body of an op (how many
    `}` are missing), or an op in the middle of its text."""
    innermost = open_ops[-1]
    if not innermost.regions:
        begun = innermost.start.get_location()
        return f"the file ends inside {_title(innermost)} (begun at {begun.line}:{begun.col})"
    missing = sum(op.regions for op in open_ops)
    braces = "a '}' is missing" if missing == 1 else f"{missing} '}}' are missing"
    return f"the file ends inside the body of {_title(innermost)} ({braces})"


def _placed(error: ParseError, op_start: Span[str]) -> _PlacedParseError:
    """`error`, moved to the start of the op it belongs to when xDSL reports it at the
    first token of a later line (it read ahead: a dense literal of the wrong size is
    found only once the next line is reached)."""
    span = error.span
    text = op_start.input.content
    line_start = text.rfind("\n", 0, span.start) + 1
    reads_ahead = text[line_start : span.start].strip() == "" and line_start > op_start.start
    return _PlacedParseError(op_start if reads_ahead else span, error.msg)


def location_of(op: Operation) -> str | None:
    """`file:line:col` of an op parsed by `LocatingParser`, else None."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def parse_module(
    text: str, name: str, context: Context | None = None, *, first_line: int = 1
) -> ModuleOp:
    """Parse and verify a module; errors become `DflowError` with a location.
    `first_line` is the line of the file where `text` starts (a split of a file)."""
    if not text.strip():
        raise DflowError("the program is empty: expected func.func or builtin.module", name)
    padded = "\n" * (first_line - 1) + text
    try:  # the parser reads its first token as it is made
        parser = LocatingParser(make_context() if context is None else context, padded, name)
        module = parser.parse_module()
    except ParseError as error:
        if Path(name).suffix == ".py":
            raise DflowError(
                "not MLIR text (a Python file): dflow takes a .mlir program or an .onnx model",
                name,
            ) from None
        raise _parse_failure(error, padded) from None
    _check_resolved(module)
    verify(module)
    return module


def _check_resolved(module: ModuleOp) -> None:
    """xDSL's parser can leave a use unresolved, with no error, when a region of the
    using op defines the name (`df.fused(%1 = %1)` where only the region has `%1`);
    its verifier then fails with a ValueError."""
    for op in module.walk():
        for index, operand in enumerate(op.operands):
            if isinstance(operand, ForwardDeclaredValue):
                raise DflowError(
                    f"operand {index} of {op.name} is defined nowhere before this op "
                    "(only inside its own region?)",
                    location_of(op),
                )


_USED_WITH_TYPE = re.compile(
    r"used with type (.+), but has been previously used or defined with type (.+)$"
)


def _parse_failure(error: ParseError, text: str) -> DflowError:
    """xDSL's parse error as a `DflowError`, made plain where it misleads: a value
    used with another type than its definition gives it is reported by xDSL at the
    use only; report it at the definition (in the same function), naming both types
    and both places, since either may be the mistake."""
    location = str(error.span.get_location())
    if error.msg == "Could not parse entire input!":
        return DflowError("expected an operation (such as func.func) here", location)
    if error.msg.strip() == "in block definition":  # xDSL's message lacks its start
        if error.span.text.startswith("#"):  # `#note` where an op should be
            return DflowError("unexpected character '#' (comments start with //)", location)
        return DflowError("expected an operation, or '}' to end the region, here", location)
    used = _USED_WITH_TYPE.search(error.msg)
    name = error.span.text
    definition = _definition_before(name, text, error.span.start)
    if used is None or definition is None:
        return DflowError(_printable(error.msg), location)
    line = text.count("\n", 0, definition) + 1
    column = definition - text.rfind("\n", 0, definition)
    return DflowError(
        f"{name} is defined here as {used.group(2)} but used as {used.group(1)} at "
        f"{location}: one of the two types is wrong",
        f"{error.span.input.name}:{line}:{column}",
    )


def _printable(message: str) -> str:
    """`message` with control characters escaped (`Unexpected character: \\x00`)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def _definition_before(name: str, text: str, use: int) -> int | None:
    """Where `name` is defined before position `use` within its function: as one of
    an op's results (`%a, %y = ...`) or as an argument of the function; else None."""
    start = text.rfind("func.func", 0, use)
    start = max(start, 0)
    escaped = re.escape(name)
    result = rf"(?m)^\s*(?:%[\w$.-]+(?::\d+)?\s*,\s*)*({escaped})(?::\d+)?\s*(?:,[^=\n]*)?="
    found = [m.start(1) for m in re.finditer(result, text[start:use])]
    if found:
        return start + found[-1]
    argument = re.search(rf"({escaped})\s*:", text[start:use])
    return start + argument.start(1) if argument else None


def read_module(path: str | Path, context: Context | None = None) -> ModuleOp:
    """Read (once) and parse the program at `path` (`-`: standard input)."""
    source = read_source(path)
    return parse_module(source.text, source.name, context)


def verify(module: ModuleOp) -> None:
    """Verify; on failure name the innermost op that does not verify, and its line.
    Then the checks xDSL does not make (`dflow.driver.loading.wellformed`)."""
    try:
        module.verify()
    except (VerifyException, DiagnosticException) as error:
        culprit = _first_failing_op(module)
        message = str(culprit[1] if culprit else error).strip().splitlines()[0]
        location = location_of(culprit[0]) if culprit else None
        raise DflowError(message, location) from None
    failure = check_wellformed(module)
    if failure is not None:
        op, message = failure
        raise DflowError(message, location_of(op))


def _first_failing_op(module: ModuleOp) -> tuple[Operation, Exception] | None:
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as error:
            return op, error
    return None
