"""Pass pipelines by their `xdsl-opt` spelling, for the command line and the tests.

`apply_pipeline(module, "df-optimize,cse")` runs the same passes, parsed the same
way, as `xdsl-opt -p 'df-optimize,cse'`: xDSL's passes and dflow's together.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes as get_xdsl_passes

from dflow.source import make_context
from dflow.universe import get_all_passes as get_dflow_passes


@cache
def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xDSL's passes and dflow's, by name (dflow's names never clash: `df-*`)."""
    return {**get_xdsl_passes(), **get_dflow_passes()}


@cache
def parsed_pipeline(spec: str) -> PassPipeline:
    """The passes of `spec`, parsed once per spec (xDSL's option parsing takes
    milliseconds; the passes are frozen dataclasses, safe to run again)."""
    return PassPipeline.parse_spec(available_passes(), spec)


def apply_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    """Run the comma-separated passes of `spec` on `module` in place; return it."""
    parsed_pipeline(spec).apply(make_context(), module)
    return module
