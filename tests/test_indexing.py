"""The indexing ops (`df.gather`, `df.gather_elements`, `df.scatter_add`): their
semantics against NumPy's own `take`/`take_along_axis` and a plain loop, compiled
against the interpreter over every element type, axes, negative and repeated
indices and size-0 axes, indices out of range as one line naming the op (in the
interpreter, compiled, on the GPU under the simulator, and never folded away), and
gradients through an embedding against finite differences, with a few steps of
training that lower the loss.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from compiled_support import (
    DTYPES,
    NUMBERS,
    check,
    kernels_typed_as_declared,  # noqa: F401  # pyright: ignore[reportUnusedImport]
    normal,
)
from xdsl.context import Context
from xdsl.transforms.canonicalize import CanonicalizePass

import dflow
from dflow.dialects import df
from dflow.driver.errors import DflowError
from dflow.driver.loading.source import parse_module
from dflow.frontend import Graph
from dflow.interpreters.df import run_function
from dflow.transforms.fold_constants import FoldConstantsPass

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.usefixtures("module_cache")
ELEMENTS = (*NUMBERS, "i1")


def _loop_scatter_add(updates: Any, indices: Any, shape: tuple[int, ...], axis: int) -> Any:
    """The scatter-add written as the loop it means, one index at a time."""
    out = np.zeros(shape, updates.dtype)
    moved = np.moveaxis(out, axis, 0)  # a view: writes land in `out`
    flat = indices.reshape(-1)
    slices = np.moveaxis(updates.reshape((*shape[:axis], flat.size, *shape[axis + 1 :])), axis, 0)
    for n, index in enumerate(flat):
        moved[index % shape[axis]] += slices[n]
    return out


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("index_dtype", ["i32", "i64"])
def test_semantics_are_numpys(axis: int, index_dtype: str) -> None:
    rng = np.random.default_rng(abs(axis) * 2 + (index_dtype == "i64"))
    data = rng.standard_normal((5, 6, 7))
    size = data.shape[axis]
    indices = rng.integers(-size, size, (2, 3)).astype(DTYPES[index_dtype])
    graph = Graph("main")
    x = graph.input("x", data.shape, "f64")
    i = graph.input("i", indices.shape, index_dtype)
    gathered = dflow.gather(x, i, axis)
    u = graph.input("u", gathered.shape, "f64")
    along = graph.input("a", tuple(min(3, d) for d in data.shape), index_dtype)
    graph.output(
        gathered, dflow.scatter_add(u, i, data.shape, axis), dflow.gather_elements(x, along, axis)
    )
    updates = rng.standard_normal(gathered.shape)
    picks = rng.integers(-size, size, tuple(min(3, d) for d in data.shape)).astype(indices.dtype)
    got = run_function(graph.module(), "main", [data, indices, updates, picks])
    np.testing.assert_array_equal(got[0], np.take(data, indices, axis))
    normal_axis = axis % 3
    np.testing.assert_allclose(got[1], _loop_scatter_add(updates, indices, data.shape, normal_axis))
    cut = data[tuple(slice(0, 3) if k != normal_axis else slice(None) for k in range(3))]
    np.testing.assert_array_equal(got[2], np.take_along_axis(cut, picks % size, axis))


def _indexing(graph: Graph, x: Any, i: Any, j: Any, axis: int) -> dict[str, Any]:
    gathered = dflow.gather(x, i, axis)
    results = {"gather": gathered, "gather_elements": dflow.gather_elements(x, j, axis)}
    if str(x.element) != "i1":
        results["scatter_add"] = dflow.scatter_add(gathered, i, x.shape, axis)
    return results


@pytest.mark.parametrize("element", ELEMENTS)
def test_compiled_equals_the_interpreter_for_every_element(element: str, tmp_path: Path) -> None:
    """Repeated and negative indices (the scatter adds them up), on two axes."""
    rng = np.random.default_rng(len(element))
    data = normal(rng, (6, 6), element)
    indices = np.array([[0, -1, 3], [5, 0, -6]], np.int64)
    elements = np.array([[0, 4, -1, 2, 2], [-5, 1, 1, 3, 0]], np.int32)

    def body(graph: Graph, x: Any, i: Any, j: Any) -> dict[str, Any]:
        return {
            **_indexing(graph, x, i, j, 0),
            **{f"{k} axis 1": v for k, v in _indexing(graph, x, i, j, 1).items()},
        }

    check(tmp_path, [data, indices, elements], body)


@pytest.mark.parametrize(
    ("shape", "indices_shape", "axis"),
    [
        ((4, 0, 3), (2,), 0),  # size-0 axis off the gathered one
        ((4, 3), (0,), 0),  # no index at all
        ((4, 3), (), 1),  # a rank-0 index drops the axis
        ((1, 1), (3, 1), 1),  # size-1 axes, the one index repeated
        ((2, 3, 4, 5), (2, 2), 2),  # rank 4, the middle axis
    ],
)
def test_awkward_shapes(
    shape: tuple[int, ...], indices_shape: tuple[int, ...], axis: int, tmp_path: Path
) -> None:
    rng = np.random.default_rng(sum(shape))
    data = rng.standard_normal(shape).astype(np.float32)
    size = shape[axis]
    indices = rng.integers(-size, size, indices_shape) if size else np.zeros(indices_shape, int)

    def body(graph: Graph, x: Any, i: Any) -> dict[str, Any]:
        gathered = dflow.gather(x, i, axis)
        return {
            "gather": gathered,
            "scatter_add": dflow.scatter_add(gathered * 2.0, i, shape, axis),
        }

    check(tmp_path, [data, indices.astype(np.int64)], body)


PROGRAM = """
func.func @main(%t: tensor<5x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %e = df.gather %t, %i : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  func.return %e : tensor<2x3x4xf32>
}
"""
BAD = np.array([[0, 1, -1], [2, 9, 4]], np.int64)
MESSAGE = "df.gather: index 9 is out of range for axis 0 of size 5"


def test_an_index_out_of_range_stops_the_interpreter_with_one_line() -> None:
    table = np.ones((5, 4), np.float32)
    with pytest.raises(IndexError, match=f"^{MESSAGE}\n"):  # then xDSL's picture of the op
        run_function(parse_module(PROGRAM, "t.mlir"), "main", [table, BAD])
    low = BAD.copy()
    low[0, 0] = -6  # -5 is the first row; -6 is out
    with pytest.raises(IndexError, match="index -6 is out of range"):
        run_function(parse_module(PROGRAM, "t.mlir"), "main", [table, low])


def test_an_index_out_of_range_stops_the_compiled_program(tmp_path: Path) -> None:
    program = dflow.compile(PROGRAM)
    table = np.arange(20, dtype=np.float32).reshape(5, 4)
    with pytest.raises(DflowError) as raised:
        program(table, BAD)
    assert str(raised.value).endswith(f"IndexError: {MESSAGE}")
    assert "\n" not in str(raised.value)
    good = BAD % 5
    np.testing.assert_array_equal(program(table, good), table[good])  # still runs after


def test_the_command_line_says_it_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "t.mlir").write_text(PROGRAM)
    np.savez(tmp_path / "in.npz", t=np.ones((5, 4), np.float32), i=BAD)
    for extra in ([], ["--interpret"]):
        done = subprocess.run(
            [sys.executable, "-m", "dflow", "run", "t.mlir", "--inputs", "in.npz", *extra],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines() == [done.stderr.strip()]
        assert MESSAGE in done.stderr and "Traceback" not in done.stderr


def test_a_constant_index_out_of_range_is_not_folded_away() -> None:
    """Folding the gather would need its value: it stays, and the run reports it."""
    graph = Graph("main")
    table = graph.constant(np.ones((5, 4), np.float32))
    graph.output(dflow.gather(table, graph.constant(BAD), 0))
    module = graph.module()
    FoldConstantsPass().apply(Context(), module)
    CanonicalizePass().apply(Context(), module)
    assert any(isinstance(op, df.GatherOp) for op in module.walk())
    with pytest.raises(IndexError, match=MESSAGE):
        run_function(module, "main", [])


GPU_CHILD = textwrap.dedent(
    """
    import numpy as np
    from numba import cuda
    from dflow.runtime.library import gpu
    table = cuda.to_device(np.arange(20, dtype=np.float32).reshape(5, 4))
    out = cuda.device_array((2, 3, 4), np.float32)
    for routine, indices in (
        (gpu.gather_i64_f32, np.array([[0, 1, -1], [2, 9, 4]])),
        (gpu.gather_elements_i64_f32, np.array([[0, 1, -7, 2]])),
    ):
        plain = routine is gpu.gather_i64_f32
        target = out if plain else cuda.device_array((1, 4), np.float32)
        try:
            routine(table, cuda.to_device(indices), target, 0 if plain else 1)
        except IndexError as error:
            print(error)
    scattered = cuda.device_array((5, 4), np.float32)
    try:
        gpu.scatter_add_i64_f32(out, cuda.to_device(np.array([[0, 1, 5], [2, 3, 4]])), scattered, 0)
    except IndexError as error:
        print(error)
    """
)


def test_the_gpu_routines_raise_the_same_line() -> None:
    """Under numba's CUDA simulator (there is no GPU here): each thread that meets an
    index out of range flags it, and the routine raises after the launch."""
    done = subprocess.run(
        [sys.executable, "-c", GPU_CHILD],
        env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        MESSAGE,
        "df.gather_elements: index -7 is out of range for axis 1 of size 4",
        "df.scatter_add: index 5 is out of range for axis 0 of size 5",
    ]


def _embedding_loss(table: Any, weights: Any, tokens: Any) -> Any:
    hidden = dflow.tanh(dflow.gather(table, tokens, 0) * weights)
    return dflow.reduce_sum(hidden * hidden)


def _numpy_loss(table: Any, weights: Any, tokens: Any) -> float:
    hidden = np.tanh(np.take(table, tokens, 0) * weights)
    return float((hidden * hidden).sum())


def _finite_differences(f: Any, x: Any, eps: float = 1e-6) -> Any:
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_an_embedding_gradient_matches_finite_differences() -> None:
    """Repeated tokens (3 twice) add their rows' gradients; unused rows get zeros."""
    rng = np.random.default_rng(7)
    table, weights = rng.standard_normal((10, 4)), rng.standard_normal(4)
    tokens = np.array([[1, 3, -1], [3, 0, 7]], np.int64)
    grad_table, grad_weights = dflow.grad(_embedding_loss, argnums=(0, 1))(table, weights, tokens)
    expected = _finite_differences(lambda t: _numpy_loss(t, weights, tokens), table)
    np.testing.assert_allclose(grad_table, expected, atol=1e-7)
    assert not grad_table[[2, 4, 5, 6, 8]].any()
    expected = _finite_differences(lambda w: _numpy_loss(table, w, tokens), weights)
    np.testing.assert_allclose(grad_weights, expected, atol=1e-7)


