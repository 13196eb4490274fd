"""ONNX models holding 8- and 4-bit floats and 2- and 4-bit integers: initializers
packed several to a byte (`raw_data` and `int32_data`), FLOAT8 bits in `int32_data`,
and the casts between them, compared with ONNX's reference evaluator (the oracle the
backend node tests' expected outputs come from)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import dflow
from dflow.frontend.onnx import OnnxImportError, import_model

pytestmark = pytest.mark.usefixtures("module_cache")

PACKED = {
    TensorProto.INT4: ml_dtypes.int4,
    TensorProto.UINT4: ml_dtypes.uint4,
    TensorProto.INT2: ml_dtypes.int2,
    TensorProto.UINT2: ml_dtypes.uint2,
    TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
}


def _model(weight: TensorProto, x_type: int = TensorProto.FLOAT) -> Any:
    """`y = Cast(weight, FLOAT) + x`, x shaped as the weight."""
    shape = list(weight.dims)
    nodes = [
        helper.make_node("Cast", ["w"], ["wide"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["wide", "x"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "packed",
        [helper.make_tensor_value_info("x", x_type, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [weight],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _values(data_type: int, shape: tuple[int, ...]) -> Any:
    """Every bit pattern of the type, repeated to `shape`."""
    count = 4 if data_type in (TensorProto.INT2, TensorProto.UINT2) else 16
    return np.resize(np.arange(count, dtype=np.uint8), shape).view(PACKED[data_type])


@pytest.mark.parametrize("data_type", list(PACKED))
@pytest.mark.parametrize("shape", [(3,), (2, 5)])
def test_packed_initializers_read_as_the_reference_does(
    data_type: int, shape: tuple[int, ...]
) -> None:
    """raw_data (numpy_helper.from_array) and int32_data (helper.make_tensor) both
    pack the values, first in the lowest bits; odd counts leave a half byte."""
    values = _values(data_type, shape)
    x = np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    raw = numpy_helper.from_array(values, "w")
    typed = helper.make_tensor("w", data_type, shape, values.astype(np.float32).ravel().tolist())
    assert raw.raw_data and not typed.raw_data
    for weight in (raw, typed):
        model = _model(weight)
        (want,) = ReferenceEvaluator(model).run(None, {"x": x})
        np.testing.assert_array_equal(dflow.compile(model)(x), want)


def test_float8_bits_in_int32_data() -> None:
    values = np.array([0.5, -448, 3.25, np.nan], np.float32)
    bits = values.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.int32)
    weight = TensorProto(name="w", data_type=TensorProto.FLOAT8E4M3FN, dims=[4])
    weight.int32_data.extend(bits.tolist())
    x = np.zeros(4, np.float32)
    (want,) = ReferenceEvaluator(_model(weight)).run(None, {"x": x})
    np.testing.assert_array_equal(dflow.compile(_model(weight))(x), want)


def test_a_packed_initializer_of_the_wrong_size_is_one_line() -> None:
    weight = TensorProto(name="w", data_type=TensorProto.INT4, dims=[5], raw_data=b"\x12\x34")
    with pytest.raises(OnnxImportError) as refused:
        import_model(_model(weight))
    message = refused.value.message
    assert "5 elements, 2 to a byte" in message and "2 bytes" in message
    assert "\n" not in message


@pytest.mark.parametrize("saturate", [0, 1])
@pytest.mark.parametrize(
    "to",
    [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
     TensorProto.FLOAT8E5M2FNUZ, TensorProto.FLOAT4E2M1, TensorProto.INT4, TensorProto.UINT2],
)  # fmt: skip
def test_cast_edges_match_the_reference(to: int, saturate: int) -> None:
    """Past the largest finite value, infinities, NaN, ties and signed zeros, with and
    without `saturate` (which only the 8-bit floats heed)."""
    x = np.array(
        [0.0, -0.0, 1.0625, 7.5, -9.6, 240, 248, 250, 448, 464, 465, 500, 57344, 61440,
         1e6, -1e6, np.inf, -np.inf, np.nan, 1e-7, 2.0**-10],
        np.float32,
    )  # fmt: skip
    node = helper.make_node("Cast", ["x"], ["y"], to=to, saturate=saturate)
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
        [helper.make_tensor_value_info("y", to, [len(x)])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    if to in (TensorProto.INT4, TensorProto.UINT2):
        x = x[np.isfinite(x) & (np.abs(x) < 1e5)]  # a float past an integer's range is undefined
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = len(x)
        model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = len(x)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    got = dflow.compile(model)(x)
    assert got.dtype == want.dtype
    wide_got, wide_want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(wide_got, wide_want)
    np.testing.assert_array_equal(np.signbit(wide_got), np.signbit(wide_want))
