"""`dflow reduce FILE --test COMMAND`: the smallest program that is still interesting.

Delta debugging in the spirit of `mlir-reduce` and C-Reduce. `COMMAND` is a shell
command given a candidate file's path (where it says `{}`, else at its end); it
exits 0 while the candidate is still interesting (still crashes a pass, still
differs between two modes, ...). Each round tries every shrink of
`dflow.driver.tools.reductions` over its sites, first all at once, then in halves,
quarters, ... down to one at a time (a run that stays interesting is kept, and the
sites are counted again); rounds go on until one keeps nothing, or the time is up.
A candidate is tried only when it parses, verifies and is smaller (`size`): so
every program written is valid, and the reduction ends.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from dflow.driver.errors import DflowError
from dflow.driver.loading.source import parse_module
from dflow.driver.tools.reductions import SHRINKS, Shrink, body_ops, size

Test = Callable[[str], bool]
"""Whether a program's text is still interesting."""


@dataclass(frozen=True)
class Verdict:
    """What the test command did with one candidate."""

    interesting: bool
    why: str
    """How it ended, for a message: `exits 1`, `timed out after 60 s`."""


@dataclass(frozen=True)
class CommandTest:
    """`command` run by the shell on a candidate written to `path`."""

    command: str
    path: Path
    timeout: float

    def line(self) -> str:
        quoted = shlex.quote(str(self.path))
        if "{}" in self.command:
            return self.command.replace("{}", quoted)
        return f"{self.command} {quoted}"

    def judge(self, text: str) -> Verdict:
        self.path.write_text(text)
        with subprocess.Popen(
            self.line(),
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a timeout stops the command's whole group
        ) as process:
            try:
                code = process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return Verdict(False, f"timed out after {self.timeout:g} s")
        return Verdict(code == 0, f"exits {code}")

    def __call__(self, text: str) -> bool:
        return self.judge(text).interesting


@dataclass
class Reducer:
    """One reduction's state: the program so far, the tests run, what was kept."""

    module: ModuleOp
    test: Test
    deadline: float
    name: str = "candidate"
    tests: int = 0
    kept: Counter[str] = field(default_factory=Counter[str])
    tried: Counter[str] = field(default_factory=Counter[str])

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    def run(self) -> ModuleOp:
        """Rounds of every shrink until one keeps nothing, or the time is up."""
        progress = True
        while progress and not self.out_of_time():
            progress = False
            for shrink in SHRINKS:
                progress |= self._reduce_by(shrink)
        return self.module

    def _reduce_by(self, shrink: Shrink) -> bool:
        """`shrink` over runs of its sites, halving their length; whether any was
        kept."""
        found = False
        run = shrink.sites(self.module)
        while run >= 1:
            start = 0
            while start < shrink.sites(self.module) and not self.out_of_time():
                count = min(run, shrink.sites(self.module) - start)
                if self._try(shrink, range(start, start + count)):
                    found = True
                else:
                    start += run
            run //= 2
        return found

    def _try(self, shrink: Shrink, chosen: range) -> bool:
        text = shrink.candidate(self.module, chosen)
        try:
            candidate = parse_module(text, self.name)
        except DflowError:
            return False  # does not verify: never shown to the test
        if size(candidate) >= size(self.module):
            return False
        self.tests += 1
        self.tried[shrink.name] += 1
        if not self.test(text):
            return False
        self.kept[shrink.name] += 1
        self.module = candidate
        return True


def op_count(module: ModuleOp) -> int:
    """The ops a reduction counts: those inside functions, terminators aside."""
    return len(body_ops(module))


def reduce(module: ModuleOp, test: Test, seconds: float, name: str = "candidate") -> Reducer:
    """Reduce `module` while `test` holds, for at most `seconds`; the reducer holds
    the result and what it took."""
    reducer = Reducer(module, test, time.monotonic() + seconds, name)
    reducer.run()
    return reducer
