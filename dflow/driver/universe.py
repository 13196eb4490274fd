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
    "df-fold-constants": ("dflow.transforms.fold_constants", "FoldConstantsPass"),
    "df-simplify-arith": ("dflow.transforms.simplify_arith", "SimplifyArithPass"),
    "df-prune": ("dflow.transforms.prune", "PrunePass"),
    "df-autodiff": ("dflow.transforms.autodiff", "AutodiffPass"),
    "df-recompute": ("dflow.transforms.recompute", "RecomputePass"),
    "df-optimize": ("dflow.transforms.optimize", "OptimizePass"),
    "df-place-devices": ("dflow.backend.numba.capabilities", "NumbaPlaceDevicesPass"),
    "df-partition": ("dflow.lowering.partition", "PartitionPass"),
    "df-layout": ("dflow.lowering.layout", "LayoutPass"),
    "df-widen": ("dflow.lowering.widen", "WidenPass"),
    "df-fuse": ("dflow.lowering.fuse", "FusePass"),
    "df-schedule": ("dflow.transforms.schedule", "SchedulePass"),
    "df-plan-buffers": ("dflow.lowering.plan_buffers", "PlanBuffersPass"),
    "df-inline": ("dflow.lowering.inline", "InlinePass"),
    "df-bufferize": ("dflow.lowering.bufferize", "BufferizePass"),
    "df-collapse-loops": ("dflow.lowering.collapse_loops", "CollapseLoopsPass"),
    "df-lower-host": ("dflow.lowering.lower_host", "LowerHostPass"),
}
"""Each pass name with the module and class that define it: the names written out
again, as listing passes must not import them (tests/test_universe.py checks each is
its class's `name`; tests/test_registry.py that every pass class of dflow is here)."""


def _load_pass(module: str, class_name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        loaded: type[ModulePass] = getattr(import_module(module), class_name)
        return loaded

    return load


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def get_df() -> Dialect:
        from dflow.dialects.df import DF

        return DF

    def get_dfrt() -> Dialect:
        from dflow.dialects.dfrt import DFRT

        return DFRT

    return {"df": get_df, "dfrt": get_dfrt}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {name: _load_pass(*where) for name, where in PASSES.items()}


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    def get_numba() -> type[Target]:
        from dflow.backend.numba.module import NumbaTarget

        return NumbaTarget

    def get_llvm() -> type[Target]:
        from dflow.backend.llvm.module import LlvmTarget

        return LlvmTarget

    return {"numba": get_numba, "df-llvm": get_llvm}


DFLOW_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    all_targets=get_all_targets(),
)
