"""Type promotion of the front end and `dflow.jit` against NumPy 2's own results.

Every pair of operands — arrays of each df dtype, and Python bool/int/float scalars
(written in the code, or passed to `dflow.jit` as arguments) on either side — under
each operator must give NumPy's dtype and values (`np.add(a, 2.5)` computed here, no
hand-written table), or, where NumPy refuses (bool `-`) or dflow does (integer `**`),
one clear TraceError. The whole table runs the traced module in the reference
interpreter; a bounded set of cases (the issue's among them) runs compiled by
`dflow.jit`.
"""

from __future__ import annotations

import operator
import re
import warnings
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from numpy.typing import NDArray

import dflow
from dflow.dialects.df.arrays import element_type_of
from dflow.driver.frontdoors.jit import as_array
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function

Array = NDArray[Any]

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
"""The dtypes df has element types for (`dflow/dialects/df/types.py`)."""


def sample(dtype: type[np.generic]) -> Array:
    """Values of `dtype` with both signs, a fraction where it can hold one, no zero
    (a divisor) except the bool's False."""
    if dtype is np.bool_:
        return np.array([True, False, True, True])
    if np.dtype(dtype).kind == "f":
        return np.array([0.1, -2.5, 1.0, 7.25], dtype)
    return np.array([3, -2, 1, 7], dtype)


SCALARS: list[bool | int | float] = [True, -3, 2.5, 0.1]

OPS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
    "+": (operator.add, np.add),
    "-": (operator.sub, np.subtract),
    "*": (operator.mul, np.multiply),
    "/": (operator.truediv, np.true_divide),
    "**": (operator.pow, np.power),
    ">": (operator.gt, np.greater),
    ">=": (operator.ge, np.greater_equal),
    "<": (operator.lt, np.less),
    "<=": (operator.le, np.less_equal),
    "equal": (dflow.equal, np.equal),
    "maximum": (dflow.maximum, np.maximum),
    "minimum": (dflow.minimum, np.minimum),
}
"""Each operator as dflow applies it to tensors, and NumPy's own ufunc."""

Operand = tuple[str, Any]
"""("array", dtype), ("literal", scalar) or ("argument", scalar): how a case's operand
is given to the traced code."""


def operands() -> list[tuple[Operand, Operand]]:
    """Every pair with at least one array: array-array, and array-scalar both ways."""
    arrays: list[Operand] = [("array", d) for d in DTYPES]
    scalars: list[Operand] = [(form, s) for s in SCALARS for form in ("literal", "argument")]
    pairs = [(a, b) for a in arrays for b in arrays]
    return pairs + [p for a in arrays for s in scalars for p in ((a, s), (s, a))]


def numpy_value(operand: Operand) -> Any:
    """The operand as NumPy sees it: an array, or the Python scalar itself."""
    form, what = operand
    return sample(what) if form == "array" else what


def describe(operand: Operand) -> str:
    """`int32 array`, `2.5`, `argument 2.5`: an operand in a failure's message."""
    form, what = operand
    if form == "array":
        return f"{np.dtype(what)} array"
    return repr(what) if form == "literal" else f"argument {what!r}"


def traced(
    fun: Callable[[Any, Any], Any], lhs: Operand, rhs: Operand
) -> tuple[Graph, Tensor | None, list[Array]]:
    """`fun` applied in a graph whose inputs are the arrays and the scalar arguments
    (weak, fed as `dflow.jit` feeds them); the graph, the result and the feeds."""
    graph = Graph("main")
    values: list[Any] = []
    feeds: list[Array] = []
    for position, operand in enumerate((lhs, rhs)):
        form, what = operand
        if form == "literal":
            values.append(what)
            continue
        feed = sample(what) if form == "array" else as_array(what)
        values.append(
            graph.input(
                f"a{position}", feed.shape, element_type_of(feed.dtype), weak=form == "argument"
            )
        )
        feeds.append(feed)
    return graph, fun(*values), feeds


