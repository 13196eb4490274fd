"""Everything dflow installs lives under the one `dflow` package: a user's own
`runtime.py`, `transforms.py` or `frontend.py` beside their program shadows none of
it, and the old bare top-level packages are gone.

The `dflow` namespace itself: one function per `df` op (`dflow.relu`, ...), the
`TYPE_CHECKING` imports of `dflow/__init__.py` (what type checkers see), its `__all__`
and the table it imports names from (`_MODULES`, made from `__all__`) agree with
each other and with the dialect's registry (`DF`), and `import dflow` imports no
compiler.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from cli_support import ROOT, run_dflow

import dflow
from dflow.dialects.df import DF
from dflow.frontend import ops

FORMER_TOP_LEVEL = ("dialects", "transforms", "lowering", "runtime", "frontend", "analysis")


def test_no_bare_top_level_package_is_installed(tmp_path: Path) -> None:
    """From a folder of the user's, none of the old top-level names imports."""
    probe = "import importlib.util as u, sys; print([n for n in sys.argv[1:] if u.find_spec(n)])"
    found = subprocess.run(
        [sys.executable, "-c", probe, *FORMER_TOP_LEVEL],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert found == "[]"


def test_a_users_modules_do_not_shadow_dflow(tmp_path: Path) -> None:
    """`python -m dflow run` from a folder holding `runtime.py`, `transforms.py`,
    `frontend.py` (and the other old names), each of which would fail loudly if
    imported, runs the example compiled and interpreted."""
    for name in FORMER_TOP_LEVEL:
        (tmp_path / f"{name}.py").write_text(f"raise ImportError('the user\\'s {name}.py')\n")
    environment = {**os.environ, "DFLOW_CACHE_DIR": str(tmp_path / "cache")}
    for mode in ([], ["--interpret"]):
        run = run_dflow("run", ROOT / "examples" / "mlp.mlir", *mode, env=environment, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("out0: shape scalar float32 value 40.2"), run.stdout


WITHOUT_FUNCTION: dict[str, str] = {
    "df.conv2d_nchwc": "made by df-layout in the lowering, from a df.conv2d",
    "df.max_pool2d_nchwc": "made by df-layout in the lowering, from a df.max_pool2d",
    "df.avg_pool2d_nchwc": "made by df-layout in the lowering, from a df.avg_pool2d",
    "df.send": "made by df-partition between the parts of a partitioned function",
    "df.recv": "made by df-partition between the parts of a partitioned function",
    "df.fused": "made by df-fuse in the lowering, around a fusion group",
    "df.yield": "ends the body of a df.fused",
}
"""The `df` ops with no function in `dflow`, each with its reason: a program written
in Python never holds them."""

ALIASES: dict[str, str] = {"where": "select"}
"""Functions that are another op's function under a second name (NumPy's)."""


def _type_checking_imports() -> dict[str, str]:
    """Each name the `if TYPE_CHECKING:` block of `dflow/__init__.py` imports, with
    the module it imports it from."""
    tree = ast.parse((ROOT / "dflow" / "__init__.py").read_text())
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    return {
        alias.asname or alias.name: node.module or ""
        for node in blocks[0].body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_static_imports_all_and_the_import_table_agree() -> None:
    """What type checkers see (`TYPE_CHECKING`), what `import *` and `help` see
    (`__all__`) and what `dflow.NAME` imports (`_MODULES`) are the same names, each
    from the same module."""
    table: dict[str, str] = dflow._MODULES  # pyright: ignore[reportPrivateUsage]
    assert _type_checking_imports() == table
    assert dflow.__all__ == sorted(dflow.__all__)
    assert set(dflow.__all__) == {*table, "__version__"}
    assert set(dflow._HOMES) <= set(table)  # pyright: ignore[reportPrivateUsage]
    for name, module in table.items():
        assert getattr(dflow, name) is getattr(sys.modules[module], name), name


def _op_functions() -> set[str]:
    """The names `dflow` imports from `dflow.frontend.ops`."""
    table: dict[str, str] = dflow._MODULES  # pyright: ignore[reportPrivateUsage]
    return {name for name, module in table.items() if module == ops.__name__}


def test_every_df_op_has_its_function() -> None:
    """`dflow.NAME` for each op `df.NAME` of the dialect, but those that
    `WITHOUT_FUNCTION` names (each for its reason), and `ALIASES`."""
    names = {op.name for op in DF.operations}
    assert set(WITHOUT_FUNCTION) <= names, sorted(set(WITHOUT_FUNCTION) - names)
    expected = {name.removeprefix("df.") for name in names - set(WITHOUT_FUNCTION)}
    assert _op_functions() == expected | set(ALIASES)
    for alias, name in ALIASES.items():
        assert getattr(ops, alias) is getattr(ops, name)


def test_every_function_of_the_ops_module_is_exported() -> None:
    """A public function of `dflow.frontend.ops` is a `dflow` name too."""
    defined = {
        name
        for name, value in vars(ops).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == ops.__name__
    }
    assert defined == _op_functions()


def test_importing_dflow_and_listing_its_names_imports_no_compiler() -> None:
    """`import dflow`, `dflow.__all__` and `dir(dflow)` stay cheap: the names are
    listed without importing xDSL or the modules that define them."""
    probe = (
        "import sys, dflow; dflow.__all__; dir(dflow); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('xdsl', 'dflow')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "['dflow']"
