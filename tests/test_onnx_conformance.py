"""The ONNX backend node tests (`tests/support/onnx_cases.py`) through dflow's importer.

Every case of an op dflow imports is one test. A case dflow can run is imported,
run in the reference interpreter and compiled, and both results must match the
case's own expected outputs within its tolerances (dtype and shape exactly). An
excluded case must be refused by the importer with one line naming the reason
the model gives (its dtype, its 3-D window, ...). The README's table is
`onnx_cases.table()` verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx_cases
import pytest
from numpy.typing import NDArray
from onnx_cases import Case, exclusion, with_constant_inputs

import dflow
from dflow.driver.compilation.interpreted import interpret
from dflow.frontend.onnx import OnnxImportError, import_model

ROOT = Path(__file__).resolve().parents[1]
Array = NDArray[Any]
pytestmark = pytest.mark.usefixtures("module_cache")
CASES = {case.name: case for case in onnx_cases.cases()}


def check(case: Case, actual: Sequence[Array], expected: Sequence[Array]) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
        assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


def test_the_wheel_has_cases_of_every_supported_op() -> None:
    """The suite cannot shrink unseen: every op dflow imports has cases."""
    ops = {case.op_type for case in CASES.values()}
    assert ops == set(onnx_cases.SUPPORTED_OPS)
    assert len(CASES) > 450


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if exclusion(c) is None])
def test_case_runs(name: str) -> None:
    case = CASES[name]
    for inputs, expected in case.data_sets:
        model, fed = with_constant_inputs(case, inputs)
        module = import_model(model)
        interpreted = interpret(module.clone(), "main", list(fed), None, 10.0)
        check(case, interpreted, expected)
        outputs = dflow.compile(module)(*fed)
        check(case, list(outputs) if isinstance(outputs, tuple) else [outputs], expected)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if exclusion(c) is not None])
def test_excluded_case_is_refused_in_one_line(name: str) -> None:
    case = CASES[name]
    reason = exclusion(case)
    assert reason is not None
    model, _ = with_constant_inputs(case, case.data_sets[0][0])
    with pytest.raises(OnnxImportError) as refused:
        import_model(model)
    message = refused.value.message
    assert reason[1] in message and "\n" not in message


def test_readme_table_is_the_suite() -> None:
    assert onnx_cases.table() in (ROOT / "README.md").read_text()
