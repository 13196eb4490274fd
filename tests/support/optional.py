"""Optional packages for tests: a test module that needs one skips, with the package
and the reason, when it does not import.

`pytest.importorskip` catches only `ImportError`; a package can fail to import in other
ways (PyPI's torchvision beside a CPU torch raises `RuntimeError: operator
torchvision::nms does not exist`), and that must be a skip that says so, not an error
of every test in the module. `tests/run.sh` runs pytest with `-rs`, so each skip's
reason is printed.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


def require(name: str, why: str) -> ModuleType:
    """The module `name`, or a skip of the calling test module naming the package,
    what the tests need it for (`why`) and the error its import raised."""
    try:
        return importlib.import_module(name)
    except Exception as error:  # any failure to import is a skip, said
        message = str(error).strip().splitlines()
        detail = f"{type(error).__name__}: {message[0] if message else ''}"
        pytest.skip(f"{name} does not import ({detail}); needed {why}", allow_module_level=True)
