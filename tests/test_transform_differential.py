"""Differential tests of the graph-level passes against the interpreter.

Every program under tests/filecheck/ (each `// -----` split) but the invalid_*
files is run before and after each pass on seeded random inputs; every function
that can run alone (no send/recv, no empty result list, not host level) must give
the same results. Nothing drops out silently: a program may fail to load only for a
reason in FRONT_DOOR_REFUSALS, every pass must accept every program, and the count
compared is exact (the census of skipped ops and why is the assertion's message).
Then seeded random graphs (tests/support/graphgen.py) go through `df-optimize`: same
results, and never more ops.

Tolerances: the rewrites reassociate sums and products (addn, hoisted factors,
scales folded into weights), so results agree to a relative 1e-4 in f32 and 1e-9
in f64, plus an absolute term of the same size times the result's largest
magnitude (cancellation may lose relative accuracy near zero).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from graphgen import BINARY, UNARY, op_names, random_graph
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Operation
from xdsl.traits import SymbolTable

from dflow.dialects.df import RecvOp, SendOp
from dflow.driver.errors import DflowError
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import parse_module
from dflow.interpreters.df import run_function
from dflow.runtime.dtypes import is_floating

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
    "df-widen",
]
RTOL = {
    np.dtype(np.float16): 2e-3,  # an f32 difference of one unit moves an f16 result by one
    np.dtype(ml_dtypes.bfloat16): 1.6e-2,
    np.dtype(np.float32): 1e-4,
    np.dtype(np.float64): 1e-9,
    # one step of the 8- and 4-bit floats (3, 2 and 1 mantissa bits), for the same reason
    np.dtype(ml_dtypes.float8_e4m3fn): 0.125,
    np.dtype(ml_dtypes.float8_e4m3fnuz): 0.125,
    np.dtype(ml_dtypes.float8_e5m2): 0.25,
    np.dtype(ml_dtypes.float8_e5m2fnuz): 0.25,
    np.dtype(ml_dtypes.float4_e2m1fn): 0.5,
}


SPLIT = re.compile(r"^// -----$", re.MULTILINE)
"""A split marker is a line of its own, as xdsl-opt reads it (not `// CHECK: // -----`)."""


def _programs() -> list[tuple[str, str]]:
    programs: list[tuple[str, str]] = []
    for path in sorted(FILECHECK.rglob("*.mlir")):
        if path.name.startswith("invalid") or "Output" in path.parts:
            continue
        for index, chunk in enumerate(SPLIT.split(path.read_text())):
            if _has_code(chunk):
                programs.append((f"{path.relative_to(FILECHECK)}#{index}", chunk))
    return programs


def _has_code(chunk: str) -> bool:
    """Whether a chunk holds more than comments (a lit file whose RUN lines make
    their input, `frontend/torch_export.mlir`, holds no program of its own)."""
    return any(line.strip() and not line.strip().startswith("//") for line in chunk.splitlines())


FRONT_DOOR_REFUSALS = ("recursive call",)
"""Why a lit program outside the invalid_*.mlir files may not load: it tests that refusal."""
LIT_FUNCTIONS = 195
"""Runnable lit functions when this was written; each pass must compare at least these."""


def _parse(text: str, where: str) -> ModuleOp | None:
    """The verified program, or None where the front door refuses it for a known reason;
    any other failure fails the test (a program may not drop out silently)."""
    try:
        return parse_module(text, where)
    except DflowError as error:
        assert any(reason in str(error) for reason in FRONT_DOOR_REFUSALS), str(error)
        return None


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


_SKIPS: list[tuple[str, Callable[[ModuleOp, FuncOp], bool]]] = [
    ("declaration", lambda _, f: f.is_declaration),
    ("host level", lambda _, f: not all(isinstance(t, TensorType) for t in f.function_type.inputs)),
    ("calls a declaration or itself", _calls_a_declaration),
    ("returns nothing", lambda _, f: not f.function_type.outputs.data),
    ("sends or receives", lambda _, f: any(isinstance(i, SendOp | RecvOp) for i in f.walk())),
    ("branches (several blocks)", lambda _, f: len(f.body.blocks) > 1),
]
"""Why a function is not run alone: a device module's parts run together, host
functions over memrefs and branches are not interpreted (the lowering refuses
branches too), and a function needs results to compare."""


def _skip_reason(module: ModuleOp, op: Operation) -> str | None:
    """Why a top-level op of a lit program is not run alone, or None when it is."""
    if not isinstance(op, FuncOp):
        return f"{op.name} (not a function)"
    return next((reason for reason, skips in _SKIPS if skips(module, op)), None)


def _runnable(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.ops if isinstance(op, FuncOp) and _skip_reason(module, op) is None]


def assert_same_results(before: tuple[Any, ...], after: tuple[Any, ...], where: str) -> None:
    assert len(before) == len(after), where
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        expected, actual = np.asarray(old), np.asarray(new)
        assert actual.shape == expected.shape and actual.dtype == expected.dtype, where
        if not is_floating(expected.dtype):
            np.testing.assert_array_equal(actual, expected, err_msg=f"{where} result {index}")
            continue
        expected, actual = expected.astype(np.float64), actual.astype(np.float64)  # bf16 too
        rtol = RTOL[np.asarray(old).dtype]
        finite = np.abs(expected[np.isfinite(expected)])
        scale = float(finite.max()) if finite.size else 1.0
        np.testing.assert_allclose(
            actual,
            expected,
            rtol=rtol,
            atol=rtol * max(scale, 1.0),
            equal_nan=True,
            err_msg=f"{where} result {index}",
        )


def _inputs(module: ModuleOp, names: list[str]) -> dict[str, list[Any]]:
    """Seeded inputs of each function, drawn before a pass: the draw reads how the
    arguments are used (token ids in range), which the pass may change."""
    functions = {f.sym_name.data: f for f in _runnable(module)}
    return {name: random_inputs(functions[name], seed=7) for name in names}


def _run_all(module: ModuleOp, inputs: dict[str, list[Any]]) -> dict[str, tuple[Any, ...]]:
    return {name: run_function(module, name, arguments) for name, arguments in inputs.items()}


def _census(module: ModuleOp | None) -> Counter[str]:
    """Each top-level op of a lit program counted as "compared" or by why it is not."""
    if module is None:
        return Counter(["refused by the front door"])
    return Counter(_skip_reason(module, op) or "compared" for op in module.ops)


@pytest.mark.parametrize("pass_spec", PASSES)
def test_lit_programs_keep_their_results(pass_spec: str) -> None:
    """Every runnable lit function is compared: a pass refusing a program fails here."""
    census: Counter[str] = Counter()
    checked = 0
    for where, text in _programs():
        module = _parse(text, where)
        census += _census(module)
        if module is None:
            continue
        names = [f.sym_name.data for f in _runnable(module)]
        inputs = _inputs(module, names)
        before = _run_all(module, inputs)
        apply_pipeline(module, pass_spec)
        module.verify()
        after = _run_all(module, inputs)
        for name in names:
            assert_same_results(before[name], after[name], f"{pass_spec} on {where} @{name}")
            checked += 1
    assert checked == census["compared"] >= LIT_FUNCTIONS, census


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
    seen = set[str]().union(*(op_names(random_graph(seed)) for seed in SEEDS))
    expected = {f"df.{name}" for name in (*UNARY, *BINARY)}
    expected |= {"df.select", "df.cast", "df.addn", "df.greater", "df.constant"}
    assert expected <= seen, f"never generated: {sorted(expected - seen)}"
