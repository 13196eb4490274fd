"""The names the lowering gives kernels and library calls, which the backend reads.

Kernel names are unique within a module: `df-fuse` names its groups, `df-bufferize`
the kernels of the other ops. Names are identifiers (`df.fused` verifies it), so
every target can print them as function names. Library routines are called by a
prefixed name that each target strips to find its own routine; the prefix lives
here, not in the kernel builder, so a backend reads it without importing the builder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LIBRARY_PREFIX = "dflow_"
"""Library routines are declared as `func.func private @dflow_<routine>_<element>`."""


@dataclass
class KernelNames:
    """The names in use in one module, and a counter numbering new ones."""

    taken: set[str]
    count: int = 0

    def numbered(self, stem: str) -> str:
        """`<stem>_<n>`, `n` counting up through the module, skipping names in use;
        characters that are not identifier characters become `_`."""
        stem = re.sub(r"[^A-Za-z0-9_]", "_", stem)
        while True:
            name = f"{stem}_{self.count}"
            self.count += 1
            if name not in self.taken:
                self.taken.add(name)
                return name

    def keep(self, name: str) -> str:
        """`name` itself where it is free, else `name_1`, `name_2`, ..."""
        unique, n = name, 1
        while unique in self.taken:
            unique, n = f"{name}_{n}", n + 1
        self.taken.add(unique)
        return unique
