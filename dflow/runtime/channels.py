"""Channels between devices, keyed like `df.send`/`df.recv`: one implementation for
the compiled runtime's device threads and for the interpreter's.

A send puts (a copy of) its value on the channel of its key and destination; a
receive waits for one on its channel up to a timeout (a condition variable wakes it at once when
a value arrives), then fails naming the key and both devices. Values on one channel
are taken first in, first out. When one device fails, `abandon()` wakes every
waiting receive so the others stop at once.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

import numpy as np

DEFAULT_RECV_TIMEOUT_S = 30.0
"""Seconds a receive waits for its send before it fails, by default: in the
interpreter and in `dflow run` (its `--timeout`)."""


class ChannelError(RuntimeError):
    """A receive that got no value."""


class ChannelTimeoutError(ChannelError):
    """A receive waited past its timeout: its send never ran."""


class ChannelAbandonedError(ChannelError):
    """A receive stopped because another device failed."""


class Channels:
    """Values in flight, by (key, destination device)."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self._values: dict[tuple[str, str], deque[Any]] = {}
        self._ready = threading.Condition()
        self._abandoned = False

    def send(
        self, key: str, source: str, destination: str, array: Any, *, owned: bool = False
    ) -> None:
        """Send `array` on `key` from `source` to `destination`. In memory it is copied,
        unless `owned` (a fresh array nobody changes); a transport between processes
        reads it in place, until `finish(source)`."""
        del source  # one process: the channel is (key, destination)
        self.put(key, destination, array if owned else np.array(array))

    def receive(self, key: str, source: str, destination: str, into: Any) -> None:
        """Wait for the value sent on `key` to `destination` and copy it into `into`."""
        into[...] = self.take(key, source, destination)

    def finish(self, device: str) -> None:
        """Wait until every send of `device` has been read out of its buffer (at once in
        memory, where sends copy)."""

    def put(self, key: str, destination: str, value: Any) -> None:
        with self._ready:
            self._values.setdefault((key, destination), deque()).append(value)
            self._ready.notify_all()

    def take(self, key: str, source: str, destination: str) -> Any:
        """The next value sent on `key` to `destination` (from `source`)."""
        channel = (key, destination)
        with self._ready:
            self._ready.wait_for(
                lambda: self._values.get(channel) or self._abandoned, timeout=self.timeout
            )
            if self._values.get(channel):
                return self._values[channel].popleft()
            if self._abandoned:
                raise ChannelAbandonedError(
                    f"df.recv of key {key!r} on {destination}: another device failed"
                )
            raise ChannelTimeoutError(
                f"df.recv of key {key!r} from {source} on {destination} waited "
                f"{self.timeout:g} s and no send arrived"
            )

    def abandon(self) -> None:
        with self._ready:
            self._abandoned = True
            self._ready.notify_all()