def test_a_gather_elements_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 5))
    picks = np.array([[0, 4, -1], [2, 2, 1]], np.int32)

    def loss(x: Any) -> Any:
        return dflow.reduce_sum(dflow.sin(dflow.gather_elements(x, picks_tensor(x), 1)))

    def picks_tensor(x: Any) -> Any:
        return dflow.constant(picks, like=x)

    got = dflow.grad(loss)(x)
    expected = _finite_differences(
        lambda v: float(np.sin(np.take_along_axis(v[:2], picks % 5, 1)).sum()), x
    )
    np.testing.assert_allclose(got, expected, atol=1e-7)


def test_an_embedding_trains() -> None:
    """A bag-of-words classifier (embedding, mean, dense, softmax cross-entropy)
    trained by gradient descent through `dflow.grad`: the loss falls."""
    rng = np.random.default_rng(9)
    tokens = rng.integers(0, 20, (32, 6))
    labels = (tokens < 10).sum(axis=1) > 3  # more low tokens than high
    onehot = np.stack([~labels, labels], axis=1).astype(np.float32)
    table = (rng.standard_normal((20, 8)) * 0.1).astype(np.float32)
    dense = (rng.standard_normal((8, 2)) * 0.1).astype(np.float32)

    def loss(table: Any, dense: Any, tokens: Any, onehot: Any) -> Any:
        bag = dflow.reduce_mean(dflow.gather(table, tokens, 0), 1)
        logits = dflow.matmul(bag, dense)
        shifted = logits - dflow.reduce_max(logits, 1, keepdims=True)
        log_probs = shifted - dflow.log(dflow.reduce_sum(dflow.exp(shifted), 1, keepdims=True))
        return -dflow.reduce_mean(dflow.reduce_sum(log_probs * onehot, 1))

    step = dflow.value_and_grad(loss, argnums=(0, 1))
    losses = []
    for _ in range(60):
        value, (grad_table, grad_dense) = step(table, dense, tokens, onehot)
        losses.append(float(value))
        table, dense = table - 2.0 * grad_table, dense - 2.0 * grad_dense
    assert losses[-1] < 0.5 * losses[0], losses


TOKENS = """
func.func @main(%table: tensor<5x4xf32>, %ids: tensor<2x3xi64>) -> tensor<6x4xf32> {
  %flat = df.reshape %ids : (tensor<2x3xi64>) -> tensor<6xi64>
  %e = df.gather %table, %flat : (tensor<5x4xf32>, tensor<6xi64>) -> tensor<6x4xf32>
  func.return %e : tensor<6x4xf32>
}
"""


@pytest.mark.parametrize("extra", [[], ["--interpret"]])
def test_random_token_ids_are_drawn_in_range(extra: list[str], tmp_path: Path) -> None:
    """Without --inputs, integers that index an axis (here through a reshape) are drawn
    in [0, size): a run of a language model needs no feeds."""
    (tmp_path / "t.mlir").write_text(TOKENS)
    for seed in ("0", "1", "2"):
        done = subprocess.run(
            [sys.executable, "-m", "dflow", "run", "t.mlir", "--seed", seed, *extra],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
