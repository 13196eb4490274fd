"""Reading an ONNX model as untrusted input.

A model file is parsed as protobuf without `onnx.load`'s side effects (it would
follow external-data paths on its own); what the importer relies on is checked
before anything is built or allocated:

- the bytes parse as a `ModelProto` that has a graph (a truncated or foreign file
  is one line, not a traceback);
- the default ONNX domain is imported at an opset dflow knows (11 to the newest
  the installed `onnx` knows), and no node uses another domain;
- every value a node reads is defined, once, by an input, an initializer or an
  earlier node, and the nodes have an order (a cycle is named);
- a tensor's declared dimensions are non-negative, its size is under
  `MAX_TENSOR_BYTES`, and its data has exactly that many bytes; external data is
  read only from files inside the model's folder, within their size.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto

from dflow.frontend.onnx.errors import OnnxImportError

MIN_OPSET = 11
"""The oldest opset of the default domain dflow imports (an older model imports
when each of its ops is defined there as in this one)."""

MAX_TENSOR_BYTES = 4 * 2**30
"""The largest tensor a model may declare (an initializer, a constant, an input)."""

DEFAULT_DOMAINS = ("", "ai.onnx")

DTYPES: dict[int, np.dtype[Any]] = {
    TensorProto.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    TensorProto.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    TensorProto.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    TensorProto.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    TensorProto.FLOAT4E2M1: np.dtype(ml_dtypes.float4_e2m1fn),
    TensorProto.FLOAT16: np.dtype(np.float16),
    TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    TensorProto.FLOAT: np.dtype(np.float32),
    TensorProto.DOUBLE: np.dtype(np.float64),
    TensorProto.INT2: np.dtype(ml_dtypes.int2),
    TensorProto.INT4: np.dtype(ml_dtypes.int4),
    TensorProto.INT8: np.dtype(np.int8),
    TensorProto.INT16: np.dtype(np.int16),
    TensorProto.INT32: np.dtype(np.int32),
    TensorProto.INT64: np.dtype(np.int64),
    TensorProto.UINT2: np.dtype(ml_dtypes.uint2),
    TensorProto.UINT4: np.dtype(ml_dtypes.uint4),
    TensorProto.UINT8: np.dtype(np.uint8),
    TensorProto.UINT16: np.dtype(np.uint16),
    TensorProto.UINT32: np.dtype(np.uint32),
    TensorProto.UINT64: np.dtype(np.uint64),
    TensorProto.BOOL: np.dtype(np.bool_),
}
"""The ONNX element types dflow has: all but FLOAT8E8M0, the complex types and STRING."""

DTYPE_NAMES = ", ".join(TensorProto.DataType.Name(t) for t in DTYPES)

_BITS = frozenset(
    {
        TensorProto.FLOAT16,
        TensorProto.BFLOAT16,
        TensorProto.FLOAT8E4M3FN,
        TensorProto.FLOAT8E4M3FNUZ,
        TensorProto.FLOAT8E5M2,
        TensorProto.FLOAT8E5M2FNUZ,
    }
)
"""Types whose `int32_data` holds each element's bits, not its value."""
_PACKED: dict[int, int] = {
    TensorProto.INT4: 4,
    TensorProto.UINT4: 4,
    TensorProto.FLOAT4E2M1: 4,
    TensorProto.INT2: 2,
    TensorProto.UINT2: 2,
}
"""Types ONNX packs several to a byte (`raw_data` and `int32_data` alike), by their
bits: the first element in the lowest bits."""

_TYPED_FIELDS: dict[int, str] = {
    TensorProto.FLOAT: "float_data",
    TensorProto.DOUBLE: "double_data",
    TensorProto.INT64: "int64_data",
    TensorProto.UINT32: "uint64_data",
    TensorProto.UINT64: "uint64_data",
    **dict.fromkeys(
        (*_BITS, *_PACKED, TensorProto.INT8, TensorProto.INT16, TensorProto.INT32,
         TensorProto.UINT8, TensorProto.UINT16, TensorProto.BOOL),
        "int32_data",
    ),
}  # fmt: skip


def dtype_name(data_type: int) -> str:
    """`FLOAT16` for 10; the number itself when ONNX has no such type."""
    try:
        return TensorProto.DataType.Name(data_type)
    except ValueError:
        return str(data_type)


def numpy_dtype(data_type: int, what: str) -> np.dtype[Any]:
    """The NumPy dtype of an ONNX element type, or an error naming `what` has it."""
    dtype = DTYPES.get(data_type)
    if dtype is None:
        raise OnnxImportError(
            f"{what} has element type {dtype_name(data_type)}, which dflow has no type for "
            f"(it has {DTYPE_NAMES})"
        )
    return dtype


