"""What every printer of the numba target shares: indented Python source, and a
printer of a block's ops as statements, dispatched on the op's class.

The kernel printers (`kernel`, `cpu_kernel`, `gpu_kernel`) and the host printer
(`host`) are siblings under `PythonPrinter`; the module printer (`module`) puts
their output together.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager
from functools import singledispatchmethod as _singledispatchmethod
from typing import Any

from xdsl.ir import Block, Operation, SSAValue

from dflow.backend.numba.names import Names


class Lines:
    """Python source, one statement a line, indented by `indented()`."""

    def __init__(self, depth: int = 0) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    @contextmanager
    def indented(self, levels: int = 1) -> Generator[None, None, None]:
        self.depth += levels
        try:
            yield
        finally:
            self.depth -= levels

    def extend(self, other: Lines) -> None:
        """Append `other`'s lines as they are (indented as it printed them)."""
        self.lines.extend(other.lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class dispatch_on_op(_singledispatchmethod):  # pyright: ignore[reportMissingTypeArgument]  # noqa: N801
    """`functools.singledispatchmethod` without the cost Python 3.11 pays on every
    attribute access (a fresh wrapper through `update_wrapper`, a fifth of the
    emitter's time; 3.12 caches it): the bound method is a plain closure."""

    def __get__(self, obj: Any, cls: type[Any] | None = None) -> Callable[..., Any]:
        dispatch: Callable[[type[Any]], Any] = self.dispatcher.dispatch  # pyright: ignore[reportUnknownMemberType]

        def method(*args: Any, **kwargs: Any) -> Any:
            return dispatch(args[0].__class__).__get__(obj, cls)(*args, **kwargs)

        return method


class PythonPrinter:
    """Prints the ops of a block as Python statements into `out`, naming values by
    `names`. Subclasses register one `print_op` method per op class."""

    def __init__(self, out: Lines, names: Names):
        self.out = out
        self.names = names

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.print_op(op)

    def value(self, value: SSAValue) -> str:
        return self.names[value]

    def assign(self, op: Operation, expression: str, fallback: str = "v") -> None:
        """`<name of op's result> = <expression>`."""
        self.out(f"{self.names.define(op.results[0], fallback)} = {expression}")

    @dispatch_on_op
    def print_op(self, op: Operation) -> None:
        raise ValueError(f"the numba target cannot print {op.name}")
