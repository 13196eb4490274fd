"""Whole ONNX models built with `onnx.helper` through dflow, checked against ONNX
Runtime (rtol 1e-4); a model compiled before loads from the cache without its import.

The models of `tests/support/onnx_models.py` (an MLP, a LeNet-style CNN flattened by
PyTorch's shape arithmetic, a transformer encoder layer) run in the reference
interpreter and compiled. ONNX Runtime runs on one thread: its result is the
reference, computed apart from dflow. `test_onnx_torch.py` does the same with models
PyTorch exports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
import onnx_models
import pytest
from numpy.typing import NDArray
from onnx_models import assert_close, batch_input, onnx_runtime
from xdsl.dialects.builtin import Float32Type, TensorType

import dflow
import dflow.frontend.onnx as onnx_frontend
from dflow.driver.compilation.interpreted import interpret
from dflow.frontend.onnx import import_model

Array = NDArray[Any]
pytestmark = pytest.mark.usefixtures("module_cache")


@pytest.mark.parametrize("name", sorted(onnx_models.MODELS))
def test_helper_model_matches_onnx_runtime(name: str) -> None:
    build, item_shape = onnx_models.MODELS[name]
    model = build()
    input_name = model.graph.input[0].name
    x = batch_input((2, *item_shape))
    (expected,) = onnx_runtime(model, {input_name: x})
    module = import_model(model, {input_name: x.shape})
    (interpreted,) = interpret(module.clone(), "main", [x], None, 60.0)
    assert_close(interpreted, expected)
    program = dflow.compile(model, shapes={input_name: x.shape})
    assert_close(program(x), expected)
    assert_close(program(**{input_name: x}), expected)


def test_the_transformer_folds_its_shape_arithmetic() -> None:
    """The head split's Shape/Slice/Concat/Reshape fold at import: the batch given
    reaches the reshapes' types, and no integer value is left to compute."""
    model = onnx_models.transformer_layer()
    assert {"Shape", "Slice", "Concat", "Reshape"} <= {node.op_type for node in model.graph.node}
    module = import_model(model, {"tokens": (3, 16, 64)})
    reshaped = {str(op.results[0].type) for op in module.walk() if op.name == "df.reshape"}
    assert "tensor<3x16x4x16xf32>" in reshaped  # (N, S, heads, D/heads) with N = 3
    integer_results = [
        op.name
        for op in module.walk()
        for result in op.results
        if isinstance(result.type, TensorType)
        and not isinstance(result.type.element_type, Float32Type)
    ]
    assert integer_results == []


def test_a_model_compiled_before_loads_without_its_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second `dflow.compile` of a model (the same bytes and shapes) loads its cache
    entry without importing the model: the importer is not called, yet the results
    are ONNX Runtime's; the module is imported when first asked for (`interpret`).
    A model of other bytes is imported again."""
    build, item_shape = onnx_models.MODELS["lenet"]
    model = build()
    path = tmp_path / "lenet.onnx"
    onnx.save(model, path)
    input_name = model.graph.input[0].name
    x = batch_input((1, *item_shape))
    (expected,) = onnx_runtime(model, {input_name: x})
    shapes = {input_name: x.shape}
    dflow.compile(path, shapes=shapes)
    imports: list[str] = []
    importer = onnx_frontend.build_module

    def counted(*args: Any, **kwargs: Any) -> Any:
        imports.append("import")
        return importer(*args, **kwargs)

    monkeypatch.setattr(onnx_frontend, "build_module", counted)
    again = dflow.compile(path, shapes=shapes)
    assert_close(again(x), expected)
    assert_close(again(**{input_name: x}), expected)
    assert imports == []
    assert_close(again.interpret(x), expected)
    assert imports == ["import"]
    model.doc_string = "the same graph, other bytes"
    onnx.save(model, path)
    assert_close(dflow.compile(path, shapes=shapes)(x), expected)
    assert imports == ["import", "import"]