@dataclass(frozen=True)
class Model:
    """A parsed and checked model: its protobuf, the folder its external data may
    come from (None for a model given as bytes or a `ModelProto`), its default-domain
    opset, and a digest of its bytes and external data (the compile cache's key)."""

    proto: ModelProto
    folder: Path | None
    opset: int
    digest: str

    @property
    def graph(self) -> GraphProto:
        return self.proto.graph


def read_model(source: str | os.PathLike[str] | bytes | ModelProto) -> Model:
    """The checked model of a path, serialized bytes or a `ModelProto`."""
    if isinstance(source, ModelProto):
        return _checked(source, None, source.SerializeToString(deterministic=True))
    if isinstance(source, bytes):
        return _checked(_parse(source), None, source)
    path = Path(source)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise OnnxImportError(f"cannot read {path}: it is a folder, not a file") from None
    except OSError as error:
        raise OnnxImportError(f"cannot read {path}: {error.strerror}") from None
    return _checked(_parse(data), path.resolve().parent, data)


def _parse(data: bytes) -> ModelProto:
    if not data:
        raise OnnxImportError("the file is empty, not an ONNX model")
    proto = ModelProto()
    try:
        proto.ParseFromString(data)
    except DecodeError as error:
        raise OnnxImportError(
            f"not an ONNX model: the protobuf does not parse ({error}); a truncated or "
            "damaged file?"
        ) from None
    if not proto.HasField("graph"):
        raise OnnxImportError("not an ONNX model: it has no graph")
    return proto


def _checked(proto: ModelProto, folder: Path | None, data: bytes) -> Model:
    _check_names(proto.graph)
    opset = _default_opset(proto)
    graph = proto.graph
    if not graph.output:
        raise OnnxImportError("the model's graph has no outputs")
    for node in graph.node:
        if node.domain not in DEFAULT_DOMAINS:
            raise OnnxImportError(
                f"node {node_name(node)} ({node.op_type}) is in domain {node.domain!r}, "
                "which dflow does not import (it imports the default ONNX domain)"
            )
    digest = hashlib.sha256(data)
    for tensor in external_tensors(graph):
        location = external_location(tensor, folder)
        digest.update(str(location).encode())
        digest.update(read_external(tensor, folder))
    return Model(proto, folder, opset, digest.hexdigest())


def _check_names(graph: GraphProto) -> None:
    """Every name is text: protobuf hands a string field that is not UTF-8 over as
    bytes (a damaged file), which no message or SSA name could show."""
    values = [*graph.input, *graph.output, *graph.value_info, *graph.initializer]
    names: list[str | bytes] = [value.name for value in values]
    for node in graph.node:
        names += [node.name, node.op_type, node.domain, *node.input, *node.output]
        names += [attribute.name for attribute in node.attribute]
    if any(not isinstance(name, str) for name in names):
        raise OnnxImportError("not an ONNX model: a name in its graph is not UTF-8 text")


def _default_opset(proto: ModelProto) -> int:
    versions = [entry.version for entry in proto.opset_import if entry.domain in DEFAULT_DOMAINS]
    if not versions:
        raise OnnxImportError("the model imports no opset of the default ONNX domain")
    opset, newest = versions[0], onnx.defs.onnx_opset_version()
    if opset > newest:
        raise OnnxImportError(
            f"the model uses opset {opset} of the default ONNX domain, newer than the installed "
            f"onnx knows ({newest})"
        )
    if opset < MIN_OPSET:
        _check_unchanged_since(proto.graph, opset)
    return opset


def _check_unchanged_since(graph: GraphProto, opset: int) -> None:
    """A model of an opset older than `MIN_OPSET` imports when each of its ops is
    defined there as in `MIN_OPSET` (the same version of the op's schema)."""
    for node in graph.node:
        try:
            old = onnx.defs.get_schema(node.op_type, opset).since_version
            new = onnx.defs.get_schema(node.op_type, MIN_OPSET).since_version
        except onnx.defs.SchemaError:
            continue  # an op ONNX does not know: refused by name when it is converted
        if old != new:
            raise OnnxImportError(
                f"the model uses opset {opset} of the default ONNX domain, where node "
                f"{node_name(node)} ({node.op_type}) is defined as before opset {new}; dflow "
                f"imports opsets {MIN_OPSET} on (onnx.version_converter converts a model "
                "between opsets)"
            )


def node_name(node: NodeProto) -> str:
    """How messages name a node: its name, or its first output when it has none."""
    if node.name:
        return repr(node.name)
    outputs = [output for output in node.output if output]
    return f"of output {outputs[0]!r}" if outputs else "(unnamed)"


# ----------------------------------------------------------------------------- the graph


def initializer_names(graph: GraphProto) -> set[str]:
    return {tensor.name for tensor in graph.initializer}


