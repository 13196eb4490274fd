"""From a program's text to a module every command and `dflow.compile` can use:
parse and verify (`source`), run the passes of `-p` (checked before the text is
read) and verify again, and, for what will run, refuse what cannot: a call of a
declaration, a receive no send matches, a partitioned module whose parts disagree
with their whole functions."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from dflow.driver.errors import DflowError
from dflow.driver.loading.partitioned import check_parts
from dflow.driver.loading.pipeline import parsed_pipeline, run_pipeline
from dflow.driver.loading.source import location_of, parse_module, verify
from dflow.driver.loading.wellformed import check_runnable


def load_text(text: str, name: str, passes: str = "") -> ModuleOp:
    """The verified module of `text` (messages name it `name`), through `passes`."""
    parsed_pipeline(passes)
    return run_passes(parse_module(text, name), passes)


def load_module(module: ModuleOp, passes: str = "") -> ModuleOp:
    """`module` (built in Python rather than parsed) verified, through `passes`."""
    parsed_pipeline(passes)
    verify(module)
    return run_passes(module, passes)


def run_passes(module: ModuleOp, passes: str) -> ModuleOp:
    """`module`, verified already, through `passes` and verified again."""
    if passes:
        run_pipeline(module, passes)
        verify(module)
    return module


def check_runnable_module(module: ModuleOp) -> None:
    """A one-line error for a module that could not run (see the module docstring)."""
    check_parts(module)
    failure = check_runnable(module)
    if failure is not None:
        op, message = failure
        raise DflowError(message, location_of(op))
