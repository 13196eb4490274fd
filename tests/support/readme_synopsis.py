"""The README's command-line synopsis, generated from dflow's argparse parser.

The block under the README's `## Command line` heading is this module's `synopsis()`
exactly (`tests/test_readme.py` checks it), so the synopsis can neither list an option
the parser lacks nor miss one it has. After changing an option, rewrite the block with
`python3 tests/support/readme_synopsis.py --write`.

One line per command (wrapped at `WIDTH`): the positional arguments, then each option
as declared, its first spelling (`-p`, not `--passes`) with its metavar; optional ones
in brackets, one that may be repeated followed by `...`, choices as `a|b`.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from dflow.driver.frontdoors.cli import parser

README = Path(__file__).resolve().parents[2] / "README.md"
WIDTH = 92
"""The widest line of the synopsis (the README's code blocks stay readable)."""

BLOCK = re.compile(r"(^## Command line\n\n```\n)(.*?)(^```\n)", re.DOTALL | re.MULTILINE)


def _word(action: argparse.Action) -> str:
    """How `action` reads in the synopsis: `FILE`, `info|clear`, `-p PIPELINE`, `--json`."""
    if action.choices is not None:
        value = "|".join(map(str, action.choices))
    else:
        value = str(action.metavar or action.dest.upper())
    if not action.option_strings:
        return value
    flag = action.option_strings[0]
    takes_value = action.nargs != 0
    word = f"{flag} {value}" if takes_value else flag
    if isinstance(action, argparse._AppendAction):  # pyright: ignore[reportPrivateUsage]
        word = f"{word} ..."
    return word if action.required else f"[{word}]"


def _lines(name: str, words: list[str]) -> list[str]:
    """`dflow NAME words...`, wrapped under the first word after the name."""
    head = f"dflow {name}"
    lines = [head]
    for word in words:
        if len(lines[-1]) + 1 + len(word) > WIDTH:
            lines.append(" " * len(head))
        lines[-1] = f"{lines[-1]} {word}"
    return lines


def commands_of(top: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's subparser, by name, in the order the parser declares them."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in top._actions:  # pyright: ignore[reportPrivateUsage]
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            for name, command in action.choices.items():  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
                assert isinstance(command, argparse.ArgumentParser)
                found[str(name)] = command  # pyright: ignore[reportUnknownArgumentType]
    return found


def synopsis() -> str:
    """Every command of `dflow`, then `dflow --version`, as the README lists them."""
    top = parser()
    lines: list[str] = []
    for name, command in commands_of(top).items():
        actions = [
            a
            for a in command._actions  # pyright: ignore[reportPrivateUsage]
            if not isinstance(a, argparse._HelpAction)  # pyright: ignore[reportPrivateUsage]
        ]
        positional = [_word(a) for a in actions if not a.option_strings]
        optional = [_word(a) for a in actions if a.option_strings]
        lines += _lines(name, positional + optional)
    lines.append("dflow --version")
    return "\n".join(lines) + "\n"


def readme_block(text: str) -> str:
    """The synopsis block of the README's text."""
    found = BLOCK.search(text)
    if found is None:
        raise SystemExit("README.md has no ``` block right under '## Command line'")
    return found.group(2)


def main() -> None:
    """Print the synopsis; with `--write`, put it in the README in place of the old."""
    text = synopsis()
    if sys.argv[1:] == ["--write"]:
        readme = README.read_text()
        README.write_text(BLOCK.sub(lambda m: m.group(1) + text + m.group(3), readme, count=1))
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