def ordered_nodes(graph: GraphProto) -> list[NodeProto]:
    """The graph's nodes in an order where each comes after what it reads (the file's
    order when it is one, as the ONNX format asks), once every value is checked to be
    defined exactly once."""
    producer = _producers(graph)
    defined = {value.name for value in graph.input} | initializer_names(graph) | {""}
    for node in graph.node:
        for name in node.input:
            if name not in defined and name not in producer:
                raise OnnxImportError(
                    f"node {node_name(node)} ({node.op_type}) reads {name!r}, which no "
                    "input, initializer or node defines"
                )
    if _sorted(graph, defined):
        return list(graph.node)
    return _topological(graph, defined)


def _producers(graph: GraphProto) -> dict[str, NodeProto]:
    """Which node defines each value; an error for a value defined twice."""
    defined = {value.name: "an input" for value in graph.input}
    defined.update({name: "an initializer" for name in initializer_names(graph)})
    producer: dict[str, NodeProto] = {}
    for node in graph.node:
        for name in node.output:
            if not name:
                continue
            if name in producer or name in defined:
                first = f"node {node_name(producer[name])}" if name in producer else defined[name]
                raise OnnxImportError(
                    f"value {name!r} is defined twice: by {first} and by node "
                    f"{node_name(node)} ({node.op_type})"
                )
            producer[name] = node
    for output in graph.output:
        if output.name not in producer and output.name not in defined:
            raise OnnxImportError(f"graph output {output.name!r} is defined by no node")
    return producer


def _sorted(graph: GraphProto, defined: set[str]) -> bool:
    """Whether the file's order defines every value before its use."""
    seen = set(defined)
    for node in graph.node:
        if any(name not in seen for name in node.input):
            return False
        seen.update(node.output)
    return True


def _topological(graph: GraphProto, defined: set[str]) -> list[NodeProto]:
    """The nodes in an order of Kahn's algorithm, or an error naming a node of a cycle."""
    waiting: dict[int, int] = {}
    readers: dict[str, list[int]] = {}
    for index, node in enumerate(graph.node):
        needed = {name for name in node.input if name not in defined}
        for name in needed:
            readers.setdefault(name, []).append(index)
        waiting[index] = len(needed)
    ready = [index for index, count in waiting.items() if count == 0]
    order: list[NodeProto] = []
    while ready:
        node = graph.node[ready.pop()]
        order.append(node)
        for name in node.output:
            for reader in readers.get(name, []):
                waiting[reader] -= 1
                if waiting[reader] == 0:
                    ready.append(reader)
    if len(order) < len(graph.node):
        cycle = " → ".join(f"node {node_name(graph.node[i])}" for i in _cycle(graph, waiting))
        raise OnnxImportError(f"the graph has a cycle: {cycle}")
    return order


def _cycle(graph: GraphProto, waiting: dict[int, int]) -> list[int]:
    """The nodes of one cycle among those Kahn's algorithm left waiting, first node
    repeated last: from a waiting node, step to the waiting producer of one of its
    inputs until a node comes round again."""
    producer = {name: i for i, node in enumerate(graph.node) for name in node.output if name}
    index = next(i for i, count in waiting.items() if count > 0)
    path: list[int] = []
    while index not in path:
        path.append(index)
        index = next(
            producer[name]
            for name in graph.node[index].input
            if name in producer and waiting[producer[name]] > 0
        )
    return [*path[path.index(index) :], index][::-1]


# ----------------------------------------------------------------------------- tensors


def external_tensors(graph: GraphProto) -> Iterator[TensorProto]:
    """The initializers and constant-node tensors whose data lies in another file."""
    for tensor in _all_tensors(graph):
        if tensor.data_location == TensorProto.EXTERNAL:
            yield tensor


def _all_tensors(graph: GraphProto) -> Iterator[TensorProto]:
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == AttributeProto.TENSOR:
                yield attribute.t


def _external_fields(tensor: TensorProto) -> dict[str, str]:
    return {entry.key: entry.value for entry in tensor.external_data}


def external_location(tensor: TensorProto, folder: Path | None) -> Path:
    """The file holding `tensor`'s data: a relative path that stays inside the
    model's folder (symbolic links resolved), or an error."""
    what = f"tensor {tensor.name!r}"
    if folder is None:
        raise OnnxImportError(
            f"{what} keeps its data in an external file; import the model from its path "
            "so the file can be found beside it"
        )
    location = _external_fields(tensor).get("location", "")
    if not location or Path(location).is_absolute() or "\0" in location:
        raise OnnxImportError(
            f"{what} names external data {location!r}: it must be a path relative to the "
            "model's folder"
        )
    path = (folder / location).resolve()
    if not path.is_relative_to(folder):
        raise OnnxImportError(
            f"{what} names external data {location!r}, which lies outside the model's "
            "folder: refused"
        )
    return path


