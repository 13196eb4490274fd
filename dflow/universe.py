"""dflow's entry into `xdsl-opt`: lazily loaded dialects, passes and targets.

Registered as the `xdsl.universe` entry point; every value is a zero-argument
factory so that listing passes does not import the compiler.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def get_df() -> Dialect:
        from dialects.df import DF

        return DF

    return {"df": get_df}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {}


DFLOW_UNIVERSE = Universe(all_dialects=get_all_dialects(), all_passes=get_all_passes())
