"""Installing a test-only xDSL plugin package, as pip would leave it: the package and
its `.dist-info` (with the `xdsl.universe` entry point) in a folder on `PYTHONPATH`.
The distribution's name, `dflow-test-plugins`, differs from the module's
(`dflowtestplug`), as a pip name often does: errors name the distribution."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = "dflowtestplug"
DISTRIBUTION = "dflow-test-plugins"

PLUGIN = '''
"""Test-only passes, wrong on purpose."""
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.universe import Universe

from dflow.dialects import df


@dataclass(frozen=True)
class FlipAddPass(ModulePass):
    """Wrong on purpose: every df.add becomes a df.sub."""

    name = "test-flip-add"

    def apply(self, ctx, op):
        for add in [o for o in op.walk() if isinstance(o, df.AddOp)]:
            Rewriter.replace_op(add, df.SubOp(add.lhs, add.rhs, dict(add.attributes)))


@dataclass(frozen=True)
class FailPass(ModulePass):
    name = "test-fail"

    def apply(self, ctx, op):
        from xdsl.utils.exceptions import PassFailedException

        raise PassFailedException("test-fail: it always fails")


@dataclass(frozen=True)
class CrashPass(ModulePass):
    name = "test-crash"

    def apply(self, ctx, op):
        raise ValueError("a bug in the plugin")


@dataclass(frozen=True)
class CrashOnPatternPass(ModulePass):
    """A bug on purpose: it crashes on a df.tanh of a df.matmul."""

    name = "test-crash-on-pattern"

    def apply(self, ctx, op):
        for tanh in [o for o in op.walk() if isinstance(o, df.TanhOp)]:
            if isinstance(tanh.operands[0].owner, df.MatmulOp):
                raise RuntimeError("tanh of matmul is not handled")



UNIVERSE = Universe(
    all_passes={
        "test-flip-add": lambda: FlipAddPass,
        "test-fail": lambda: FailPass,
        "test-crash": lambda: CrashPass,
        "test-crash-on-pattern": lambda: CrashOnPatternPass,
    }
)
'''


def install_plugin(root: Path) -> dict[str, str]:
    """The `dflowtestplug` package (`PLUGIN`) of distribution `dflow-test-plugins`
    installed under `root`, with its entry point; the environment in which xDSL
    finds it."""
    (root / PACKAGE).mkdir(parents=True)
    (root / PACKAGE / "__init__.py").write_text(PLUGIN)
    info = root / f"{DISTRIBUTION.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DISTRIBUTION}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[xdsl.universe]\n{PACKAGE} = {PACKAGE}:UNIVERSE\n")
    return {**os.environ, "PYTHONPATH": str(root)}
