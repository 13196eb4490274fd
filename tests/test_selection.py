"""`frontend.selection`, which both importers build constant selections with: `take`
against `numpy.take` on generated index lists (runs, strides, repeats, reversals,
permutations, none), as slices where the indices are a few runs and one gather where
they are not; `pad_constant` against `numpy.pad` and cropping."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from dflow.dialects import df
from dflow.frontend import Graph
from dflow.frontend.selection import FEW_RUNS, pad_constant, take
from dflow.interpreters.df import run_function

X = np.arange(2 * 9 * 3, dtype=np.float32).reshape(2, 9, 3)


def _built(body: Any) -> ModuleOp:
    graph = Graph("main")
    graph.output(body(graph.input("x", X.shape, "f32")))
    return graph.module()


def _ops(module: ModuleOp, kind: type) -> int:
    return sum(isinstance(op, kind) for op in module.walk())


def _indices(seed: int) -> list[int]:
    """An index list along an axis of 9 of one of the shapes users' graphs take."""
    rng = np.random.default_rng(seed)
    start, step = int(rng.integers(0, 9)), int(rng.integers(1, 4))
    shapes = [
        list(range(start, 9, step)),  # a slice with a step
        list(range(8, -1, -step)),  # reversed (a flip, a negative step)
        [int(i) for i in rng.permutation(9)[: rng.integers(1, 9)]],
        [int(i) for i in rng.integers(0, 9, rng.integers(1, 12))],  # repeats
        [start] * int(rng.integers(1, 4)) + list(range(start, 9)),
        [],
    ]
    return shapes[seed % len(shapes)]


@pytest.mark.parametrize("seed", range(36))
def test_take_is_numpys_take(seed: int) -> None:
    indices = _indices(seed)
    module = _built(lambda x: take(x, 1, indices))
    (got,) = run_function(module, "main", [X])
    np.testing.assert_array_equal(got, np.take(X, indices, axis=1))


@pytest.mark.parametrize(
    ("indices", "gathers"),
    [
        ([0, 2, 4, 6, 8], 0),  # one strided run: a reshape and a slice
        ([1, 2, 3, 7, 8, 0], 0),  # three runs: three slices joined
        ([0, 5, 1, 6, 2], 0),  # (0, 5), (1, 6), (2): three strided runs
        ([8, 7, 6, 5, 4, 3, 2, 1, 0], 1),  # nine runs of one: a gather
        (list(range(FEW_RUNS, -1, -1)), 1),  # a run more than FEW_RUNS, each of one
        (list(range(9)), 0),  # the whole axis: no op at all
    ],
)
def test_a_few_runs_are_slices_and_more_one_gather(indices: Sequence[int], gathers: int) -> None:
    module = _built(lambda x: take(x, 1, indices))
    assert _ops(module, df.GatherOp) == gathers
    if gathers:
        assert _ops(module, df.SliceOp) == 0
    (got,) = run_function(module, "main", [X])
    np.testing.assert_array_equal(got, X[:, indices])


@pytest.mark.parametrize(("before", "after"), [(2, 1), (0, 3), (0, 0), (-2, 1), (3, -4), (-1, -1)])
def test_pad_constant_pads_or_crops_an_axis(before: int, after: int) -> None:
    module = _built(lambda x: pad_constant(x, 1, before, after, -1.5))
    (got,) = run_function(module, "main", [X])
    cropped = X[:, max(0, -before) : X.shape[1] - max(0, -after)]
    pads = [(0, 0), (max(0, before), max(0, after)), (0, 0)]
    np.testing.assert_array_equal(got, np.pad(cropped, pads, constant_values=-1.5))
