"""The README against the code it describes: its command-line synopsis is the one
argparse's parser gives (`readme_synopsis.py`), every option of every command is in
it, and `.ci/run` finds the two commands of "Two commands"."""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys

from readme_synopsis import README, commands_of, readme_block, synopsis

from dflow.driver.frontdoors.cli import parser

ROOT = README.parent


def test_the_synopsis_is_the_parsers() -> None:
    assert readme_block(README.read_text()) == synopsis(), (
        "the README's synopsis is out of date: python3 tests/support/readme_synopsis.py --write"
    )


def test_the_synopsis_names_every_command_and_option() -> None:
    """Independent of the generator: each command's line names each of its options
    (some spelling of each) and no option the command lacks."""
    block = readme_block(README.read_text())
    lines = re.split(r"\n(?=dflow )", block.strip())
    by_command = {line.split()[1]: line for line in lines}
    commands = commands_of(parser())
    assert set(by_command) == {*commands, "--version"}
    for name, command in commands.items():
        written = set(re.findall(r"(?<![\w-])--?[a-z][\w-]*", by_command[name]))
        spellings: set[str] = set()
        for action in command._actions:  # pyright: ignore[reportPrivateUsage]
            if isinstance(action, argparse._HelpAction):  # pyright: ignore[reportPrivateUsage]
                continue
            spellings.update(action.option_strings)
            if action.option_strings:
                assert written & set(action.option_strings), (name, action.option_strings)
        assert written <= spellings, (name, written - spellings)


def test_ci_runs_the_two_commands() -> None:
    path = ROOT / ".ci" / "readme_commands.py"
    spec = importlib.util.spec_from_file_location("readme_commands", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_commands"] = module
    spec.loader.exec_module(module)
    assert module.commands(README.read_text()) == [
        "python3 -m pip install -e . && dflow run examples/mlp.mlir",
        "python3 -m pip install -e '.[dev]' && bash tests/run.sh",
    ]
