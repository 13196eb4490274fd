"""A program's text, read once from a path or standard input (`-`), and the name
its messages use: the first step of every command, importable without xDSL (a
cached `dflow run` needs only this)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from dflow.driver.errors import DflowError
from dflow.driver.loading.onnx_input import is_model

STDIN = "-"
"""The path that names standard input."""


@dataclass(frozen=True)
class Source:
    """A program's text as it was read, once, and the name its messages use."""

    name: str
    text: str


def display_name(path: str | Path) -> str:
    """How messages name the program at `path`: `<stdin>` for `-`."""
    return "<stdin>" if str(path) == STDIN else str(path)


def read_source(path: str | Path) -> Source:
    """The text at `path`, or standard input for `-`, read exactly once (a pipe or
    `/dev/stdin` cannot be read twice, so nothing after this reads the file)."""
    if str(path) == STDIN:
        return Source(display_name(path), _read_stdin())
    if is_model(path):  # the commands that take models import them before this
        raise DflowError(
            "an ONNX model is not MLIR text: import it first: "
            f"dflow import {path} -o {Path(path).with_suffix('.mlir')}"
        )
    try:
        return Source(str(path), Path(path).read_text())
    except IsADirectoryError:
        raise DflowError(f"cannot read {path}: it is a folder, not a file") from None
    except OSError as error:
        raise DflowError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise DflowError(f"cannot read {path}: it is not UTF-8 text") from None


def _read_stdin() -> str:
    """Standard input as UTF-8 text, read as bytes (decoded by the stream, bytes that
    are not UTF-8 could come through as surrogates and fail later)."""
    stream = getattr(sys.stdin, "buffer", None)
    try:
        return sys.stdin.read() if stream is None else stream.read().decode()
    except UnicodeDecodeError:
        raise DflowError("cannot read standard input: it is not UTF-8 text") from None
