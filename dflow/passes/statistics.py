"""What a pass did, for a user who asks (`stats=true` on every `df-*` rewrite pass).

A pass measures the module before and after (ops, and bytes held in constants)
and counts how many times each of its patterns fired; the report goes to stderr
so the IR on stdout stays clean:

    df-simplify-arith: 3 rewrites; ops 12 -> 9 (-3); constant bytes 40 -> 36 (-4)
      RemoveMulByOne: 2
      RemoveAddZero: 1
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from dflow.dialects.df.arrays import to_array
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.folding import stored_bytes


def report(text: str) -> None:
    """Where every pass's `stats=true` goes: standard error, so that the IR on standard
    output stays clean. The rewrite passes report a `PassStatistics`; passes whose
    figures are their own (df-schedule's orders, df-place-devices' table,
    df-recompute's peaks) report their text here too."""
    print(text, file=sys.stderr)


@dataclass(frozen=True)
class ModuleSize:
    """The ops inside the module's functions and the bytes their constants hold."""

    ops: int
    constant_bytes: int

    @staticmethod
    def of(module: ModuleOp) -> ModuleSize:
        ops = 0
        constant_bytes = 0
        for op in module.walk():
            if isinstance(op, ModuleOp | FuncOp):
                continue
            ops += 1
            if isinstance(op, ConstantOp):
                constant_bytes += stored_bytes(to_array(op.value))
        return ModuleSize(ops, constant_bytes)


@dataclass
class CountingPattern(RewritePattern):
    """Runs `pattern` and counts, under its class name, each time it changed the IR."""

    pattern: RewritePattern
    counts: Counter[str]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        acted_before = rewriter.has_done_action
        self.pattern.match_and_rewrite(op, rewriter)
        if rewriter.has_done_action and not acted_before:
            self.counts[type(self.pattern).__name__] += 1


@dataclass
class PassStatistics:
    """Counts of one pass run; `report()` prints them when the user asked."""

    pass_name: str
    enabled: bool
    counts: Counter[str] = field(default_factory=Counter[str])
    figures: dict[str, int] = field(default_factory=dict[str, int])
    before: ModuleSize | None = None
    after: ModuleSize | None = None

    def counting(self, patterns: Iterable[RewritePattern]) -> list[RewritePattern]:
        """The patterns wrapped so that each firing is counted (as is, when disabled)."""
        if not self.enabled:
            return list(patterns)
        return [CountingPattern(pattern, self.counts) for pattern in patterns]

    def count(self, what: str, times: int = 1) -> None:
        """Count an action that is not a pattern (a pruned result, a merged op)."""
        if times:
            self.counts[what] += times

    def record(self, what: str, value: int) -> None:
        """Note a figure that is not a rewrite (the rounds a fixed point took)."""
        self.figures[what] = value

    def start(self, module: ModuleOp) -> None:
        if self.enabled:
            self.before = ModuleSize.of(module)

    def finish(self, module: ModuleOp) -> None:
        if self.enabled:
            self.after = ModuleSize.of(module)
            report(self.summary())

    def summary(self) -> str:
        assert self.before is not None and self.after is not None
        before, after = self.before, self.after
        lines = [
            f"{self.pass_name}: {self.counts.total()} rewrites; "
            f"ops {before.ops} -> {after.ops} ({after.ops - before.ops:+d}); "
            f"constant bytes {before.constant_bytes} -> {after.constant_bytes} "
            f"({after.constant_bytes - before.constant_bytes:+d})"
        ]
        lines += [f"  {name}: {times}" for name, times in sorted(self.counts.items())]
        lines += [f"  ({name}: {value})" for name, value in sorted(self.figures.items())]
        return "\n".join(lines)
