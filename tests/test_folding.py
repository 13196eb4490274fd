"""The size policy of constant folding: bytes counted with real element widths,
splats as one element, the module-wide budget, and the broadcast rule."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from dflow.dialects.df import ConstantOp
from dflow.dialects.df.arrays import to_array
from dflow.dialects.df.folding import SMALL_BYTES, FoldPolicy, is_splat, stored_bytes
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.frontend import Graph


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        (np.zeros((10, 10), np.float32), 4),  # a splat is one element
        (np.arange(100, dtype=np.float32), 400),
        (np.arange(100, dtype=np.float64), 800),
        (np.arange(100, dtype=np.int32), 400),
        (np.arange(100, dtype=np.int64), 800),
        (np.arange(100) % 2 == 0, 100),  # i1 is stored as one byte
        (np.zeros((0, 3), np.float32), 0),
    ],
)
def test_stored_bytes_uses_each_element_width(array: np.ndarray, expected: int) -> None:
    assert stored_bytes(array) == expected


def test_splats_compare_bits_so_nan_and_signed_zero_count() -> None:
    assert is_splat(np.full(5, np.nan))
    assert not is_splat(np.array([0.0, -0.0]))
    assert not is_splat(np.array([1.0, np.nan]))
    assert not is_splat(np.zeros((0, 3)))  # no element to repeat (df-fuse cloned one)


def test_policy_skips_growing_broadcasts_unless_small() -> None:
    policy = FoldPolicy()
    small_input = [np.arange(4, dtype=np.float32)]
    grown = np.broadcast_to(small_input[0], (1024, 4))
    assert not policy.allows(small_input, grown)
    assert policy.allows(small_input, np.broadcast_to(small_input[0], (8, 4)))  # 128 B
    assert SMALL_BYTES >= 8 * 4 * 4
    assert policy.allows(small_input, np.zeros((1024, 1024), np.float32))  # a splat
    assert not FoldPolicy(max_bytes=8).allows(small_input, small_input[0] * 2)


def _chain(values: np.ndarray, times: int) -> Graph:
    graph = Graph("main")
    x = graph.input("x", values.shape)
    value = graph.constant(values)
    for _ in range(times):
        value = value * 2.0
    graph.output(x + value)
    return graph


def _constants(module: ModuleOp) -> list[np.ndarray]:
    return [to_array(op.value) for op in module.walk() if isinstance(op, ConstantOp)]


def test_fold_chain_to_one_constant() -> None:
    values = np.arange(8, dtype=np.float32)
    module = apply_pipeline(_chain(values, 3).module(), "df-fold-constants")
    [folded] = _constants(module)
    np.testing.assert_array_equal(folded, values * 8)


def test_budget_stops_folds_that_grow_the_module() -> None:
    # Each fold of `c * 2.0` replaces a 32-byte constant and a 4-byte 2.0 by a new 32-byte
    # one: the module (32 + 3 * 4 bytes) shrinks, so a budget below its size lets it run.
    values = np.arange(8, dtype=np.float32)
    module = apply_pipeline(_chain(values, 3).module(), "df-fold-constants{max-bytes=32}")
    assert len(_constants(module)) == 1
    # No single constant may exceed the budget, shrinking or not.
    module = apply_pipeline(_chain(values, 3).module(), "df-fold-constants{max-bytes=31}")
    assert len(_constants(module)) == 4
    # When c has another use, folding c * 2.0 adds 32 bytes and frees only the 4 of the
    # 2.0: 36 + 28 = 64 bytes, refused under 40 and taken under 72.
    module = apply_pipeline(
        _graph_with_shared_constant(values).module(), "df-fold-constants{max-bytes=40}"
    )
    assert len(_constants(module)) == 2  # c and 2.0: nothing folded
    module = apply_pipeline(
        _graph_with_shared_constant(values).module(), "df-fold-constants{max-bytes=72}"
    )
    [c, folded] = _constants(module)
    np.testing.assert_array_equal(c, values)
    np.testing.assert_array_equal(folded, values * 2)


def _graph_with_shared_constant(values: np.ndarray) -> Graph:
    graph = Graph("main")
    x = graph.input("x", (8,))
    c = graph.constant(values)
    graph.output(x + c * 2.0, x * c)
    return graph
