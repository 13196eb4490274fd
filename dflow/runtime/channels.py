"""Channels between device threads, keyed like `dfrt.send`/`dfrt.recv`.

A send puts a host copy of its buffer under its key; a receive waits for the
key up to a timeout, then fails naming the key and both devices. When one
device fails, `abandon()` wakes every waiting receive so the others stop at once.
"""

from __future__ import annotations

import threading
from typing import Any


class ChannelTimeoutError(RuntimeError):
    """A receive waited past its timeout."""


class ChannelAbandonedError(RuntimeError):
    """A receive stopped because another device failed."""


class Channels:
    """Host arrays in flight, by key."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self._values: dict[str, Any] = {}
        self._ready = threading.Condition()
        self._abandoned = False

    def put(self, key: str, value: Any) -> None:
        with self._ready:
            self._values[key] = value
            self._ready.notify_all()

    def take(self, key: str, source: str, destination: str) -> Any:
        with self._ready:
            arrived = self._ready.wait_for(
                lambda: key in self._values or self._abandoned, timeout=self.timeout
            )
            if key in self._values:
                return self._values.pop(key)
            if self._abandoned:
                raise ChannelAbandonedError(f"receive of {key!r} on {destination} abandoned")
            assert not arrived
            raise ChannelTimeoutError(
                f"receive of {key!r} on {destination} from {source} timed out after "
                f"{self.timeout:g} s"
            )

    def abandon(self) -> None:
        with self._ready:
            self._abandoned = True
            self._ready.notify_all()