def read_external(tensor: TensorProto, folder: Path | None) -> bytes:
    """The bytes of `tensor`'s external data, checked against the file's size and the
    tensor's declared size before they are read."""
    path = external_location(tensor, folder)
    fields = _external_fields(tensor)
    what = f"tensor {tensor.name!r}"
    try:
        offset = int(fields.get("offset", "0"))
        length = int(fields["length"]) if "length" in fields else None
    except ValueError:
        raise OnnxImportError(
            f"{what} has an external-data offset or length that is no number"
        ) from None
    try:
        size = path.stat().st_size
    except OSError as error:
        raise OnnxImportError(
            f"{what}: cannot read external data {path.name}: {error.strerror}"
        ) from None
    expected = _declared_bytes(tensor)
    length = expected if length is None else length
    if offset < 0 or length != expected or offset + length > size:
        raise OnnxImportError(
            f"{what} declares {expected} bytes at offset {offset} of {path.name}, whose "
            f"external data has {length} bytes and the file {size}"
        )
    with path.open("rb") as file:
        file.seek(offset)
        return file.read(length)


def _declared_bytes(tensor: TensorProto) -> int:
    dtype = numpy_dtype(tensor.data_type, f"tensor {tensor.name!r}")
    return checked_count(tensor.dims, f"tensor {tensor.name!r}", dtype.itemsize) * dtype.itemsize


def checked_count(dims: Sequence[int], what: str, itemsize: int) -> int:
    """The element count of `dims`, after checking none is negative and the size is
    under `MAX_TENSOR_BYTES`."""
    if any(dim < 0 for dim in dims):
        raise OnnxImportError(f"{what} has a negative dimension: {list(dims)}")
    count = math.prod(dims)
    if count * itemsize > MAX_TENSOR_BYTES:
        raise OnnxImportError(
            f"{what} has shape {list(dims)}: {count * itemsize / 2**30:.1f} GiB, over the "
            f"{MAX_TENSOR_BYTES / 2**30:.0f} GiB dflow imports"
        )
    return count


def tensor_array(tensor: TensorProto, folder: Path | None, what: str) -> np.ndarray[Any, Any]:
    """The elements of `tensor` as a new array, its size checked before it is made."""
    return _array(tensor, folder, what, numpy_dtype(tensor.data_type, what))


def _array(
    tensor: TensorProto, folder: Path | None, what: str, dtype: np.dtype[Any]
) -> np.ndarray[Any, Any]:
    count = checked_count(tensor.dims, what, dtype.itemsize)
    shape = tuple(tensor.dims)
    if tensor.data_location == TensorProto.EXTERNAL:
        raw = read_external(tensor, folder)
    elif tensor.raw_data or count == 0:
        raw = tensor.raw_data
    else:
        values: Sequence[Any] = getattr(tensor, _TYPED_FIELDS[tensor.data_type])
        if tensor.data_type in _PACKED:
            return _unpacked(np.asarray(values).astype(np.uint8), tensor, what, dtype)
        if len(values) != count:
            raise OnnxImportError(
                f"{what} has shape {list(shape)} ({count} elements) but holds {len(values)}"
            )
        if tensor.data_type in _BITS:
            bits = np.uint8 if dtype.itemsize == 1 else np.uint16
            return np.asarray(values).astype(bits).view(dtype).reshape(shape)
        return np.asarray(values).astype(dtype).reshape(shape)
    if tensor.data_type in _PACKED:
        return _unpacked(np.frombuffer(raw, np.uint8), tensor, what, dtype)
    if len(raw) != count * dtype.itemsize:
        raise OnnxImportError(
            f"{what} has shape {list(shape)} ({count * dtype.itemsize} bytes) but holds "
            f"{len(raw)} bytes"
        )
    little = dtype.newbyteorder("<")
    return np.frombuffer(raw, dtype=little).astype(dtype).reshape(shape)


def _unpacked(
    data: np.ndarray[Any, Any], tensor: TensorProto, what: str, dtype: np.dtype[Any]
) -> np.ndarray[Any, Any]:
    """The elements packed into the bytes `data`, several to a byte, lowest bits first
    (`ml_dtypes` reads the low bits of each byte)."""
    bits = _PACKED[tensor.data_type]
    count, per_byte = math.prod(tensor.dims), 8 // bits
    if len(data) != -(-count // per_byte):
        raise OnnxImportError(
            f"{what} has shape {list(tensor.dims)} ({count} elements, {per_byte} to a byte) "
            f"but holds {len(data)} bytes"
        )
    shifts = np.arange(per_byte, dtype=np.uint8) * np.uint8(bits)
    values = (data[:, None] >> shifts) & np.uint8((1 << bits) - 1)
    return values.reshape(-1)[:count].view(dtype).reshape(tuple(tensor.dims))
