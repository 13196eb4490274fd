"""Pass pipelines by their `xdsl-opt` spelling, for the command line and the tests.

`apply_pipeline(module, "df-optimize,cse")` runs the same passes, parsed the same
way, as `xdsl-opt -p 'df-optimize,cse'`: xDSL's passes and dflow's together. What
xDSL reports with a traceback, `parsed_pipeline` reports as one `DflowError` line:
an unknown pass (with the nearest names), an unknown option (with the pass's
options, spelled as on the command line), a value of the wrong kind (with the kind
expected). A string option's value needs no quotes (`report=out/place.json`).

Every pass runs through `apply_pass`, whatever runs it (`dflow opt`, the `-p` of
`run`, `compile` and `plan`, `dflow bisect`): a pass of xDSL's or of a plugin that
crashes (raises anything but a diagnostic) is one `DflowError` line naming the pass
and the distribution that registered it (`pass test-crash from package
dflow-test-plugins raised ValueError: ...`), so the user knows whose bug it is; a
crash of dflow's own passes stays dflow's internal error.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import traceback
import types
from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes as get_xdsl_passes
from xdsl.universe import Universe
from xdsl.utils.arg_spec import ArgSpec, ParameterListType, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.utils.hints import isa

from dflow.driver.errors import DflowError, first_line
from dflow.driver.loading.source import make_context
from dflow.driver.universe import get_all_passes as get_dflow_passes

DFLOW_PACKAGE = "dflow"


@cache
def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every installed `xdsl.universe`'s passes by name, as `xdsl-opt` sees them:
    xDSL's, dflow's (`df-*`) and any plugin's; where a plugin's universe cannot load,
    xDSL's and dflow's alone (`plugin_failure` says why)."""
    if plugin_failure() is not None:
        return {**get_xdsl_passes(), **get_dflow_passes()}
    return dict(Universe.get_multiverse().all_passes)


@cache
def plugin_failure() -> str | None:
    """Why the installed `xdsl.universe` plugins cannot be loaded together, if so."""
    try:
        Universe.get_multiverse()
    except Exception as error:  # a third party's import may raise anything
        return f"{type(error).__name__}: {first_line(error)}"
    return None


@cache
def parsed_pipeline(spec: str) -> PassPipeline:
    """The passes of `spec`, parsed and checked once per spec (xDSL's option parsing
    takes milliseconds; the passes are frozen dataclasses, safe to run again)."""
    try:
        specs = list(parse_pipeline(_quote_paths(spec)))
    except ArgSpecParseError as error:
        raise DflowError(f"in pipeline {spec!r}: {_spec_error(error)}") from None
    return PassPipeline(tuple(_make_pass(arguments) for arguments in specs))


def apply_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    """Run the comma-separated passes of `spec` on `module` in place; return it."""
    return apply_parsed(module, parsed_pipeline(spec))


def apply_parsed(module: ModuleOp, pipeline: PassPipeline) -> ModuleOp:
    """Run the passes of `pipeline` (parsed once, `parsed_pipeline`) on `module` in
    place, each through `apply_pass`; return it."""
    context = make_context()
    for module_pass in pipeline.passes:
        apply_pass(module_pass, context, module)
    return module


def apply_pass(module_pass: ModulePass, context: Context, module: ModuleOp) -> None:
    """Run one pass on `module`. A pass that is not dflow's and crashes (raises
    anything but a `DiagnosticException`, a `DflowError` or a `MemoryError`) raises
    a `DflowError` naming the pass and its package (`crash_message`): a bug of xDSL's
    or of a plugin, not of dflow nor of the program. `DFLOW_TRACEBACK=1` prints
    where it crashed. dflow's own passes' crashes go on as they are (internal
    errors)."""
    try:
        module_pass.apply(context, module)
    except (DiagnosticException, DflowError, MemoryError):
        raise
    except Exception as error:
        package = pass_package(module_pass)
        if package == DFLOW_PACKAGE:
            raise
        if os.environ.get("DFLOW_TRACEBACK"):
            traceback.print_exception(error)
        raise DflowError(crash_message(module_pass.name, package, error)) from error


def crash_message(pass_name: str, package: str, error: Exception) -> str:
    """`pass NAME from package PACKAGE raised TYPE: first line`: one line for a pass
    that crashed, as the command line and `dflow bisect` report it."""
    return (
        f"pass {pass_name} from package {package} raised "
        f"{type(error).__name__}: {first_line(error)}"
    )


def pass_package(module_pass: ModulePass) -> str:
    """The distribution that registers `module_pass` through its `xdsl.universe`
    entry point (`xdsl`, `dflow`, a plugin's such as `dflow-test-plugins`); for a
    pass no entry point names (built in Python and run directly), the top-level
    module of its class."""
    found = _registered_passes().get(module_pass.name)
    return found or type(module_pass).__module__.split(".")[0]


