"""`dflow.jit`, `dflow.grad`, `dflow.value_and_grad`: traced once per signature,
results against NumPy, gradients against finite differences, composition both ways,
and the errors of traced code, named at their line."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import dflow

RNG = np.random.default_rng(3)


def mlp_loss(params: dict[str, Any], x: Any, labels: Any) -> Any:
    """Softmax cross-entropy of a two-layer perceptron (log-sum-exp written out)."""
    hidden = dflow.tanh(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    top = dflow.reduce_max(logits, 1, keepdims=True)
    shifted = logits - top
    log_total = dflow.log(dflow.reduce_sum(dflow.exp(shifted), 1, keepdims=True))
    return -dflow.reduce_mean(dflow.reduce_sum(labels * (shifted - log_total), 1))


def mlp_loss_numpy(params: dict[str, np.ndarray], x: np.ndarray, labels: np.ndarray) -> float:
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    shifted = logits - logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    return float(-(labels * log_softmax).sum(1).mean())


def mlp_problem(dtype: type = np.float64) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    params = {
        "w1": RNG.standard_normal((5, 7)) * 0.5,
        "b1": RNG.standard_normal(7) * 0.1,
        "w2": RNG.standard_normal((7, 3)) * 0.5,
        "b2": RNG.standard_normal(3) * 0.1,
    }
    x = RNG.standard_normal((4, 5))
    labels = np.eye(3)[RNG.integers(0, 3, 4)]
    cast = {name: value.astype(dtype) for name, value in params.items()}
    return cast, x.astype(dtype), labels.astype(dtype)


def test_traced_once_per_signature() -> None:
    @dflow.jit
    def predict(w: Any, x: Any) -> Any:
        return dflow.softmax(dflow.relu(x @ w))

    w = RNG.standard_normal((3, 4)).astype(np.float32)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    logits = np.maximum(x @ w, 0)
    want = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(predict(w, x), want, rtol=1e-5)
    predict(w, x)
    predict(w=w, x=x + 1)
    assert predict.traces == 1
    predict(w, np.ones((5, 3), np.float32))  # a new shape
    assert predict.traces == 2
    predict(w.astype(np.float64), np.ones((5, 3)))  # new dtypes
    assert predict.traces == 3
    predict(w, np.ones((5, 3), np.float32))
    assert predict.traces == 3


def test_static_arguments_and_trees() -> None:
    @dflow.jit(static_argnames=("train",))
    def layer(params: tuple[Any, Any], x: Any, train: bool = False) -> dict[str, Any]:
        y = x @ params[0] + params[1]
        return {"out": dflow.relu(y) if train else y, "scale": 2.0}

    w, b = np.eye(3, dtype=np.float32), -np.ones(3, np.float32)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    assert layer((w, b), x)["out"].tolist() == (x - 1).tolist()
    trained = layer((w, b), x, train=True)
    assert trained["out"].tolist() == np.maximum(x - 1, 0).tolist()
    assert float(trained["scale"]) == 2.0
    assert layer.traces == 2
    layer([w, b], x, train=True)  # a list is another tree than a tuple
    assert layer.traces == 3
    with pytest.raises(TypeError, match="static argument 'train' of layer must be hashable"):
        layer((w, b), x, train=[True])
    with pytest.raises(TypeError, match=r"static_argnames \['nope'\] are not parameters"):
        dflow.jit(lambda x: x, static_argnames=("nope",))


def test_python_numbers_are_weak_arguments_as_in_numpy() -> None:
    """A Python number is fed as NumPy holds it (float64, int64) but promotes as a
    literal does: `f32 * 2.5` stays f32, `i32 * 3` i32 (tests/test_promotion.py has
    the whole table)."""

    @dflow.jit
    def scale(x: Any, k: Any) -> Any:
        return x * k

    got = scale(np.ones(3, np.float32), 2.5)
    assert got.dtype == (np.ones(3, np.float32) * 2.5).dtype == np.float32
    assert got.tolist() == [2.5, 2.5, 2.5]
    program = scale.lower(np.ones(3, np.float32), 2.5)
    assert [a.dtype for a in program.signature().arguments] == [np.float32, np.float64]
    assert scale(np.ones(3, np.int32), 3).dtype == (np.ones(3, np.int32) * 3).dtype == np.int32


def test_grad_against_finite_differences() -> None:
    params, x, labels = mlp_problem()
    grads = dflow.grad(mlp_loss)(params, x, labels)
    assert set(grads) == set(params)
    step = 1e-6
    for name, value in params.items():
        for index in [(0,) * value.ndim, tuple(d - 1 for d in value.shape)]:
            up = {**params, name: value.copy()}
            down = {**params, name: value.copy()}
            up[name][index] += step
            down[name][index] -= step
            numeric = (mlp_loss_numpy(up, x, labels) - mlp_loss_numpy(down, x, labels)) / (2 * step)
            assert grads[name][index] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (name, index)


def test_value_and_grad_and_argnums() -> None:
    params, x, labels = mlp_problem()
    value, (d_params, d_x) = dflow.value_and_grad(mlp_loss, argnums=(0, 1))(params, x, labels)
    assert float(value) == pytest.approx(mlp_loss_numpy(params, x, labels), rel=1e-12)
    assert d_x.shape == x.shape and set(d_params) == set(params)
    only_x = dflow.grad(mlp_loss, argnums=1)(params, x, labels)
    np.testing.assert_allclose(only_x, d_x, rtol=1e-12)


def test_grad_composes_with_jit_both_ways_and_inside_a_step() -> None:
    params, x, labels = mlp_problem(np.float32)
    direct = dflow.grad(mlp_loss)(params, x, labels)
    outer = dflow.jit(dflow.grad(mlp_loss))(params, x, labels)
    inner = dflow.grad(dflow.jit(mlp_loss))(params, x, labels)

    @dflow.jit
    def sgd(params: dict[str, Any], x: Any, labels: Any) -> tuple[Any, dict[str, Any]]:
        loss, grads = dflow.value_and_grad(mlp_loss)(params, x, labels)
        return loss, {name: params[name] - 0.5 * grads[name] for name in params}

    loss, updated = sgd(params, x, labels)
    for name in params:
        np.testing.assert_allclose(outer[name], direct[name], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(inner[name], direct[name], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(updated[name], params[name] - 0.5 * direct[name], rtol=1e-5)
    assert float(loss) == pytest.approx(mlp_loss_numpy(params, x, labels), rel=1e-5)
    losses = [float(loss)]
    for _ in range(20):
        loss, updated = sgd(updated, x, labels)
        losses.append(float(loss))
    assert losses[-1] < losses[0] / 2 and sgd.traces == 1


def test_a_jitted_function_inside_a_trace_is_inlined() -> None:
    @dflow.jit
    def inner(x: Any) -> Any:
        return x * 2.0

    @dflow.jit
    def outer(x: Any) -> Any:
        return inner(x) + 1.0

    assert outer(np.ones(2, np.float32)).tolist() == [3.0, 3.0]
    assert inner.traces == 0 and outer.traces == 1


def _line_of(marker: str) -> int:
    """The line of this file holding `marker`."""
    source, first = inspect.getsourcelines(test_errors_in_traced_code_name_their_line)
    return first + next(i for i, line in enumerate(source) if marker in line)


def test_errors_in_traced_code_name_their_line() -> None:
    x = np.ones((2, 3), np.float32)

    def branch(x: Any) -> Any:
        return x if x > 0 else -x  # BRANCH

    def numpy_call(x: Any) -> Any:
        return np.exp(x)  # NUMPY

    def python_value(x: Any) -> Any:
        return dflow.relu([1.0, 2.0])  # PYTHON

    def shapes(x: Any) -> Any:
        return x @ x  # SHAPES

    cases = [
        (branch, dflow.TraceError, "has no truth value", "BRANCH"),
        (numpy_call, dflow.TraceError, "np.exp cannot compute on a traced tensor", "NUMPY"),
        (python_value, dflow.TraceError, "dflow.relu: argument 0 is a list", "PYTHON"),
        (shapes, Exception, "contracted dimensions of 2x3 and 2x3 differ", "SHAPES"),
    ]
    for function, error_type, message, marker in cases:
        with pytest.raises(error_type) as error:
            dflow.jit(function)(x)
        assert message in str(error.value)
        assert str(error.value).endswith(f"(at test_jit.py:{_line_of(marker)})"), str(error.value)


def test_grad_needs_a_scalar_float_loss() -> None:
    with pytest.raises(dflow.TraceError, match=r"dflow.grad: .*(one element|scalar)"):
        dflow.grad(lambda x: x * 2.0)(np.ones(3, np.float32))
    with pytest.raises(dflow.TraceError, match=r"argnums 2 is out of range"):
        dflow.grad(dflow.reduce_sum, argnums=2)(np.ones(3, np.float32))


def test_defaults_stay_python_values_until_passed() -> None:
    @dflow.jit
    def scaled(x: Any, scale: float = 2.0, axes: Any = None) -> Any:
        return dflow.reduce_sum(x * scale, axes)

    x = np.ones((2, 3), np.float32)
    assert float(scaled(x)) == 12.0  # scale and axes are the defaults, built in
    assert [a.name for a in scaled.lower(x).signature().arguments] == ["x"]
    assert float(scaled(x, 3.0)) == 18.0  # now scale is an argument
    assert scaled.traces == 2
