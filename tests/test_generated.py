"""Generated programs (`programgen.py`) against the interpreter, a bounded run for CI.

`COUNT` programs of fixed seeds, each run through the interpreter (the oracle: its
results must have the declared types), `df-optimize` then the interpreter, and one
compiled mode: on one device (pins removed) for even seeds, on `cpu:0,cpu:1` with
the pins for odd ones (`python bench/stress.py` runs every mode on each program,
as many as asked). Integers and booleans must be equal; floats bit for bit where
the compiled code keeps the interpreter's order of operations (`Program.exact`:
only correctly rounded ops, sign of zero and NaN bits included), otherwise within
`programgen.TOLERANCE`, by the program's coarsest float type: rtol 2e-4, atol 2e-5
(f32) and rtol 1e-9, atol 1e-12 (f64). That covers transcendentals, `pow`, sums in
another order (reductions, products, convolutions, average pools) and what
`df-optimize` reassociates.

The compiled modules are written under `$NUMBA_CACHE_DIR/generated-programs` when
that is set (as `tests/run.sh` does), so that a second run loads numba's cached
kernels instead of compiling them again.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from programgen import ELEMENTS, Program, check, generate
from xdsl.dialects.func import FuncOp, ReturnOp

from dflow.dialects.df import DF
from dflow.dialects.df.semantics import HasSemantics
from dflow.dialects.df.types import static_tensor

COUNT = 200
"""Programs run in CI: 141 s of CPU with numba's cache cold (most of it compiling
kernels; 174 s wall on two busy cores), 11 s warm."""
CHUNK = 40


def _programs() -> list[Program]:
    return [generate(seed) for seed in range(COUNT)]


def _features(program: Program) -> set[str]:
    """What real programs have that this one shows."""
    main = program.module.ops.first
    assert isinstance(main, FuncOp)
    returned = main.body.block.last_op
    assert isinstance(returned, ReturnOp)
    values = list(returned.operands)
    features = {f"element {static_tensor(t).element_type}" for t in main.function_type.inputs}
    features.add("pins" if program.pinned else "no pins")
    if len(set(values)) < len(values):
        features.add("returned twice")
    if any(v.owner is main.body.block for v in values):
        features.add("returned argument")
    if any(getattr(v.owner, "name", "") == "df.constant" for v in values):
        features.add("returned constant")
    if not values:
        features.add("returns nothing")
    ops = [op for op in main.body.block.ops if op.name.startswith("df.")]
    if any(r.uses.get_length() == 0 for op in ops for r in op.results):
        features.add("unused value")
    shapes = {d for op in ops for r in op.results for d in static_tensor(r.type).get_shape()}
    features |= {f"size {d}" for d in (0, 1) if d in shapes}
    return features


def test_programs_cover_every_op_family_and_what_real_programs_have() -> None:
    """Every op with reference semantics appears (send and recv come from the
    two-device runs' partitioning), and each trait the generator promises."""
    census: Counter[str] = Counter()
    features: Counter[str] = Counter()
    for program in _programs():
        census.update(program.census)
        features.update(_features(program))
    with_semantics = {op.name for op in DF.operations if issubclass(op, HasSemantics)}
    missing = with_semantics - set(census)
    assert not missing, sorted(missing)
    wanted = {f"element {e}" for e in ELEMENTS} | {"size 0", "size 1", "pins", "unused value"}
    wanted |= {"returned twice", "returned argument", "returned constant"}
    assert all(features[f] >= 5 for f in wanted), {f: features[f] for f in wanted}


@pytest.mark.filterwarnings("ignore:Mean of empty slice")  # NumPy's, in the interpreter
@pytest.mark.parametrize("first", range(0, COUNT, CHUNK))
def test_generated_programs_agree_with_the_interpreter(tmp_path: Path, first: int) -> None:
    cache = os.environ.get("NUMBA_CACHE_DIR")
    workdir = Path(cache) / "generated-programs" if cache else tmp_path
    failures: list[str] = []
    for seed in range(first, first + CHUNK):
        program = generate(seed)
        compiled = "compiled" if seed % 2 == 0 else "devices"
        outcome = check(program, ["interpret", "optimize", compiled], workdir, keep=bool(cache))
        failures += [f"{program.describe()} [{f.mode}] {f.message}" for f in outcome.failures]
    assert not failures, "\n".join(failures)
