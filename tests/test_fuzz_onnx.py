"""The ONNX model fuzzer of `tests/support/fuzz_onnx.py` run in CI: a bounded number of
seeded mutants of the conformance models and the whole models through `dflow`
in-process, each holding `fuzz_cli.problems`' property."""

from __future__ import annotations

from pathlib import Path

import fuzz_onnx
import pytest
from fuzz_cli import run_cases

CI_CASES = 300
CHUNK = 50
pytestmark = pytest.mark.usefixtures("module_cache")


def test_the_corpus_holds_every_runnable_case_and_model() -> None:
    names = {model.name for model in fuzz_onnx.corpus()}
    assert len(names) > 290 and {"mlp", "lenet", "transformer"} <= names


def test_every_mutator_changes_its_model() -> None:
    """A mutator that leaves its models alone would test nothing. (Some leave some
    models alone by design, such as a model without initializers for
    `change_initializer_dims`: 60 models of the corpus, spread over it, are drawn.)"""
    for mutator in [*fuzz_onnx.STRUCTURE_MUTATORS, *fuzz_onnx.BYTE_MUTATORS]:
        changed = 0
        for seed in range(60):
            model = fuzz_onnx.corpus()[seed * 13 % len(fuzz_onnx.corpus())]
            case = fuzz_onnx.Case(seed, model, mutator, "import")
            changed += fuzz_onnx.mutant_bytes(case) != model.proto.SerializeToString()
        assert changed >= 3, mutator


@pytest.mark.parametrize("first", range(0, CI_CASES, CHUNK))
def test_mutated_models(first: int, tmp_path: Path) -> None:
    seeds = range(first, first + CHUNK)
    failures = run_cases(seeds, tmp_path, fuzz_onnx.make_case, fuzz_onnx.write_case)
    assert not failures, "\n\n".join(failures)
