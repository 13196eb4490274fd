"""ONNX ops the importer composes of df ops (`LayerNormalization`, `HardSigmoid`,
`HardSwish`, `IsNaN`, `IsInf`, `Split`, `Mod`), in small graphs made with
`onnx.helper`, against ONNX Runtime (one thread) or NumPy.

Each graph runs in the reference interpreter and compiled by `dflow.compile`. The
backend node tests cover each op alone (`test_onnx_conformance.py`); here they run
together, at the opsets PyTorch exports (17), with what those tests lack: `Mod` of
`i64` beyond 2⁵³, the float `Mod` cases folded from constants, the refusals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx_cases
import pytest
from numpy.typing import NDArray
from onnx import ModelProto, NodeProto, TensorProto, ValueInfoProto, helper, numpy_helper
from onnx_models import onnx_runtime
from xdsl.dialects.func import FuncOp

import dflow
from dflow.driver.compilation.compiler import lower
from dflow.driver.compilation.interpreted import interpret
from dflow.frontend.onnx import OnnxImportError, import_model

Array = NDArray[Any]
pytestmark = pytest.mark.usefixtures("module_cache")


def value(name: str, element: int, shape: Sequence[int] | None = None) -> ValueInfoProto:
    return helper.make_tensor_value_info(name, element, shape)


def model_of(
    nodes: Sequence[NodeProto],
    inputs: Sequence[ValueInfoProto],
    outputs: Sequence[ValueInfoProto],
    initializers: Sequence[tuple[str, Array]] = (),
    opset: int = 17,
) -> ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "composites",
        list(inputs),
        list(outputs),
        [numpy_helper.from_array(array, name) for name, array in initializers],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def run_both(model: ModelProto, feeds: Sequence[Array]) -> list[list[Array]]:
    """The outputs interpreted and compiled."""
    module = import_model(model)
    interpreted = interpret(module.clone(), "main", list(feeds), None, 30.0)
    compiled = dflow.compile(module)(*feeds)
    assert compiled is not None
    return [interpreted, list(compiled) if isinstance(compiled, tuple) else [compiled]]


def df_ops(model: ModelProto) -> list[str]:
    return [op.name for op in import_model(model).walk() if op.name.startswith("df.")]


# ----------------------------------------------------------------------------- LayerNormalization


def layer_norm_model(axis: int, shape: Sequence[int], outputs: int) -> ModelProto:
    names = ["y", "mean", "inv_std_dev"][:outputs]
    node = helper.make_node(
        "LayerNormalization", ["x", "scale", "bias"], names, axis=axis, epsilon=1e-5
    )
    rng = np.random.default_rng(1)
    normalized = tuple(shape[axis:])
    return model_of(
        [node],
        [value("x", TensorProto.FLOAT, shape)],
        [value(name, TensorProto.FLOAT) for name in names],
        [
            ("scale", rng.uniform(0.5, 2.0, normalized).astype(np.float32)),
            ("bias", rng.standard_normal(normalized).astype(np.float32)),
        ],
    )


@pytest.mark.parametrize(("axis", "outputs"), [(-1, 1), (1, 1), (1, 3)])
def test_layer_normalization_matches_onnx_runtime(axis: int, outputs: int) -> None:
    """Over the last axis of a (2, 5, 16) input with scale and bias (as a transformer
    has it: one `df.layer_norm`), over the last two (one `df.layer_norm` of the two
    flattened), and over the last two with the Mean and InvStdDev outputs (composed)."""
    shape = (2, 5, 16)
    model = layer_norm_model(axis, shape, outputs)
    x = (np.random.default_rng(0).standard_normal(shape) * 3 + 1).astype(np.float32)
    expected = onnx_runtime(model, {"x": x})
    for actual in run_both(model, [x]):
        assert len(actual) == len(expected)
        for got, want in zip(actual, expected, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_layer_normalization_is_one_fused_kernel() -> None:
    """Y alone imports as one `df.layer_norm` and lowers to one kernel, whose rows
    compute the mean and the variance once each."""
    module = import_model(layer_norm_model(-1, (2, 5, 16), 1))
    assert [op.name for op in module.walk() if op.name.startswith("df.")].count(
        "df.layer_norm"
    ) == 1
    lowered = lower(module)
    kernels = [
        op for op in lowered.walk() if isinstance(op, FuncOp) and "df.kernel" in op.attributes
    ]
    assert len(kernels) == 1
    body = [op.name for op in kernels[0].walk()]
    assert body.count("math.rsqrt") == 1 and body.count("arith.divf") == 2


def test_layer_normalization_computes_mean_and_variance_once() -> None:
    """Two reductions in all (the mean, the variance), even with all three outputs."""
    ops = df_ops(layer_norm_model(1, (2, 5, 16), 3))
    assert ops.count("df.reduce_mean") == 2
    assert ops.count("df.rsqrt") == 1


# ----------------------------------------------------------------------------- activations, tests


def test_hard_swish_split_and_nan_tests_compile() -> None:
    """HardSwish split in two (opset 13's `split` input), HardSigmoid, IsNaN and
    IsInf of one graph, compiled and interpreted, against ONNX Runtime."""
    nodes = [
        helper.make_node("HardSwish", ["x"], ["h"]),
        helper.make_node("Split", ["h", "sizes"], ["left", "right"], axis=1),
        helper.make_node("HardSigmoid", ["x"], ["s"], alpha=0.3, beta=0.4),
        helper.make_node("IsNaN", ["z"], ["nan"]),
        helper.make_node("IsInf", ["z"], ["inf"]),
        helper.make_node("IsInf", ["z"], ["negative_inf"], detect_positive=0),
    ]
    model = model_of(
        nodes,
        [value("x", TensorProto.FLOAT, (2, 6)), value("z", TensorProto.FLOAT, (7,))],
        [
            *(value(name, TensorProto.FLOAT) for name in ("left", "right", "s")),
            *(value(name, TensorProto.BOOL) for name in ("nan", "inf", "negative_inf")),
        ],
        [("sizes", np.array([2, 4], np.int64))],
    )
    x = np.linspace(-5, 5, 12, dtype=np.float32).reshape(2, 6)
    z = np.array([1.5, np.nan, np.inf, -np.inf, 0.0, -2.0, np.nan], np.float32)
    expected = onnx_runtime(model, {"x": x, "z": z})
    assert [e.shape for e in expected[:2]] == [(2, 2), (2, 4)]
    for actual in run_both(model, [x, z]):
        for got, want in zip(actual, expected, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


SPLITS: dict[str, tuple[int, tuple[int, ...], dict[str, Any], list[int] | None]] = {
    "attribute_11": (11, (2, 6), {"axis": -1, "split": [1, 3, 2]}, None),
    "num_outputs_18_uneven": (18, (8, 2), {"num_outputs": 3}, None),
    "input_13_empty_part": (13, (2, 6), {"axis": 1}, [4, 0, 2]),
}
"""Each Split form: its opset, the input's shape, its attributes, its `split` input."""


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_split_forms_match_onnx_runtime(name: str) -> None:
    """The attribute form (before opset 13), `num_outputs` (opset 18, the last part
    smaller), and an input with an empty part."""
    opset, shape, attributes, sizes = SPLITS[name]
    inputs = ["x"] if sizes is None else ["x", "sizes"]
    model = model_of(
        [helper.make_node("Split", inputs, ["a", "b", "c"], **attributes)],
        [value("x", TensorProto.FLOAT, shape)],
        [value(output, TensorProto.FLOAT) for output in "abc"],
        [] if sizes is None else [("sizes", np.array(sizes, np.int64))],
        opset,
    )
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = onnx_runtime(model, {"x": x})
    for actual in run_both(model, [x]):
        assert [a.shape for a in actual] == [e.shape for e in expected]
        for got, want in zip(actual, expected, strict=True):
            np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------- Mod


def mod_model(element: int, fmod: int, shapes: tuple[Sequence[int], Sequence[int]]) -> ModelProto:
    node = helper.make_node("Mod", ["a", "b"], ["r"], fmod=fmod)
    return model_of(
        [node],
        [value("a", element, shapes[0]), value("b", element, shapes[1])],
        [value("r", element)],
    )


@pytest.mark.parametrize("fmod", [0, 1])
def test_integer_mod_is_exact_on_all_of_i64(fmod: int) -> None:
    """Operands up to 2⁶³ (where `f64` rounds the quotient), of every sign, against
    NumPy's `mod`/`fmod` (ONNX's reference)."""
    rng = np.random.default_rng(3)
    big = rng.integers(-(2**62), 2**62, 40, dtype=np.int64) * 2 + rng.integers(0, 2, 40)
    divisors = np.concatenate(
        [rng.integers(1, 1000, 10), rng.integers(2**20, 2**40, 10), rng.integers(2**53, 2**62, 20)]
    ) * rng.choice([-1, 1], 40)
    a = np.concatenate([big, [2**63 - 1, -(2**63), 7, -7, 0, 12]]).astype(np.int64)
    b = np.concatenate([divisors, [2**62 + 1, 3, -3, 3, -5, 2**53 + 1]]).astype(np.int64)
    expected = np.fmod(a, b) if fmod else np.mod(a, b)
    model = mod_model(TensorProto.INT64, fmod, (a.shape, b.shape))
    for (actual,) in run_both(model, [a, b]):
        assert actual.dtype == np.int64
        np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("fmod", [0, 1])
def test_integer_mod_broadcasts_as_onnx_runtime(fmod: int) -> None:
    model = mod_model(TensorProto.INT32, fmod, ((3, 4), (4,)))
    a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4) * 7
    b = np.array([3, -4, 5, -2], np.int32)
    (expected,) = onnx_runtime(model, {"a": a, "b": b})
    for (actual,) in run_both(model, [a, b]):
        np.testing.assert_array_equal(actual, expected)


