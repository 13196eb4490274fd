"""ONNX models as programs: every command that reads a program, and
`dflow.compile`, accept a `.onnx` path (or an `onnx.ModelProto`).

The model is imported in memory (`dflow.frontend.onnx`, imported here at first
use: the `onnx` package is an optional dependency), never printed and parsed
again; its cache key is a digest of the model's bytes, its external data and the
shapes given for its inputs. Import errors become one-line `DflowError`s naming
the file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dflow.driver.errors import DflowError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

SUFFIX = ".onnx"

Shapes = Mapping[str, Sequence[int]]


def is_model(program: object) -> bool:
    """Whether `program` is an ONNX model: a path ending in `.onnx`, or an
    `onnx.ModelProto` (which can only exist once `onnx` is imported)."""
    if isinstance(program, str | os.PathLike):
        return Path(program).suffix.lower() == SUFFIX  # pyright: ignore[reportUnknownArgumentType]
    onnx = sys.modules.get("onnx")
    return onnx is not None and isinstance(program, onnx.ModelProto)


def import_onnx(program: str | Path | Any, shapes: Shapes | None = None) -> tuple[str, ModuleOp]:
    """The cache key and the df module of an ONNX model (a path or a `ModelProto`)."""
    if isinstance(program, os.PathLike):
        program = Path(program)  # pyright: ignore[reportUnknownArgumentType]
    where = model_name(program)
    try:
        from dflow.frontend.onnx import OnnxImportError, build_module, read_model  # noqa: PLC0415
    except ImportError as error:
        raise DflowError(
            f"reading an ONNX model needs the onnx package ({error}): pip install 'dflow[onnx]'",
            where,
        ) from None
    shapes = _int_shapes(shapes)
    try:
        model = read_model(program)
        module = build_module(model, shapes)
    except OnnxImportError as error:
        raise DflowError(error.message, where) from None
    return onnx_key(model.digest, shapes), module


def model_key(program: str | Path | Any, shapes: Shapes | None = None) -> str | None:
    """The cache key `import_onnx` gives a model, without importing it (the model read
    and digested only); None where it cannot be read (`import_onnx` says why)."""
    try:
        from dflow.frontend.onnx import OnnxImportError, read_model  # noqa: PLC0415
    except ImportError:
        return None
    source = Path(program) if isinstance(program, os.PathLike) else program  # pyright: ignore[reportUnknownArgumentType]
    try:
        return onnx_key(read_model(source).digest, _int_shapes(shapes))
    except OnnxImportError:
        return None


def _int_shapes(shapes: Shapes | None) -> dict[str, list[int]]:
    return {name: [int(d) for d in dims] for name, dims in (shapes or {}).items()}


def onnx_key(digest: str, shapes: Shapes) -> str:
    """The cache key of a model of `digest` (`read_model`'s: of its bytes, and of its
    external data if any) imported with `shapes`."""
    return f"onnx {digest} {json.dumps(dict(shapes), sort_keys=True)}"


def model_name(program: str | Path | Any) -> str:
    """How messages name a model: its path, or `<onnx model>` for a `ModelProto`."""
    return str(program) if isinstance(program, str | Path) else "<onnx model>"


def parse_shape(text: str) -> tuple[str, list[int]]:
    """`x=1,3,224,224` as `("x", [1, 3, 224, 224])` (`x=` is a scalar); ValueError
    with a message for anything else."""
    name, equals, dims = text.rpartition("=")
    if not equals or not name:
        raise ValueError(f"{text!r} is not NAME=D0,D1,... (e.g. input=1,3,224,224)")
    try:
        shape = [int(d) for d in dims.split(",")] if dims.strip() else []
    except ValueError:
        raise ValueError(f"{text!r}: the dimensions must be integers") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{text!r}: the dimensions must not be negative")
    return name, shape


def symbolic_inputs(program: str | Path | Any) -> list[str]:
    """The names of a model's inputs (initializers aside, in order) when any of them
    has a symbolic dimension, else an empty list: such a model is compiled per shape
    of its feeds."""
    try:
        from dflow.frontend.onnx import OnnxImportError, read_model  # noqa: PLC0415
    except ImportError:
        return []  # import_onnx says what is missing
    try:
        source = Path(program) if isinstance(program, os.PathLike) else program  # pyright: ignore[reportUnknownArgumentType]
        graph = read_model(source).graph
    except OnnxImportError:
        return []  # import_onnx says what is wrong
    initialized = {tensor.name for tensor in graph.initializer}
    inputs = [value for value in graph.input if value.name not in initialized]
    symbolic = any(
        not dim.HasField("dim_value")
        for value in inputs
        if value.type.tensor_type.HasField("shape")
        for dim in value.type.tensor_type.shape.dim
    )
    return [value.name for value in inputs] if symbolic else []
