"""ONNX's `Einsum` (`frontend/onnx/ops/einsum.py`) against NumPy's `einsum` on the
forms models export and the backend node tests leave out: attention's
`bhqd,bhkd->bhqk`, chains of three operands, outer products, diagonals, `...`
broadcast from the right (and size-1 axes against full ones), implicit outputs,
labels summed in one operand only; and a malformed equation refused in one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

import dflow
from dflow.frontend.onnx import OnnxImportError, import_model

pytestmark = pytest.mark.usefixtures("module_cache")

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("bhqk,bhkd->bhqd", [(2, 2, 3, 5), (2, 2, 5, 4)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("...ii->...i", [(3, 5, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("->", [()]),
]


def _model(equation: str, arrays: list[Any]) -> Any:
    names = [f"x{i}" for i in range(len(arrays))]
    graph = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation)], "einsum",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
         for n, a in zip(names, arrays, strict=True)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), names


@pytest.mark.parametrize(("equation", "shapes"), CASES)
def test_einsum_is_numpys(equation: str, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    model, names = _model(equation, arrays)
    got = dflow.compile(model)(**dict(zip(names, arrays, strict=True)))
    want = np.einsum(equation, *arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_term_that_does_not_fit_its_operand_is_one_line() -> None:
    model, _ = _model("ijk,jk->i", [np.zeros((3, 4), np.float32), np.zeros((4, 5), np.float32)])
    with pytest.raises(OnnxImportError) as refused:
        import_model(model)
    assert "term 'ijk' of 'ijk,jk->i' does not fit a rank-2 operand" in refused.value.message
    assert "\n" not in refused.value.message