FLOAT_TYPES = {TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE}


def _float_mod(case: onnx_cases.Case) -> bool:
    """Whether `case` is a backend Mod case of float32 or float64 operands."""
    if case.op_type != "Mod":
        return False
    element = case.model.graph.input[0].type.tensor_type.elem_type
    return element in (TensorProto.FLOAT, TensorProto.DOUBLE)


FLOAT_MOD_CASES = {case.name: case for case in onnx_cases.cases() if _float_mod(case)}


def test_the_wheel_has_float_mod_cases() -> None:
    """float32 and float64, each fmod=1, fmod=0 and fmod=0's edge cases."""
    assert len(FLOAT_MOD_CASES) == 6


@pytest.mark.parametrize("name", sorted(FLOAT_MOD_CASES))
def test_float_mod_of_constants_folds_to_the_backend_result(name: str) -> None:
    """The float backend cases (NaN, ±inf, ±0 included) with their inputs made
    constants: the import folds them into the expected constant."""
    case = FLOAT_MOD_CASES[name]
    (inputs, (expected,)) = case.data_sets[0]
    model = case.model
    constant = model_of(
        list(model.graph.node),
        [],
        list(model.graph.output),
        [(v.name, array) for v, array in zip(model.graph.input, inputs, strict=True)],
        opset=model.opset_import[0].version,
    )
    module = import_model(constant)
    assert [op.name for op in module.walk() if op.name.startswith("df.")] == ["df.constant"]
    (actual,) = interpret(module, "main", [], None, 10.0)
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected))


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("element", sorted(FLOAT_TYPES))
def test_float_mod_at_run_time_is_numpys_bit_for_bit(element: int, fmod: int) -> None:
    """`fmod` is exact, so dflow's `Mod` of floats fed at run time equals NumPy's
    `fmod`/`mod` (ONNX's reference) bit for bit, signed zeros included: quotients
    past 2⁵³ (where `a - trunc(a/b)·b` would round), every sign, zeros, infinities
    and NaN on either side."""
    dtype = helper.tensor_dtype_to_np_dtype(element)
    rng = np.random.default_rng(element)
    huge = rng.standard_normal(30) * 2.0 ** rng.integers(0, 60, 30)
    small = rng.standard_normal(30) * 2.0 ** rng.integers(-8, 8, 30)
    edges_a = [0.0, -0.0, 6.0, -6.0, 5.0, -5.0, np.inf, -np.inf, np.nan, 1.0, 3.0]
    edges_b = [3.0, -3.0, 3.0, -3.0, np.inf, -np.inf, 2.0, 2.0, 1.0, 0.0, np.nan]
    a = np.concatenate([huge, small, edges_a]).astype(dtype)
    b = np.concatenate([small, huge, edges_b]).astype(dtype)
    with np.errstate(all="ignore"):  # bfloat16's ufuncs are ml_dtypes'
        expected = np.fmod(a, b) if fmod else np.mod(a, b)
    model = mod_model(element, fmod, (a.shape, b.shape))
    model.opset_import[0].version = 28
    wide = expected.astype(np.float64)
    for (actual,) in run_both(model, [a, b]):
        assert actual.dtype == dtype
        np.testing.assert_array_equal(actual.astype(np.float64), wide)
        number = ~np.isnan(wide)
        signs = np.signbit(actual.astype(np.float64))
        np.testing.assert_array_equal(signs[number], np.signbit(wide)[number])


