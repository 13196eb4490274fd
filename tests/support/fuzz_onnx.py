"""A mutation fuzzer of ONNX models through the `dflow` command line (issue 15).

The corpus is the backend node test cases dflow runs (`tests/support/onnx_cases.py`, their
shape operands made initializers) and the whole models of `tests/support/onnx_models.py`.
A mutant changes the model's structure (a node deleted, the nodes reversed or made a cycle, an input
renamed to nothing, an output defined twice, an attribute changed, dropped or added,
an element type, a dimension or an initializer's dims changed, the opset or a node's
domain changed, an op type swapped, an initializer's data moved to an external
file anywhere, the outputs or initializers dropped) or its bytes (truncated,
flipped, inserted). It goes to `dflow run` (interpreted, or compiled now and then),
`dflow plan` or `dflow import`, and the outcome must hold `fuzz_cli.problems`'
property: no traceback, no internal error, no hang, one short error line and exit
status 1, or success with results.

A case is `(seed, mutator, command)`, drawn from `random.Random(seed)`;
`tests/test_fuzz_onnx.py` runs a bounded number in CI.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import onnx_cases
import onnx_models
from numpy.typing import NDArray
from onnx import AttributeProto, ModelProto, TensorProto, helper
from onnx.external_data_helper import set_external_data

Array = NDArray[Any]
Rng = random.Random


@dataclass(frozen=True)
class Model:
    """A corpus entry: a valid model, its feeds by ONNX name, `--shape` arguments."""

    name: str
    proto: ModelProto
    feeds: dict[str, Array]
    shapes: tuple[str, ...] = ()


@cache
def corpus() -> tuple[Model, ...]:
    """The runnable backend node cases and the whole models."""
    models: list[Model] = []
    for case in onnx_cases.cases():
        if onnx_cases.exclusion(case) is not None:
            continue
        proto, fed = onnx_cases.with_constant_inputs(case, case.data_sets[0][0])
        names = [value.name for value in proto.graph.input]
        models.append(Model(case.name, proto, dict(zip(names, fed, strict=True))))
    for name, (build, item_shape) in sorted(onnx_models.MODELS.items()):
        proto = build()
        input_name = proto.graph.input[0].name
        shape = (2, *item_shape)
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        dims = f"{input_name}={','.join(map(str, shape))}"
        models.append(Model(name, proto, {input_name: x}, ("--shape", dims)))
    return tuple(models)


# ----------------------------------------------------------------------------- mutators


def _copy(model: ModelProto) -> ModelProto:
    mutant = ModelProto()
    mutant.CopyFrom(model)
    return mutant


def delete_node(model: ModelProto, rng: Rng) -> ModelProto:
    if model.graph.node:
        del model.graph.node[rng.randrange(len(model.graph.node))]
    return model


def reorder_nodes(model: ModelProto, rng: Rng) -> ModelProto:
    """The nodes reversed; a single node made to read its own output."""
    nodes = list(model.graph.node)[::-1]
    if len(nodes) == 1 and nodes[0].input:
        nodes[0].input[0] = nodes[0].output[0]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def rename_input(model: ModelProto, rng: Rng) -> ModelProto:
    node = rng.choice(model.graph.node)
    if node.input:
        node.input[rng.randrange(len(node.input))] = rng.choice(["", "nowhere", node.output[0]])
    return model


def duplicate_output(model: ModelProto, rng: Rng) -> ModelProto:
    node = rng.choice(model.graph.node)
    node.output.append(rng.choice([*node.output, *(v.name for v in model.graph.input)]))
    return model


_ODD_INTS = [0, -1, -2, 1, 2, 3, 7, 2**31, -(2**40)]
_ODD_FLOATS = [0.0, -1.0, 1e30, float("nan"), float("inf"), 0.5]


def change_attribute(model: ModelProto, rng: Rng) -> ModelProto:
    attributes = [a for node in model.graph.node for a in node.attribute]
    if not attributes:
        return add_attribute(model, rng)
    attribute = rng.choice(attributes)
    if attribute.type == AttributeProto.INT:
        attribute.i = rng.choice(_ODD_INTS)
    elif attribute.type == AttributeProto.FLOAT:
        attribute.f = rng.choice(_ODD_FLOATS)
    elif attribute.type == AttributeProto.INTS:
        values = list(attribute.ints)
        values = [*values[: rng.randrange(len(values) + 1)], rng.choice(_ODD_INTS)]
        del attribute.ints[:]
        attribute.ints.extend(values)
    elif attribute.type == AttributeProto.STRING:
        attribute.s = rng.choice([b"", b"SAME_UPPER", b"VALID", b"\xff\xfe", b"nonsense"])
    else:
        attribute.type = rng.choice([AttributeProto.INT, AttributeProto.GRAPH])
    return model


def drop_attribute(model: ModelProto, rng: Rng) -> ModelProto:
    node = rng.choice(model.graph.node)
    if node.attribute:
        del node.attribute[rng.randrange(len(node.attribute))]
    return model


def add_attribute(model: ModelProto, rng: Rng) -> ModelProto:
    node = rng.choice(model.graph.node)
    name = rng.choice(["axis", "axes", "keepdims", "perm", "bogus", "group", "alpha"])
    value: Any = rng.choice([1, -3, [0, 5], 0.5, "text"])
    node.attribute.append(helper.make_attribute(name, value))
    return model


def change_element_type(model: ModelProto, rng: Rng) -> ModelProto:
    values = [*model.graph.input, *model.graph.output]
    if values:
        rng.choice(values).type.tensor_type.elem_type = rng.randrange(0, 27)
    return model


def change_dim(model: ModelProto, rng: Rng) -> ModelProto:
    values = [v for v in model.graph.input if v.type.tensor_type.shape.dim]
    if values:
        dims = rng.choice(values).type.tensor_type.shape.dim
        dim = dims[rng.randrange(len(dims))]
        choice = rng.choice([0, 1, -1, 3, 2**40, "N"])
        if isinstance(choice, str):
            dim.dim_param = choice
        else:
            dim.dim_value = choice
    return model


def change_initializer_dims(model: ModelProto, rng: Rng) -> ModelProto:
    if model.graph.initializer:
        tensor = rng.choice(model.graph.initializer)
        dims = list(tensor.dims)
        if dims and rng.random() < 0.7:
            dims[rng.randrange(len(dims))] = rng.choice([0, -1, 2**31, 5])
        else:
            dims.append(rng.choice([1, 2, 2**62]))
        del tensor.dims[:]
        tensor.dims.extend(dims)
    return model


def change_opset(model: ModelProto, rng: Rng) -> ModelProto:
    model.opset_import[0].version = rng.choice([0, 1, 7, 10, 11, 12, 13, 18, 21, 99])
    return model


def foreign_domain(model: ModelProto, rng: Rng) -> ModelProto:
    rng.choice(model.graph.node).domain = rng.choice(["com.microsoft", "ai.onnx.ml", "x"])
    return model


def change_op_type(model: ModelProto, rng: Rng) -> ModelProto:
    node = rng.choice(model.graph.node)
    node.op_type = rng.choice([*onnx_cases.SUPPORTED_OPS, "Einsum", "Loop", ""])
    return model


def external_data(model: ModelProto, rng: Rng) -> ModelProto:
    tensors = [t for t in model.graph.initializer if t.raw_data]
    if tensors:
        tensor = rng.choice(tensors)
        location = rng.choice(["../w.bin", "/etc/passwd", "missing.bin", "", "a/../../w.bin"])
        set_external_data(tensor, location, offset=rng.choice([0, 3, -1]))
        tensor.ClearField("raw_data")
        tensor.data_location = TensorProto.EXTERNAL
    return model


def drop_outputs(model: ModelProto, rng: Rng) -> ModelProto:
    del model.graph.output[:]
    return model


def drop_initializers(model: ModelProto, rng: Rng) -> ModelProto:
    del model.graph.initializer[:]
    return model


StructureMutator = Callable[[ModelProto, Rng], ModelProto]
STRUCTURE_MUTATORS: dict[str, StructureMutator] = {
    f.__name__: f
    for f in (
        delete_node,
        reorder_nodes,
        rename_input,
        duplicate_output,
        change_attribute,
        drop_attribute,
        add_attribute,
        change_element_type,
        change_dim,
        change_initializer_dims,
        change_opset,
        foreign_domain,
        change_op_type,
        external_data,
        drop_outputs,
        drop_initializers,
    )
}


def truncate(data: bytes, rng: Rng) -> bytes:
    return data[: rng.randrange(len(data))]


def flip_bytes(data: bytes, rng: Rng) -> bytes:
    mutant = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        mutant[rng.randrange(len(mutant))] ^= 1 << rng.randrange(8)
    return bytes(mutant)


def insert_bytes(data: bytes, rng: Rng) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.randbytes(rng.randint(1, 16)) + data[at:]


BYTE_MUTATORS: dict[str, Callable[[bytes, Rng], bytes]] = {
    f.__name__: f for f in (truncate, flip_bytes, insert_bytes)
}

# ----------------------------------------------------------------------------- cases

COMMANDS: dict[str, tuple[str, ...]] = {
    "run-interpret": ("run", "--interpret"),
    "run-compiled": ("run",),
    "plan": ("plan",),
    "import": ("import",),
}
COMMAND_WEIGHTS = {"run-interpret": 4, "run-compiled": 1, "plan": 2, "import": 3}


@dataclass(frozen=True)
class Case:
    """One fuzz case: a seed, the model, what mutates it, the command."""

    seed: int
    model: Model
    mutator: str
    command: str

    @property
    def label(self) -> str:
        return f"seed {self.seed}: {self.mutator} of {self.model.name} into {self.command}"


def make_case(seed: int) -> Case:
    rng = Rng(seed)
    model = rng.choice(corpus())
    mutator = rng.choice(sorted([*STRUCTURE_MUTATORS, *BYTE_MUTATORS]))
    commands = sorted(COMMANDS)
    command = rng.choices(commands, [COMMAND_WEIGHTS[c] for c in commands])[0]
    return Case(seed, model, mutator, command)


def mutant_bytes(case: Case) -> bytes:
    rng = Rng(case.seed * 7919 + 1)
    if case.mutator in BYTE_MUTATORS:
        return BYTE_MUTATORS[case.mutator](case.model.proto.SerializeToString(), rng)
    return STRUCTURE_MUTATORS[case.mutator](_copy(case.model.proto), rng).SerializeToString()


def write_case(case: Case, folder: Path) -> list[str]:
    """Write the mutant (and its feeds and a stray `w.bin`) into `folder`; return
    the `dflow` argv."""
    path = folder / "model.onnx"
    path.write_bytes(mutant_bytes(case))
    (folder / "w.bin").write_bytes(bytes(64))
    argv = [*COMMANDS[case.command], str(path), *case.model.shapes]
    if case.command.startswith("run"):
        buffer = io.BytesIO()
        np.savez(buffer, **case.model.feeds)
        (folder / "inputs.npz").write_bytes(buffer.getvalue())
        argv += ["--timeout", "5", "--inputs", str(folder / "inputs.npz")]
    return argv
