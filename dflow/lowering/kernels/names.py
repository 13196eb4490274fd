"""Kernel names, unique within a module: `df-fuse` names its groups, `df-bufferize`
the kernels of the other ops. Names are identifiers (`df.fused` verifies it), so
every target can print them as function names."""

from __future__ import annotations

import re
from dataclasses import dataclass


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