def numpy_result(name: str, lhs: Operand, rhs: Operand) -> Array | str:
    """NumPy's result of one case, or the pattern of the refusal dflow must give
    where NumPy refuses (with NumPy's reason) or computes `**` in integers."""
    ufunc = OPS[name][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = np.asarray(ufunc(numpy_value(lhs), numpy_value(rhs)))
        except TypeError as error:  # NumPy refuses: so must dflow, with NumPy's reason
            return re.escape(str(error))
        except ValueError:  # integers to negative integer powers: `**` in integers
            return INTEGER_POW
    if name == "**" and want.dtype.kind in "biu":
        return INTEGER_POW
    return want


def check_case(name: str, lhs: Operand, rhs: Operand) -> str | None:
    """What is wrong with dflow's result of one case (None: it equals NumPy's)."""
    fun = OPS[name][0]
    want = numpy_result(name, lhs, rhs)
    if isinstance(want, str):
        return expect_refusal(fun, lhs, rhs, want)
    try:
        graph, result, feeds = traced(fun, lhs, rhs)
    except Exception as error:  # reported as the case's problem
        return f"raised {type(error).__name__}: {error}"
    assert result is not None
    graph.output(result)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (got,) = run_function(graph.module(), "main", feeds)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, NumPy {want.dtype}"
    if not np.array_equal(got, want, equal_nan=want.dtype.kind == "f"):
        return f"values {got.tolist()}, NumPy {want.tolist()}"
    return None


INTEGER_POW = (
    r"dflow\.pow: NumPy computes it in i(8|32|64), which df\.pow does not support: cast the "
    r"operands to a float type first \(at test_promotion\.py:\d+\)"
)
"""dflow's refusal of `**` where NumPy computes in integers (`df.pow` is float-only)."""


def expect_refusal(
    fun: Callable[[Any, Any], Any], lhs: Operand, rhs: Operand, message: str
) -> str | None:
    try:
        traced(fun, lhs, rhs)
    except dflow.TraceError as error:
        return None if re.search(message, str(error)) else f"refused with {error}"
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"
    return f"not refused (want {message})"


@pytest.mark.parametrize("name", list(OPS))
def test_every_operand_pair_gives_numpys_dtype_and_values(name: str) -> None:
    wrong = {
        f"{describe(lhs)} {name} {describe(rhs)}": problem
        for lhs, rhs in operands()
        if (problem := check_case(name, lhs, rhs)) is not None
    }
    assert not wrong, wrong


def assert_line(error: BaseException, message: str) -> None:
    """`error` says `message`, then names this file's line."""
    assert re.fullmatch(re.escape(message) + r" \(at test_promotion\.py:\d+\)", str(error)), error


def test_numpy_refuses_bool_subtraction_and_so_does_dflow() -> None:
    graph = Graph()
    x = graph.input("x", (3,), "i1")
    with pytest.raises(TypeError) as numpy_error:
        np.subtract(sample(np.bool_), True)
    with pytest.raises(dflow.TraceError) as error:
        x - True
    assert_line(error.value, f"dflow.sub: {numpy_error.value}")


def test_integer_power_is_refused_with_one_line() -> None:
    graph = Graph()
    k = graph.input("k", (3,), "i32")
    with pytest.raises(dflow.TraceError) as error:
        k**2
    assert_line(
        error.value,
        "dflow.pow: NumPy computes it in i32, which df.pow does not support: cast the "
        "operands to a float type first",
    )
    assert (sample(np.int32) ** 2).dtype == np.int32  # what NumPy would give: no float


def test_a_python_int_out_of_an_arrays_range_is_refused_as_numpy_does() -> None:
    graph = Graph()
    k = graph.input("k", (3,), "i32")
    with pytest.raises(OverflowError) as numpy_error:
        sample(np.int32) + 2**40
    with pytest.raises(dflow.TraceError) as error:
        k + 2**40
    assert_line(error.value, f"dflow.add: {numpy_error.value}")


def test_select_matmul_concat_and_addn_promote_as_numpy() -> None:
    i32, f32 = sample(np.int32), sample(np.float32)
    mask = np.array([True, False, False, True])
    graph = Graph()
    c, k, x = (
        graph.input(n, a.shape, element_type_of(a.dtype))
        for n, a in [("c", mask), ("k", i32), ("x", f32)]
    )
    graph.output(
        dflow.select(c, k, 2.5),
        dflow.select(c, x, 2),
        dflow.where(c, k, x),
        dflow.matmul(k.reshape((1, 4)), x.reshape((4, 1))),
        dflow.concat([k, x], 0),
        dflow.addn([k, x, k]),
    )
    got = run_function(graph.module(), "main", [mask, i32, f32])
    want = (
        np.where(mask, i32, 2.5),
        np.where(mask, f32, 2),
        np.where(mask, i32, f32),
        i32.reshape(1, 4) @ f32.reshape(4, 1),
        np.concatenate([i32, f32]),
        i32 + f32 + i32,
    )
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


# --- compiled by dflow.jit --------------------------------------------------------------

CASES: dict[str, Callable[[dict[str, Any], Any], Any]] = {
    "i32 * 2.5": lambda v, m: v["i32"] * 2.5,  # the silent wrong answer
    "i32 * 2": lambda v, m: v["i32"] * 2,
    "f32 * 2.5": lambda v, m: v["f32"] * 2.5,
    "f32 + f64": lambda v, m: v["f32"] + v["f64"],  # the ShapeError
    "i32 + f32": lambda v, m: v["i32"] + v["f32"],
    "i64 - i32": lambda v, m: v["i64"] - v["i32"],
    "i32 / i32": lambda v, m: v["i32"] / v["i32"],
    "3 / i64": lambda v, m: 3 / v["i64"],
    "b + 1": lambda v, m: v["b"] + 1,
    "b * 0.1": lambda v, m: v["b"] * 0.1,
    "b + b": lambda v, m: v["b"] + v["b"],
    "i32 < 2.5": lambda v, m: v["i32"] < 2.5,
    "f32 >= f64": lambda v, m: v["f32"] >= v["f64"],
    "maximum(i32, 0.1)": lambda v, m: m.maximum(v["i32"], 0.1),
    "f32 ** 2": lambda v, m: v["f32"] ** 2,
    "f32 * s_float": lambda v, m: v["f32"] * v["s_float"],
    "i32 * s_float": lambda v, m: v["i32"] * v["s_float"],
    "i32 + s_int": lambda v, m: v["i32"] + v["s_int"],
    "s_float - f64": lambda v, m: v["s_float"] - v["f64"],
    "f32 * (s_float * s_int)": lambda v, m: v["f32"] * (v["s_float"] * v["s_int"]),
}
"""Cases run compiled: each applied to NumPy's arrays and scalars (`m` = np) gives the
reference, applied in a `dflow.jit` trace (`m` = dflow) the result to check."""


def values() -> dict[str, Any]:
    names = {"b": np.bool_, "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}
    return {name: sample(dtype) for name, dtype in names.items()} | {"s_float": 0.1, "s_int": -3}


def test_jitted_cases_give_numpys_dtypes_and_values() -> None:
    jitted = dflow.jit(lambda v: {name: case(v, dflow) for name, case in CASES.items()})
    got = jitted(values())
    for name, case in CASES.items():
        want = np.asarray(case(values(), np))
        assert (name, got[name].dtype) == (name, want.dtype)
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_python_scalar_arguments_are_weak_and_numpy_scalars_strong() -> None:
    scale = dflow.jit(lambda x, s: x * s)
    x = sample(np.float32)
    program = scale.lower(x, 0.1)
    assert [a.dtype for a in program.signature().arguments] == [np.float32, np.float64]
    for s in [0.1, np.float64(0.1), np.float32(0.1), 3]:
        want = x * s
        got = scale(x, s)
        assert (s, got.dtype) == (s, want.dtype)
        np.testing.assert_array_equal(got, want)
    assert scale.traces == 4  # 0.1 and 3 weak, np.float64 and np.float32 strong


def test_a_python_int_argument_must_fit_the_int32_it_meets() -> None:
    add = dflow.jit(lambda k, n: k + n)
    k = sample(np.int32)
    np.testing.assert_array_equal(add(k, 5), k + 5)
    with pytest.raises(OverflowError) as numpy_error:
        k + 2**40
    with pytest.raises(OverflowError) as error:
        add(k, 2**40)
    assert str(error.value) == str(numpy_error.value)
    wide = sample(np.int64)
    np.testing.assert_array_equal(add(wide, 2**40), wide + 2**40)


def test_an_argument_of_a_dtype_df_lacks_is_one_clear_error() -> None:
    with pytest.raises(TypeError) as error:
        dflow.jit(lambda x: x + 1)(np.ones(3, np.complex64))
    assert str(error.value) == (
        "argument x of <lambda> is a ndarray of dtype complex64, which dflow has no element "
        "type for: use one of bfloat16, bool, float16, float32, float4_e2m1fn, float64, "
        "float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, int16, int2, int32, "
        "int4, int64, int8, uint16, uint2, uint32, uint4, uint64, uint8"
    )


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn"])
def test_ml_dtypes_floats_meet_python_scalars_as_numpy(dtype: str) -> None:
    """`ml_dtypes`' floats (NumPy's kind `V`) stay themselves against a Python float,
    as NEP 50 has a weak scalar do (and JAX does; NumPy itself, not knowing them for
    floats, gives float32), computed in f32 and rounded, and compare with one."""
    x = np.array([-1.5, 0.25, 3.0], getattr(ml_dtypes, dtype))
    scaled, negative = dflow.jit(lambda x: (x * 2.5, x < 0.0))(x)
    assert scaled.dtype == x.dtype
    want = (x.astype(np.float32) * np.float32(2.5)).astype(x.dtype)
    np.testing.assert_array_equal(scaled.astype(np.float32), want.astype(np.float32))
    np.testing.assert_array_equal(negative, x < 0.0)
