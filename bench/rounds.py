"""Interleaved timing rounds, shared by the benchmarks that compare contenders."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best(calls: dict[str, Callable[[], Any]], runs: int, rounds: int) -> dict[str, float]:
    """Per contender, the best over `rounds` interleaved rounds of the mean of `runs`
    calls (seconds): each round times every contender in turn, so a slow moment of the
    machine falls on all of them."""
    times = {name: float("inf") for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(runs):
                call()
            times[name] = min(times[name], (time.perf_counter() - start) / runs)
    return times
