"""Print the commands of the README's "Two commands" block, one a line, for `.ci/run`.

The block is the first fenced `sh` block under the `## Two commands` heading; its
comment lines are dropped. Exactly two commands are expected: one that installs and runs
an example, one that installs the development tools and runs every test.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SECTION = re.compile(r"^## Two commands\n(.*?)^## ", re.DOTALL | re.MULTILINE)
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)


def commands(readme: str) -> list[str]:
    """The two commands of `readme`'s "Two commands" section, in order."""
    section = SECTION.search(readme)
    block = BLOCK.search(section.group(1)) if section else None
    if block is None:
        raise SystemExit("README.md has no ```sh block under '## Two commands'")
    lines = [line.strip() for line in block.group(1).splitlines()]
    found = [line for line in lines if line and not line.startswith("#")]
    if len(found) != 2:
        raise SystemExit(f"README.md's '## Two commands' block has {len(found)} commands, not 2")
    return found


if __name__ == "__main__":
    print("\n".join(commands(Path(sys.argv[1]).read_text())))
