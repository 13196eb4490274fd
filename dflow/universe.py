"""dflow's entry into `xdsl-opt`: lazily loaded dialects, passes and targets.

Registered as the `xdsl.universe` entry point; every value is a zero-argument
factory so that listing passes does not import the compiler.
"""

from collections.abc import Callable
from importlib import import_module

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

PASSES: dict[str, tuple[str, str]] = {
    "df-fold-constants": ("transforms.fold_constants", "FoldConstantsPass"),
    "df-simplify-arith": ("transforms.simplify_arith", "SimplifyArithPass"),
    "df-prune": ("transforms.prune", "PrunePass"),
    "df-autodiff": ("transforms.autodiff", "AutodiffPass"),
    "df-recompute": ("transforms.recompute", "RecomputePass"),
    "df-optimize": ("transforms.optimize", "OptimizePass"),
    "df-place-devices": ("transforms.placement", "PlaceDevicesPass"),
    "df-partition": ("lowering.partition", "PartitionPass"),
    "df-fuse": ("lowering.fuse", "FusePass"),
    "df-plan-buffers": ("lowering.plan_buffers", "PlanBuffersPass"),
    "df-inline": ("lowering.inline", "InlinePass"),
    "df-bufferize": ("lowering.bufferize", "BufferizePass"),
    "df-lower-host": ("lowering.lower_host", "LowerHostPass"),
}
"""Each pass name with the module and class that define it."""


def _load_pass(module: str, class_name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        loaded: type[ModulePass] = getattr(import_module(module), class_name)
        return loaded

    return load


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def get_df() -> Dialect:
        from dialects.df import DF

        return DF

    def get_dfrt() -> Dialect:
        from dialects.dfrt import DFRT

        return DFRT

    return {"df": get_df, "dfrt": get_dfrt}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {name: _load_pass(*where) for name, where in PASSES.items()}


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    def get_numba() -> type[Target]:
        from lowering.emit_numba import NumbaTarget

        return NumbaTarget

    return {"numba": get_numba}


DFLOW_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    all_targets=get_all_targets(),
)
