"""How a pass reports input it cannot handle: one line headed by the pass's name.

    fail = pass_failure("df-fuse")
    raise fail("max-ops must be at least 1, got 0")   # df-fuse: max-ops must be ...

The driver prints the first line of such a failure as the user's error.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.utils.exceptions import PassFailedException


def pass_failure(pass_name: str) -> Callable[[str], PassFailedException]:
    """The failure maker of one pass: `PassFailedException("<pass_name>: <message>")`."""

    def fail(message: str) -> PassFailedException:
        return PassFailedException(f"{pass_name}: {message}")

    return fail
