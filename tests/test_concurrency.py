"""A loaded program called from several threads at once gives every call its own
right result: each run takes a set of device contexts (arenas) no other run uses.

The program chains three matrix products, so a run that shared an arena with another
would read the other's intermediate values (before the context pool, 4 to 24 of 200
calls came back wrong here).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from dflow.dialects.devices import DeviceList
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.frontend import Graph
from dflow.runtime import load_program
from dflow.runtime.program import CONTEXT_SETS_KEPT

SIZE = 384
THREADS = 4
CALLS = 50


def three_products() -> Graph:
    g = Graph("main")
    x, w = g.input("x", (SIZE, SIZE)), g.input("w", (SIZE, SIZE))
    g.output((((x @ w).relu() @ w).tanh() @ w) + 1.0)
    return g


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.tanh(np.maximum(x @ w, 0) @ w) @ w + 1


@pytest.mark.parametrize("devices", [None, "cpu:0,cpu:1"])
def test_concurrent_calls_each_get_their_own_result(tmp_path: Path, devices: str | None) -> None:
    listed = None if devices is None else DeviceList.parse(devices)
    write_modules(compile_module(three_products().module(), listed), tmp_path)
    program = load_program(tmp_path)
    rng = np.random.default_rng(0)
    feeds = [
        [rng.standard_normal((SIZE, SIZE), dtype=np.float32) / 8 for _ in range(2)]
        for _ in range(THREADS * CALLS)
    ]
    alone = [program.run("main", feed)[0].copy() for feed in feeds]
    for feed, result in zip(feeds[:3], alone, strict=False):
        np.testing.assert_allclose(result, reference(*feed), rtol=1e-3, atol=1e-3)
    wrong: list[int] = []

    def caller(first: int) -> None:
        for index in range(first, first + CALLS):
            if not np.array_equal(program.run("main", feeds[index])[0], alone[index]):
                wrong.append(index)

    threads = [threading.Thread(target=caller, args=(t * CALLS,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, f"{len(wrong)} of {THREADS * CALLS} concurrent calls were wrong"
    assert 1 <= len(program.idle) <= CONTEXT_SETS_KEPT  # arenas kept for later calls