def test_composed_ops_fold_on_constants() -> None:
    """A composed converter folds as df ops do: HardSwish, IsNaN and an integer Mod
    of constants leave constants only."""
    nodes = [
        helper.make_node("HardSwish", ["c"], ["h"]),
        helper.make_node("IsNaN", ["c"], ["n"]),
        helper.make_node("Mod", ["i", "j"], ["m"]),
    ]
    model = model_of(
        nodes,
        [],
        [
            value("h", TensorProto.FLOAT),
            value("n", TensorProto.BOOL),
            value("m", TensorProto.INT64),
        ],
        [
            ("c", np.array([-4.0, 0.5, np.nan], np.float32)),
            ("i", np.array([-7, 7], np.int64)),
            ("j", np.array([3, -3], np.int64)),
        ],
    )
    assert set(df_ops(model)) == {"df.constant"}


# ----------------------------------------------------------------------------- refusals


REFUSED: dict[str, tuple[ModelProto, str]] = {
    "float_mod_fmod_0_before_28": (
        mod_model(TensorProto.DOUBLE, 0, ((3,), (3,))),
        "fmod=0 on floating-point operands is defined from opset 28 on",
    ),
    "uneven_split_before_18": (
        model_of(
            [helper.make_node("Split", ["x"], ["a", "b"], axis=0)],
            [value("x", TensorProto.FLOAT, (5,))],
            [value("a", TensorProto.FLOAT), value("b", TensorProto.FLOAT)],
        ),
        "an axis of size 5 does not split into 2 parts",
    ),
    "split_sizes_wrong": (
        model_of(
            [helper.make_node("Split", ["x", "s"], ["a", "b"])],
            [value("x", TensorProto.FLOAT, (5,))],
            [value("a", TensorProto.FLOAT), value("b", TensorProto.FLOAT)],
            [("s", np.array([2, 2], np.int64))],
        ),
        "split [2, 2] does not divide an axis of size 5 into 2 outputs",
    ),
    "is_nan_of_integers": (
        model_of(
            [helper.make_node("IsNaN", ["x"], ["y"])],
            [value("x", TensorProto.INT32, (3,))],
            [value("y", TensorProto.BOOL)],
        ),
        "IsNaN takes floating-point input, got i32",
    ),
    "layer_norm_stash_type": (
        model_of(
            [helper.make_node("LayerNormalization", ["x", "s"], ["y"], stash_type=11)],
            [value("x", TensorProto.FLOAT, (2, 3))],
            [value("y", TensorProto.FLOAT)],
            [("s", np.ones(3, np.float32))],
        ),
        "stash_type 11 is not supported",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line_naming_the_node(name: str) -> None:
    model, message = REFUSED[name]
    with pytest.raises(OnnxImportError) as refused:
        import_model(model)
    assert message in refused.value.message and "\n" not in refused.value.message
    assert refused.value.message.startswith("node ")


# ----------------------------------------------------------------------------- training mode


def test_batch_normalization_in_training_mode_is_onnx_s_function() -> None:
    """Training mode normalizes by the batch's own statistics (over N and the spatial
    axes; the population variance) and updates the running ones with `momentum`,
    as ONNX's function body defines them (written out here in NumPy)."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32) * 3 + 1
    scale, bias, mean, var = (rng.random(3).astype(np.float32) + 0.5 for _ in range(4))
    node = helper.make_node(
        "BatchNormalization",
        ["x", "s", "b", "m", "v"],
        ["y", "running_mean", "running_var"],
        training_mode=1,
        momentum=0.8,
        epsilon=1e-3,
    )
    model = model_of(
        [node],
        [value("x", TensorProto.FLOAT, x.shape)]
        + [value(n, TensorProto.FLOAT, (3,)) for n in "sbmv"],
        [value(n, TensorProto.FLOAT) for n in ("y", "running_mean", "running_var")],
        opset=15,
    )
    batch_mean = x.mean(axis=(0, 2))
    batch_var = x.var(axis=(0, 2))
    normalized = (x - batch_mean[:, None]) / np.sqrt(batch_var[:, None] + 1e-3)
    expected = [
        normalized * scale[:, None] + bias[:, None],
        mean * 0.8 + batch_mean * 0.2,
        var * 0.8 + batch_var * 0.2,
    ]
    for actual in run_both(model, [x, scale, bias, mean, var]):
        for got, want in zip(actual, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
