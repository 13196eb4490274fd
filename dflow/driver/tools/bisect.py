"""`dflow bisect FILE -p PIPELINE`: the first pass that changes what a program computes.

Where an MLIR user bisects by hand with `-mlir-print-ir-after-all`, dflow has an
oracle for every level a graph pass leaves: the interpreter. `bisect` interprets
the program before the pipeline (the reference), then after each of its passes on
the same feeds, and at the end runs it compiled; the first stage whose results
differ beyond the tolerance (or that fails, or crashes: named with the package of
the pass, as `dflow opt` names it) is the culprit. Its IR before and
after is written beside the input. Passes come from every installed
`xdsl.universe` (`driver/loading/pipeline.py`), so a plugin's pass bisects like dflow's.

A pass that leaves host-level IR (`df-lower-host`: `dfrt` ops) ends what the
interpreter can check; the compiled run still compares the whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException

from dflow.dialects import dfrt
from dflow.dialects.df import annotations
from dflow.dialects.df.fusion import FusedOp
from dflow.driver.compilation.interpreted import interpret
from dflow.driver.errors import DflowError, first_line
from dflow.driver.loading.pipeline import DFLOW_PACKAGE, apply_pass, crash_message
from dflow.driver.loading.source import make_context

Array = Any


@dataclass(frozen=True)
class Tolerance:
    """How far a float result may move (`numpy.isclose`); integers and booleans must
    not move at all, and NaN must stay NaN."""

    rtol: float = 1e-5
    atol: float = 1e-8


def difference(got: Sequence[Array], want: Sequence[Array], tolerance: Tolerance) -> str | None:
    """How `got` differs from `want` beyond `tolerance`, or None."""
    if len(got) != len(want):
        return f"{len(got)} results, the reference has {len(want)}"
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        found = _result_difference(np.asarray(g), np.asarray(w), tolerance)
        if found is not None:
            return f"result {index}: {found}"
    return None


def _result_difference(got: Array, want: Array, tolerance: Tolerance) -> str | None:
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)}, the reference {want.dtype}{list(want.shape)}"
    if np.issubdtype(want.dtype, np.inexact):
        close = np.isclose(got, want, tolerance.rtol, tolerance.atol, equal_nan=True)
    else:
        close = got == want
    if bool(np.all(close)):
        return None
    gap = np.where(close, 0, np.abs(got.astype(np.float64) - want.astype(np.float64)))
    gap = np.where(np.isnan(gap), np.inf, gap)
    at = np.unravel_index(int(np.argmax(gap)), want.shape) if want.ndim else ()
    where = f" at {tuple(int(i) for i in at)}" if want.ndim else ""
    return (
        f"{int(np.count_nonzero(~close))} of {want.size} elements differ, the most by "
        f"{gap[at]:.6g}{where} (got {got[at].tolist()!r}, the reference {want[at].tolist()!r})"
    )


@dataclass(frozen=True)
class Stage:
    """One point of the bisection: what ran and how its results compare."""

    name: str
    problem: str | None
    """None: the results agree; else how they differ, or why the stage failed."""
    checked: bool = True
    """False where the stage could not be interpreted (host-level IR)."""


@dataclass
class Bisection:
    """The stages run so far, and the IR around the first one that differs."""

    stages: list[Stage]
    before: ModuleOp | None = None
    after: ModuleOp | None = None

    @property
    def culprit(self) -> Stage | None:
        return next((s for s in self.stages if s.problem is not None), None)


def _interpreted(module: ModuleOp, entry: str, inputs: Sequence[Array]) -> list[Array]:
    return interpret(module.clone(), entry, inputs)


def _graph_level(module: ModuleOp) -> bool:
    """Whether `module` is still a graph (levels 1 to 3), which the compiler lowers."""
    return not any(
        isinstance(op, FusedOp)
        or annotations.KERNEL in op.attributes
        or op.name.startswith("dfrt.")
        for op in module.walk()
    )


def _host_level(module: ModuleOp) -> bool:
    return any(isinstance(op, dfrt.ArenaOp | dfrt.LaunchOp) for op in module.walk())


def bisect(
    module: ModuleOp,
    pipeline: PassPipeline,
    entry: str,
    inputs: Sequence[Array],
    tolerance: Tolerance,
    compiled: Callable[[ModuleOp], list[Array]] | None = None,
) -> Bisection:
    """Run `module` (changed in place) through `pipeline` (parsed by the command, once),
    comparing each pass's output
    with the reference interpretation of the input; then `compiled(module)` (the
    compiled run of the pipeline's output), if given."""
    reference = _interpreted(module, entry, inputs)
    result = Bisection([Stage("input", None)])
    for stage_pass in pipeline.passes:
        before = module.clone()
        stage = _after_pass(module, stage_pass, entry, inputs, reference, tolerance)
        result.stages.append(stage)
        if stage.problem is not None:
            result.before, result.after = before, module
            return result
    if compiled is not None and not _graph_level(module):
        result.stages.append(Stage("compiled", None, checked=False))
    elif compiled is not None:
        try:
            problem = difference(compiled(module.clone()), reference, tolerance)
        except DflowError as error:
            problem = f"the compiled run fails: {error.message}"
        result.stages.append(Stage("compiled", problem))
    return result


def _after_pass(
    module: ModuleOp,
    stage_pass: ModulePass,
    entry: str,
    inputs: Sequence[Array],
    reference: Sequence[Array],
    tolerance: Tolerance,
) -> Stage:
    name = stage_pass.name
    try:
        apply_pass(stage_pass, make_context(), module)
        module.verify()
    except DiagnosticException as error:
        return Stage(name, f"the pass fails: {first_line(error)}")
    except DflowError as error:  # an xDSL or plugin pass crashed (`apply_pass` names it)
        return Stage(name, error.message)
    except Exception as error:  # one of dflow's own passes crashed: that is the finding
        return Stage(name, f"{crash_message(name, DFLOW_PACKAGE, error)} (a bug in dflow)")
    if _host_level(module):
        return Stage(name, None, checked=False)
    try:
        got = _interpreted(module, entry, inputs)
    except DflowError as error:
        return Stage(name, f"the program fails after it: {error.message}")
    return Stage(name, difference(got, reference, tolerance))


def write_around(bisection: Bisection, source: str) -> list[Path]:
    """The IR before and after the culprit, beside the input (`-`: here), as
    `NAME.before.mlir` and `NAME.after.mlir`."""
    if bisection.before is None or bisection.after is None:
        return []
    path = Path("stdin.mlir" if source == "-" else source)
    written = [path.with_suffix(".before.mlir"), path.with_suffix(".after.mlir")]
    for target, module in zip(written, (bisection.before, bisection.after), strict=True):
        try:
            target.write_text(str(module) + "\n")
        except OSError as error:
            raise DflowError(f"cannot write {target}: {error.strerror}") from None
    return written


def report(bisection: Bisection) -> str:
    """One line per stage, up to the culprit."""
    lines: list[str] = []
    for stage in bisection.stages[1:]:
        if stage.problem is not None:
            lines.append(f"{stage.name}: DIFFERS: {stage.problem}")
        elif not stage.checked and stage.name == "compiled":
            lines.append("compiled: not run (the pipeline lowers past the graph level)")
        elif not stage.checked:
            lines.append(f"{stage.name}: ok (host-level IR: not interpreted)")
        else:
            lines.append(f"{stage.name}: ok")
    culprit = bisection.culprit
    summary = (
        "every stage agrees with the reference"
        if culprit is None
        else (f"first difference: {culprit.name}")
    )
    return "\n".join([*lines, summary])
