"""The ONNX backend node tests of the ops dflow imports, regenerated from the
installed `onnx` wheel, and which of them dflow cannot run and why.

`onnx.backend.test.case.node.collect_testcases()` rebuilds every case (the wheel no
longer ships their data). A case counts when its graph is one node whose op type
dflow imports. It is *excluded* when the model itself asks for what dflow has
not: an element type dflow lacks at the graph's edge (FLOAT8E8M0, strings), a 3-D
convolution, training mode, or a `ScatterND` that
multiplies or takes maxima or minima. The reason is read from the model, not from
the importer, and `tests/test_onnx_conformance.py` checks that the
importer refuses each excluded case with one line naming that reason.

Inputs that dflow needs at import time (`Reshape`'s shape, `Slice`'s starts, the
reductions' axes, ...) are graph inputs in these cases; as onnx-mlir's harness
does, they become initializers holding the case's values (`with_constant_inputs`).

`python tests/support/onnx_cases.py` prints the README's conformance table.
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import ModelProto, TensorProto, numpy_helper

from dflow.frontend.onnx import SUPPORTED_OPS
from dflow.frontend.onnx.model import DTYPES

Array = NDArray[Any]

DFLOW_TYPES = set(DTYPES)
"""The ONNX element types dflow imports (FLOAT16 ... UINT64, BOOL)."""

CONSTANT_INPUTS: dict[str, set[int]] = {
    "Reshape": {1},
    "Expand": {1},
    "Slice": {1, 2, 3, 4},
    "Squeeze": {1},
    "Unsqueeze": {1},
    "ReduceSum": {1},
    "ReduceMean": {1},
    "ReduceMax": {1},
    "ReduceMin": {1},
    "ReduceL1": {1},
    "ReduceL2": {1},
    "ReduceSumSquare": {1},
    "ReduceLogSumExp": {1},
    "ConstantOfShape": {0},
    "Dropout": {1, 2},
    "Split": {1},
    "Trilu": {1},
    "RNN": {4},
    "GRU": {4},
    "LSTM": {4},
    "Resize": {1, 2, 3},
    "Pad": {1, 3},
    "Range": {0, 1, 2},
    "CumSum": {1},
    "TopK": {1},
}
"""The inputs of each op that dflow needs as constants."""


@dataclass(frozen=True)
class Case:
    name: str
    op_type: str
    model: ModelProto
    data_sets: tuple[tuple[list[Array], list[Array]], ...]
    rtol: float
    atol: float

    @property
    def node(self) -> onnx.NodeProto:
        return self.model.graph.node[0]


@cache
def cases() -> tuple[Case, ...]:
    """Every single-node backend case of an op dflow imports, in the wheel's order."""
    from onnx.backend.test.case.node import collect_testcases  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators divide by zero on purpose
        collected = collect_testcases()
    found: list[Case] = []
    for case in collected:
        nodes = case.model.graph.node
        if len(nodes) != 1 or nodes[0].op_type not in SUPPORTED_OPS:
            continue
        data_sets = tuple(
            ([_array(v) for v in inputs], [_array(v) for v in outputs])
            for inputs, outputs in case.data_sets or ()
        )
        found.append(Case(case.name, nodes[0].op_type, case.model, data_sets, case.rtol, case.atol))
    return tuple(found)


def _array(value: Any) -> Array:
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def exclusion(case: Case) -> tuple[str, str] | None:
    """Why dflow cannot run `case`, as (reason, a word the importer's error must
    contain), read from the model; None when it can."""
    graph = case.model.graph
    return _dtype_exclusion(graph.input) or _dtype_exclusion(graph.output) or _node_exclusion(case)


def _dtype_exclusion(values: Sequence[onnx.ValueInfoProto]) -> tuple[str, str] | None:
    for value in values:
        if not value.type.HasField("tensor_type"):
            return "not a tensor (a sequence or optional)", "UNDEFINED"
        element = value.type.tensor_type.elem_type
        if element not in DFLOW_TYPES:
            name = TensorProto.DataType.Name(element)
            return f"{name} tensors", name
    return None


def _node_exclusion(case: Case) -> tuple[str, str] | None:
    node = case.node
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    if case.op_type == "Cast" and attributes["to"] not in DFLOW_TYPES:
        name = TensorProto.DataType.Name(attributes["to"])
        return f"a cast to {name}", name
    checks = [
        (case.op_type == "Conv" and len(_input_shape(case, 0)) == 5, "a 3-D convolution",
         "3-D"),
        (_training_input(case), "training mode (dropping at random)", "training"),
        (case.op_type == "ScatterND" and attributes.get("reduction", b"none") not in
         (b"none", b"add"), "a ScatterND reduction other than none and add", "reduction"),
    ]  # fmt: skip
    return next(((reason, word) for hit, reason, word in checks if hit), None)


def _input_shape(case: Case, index: int) -> Sequence[int]:
    return case.data_sets[0][0][index].shape


def _training_input(case: Case) -> bool:
    """Whether a Dropout case feeds `training_mode` true with a ratio other than 0
    (which drops at random; a ratio of 0 drops nothing)."""
    node = case.node
    if case.op_type != "Dropout" or len(node.input) < 3 or not node.input[2]:
        return False
    names = [value.name for value in case.model.graph.input]
    inputs = case.data_sets[0][0]
    ratio = float(inputs[names.index(node.input[1])]) if node.input[1] else 0.5
    return bool(inputs[names.index(node.input[2])]) and ratio != 0.0


def with_constant_inputs(case: Case, inputs: Sequence[Array]) -> tuple[ModelProto, list[Array]]:
    """The case's model with the inputs dflow needs at import time made initializers
    holding `inputs`' values, and the inputs that remain to feed."""
    node = case.node
    wanted = {node.input[i] for i in CONSTANT_INPUTS.get(case.op_type, ()) if i < len(node.input)}
    model = ModelProto()
    model.CopyFrom(case.model)
    kept: list[onnx.ValueInfoProto] = []
    fed: list[Array] = []
    for value, array in zip(case.model.graph.input, inputs, strict=True):
        if value.name in wanted:
            model.graph.initializer.append(numpy_helper.from_array(array, value.name))
        else:
            kept.append(value)
            fed.append(array)
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return model, fed


def table() -> str:
    """The README's conformance table: per op, cases that run and pass, and below
    it every excluded case with its reason."""
    run: Counter[str] = Counter()
    excluded: defaultdict[str, list[str]] = defaultdict(list)
    for case in cases():
        reason = exclusion(case)
        if reason is None:
            run[case.op_type] += 1
        else:
            excluded[case.op_type].append(f"`{case.name}` ({reason[0]})")
    lines = ["| op | passed / run | excluded |", "|---|---|---|"]
    for op_type in SUPPORTED_OPS:
        count = run[op_type]
        lines.append(f"| {op_type} | {count} / {count} | {len(excluded[op_type])} |")
    total_run, total_excluded = sum(run.values()), sum(map(len, excluded.values()))
    lines.append(f"| **all** | **{total_run} / {total_run}** | **{total_excluded}** |")
    lines += ["", "Excluded cases:", ""]
    for op_type in SUPPORTED_OPS:
        if excluded[op_type]:
            lines.append(f"- {op_type}: " + ", ".join(excluded[op_type]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(table() + "\n")