@cache
def _registered_passes() -> dict[str, str]:
    """Each pass name of every loadable `xdsl.universe` entry point with its package
    (a plugin that cannot load names none: `plugin_failure` reports it)."""
    packages: dict[str, str] = {}
    for entry in entry_points(group="xdsl.universe"):
        try:
            universe = entry.load()
        except Exception:
            continue
        if isinstance(universe, Universe):
            packages.update(dict.fromkeys(universe.all_passes, _distribution(entry)))
    return packages


def _distribution(entry: EntryPoint) -> str:
    """The name of the distribution that declares `entry` (its top-level module where
    the entry point belongs to none)."""
    return entry.dist.name if entry.dist is not None else entry.module.split(".")[0]


def run_parsed(module: ModuleOp, pipeline: PassPipeline) -> ModuleOp:
    """`apply_parsed` for the command line: a pass that fails raises `DflowError` with
    the first line of its message."""
    try:
        return apply_parsed(module, pipeline)
    except DiagnosticException as error:
        raise DflowError(first_line(error)) from None


_UNQUOTED_VALUE = re.compile(r"(?<=[{\s])([A-Za-z0-9_-]+)=([^\s\"{}]*[./:][^\s\"{}]*)(?=[\s}])")
"""`key=value` whose value holds `.`, `/` or `:`: a path or a device list, unless it
is numbers, which xDSL's lexer takes only in quotes."""

_NUMBER = re.compile(r"[-+]?[0-9]+(\.[0-9]*([eE][-+]?[0-9]+)?)?")


def _quote_paths(spec: str) -> str:
    def quote(match: re.Match[str]) -> str:
        value = match.group(2)
        if all(_NUMBER.fullmatch(element) for element in value.split(",")):
            return match.group(0)
        return f'{match.group(1)}="{value}"'

    return _UNQUOTED_VALUE.sub(quote, spec)


def _spec_error(error: ArgSpecParseError) -> str:
    """xDSL's multi-line message as `column N: what`."""
    lines = str(error).strip().splitlines()
    column = lines[1].rsplit(":", 1)[-1] if len(lines) > 1 else "?"
    return f"column {column}: {lines[-1].strip()}"


def _make_pass(arguments: ArgSpec) -> ModulePass:
    passes = available_passes()
    if arguments.name not in passes:
        near = difflib.get_close_matches(arguments.name, passes, n=3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        failure = plugin_failure()
        plugins = f"; the xdsl.universe plugins failed to load ({failure})" if failure else ""
        raise DflowError(f"unknown pass {arguments.name!r}{hint}{plugins}")
    pass_type = passes[arguments.name]()
    _check_options(pass_type, arguments)
    try:
        return pass_type.from_pass_spec(arguments)
    except (ValueError, TypeError) as error:
        raise DflowError(f"{arguments.name}: {error}") from None


def option_names(pass_type: type[ModulePass]) -> list[str]:
    """A pass's options as spelled on the command line (`max-iterations`)."""
    return [f.name.replace("_", "-") for f in dataclasses.fields(pass_type) if f.init]


def _check_options(pass_type: type[ModulePass], arguments: ArgSpec) -> None:
    """Every option of `arguments` is one of the pass's, with a value of its type."""
    hints = get_type_hints(pass_type)
    known = option_names(pass_type)
    for key, values in arguments.parameters.items():
        option = key.replace("_", "-")
        if option not in known:
            listed = ", ".join(known) or "none"
            raise DflowError(f"{arguments.name} has no option {key!r} (options: {listed})")
        expected = hints[option.replace("-", "_")]
        if not _accepts(expected, values):
            given = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
            raise DflowError(
                f"{arguments.name}: {option}={given or '(nothing)'} is not {_describe(expected)}"
            )


def _accepts(expected: Any, values: ParameterListType) -> bool:
    """As xDSL converts: no value for an optional, one value of the type, or a tuple."""
    if not values:
        return _is_optional(expected)
    if len(values) == 1 and isa(values[0], expected):
        return not (isinstance(values[0], bool) and _is_numeric(expected))
    return isa(values, expected)


def _is_optional(expected: Any) -> bool:
    return get_origin(expected) in (Union, types.UnionType) and type(None) in get_args(expected)


def _is_numeric(expected: Any) -> bool:
    """`int`, `float` or a union of them (where `true` would pass as the number 1)."""
    arguments = set(get_args(expected))
    return expected in (int, float) or (bool(arguments) and arguments <= {int, float, type(None)})


def _describe(expected: Any) -> str:
    """The kind of value an option takes, in words."""
    if get_origin(expected) is Literal:
        return "one of " + ", ".join(str(choice) for choice in get_args(expected))
    if get_origin(expected) is tuple:
        return f"a comma-separated list, each {_describe(get_args(expected)[0])}"
    if get_origin(expected) in (Union, types.UnionType):
        kinds = [a for a in get_args(expected) if a is not type(None)]
        if set(kinds) == {int, float}:
            return "a number"
        return " or ".join(_describe(kind) for kind in kinds)
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    return names.get(expected, str(expected))
