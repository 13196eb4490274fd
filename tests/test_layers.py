"""dflow's packages import downward only, as `docs/architecture.md` draws them:

    runtime                       imports nothing of the compiler
    dialects                      df and dfrt: ops, types, shape rules, folders
    analysis, interpreters, passes    what several passes share; the reference semantics run;
                                  pass failures and statistics
    transforms, lowering, frontend    graph passes; the lowering passes; the builder
    backend                       the numba target
    driver (and dflow itself)     command line, pipelines, cache, xdsl-opt plugin

A module may import its own package and any package of a lower layer; never a
package of its own layer (sideways) or of a higher one. Every import counts, at
module level or inside a function. The driver's rooms are layered the same way:

    errors, universe              the driver's own root: one-line errors, the plugin
    loading                       a program in, checked
    compilation                   devices, lowering, cache, ranks, the interpreter
    tools                         opt, bisect, reduce, viz, plan, profiling
    frontdoors                    the command line and the Python API
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dflow"

LAYERS: dict[str, int] = {
    "runtime": 0,
    "dialects": 1,
    "analysis": 2,
    "passes": 2,
    "interpreters": 2,
    "transforms": 3,
    "lowering": 3,
    "frontend": 3,
    "backend": 4,
    "driver": 5,
    "": 6,  # dflow/__init__.py and dflow/__main__.py
}

EXCEPTIONS: dict[tuple[str, str], str] = {
    (
        "dflow.dialects.df.base",
        "dflow.transforms.canonicalization_patterns.df",
    ): "an op's canonicalization patterns live with the other rewrite patterns and are "
    "imported when `canonicalize` asks for them, as xDSL's own ops do",
    (
        "dflow.frontend.builder",
        "dflow.driver.frontdoors.api",
    ): "`Graph.compile` is a shortcut for `dflow.compile(graph)`: it imports the driver "
    "when it is called",
}
"""Imports that go upward on purpose, each with its reason."""

ROOMS: dict[str, int] = {"": 0, "loading": 1, "compilation": 2, "tools": 3, "frontdoors": 4}
"""The driver's sub-packages, lowest first (`` is the driver's own modules)."""


def module_name(path: Path) -> str:
    parts = ["dflow", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every `dflow...` module `path` imports, wherever the import stands."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name == "dflow" or name.startswith("dflow.")}


def package_of(module: str) -> str:
    """`transforms` for `dflow.transforms.prune`; `` for `dflow` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else ""


def _excepted(source: str, target: str) -> bool:
    return any(
        source == importer and (target == module or target.startswith(f"{module}."))
        for importer, module in EXCEPTIONS
    )


def violations(edges: dict[str, set[str]]) -> list[str]:
    """The imports that go sideways or upward, as `importer -> imported (why)`."""
    found: list[str] = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            low, high = package_of(source), package_of(target)
            if low == high or _excepted(source, target):
                continue
            if LAYERS[high] >= LAYERS[low]:
                way = "sideways" if LAYERS[high] == LAYERS[low] else "upward"
                found.append(f"{source} -> {target} ({way}: {low or 'dflow'} -> {high})")
    return found


def room_of(module: str) -> str | None:
    """`tools` for `dflow.driver.tools.bisect`, `` for `dflow.driver.errors`; None for
    a module outside the driver."""
    parts = module.split(".")
    if parts[:2] != ["dflow", "driver"]:
        return None
    return parts[2] if len(parts) > 3 and parts[2] in ROOMS else ""


def room_violations(edges: dict[str, set[str]]) -> list[str]:
    """The imports between the driver's rooms that go sideways or upward."""
    found: list[str] = []
    for source, targets in sorted(edges.items()):
        low = room_of(source)
        for target in sorted(targets):
            high = room_of(target)
            if low is None or high is None or low == high:
                continue
            if ROOMS[high] >= ROOMS[low]:
                way = "sideways" if ROOMS[high] == ROOMS[low] else "upward"
                found.append(f"{source} -> {target} ({way}: {low or 'driver'} -> {high})")
    return found


def import_graph() -> dict[str, set[str]]:
    return {module_name(path): imported(path) for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_package_is_in_a_layer() -> None:
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert packages == set(LAYERS) - {""}


def test_imports_go_downward_only() -> None:
    graph = import_graph()
    assert len(graph) > 80  # every module was read
    assert not violations(graph), "\n".join(violations(graph))


def test_the_drivers_rooms_import_downward_only() -> None:
    graph = import_graph()
    rooms = {room_of(module) for module in graph} - {None}
    driver = PACKAGE / "driver"
    assert rooms == {"", *(p.name for p in driver.iterdir() if (p / "__init__.py").exists())}
    assert rooms == set(ROOMS)
    assert not room_violations(graph), "\n".join(room_violations(graph))


def test_the_room_check_catches_upward_imports() -> None:
    edges = {
        "dflow.driver.loading.feeds": {"dflow.driver.compilation.cache", "dflow.driver.errors"},
        "dflow.driver.errors": {"dflow.driver.tools.opt"},
        "dflow.driver.tools.bisect": {"dflow.driver.compilation.compiler", "dflow.dialects"},
    }
    assert room_violations(edges) == [
        "dflow.driver.errors -> dflow.driver.tools.opt (upward: driver -> tools)",
        "dflow.driver.loading.feeds -> dflow.driver.compilation.cache "
        "(upward: loading -> compilation)",
    ]


def test_the_exceptions_are_still_needed() -> None:
    graph = import_graph()
    for source, target in EXCEPTIONS:
        assert target in graph[source], f"{source} no longer imports {target}: drop the exception"


def test_the_check_catches_sideways_and_upward_imports() -> None:
    edges = {
        "dflow.transforms.recompute.budget": {"dflow.lowering.plan_buffers"},
        "dflow.dialects.df.base": {"dflow.passes.statistics"},
        "dflow.runtime.program": {"dflow.driver.compilation.compiler"},
        "dflow.lowering.fuse": {"dflow.lowering.kernels", "dflow.dialects.df"},
    }
    assert violations(edges) == [
        "dflow.dialects.df.base -> dflow.passes.statistics (upward: dialects -> passes)",
        "dflow.runtime.program -> dflow.driver.compilation.compiler (upward: runtime -> driver)",
        "dflow.transforms.recompute.budget -> dflow.lowering.plan_buffers "
        "(sideways: transforms -> lowering)",
    ]
