"""Differential tests of the graph-level passes against the interpreter.

Every program under tests/filecheck/ (each `// -----` split) that parses, verifies
and that a pass accepts is run before and after the pass on seeded random
inputs; every function that can run alone (no send/recv, no empty result list)
must give the same results. Then seeded random graphs (tests/graphgen.py) go
through `df-optimize`: same results, and never more ops.

Tolerances: the rewrites reassociate sums and products (addn, hoisted factors,
scales folded into weights), so results agree to a relative 1e-4 in f32 and 1e-9
in f64, plus an absolute term of the same size times the result's largest
magnitude (cancellation may lose relative accuracy near zero).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from graphgen import BINARY, UNARY, op_names, random_graph
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException, ParseError

from dflow.feeds import random_inputs
from dflow.pipeline import apply_pipeline
from dflow.source import parse_module
from dialects.df import RecvOp, SendOp
from dialects.df.interpreter import run_function

FILECHECK = Path(__file__).parent / "filecheck"
PASSES = [
    "df-fold-constants",
    "df-simplify-arith",
    "df-prune",
    "df-optimize",
    "canonicalize",
    "cse",
    "df-recompute",
    "df-recompute{mode=heuristic},cse",
]
RTOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-9}


def _programs() -> list[tuple[str, str]]:
    programs: list[tuple[str, str]] = []
    for path in sorted(FILECHECK.rglob("*.mlir")):
        if path.name.startswith("invalid"):
            continue
        for index, chunk in enumerate(path.read_text().split("// -----")):
            programs.append((f"{path.relative_to(FILECHECK)}#{index}", chunk))
    return programs


def _parse(text: str, name: str) -> ModuleOp | None:
    try:
        module = parse_module(text, name)
        module.verify()
    except (ParseError, DiagnosticException, Exception):  # not a valid program: skip
        return None
    return module


def _calls_a_declaration(
    module: ModuleOp, function: FuncOp, stack: tuple[FuncOp, ...] = ()
) -> bool:
    """Whether `function` calls, directly or not, a function with no body or itself
    (nothing to interpret, or no end to it)."""
    for inner in function.walk():
        if isinstance(inner, CallOp):
            callee = SymbolTable.lookup_symbol(module, inner.callee)
            if not isinstance(callee, FuncOp) or callee.is_declaration:
                return True
            if callee in (*stack, function) or _calls_a_declaration(
                module, callee, (*stack, function)
            ):
                return True
    return False


def _runnable(module: ModuleOp) -> list[FuncOp]:
    functions: list[FuncOp] = []
    # top level only (a device module's parts run together), graph level only (host
    # functions over memrefs are not interpreted)
    for op in module.ops:
        if not isinstance(op, FuncOp) or op.is_declaration:
            continue
        graph_level = all(isinstance(t, TensorType) for t in op.function_type.inputs)
        graph_level = graph_level and not _calls_a_declaration(module, op)
        if (
            graph_level
            and op.function_type.outputs.data
            and not any(isinstance(inner, SendOp | RecvOp) for inner in op.walk())
        ):
            functions.append(op)
    return functions


def assert_same_results(before: tuple[Any, ...], after: tuple[Any, ...], where: str) -> None:
    assert len(before) == len(after), where
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        expected, actual = np.asarray(old), np.asarray(new)
        assert actual.shape == expected.shape and actual.dtype == expected.dtype, where
        if expected.dtype.kind != "f":
            np.testing.assert_array_equal(actual, expected, err_msg=f"{where} result {index}")
            continue
        finite = np.abs(expected[np.isfinite(expected)])
        scale = float(finite.max()) if finite.size else 1.0
        rtol = RTOL[expected.dtype]
        np.testing.assert_allclose(
            actual,
            expected,
            rtol=rtol,
            atol=rtol * max(scale, 1.0),
            equal_nan=True,
            err_msg=f"{where} result {index}",
        )


def _run_all(module: ModuleOp, names: list[str]) -> dict[str, tuple[Any, ...]]:
    results: dict[str, tuple[Any, ...]] = {}
    functions = {f.sym_name.data: f for f in _runnable(module)}
    for name in names:
        inputs = random_inputs(functions[name], seed=7)
        results[name] = run_function(module, name, inputs)
    return results


@pytest.mark.parametrize("pass_spec", PASSES)
def test_lit_programs_keep_their_results(pass_spec: str) -> None:
    checked = 0
    for where, text in _programs():
        module = _parse(text, where)
        if module is None:
            continue
        names = [f.sym_name.data for f in _runnable(module)]
        before = _run_all(module, names)
        try:
            apply_pipeline(module, pass_spec)
        except DiagnosticException:
            continue  # the pass does not accept this program
        module.verify()
        after = _run_all(module, [n for n in names if n in before])
        for name in names:
            assert_same_results(before[name], after[name], f"{pass_spec} on {where} @{name}")
            checked += 1
    assert checked >= 80, f"only {checked} functions were compared"


SEEDS = range(30)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_optimize_keeps_results_of_random_graphs(seed: int, dtype: str) -> None:
    module = random_graph(seed, min_ops=40, dtype=dtype)
    main = _runnable(module)[0]
    ops_before = sum(1 for _ in main.body.walk())
    assert ops_before >= 30
    inputs = random_inputs(main, seed=seed)
    before = run_function(module, "main", inputs)
    apply_pipeline(module, "df-optimize")
    module.verify()
    after = run_function(module, "main", inputs)
    assert_same_results(before, after, f"df-optimize on random graph {seed} ({dtype})")
    assert sum(1 for _ in _runnable(module)[0].body.walk()) <= ops_before


def test_random_graphs_cover_every_elementwise_op() -> None:
    seen = set().union(*(op_names(random_graph(seed)) for seed in SEEDS))
    expected = {f"df.{name}" for name in (*UNARY, *BINARY)}
    expected |= {"df.select", "df.cast", "df.addn", "df.greater", "df.constant"}
    assert expected <= seen, f"never generated: {sorted(expected - seen)}"
