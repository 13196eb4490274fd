"""Errors of code that builds or traces graphs, named at the user's line.

A traced function runs dflow's code below its own; the line worth naming is the
innermost one of the caller's stack outside the `dflow` package.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import FrameType, TracebackType

PACKAGE = Path(__file__).resolve().parent.parent
"""The `dflow` package: frames inside it are not the user's."""


class TraceError(TypeError):
    """A traced function used something that is not a tensor where a tensor is
    needed: a Python value, NumPy on a traced tensor, a tensor's truth value."""


def user_frame() -> FrameType | None:
    """The innermost frame of the caller's stack that is not dflow's own code."""
    frame = inspect.currentframe()
    while frame is not None and _in_dflow(frame):
        frame = frame.f_back
    return frame


def _in_dflow(frame: FrameType) -> bool:
    return Path(frame.f_code.co_filename).resolve().is_relative_to(PACKAGE)


def user_line() -> str:
    """`file.py:12`, the user's line that led here (or `an unknown line`)."""
    frame = user_frame()
    if frame is None:
        return "an unknown line"
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"


def raised_at(traceback: TracebackType | None) -> str:
    """`file.py:12`, the innermost line of the user's code in `traceback`."""
    line = "an unknown line"
    while traceback is not None:
        if not _in_dflow(traceback.tb_frame):
            line = f"{Path(traceback.tb_frame.f_code.co_filename).name}:{traceback.tb_lineno}"
        traceback = traceback.tb_next
    return line


def trace_error(message: str) -> TraceError:
    """A `TraceError` whose message ends with the user's line."""
    return TraceError(f"{message} (at {user_line()})")
