"""The shape rules of `dialects/df/shapes.py`, and how ops report bad shapes.

Rules work on tuples and raise `ShapeError` naming the shapes (or, for bad
properties, the property values); op builders raise while inferring the result
type; `op.verify()` raises a `VerifyException` prefixed with the op name.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Builtin, TensorType, f32, f64, i1, i32
from xdsl.ir import Block, Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df import (
    DF,
    AddOp,
    ConcatOp,
    Conv2DOp,
    DivOp,
    MatmulOp,
    MaxPool2DOp,
    ReduceSumOp,
    SelectOp,
    SliceOp,
    TransposeOp,
    shapes,
)
from dflow.dialects.df.shapes import ShapeError


def raises_naming(rule: Callable[..., object], *args: object, names: list[str]) -> None:
    """`rule(*args)` raises ShapeError whose message contains every string of `names`."""
    with pytest.raises(ShapeError) as error:
        rule(*args)
    for name in names:
        assert name in str(error.value), f"{name!r} not in {str(error.value)!r}"


# ----------------------------------------------------------------------------- small helpers


@pytest.mark.parametrize(("shape", "text"), [((4, 8), "4x8"), ((5,), "5"), ((), "scalar")])
def test_format_shape(shape: tuple[int, ...], text: str) -> None:
    assert shapes.format_shape(shape) == text


@pytest.mark.parametrize(("shape", "count"), [((2, 3, 4), 24), ((), 1), ((3, 0), 0)])
def test_num_elements(shape: tuple[int, ...], count: int) -> None:
    assert shapes.num_elements(shape) == count


# ----------------------------------------------------------------------------- broadcast


@pytest.mark.parametrize(
    ("operands", "expected"),
    [
        (((3, 4), (3, 4)), (3, 4)),
        (((4, 1), (1, 8)), (4, 8)),
        (((2, 3, 4), (4,)), (2, 3, 4)),
        (((4,), (2, 3, 4)), (2, 3, 4)),
        (((), (3,)), (3,)),
        (((), ()), ()),
        (((2, 1, 4), (3, 1)), (2, 3, 4)),
        (((5, 1, 1), (1, 4, 1), (3,)), (5, 4, 3)),
        (((0,), (1,)), (0,)),
        (((1, 0), (3, 1)), (3, 0)),
        (((2, 3),), (2, 3)),
    ],
    ids=str,
)
def test_broadcast(operands: tuple, expected: tuple) -> None:
    assert shapes.broadcast(*operands) == expected
    assert expected == np.broadcast_shapes(*operands)


@pytest.mark.parametrize(
    "operands",
    [((4, 3), (5, 3)), ((3,), (4,)), ((2, 3), (3, 2)), ((2, 1), (8, 4, 3)), ((2,), (1,), (3,))],
    ids=str,
)
def test_broadcast_rejects(operands: tuple) -> None:
    raises_naming(shapes.broadcast, *operands, names=[shapes.format_shape(s) for s in operands])


@pytest.mark.parametrize(
    ("source", "target", "ok"),
    [
        ((3, 1), (2, 3, 4), True),
        ((), (2, 3), True),
        ((), (), True),
        ((1,), (0,), True),
        ((2, 3), (2, 3), True),
        ((3,), (3, 4), False),
        ((2, 3), (3,), False),
        ((0,), (5,), False),
        ((2, 1), (3, 4), False),
        ((4, 8), (1, 8), False),  # a target dimension of 1 does not absorb the source's 4
        ((4,), (1,), False),
        ((3, 1), (1, 5), False),
        ((2, 0), (1, 0), False),
    ],
    ids=str,
)
def test_broadcasts_to(source: tuple, target: tuple, ok: bool) -> None:
    assert shapes.broadcasts_to(source, target) is ok
    assert ok == _numpy_broadcasts(source, target)


def _numpy_broadcasts(source: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """NumPy's own answer, the independent oracle of `broadcasts_to`."""
    try:
        np.broadcast_to(np.empty(source), target)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- axes, reduce


@pytest.mark.parametrize(
    ("axis", "rank", "expected"), [(0, 3, 0), (2, 3, 2), (-1, 3, 2), (-3, 3, 0)]
)
def test_normalize_axis(axis: int, rank: int, expected: int) -> None:
    assert shapes.normalize_axis(axis, rank) == expected


@pytest.mark.parametrize(("axis", "rank"), [(3, 3), (-4, 3), (0, 0)])
def test_normalize_axis_rejects(axis: int, rank: int) -> None:
    raises_naming(shapes.normalize_axis, axis, rank, names=[f"axis {axis}", f"rank {rank}"])


@pytest.mark.parametrize(
    ("axes", "keepdims", "expected"),
    [
        (None, False, ()),
        (None, True, (1, 1, 1)),
        ([0], False, (3, 4)),
        ([-1], False, (2, 3)),
        ([-1], True, (2, 3, 1)),
        ([2, 0], False, (3,)),
        ([0, -1], True, (1, 3, 1)),
        ([], False, (2, 3, 4)),
    ],
    ids=str,
)
def test_reduce(axes: list[int] | None, keepdims: bool, expected: tuple) -> None:
    assert shapes.reduce((2, 3, 4), axes, keepdims) == expected
    numpy_axes = None if axes is None else tuple(axes)
    assert np.zeros((2, 3, 4)).sum(axis=numpy_axes, keepdims=keepdims).shape == expected


@pytest.mark.parametrize(
    ("axes", "names"), [([3], ["axis 3", "rank 3"]), ([-4], ["axis -4"]), ([0, -3], ["[0, -3]"])]
)
def test_reduce_rejects(axes: list[int], names: list[str]) -> None:
    raises_naming(shapes.reduce, (2, 3, 4), axes, False, names=names)


# ----------------------------------------------------------------------------- transpose, matmul


@pytest.mark.parametrize(
    ("shape", "perm", "expected"),
    [((3, 4), (1, 0), (4, 3)), ((2, 3, 4), (2, 0, 1), (4, 2, 3)), ((), (), ()), ((5,), (0,), (5,))],
    ids=str,
)
def test_transpose(shape: tuple, perm: tuple, expected: tuple) -> None:
    assert shapes.transpose(shape, perm) == expected


@pytest.mark.parametrize("perm", [(0, 0, 1), (0, 1), (0, 1, 3), (0, 1, 2, 3)], ids=str)
def test_transpose_rejects(perm: tuple) -> None:
    raises_naming(shapes.transpose, (2, 3, 4), perm, names=["2x3x4", str(list(perm))])


@pytest.mark.parametrize(
    ("lhs", "rhs", "transpose_a", "transpose_b", "expected"),
    [
        ((3, 4), (4, 5), False, False, (3, 5)),
        ((4, 3), (4, 5), True, False, (3, 5)),
        ((3, 4), (5, 4), False, True, (3, 5)),
        ((4, 3), (5, 4), True, True, (3, 5)),
        ((2, 3, 4), (2, 4, 5), False, False, (2, 3, 5)),
        ((6, 2, 4, 3), (6, 2, 5, 4), True, True, (6, 2, 3, 5)),
    ],
    ids=str,
)
def test_matmul(lhs: tuple, rhs: tuple, transpose_a: bool, transpose_b: bool, expected: tuple):
    assert shapes.matmul(lhs, rhs, transpose_a, transpose_b) == expected


@pytest.mark.parametrize(
    ("lhs", "rhs", "transpose_b"),
    [
        ((4,), (4, 3), False),  # rank 1
        ((2, 3, 4), (4, 5), False),  # ranks differ
        ((2, 3, 4), (3, 4, 5), False),  # batch dims differ
        ((3, 4), (5, 6), False),  # contracted dims differ
        ((3, 4), (5, 4), False),  # would need transpose_b
        ((3, 4), (4, 5), True),  # transpose_b makes it wrong
    ],
    ids=str,
)
def test_matmul_rejects(lhs: tuple, rhs: tuple, transpose_b: bool) -> None:
    raises_naming(
        shapes.matmul,
        lhs,
        rhs,
        False,
        transpose_b,
        names=[shapes.format_shape(lhs), shapes.format_shape(rhs)],
    )


# ----------------------------------------------------------------------------- windows


@pytest.mark.parametrize(
    ("size", "kernel", "stride", "pad", "dilation", "expected"),
    [
        (7, 3, 1, 0, 1, 5),
        (7, 3, 2, 0, 1, 3),  # positions 0, 2, 4
        (8, 3, 2, 0, 1, 3),  # the last row is never a window start
        (7, 3, 2, 3, 1, 4),  # padded to 10
        (7, 3, 1, 0, 2, 3),  # dilated extent 5
        (5, 5, 1, 0, 1, 1),
        (4, 5, 1, 1, 1, 1),  # fits only thanks to the pad
        (6, 2, 3, 0, 1, 2),  # stride larger than the kernel
    ],
)
def test_window_output(size, kernel, stride, pad, dilation, expected) -> None:
    assert shapes.window_output(size, kernel, stride, pad, dilation) == expected


@pytest.mark.parametrize(
    ("size", "kernel", "pad", "dilation", "extent", "padded"),
    [(2, 5, 0, 1, 5, 2), (4, 3, 0, 2, 5, 4), (3, 5, 1, 1, 5, 4)],
)
def test_window_output_rejects(size, kernel, pad, dilation, extent, padded) -> None:
    raises_naming(
        shapes.window_output,
        size,
        kernel,
        1,
        pad,
        dilation,
        names=[f"extent {extent}", f"padded input {padded}"],
    )


def test_window2d_uses_top_bottom_for_height_and_left_right_for_width() -> None:
    # height 7 + 1 + 2 = 10, kernel 3, stride 2 -> 4; width 8 + 0 + 1 = 9, kernel 2 -> 8
    assert shapes.window2d((7, 8), (3, 2), (2, 1), (1, 0, 2, 1), (1, 1)) == (4, 8)


@pytest.mark.parametrize(
    ("strides", "pads", "dilations", "names"),
    [
        ((1,), (0, 0, 0, 0), (1, 1), ["strides", "pads 4"]),
        ((1, 1), (0, 0, 0), (1, 1), ["strides", "pads 4"]),
        ((1, 1), (0, 0, 0, 0), (1, 1, 1), ["dilations", "pads 4"]),
        ((0, 1), (0, 0, 0, 0), (1, 1), ["[0, 1]"]),
        ((1, 1), (0, 0, 0, 0), (1, -1), ["[1, -1]"]),
        ((1, 1), (0, -1, 0, 0), (1, 1), ["[0, -1, 0, 0]"]),
    ],
    ids=str,
)
def test_window2d_rejects_properties(strides, pads, dilations, names) -> None:
    raises_naming(shapes.window2d, (8, 8), (3, 3), strides, pads, dilations, names=names)


@pytest.mark.parametrize(
    ("strides", "pads", "dilations", "expected"),
    [
        ((1, 1), (0, 0, 0, 0), (1, 1), (2, 4, 5, 7)),
        ((2, 1), (1, 0, 2, 1), (1, 1), (2, 4, 4, 8)),
        ((1, 2), (0, 2, 1, 0), (2, 1), (2, 4, 4, 5)),
        ((3, 3), (0, 0, 0, 0), (1, 1), (2, 4, 2, 3)),
    ],
    ids=str,
)
def test_conv2d(strides, pads, dilations, expected) -> None:
    assert shapes.conv2d((2, 3, 7, 8), (4, 3, 3, 2), strides, pads, dilations) == expected


@pytest.mark.parametrize(
    ("input", "filter"),
    [
        ((3, 7, 8), (4, 3, 3, 2)),  # input not 4-D
        ((2, 3, 7, 8), (4, 3, 3)),  # filter not 4-D
        ((2, 3, 7, 8), (4, 2, 3, 2)),  # channels differ
    ],
    ids=str,
)
def test_conv2d_rejects(input: tuple, filter: tuple) -> None:
    raises_naming(
        shapes.conv2d,
        input,
        filter,
        (1, 1),
        (0, 0, 0, 0),
        (1, 1),
        names=[shapes.format_shape(input), shapes.format_shape(filter)],
    )


def test_conv2d_rejects_a_filter_larger_than_the_input() -> None:
    with pytest.raises(ShapeError):
        shapes.conv2d((1, 1, 2, 2), (1, 1, 5, 5), (1, 1), (0, 0, 0, 0), (1, 1))


def test_conv2d_too_large_window_message_names_the_shapes() -> None:
    raises_naming(
        shapes.conv2d,
        (1, 1, 2, 2),
        (1, 1, 5, 5),
        (1, 1),
        (0, 0, 0, 0),
        (1, 1),
        names=["1x1x2x2", "1x1x5x5"],
    )


@pytest.mark.parametrize(
    ("kernel", "strides", "pads", "expected"),
    [
        ((2, 2), (2, 2), (0, 0, 0, 0), (2, 3, 3, 3)),
        ((3, 2), (1, 1), (1, 0, 2, 1), (2, 3, 8, 6)),
        ((3, 3), (2, 2), (1, 1, 1, 1), (2, 3, 4, 3)),
    ],
    ids=str,
)
def test_pool2d(kernel, strides, pads, expected) -> None:
    assert shapes.pool2d((2, 3, 7, 6), kernel, strides, pads) == expected


@pytest.mark.parametrize(
    ("input", "kernel", "pads", "names"),
    [
        ((3, 7, 6), (2, 2), (0, 0, 0, 0), ["3x7x6"]),
        ((2, 3, 7, 6), (2,), (0, 0, 0, 0), ["kernel [2]"]),
        ((2, 3, 7, 6), (0, 2), (0, 0, 0, 0), ["kernel [0, 2]"]),
        ((2, 3, 7, 6), (2, 2), (2, 0, 0, 0), ["[2, 0, 0, 0]", "[2, 2]"]),
        ((2, 3, 7, 6), (3, 2), (0, 0, 0, 2), ["[0, 0, 0, 2]", "[3, 2]"]),
        ((2, 3, 7, 6), (8, 2), (0, 0, 0, 0), ["extent 8", "padded input 7"]),
    ],
    ids=str,
)
def test_pool2d_rejects(input, kernel, pads, names) -> None:
    raises_naming(shapes.pool2d, input, kernel, (1, 1), pads, names=names)


# ----------------------------------------------------------------------------- concat, slice


@pytest.mark.parametrize(
    ("operands", "axis", "expected"),
    [
        ([(2, 3), (4, 3)], 0, (6, 3)),
        ([(2, 3), (2, 1), (2, 2)], 1, (2, 6)),
        ([(2, 3, 4), (2, 3, 1)], -1, (2, 3, 5)),
        ([(3,)], 0, (3,)),
        ([(2, 0), (2, 5)], 1, (2, 5)),
    ],
    ids=str,
)
def test_concat(operands: list[tuple], axis: int, expected: tuple) -> None:
    assert shapes.concat(operands, axis) == expected


@pytest.mark.parametrize(
    ("operands", "axis", "names"),
    [
        ([(2, 3), (2, 4)], 0, ["2x3", "2x4", "axis 0"]),
        ([(2, 3), (2, 3, 1)], 0, ["2x3", "2x3x1"]),
        ([(2, 3), (2, 3), (5, 4)], 1, ["2x3", "5x4"]),
        ([(2, 3), (2, 3)], 2, ["axis 2", "rank 2"]),
        ([(2, 3), (2, 3)], -3, ["axis -3"]),
    ],
    ids=str,
)
def test_concat_rejects(operands: list[tuple], axis: int, names: list[str]) -> None:
    raises_naming(shapes.concat, operands, axis, names=names)


def test_concat_rejects_no_operands() -> None:
    with pytest.raises(ShapeError):
        shapes.concat([], 0)


@pytest.mark.parametrize(
    ("shape", "start", "limit", "expected"),
    [
        ((5, 6), (1, 2), (4, 6), (3, 4)),
        ((2, 3, 4), (0, 0, 0), (2, 3, 4), (2, 3, 4)),
        ((4, 5), (2, 1), (2, 5), (0, 4)),
        ((), (), (), ()),
    ],
    ids=str,
)
def test_slice(shape: tuple, start: tuple, limit: tuple, expected: tuple) -> None:
    assert shapes.slice_(shape, start, limit) == expected


@pytest.mark.parametrize(
    ("start", "limit"),
    [
        ((0,), (3, 4)),
        ((0, 0), (3,)),
        ((0, 0, 0), (1, 1, 1)),
        ((2, 0), (1, 4)),
        ((0, 0), (3, 5)),
        ((-1, 0), (3, 4)),
    ],
    ids=str,
)
def test_slice_rejects(start: tuple, limit: tuple) -> None:
    raises_naming(shapes.slice_, (3, 4), start, limit, names=["3x4", str(list(start))])


# ----------------------------------------------------------------------------- builders


def args(*types: TensorType) -> tuple:
    return Block(arg_types=types).args


def t(element, *shape: int) -> TensorType:
    return TensorType(element, shape)


BUILDER_CASES = {  # id: (builder, operand types, what the message names)
    "add-broadcast": (AddOp, [t(f32, 4, 3), t(f32, 5, 3)], ["4x3", "5x3"]),
    "add-elements": (AddOp, [t(f32, 3), t(f64, 3)], ["tensor<3xf32>", "tensor<3xf64>"]),
    "matmul": (MatmulOp, [t(f32, 3, 4), t(f32, 5, 6)], ["3x4", "5x6"]),
    "matmul-transpose_a": (
        lambda a, b: MatmulOp(a, b, transpose_a=True),
        [t(f32, 3, 4), t(f32, 4, 5)],
        ["3x4", "4x5"],
    ),
    "conv2d": (Conv2DOp, [t(f32, 1, 3, 8, 8), t(f32, 4, 2, 3, 3)], ["1x3x8x8", "4x2x3x3"]),
    "max_pool2d": (
        lambda a: MaxPool2DOp(a, kernel=[2, 2], pads=[2, 0, 0, 0]),
        [t(f32, 1, 1, 4, 4)],
        ["pads"],
    ),
    "transpose": (lambda a: TransposeOp(a, [0, 0]), [t(f32, 3, 4)], ["3x4", "[0, 0]"]),
    "reduce_sum": (lambda a: ReduceSumOp(a, [2]), [t(f32, 3, 4)], ["axis 2"]),
    "concat": (lambda a, b: ConcatOp([a, b], 0), [t(f32, 2, 3), t(f32, 2, 4)], ["2x3", "2x4"]),
    "slice": (lambda a: SliceOp(a, [0, 0], [3, 5]), [t(f32, 3, 4)], ["3x4"]),
    "select": (SelectOp, [t(f32, 3), t(f32, 3), t(f32, 3)], ["i1"]),
}


@pytest.mark.parametrize(("build", "types", "names"), BUILDER_CASES.values(), ids=BUILDER_CASES)
def test_builder_rejects_bad_shapes(build: Callable, types: list, names: list[str]) -> None:
    """Result-type inference raises ShapeError naming the shapes (verify adds the op name)."""
    raises_naming(build, *args(*types), names=names)


@pytest.mark.parametrize(
    ("build", "types"),
    [(DivOp, [t(i32, 3), t(i32, 3)]), (AddOp, [t(i1, 3), t(i1, 3)])],
)
def test_builder_rejects_element_types(build: Callable, types: list) -> None:
    with pytest.raises(VerifyException, match="element type"):
        build(*args(*types))


# ----------------------------------------------------------------------------- verifiers


def parse_op(line: str) -> Operation:
    """Parse one df op (operands %0, %1, ... are function arguments) without verifying."""
    operand_types = re.search(r": \((.*)\) ->", line).group(1).split(", ")
    params = ", ".join(f"%{k}: {type}" for k, type in enumerate(operand_types))
    context = Context()
    for dialect in (Builtin, func.Func, DF):
        context.load_dialect(dialect)
    text = f"func.func @f({params}) {{\n  %r = {line}\n  func.return\n}}"
    function = Parser(context, text).parse_module().body.block.first_op
    return function.body.block.first_op


VERIFY_CASES = [  # (op line, shapes its message must name)
    ("df.add %0, %1 : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>", ["4x3", "5x3"]),
    ("df.add %0, %1 : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x1xf32>", ["4x1", "1x8"]),
    ("df.mul %0, %1 : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf64>", ["4x1", "1x8"]),
    ("df.greater %0, %1 : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>", ["4x1", "1x8"]),
    (
        "df.select %0, %1, %2 : (tensor<4x1xi1>, tensor<1x8xf32>, tensor<3x5xf32>) -> "
        "tensor<4x8xf32>",
        ["4x1", "1x8", "3x5"],
    ),
    ("df.addn %0, %1 : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>", ["2x3", "3x2"]),
    ("df.cast %0 : (tensor<2x3xf32>) -> tensor<3x2xi32>", ["2x3", "3x2"]),
    ("df.neg %0 : (tensor<2x3xf32>) -> tensor<3x2xf32>", ["2x3", "3x2"]),
    ("df.matmul %0, %1 : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>", ["4x8", "7x16"]),
    (
        "df.matmul %0, %1 {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> "
        "tensor<4x8xf32>",
        ["4x8", "16x8"],
    ),
    (
        "df.conv2d %0, %1 : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>",
        ["1x3x8x8", "4x2x3x3"],
    ),
    (
        "df.conv2d %0, %1, %2 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>) -> "
        "tensor<1x4x6x6xf32>",
        ["tensor<5xf32>"],
    ),
    (
        "df.conv2d %0, %1 {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, "
        "tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>",
        ["1x3x8x8", "4x3x3x3", "1x4x6x6"],
    ),
    (
        "df.conv2d_grad_input %0, %1 : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> "
        "tensor<1x3x8x8xf32>",
        ["1x4x5x5", "4x3x3x3", "1x3x8x8"],
    ),
    (
        "df.conv2d_grad_filter %0, %1 : (tensor<1x3x8x8xf32>, tensor<1x4x5x5xf32>) -> "
        "tensor<4x3x3x3xf32>",
        ["1x3x8x8", "1x4x5x5", "4x3x3x3"],
    ),
    (
        "df.max_pool2d %0 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : "
        "(tensor<1x3x8x8xf32>) -> tensor<1x3x3x3xf32>",
        ["1x3x8x8", "1x3x3x3"],
    ),
    (
        "df.avg_pool2d %0 {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : "
        "(tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>",
        ["1x3x8x8", "1x3x6x6"],
    ),
    (
        "df.transpose %0 {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>",
        ["3x4", "4x3"],
    ),
    ("df.reshape %0 : (tensor<2x3xf32>) -> tensor<4x2xf32>", ["2x3", "4x2"]),
    ("df.broadcast_to %0 : (tensor<3x1xf32>) -> tensor<4x2xf32>", ["3x1", "4x2"]),
    ("df.broadcast_to %0 : (tensor<4x8xf32>) -> tensor<1x8xf32>", ["4x8", "1x8"]),
    (
        "df.reduce_sum %0 {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3xf32>",
        ["3x4", "tensor<3xf32>"],
    ),
    ("df.reduce_max %0 {keepdims = true} : (tensor<3x4xi32>) -> tensor<i32>", ["3x4", "1x1"]),
    ("df.softmax %0 : (tensor<3x4xf32>) -> tensor<4x3xf32>", ["3x4", "4x3"]),
    (
        "df.concat %0, %1 {axis = 0} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>",
        ["2x3", "2x4"],
    ),
    (
        "df.slice %0 {start = array<i64: 0, 0>, limit = array<i64: 3, 5>} : (tensor<3x4xf32>) -> "
        "tensor<3x5xf32>",
        ["3x4"],
    ),
]


def op_name(line: str) -> str:
    return line.split(" ", maxsplit=1)[0]


def verify_error(line: str) -> str:
    op = parse_op(line)
    with pytest.raises(VerifyException) as error:
        op.verify()
    return str(error.value)


@pytest.mark.parametrize(
    ("line", "names"), [pytest.param(*case, id=op_name(case[0])) for case in VERIFY_CASES]
)
def test_verify_names_op_and_shapes(line: str, names: list[str]) -> None:
    message = verify_error(line)
    assert message.startswith(op_name(line) + ": "), message
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"


@pytest.mark.parametrize(
    "line",
    [
        "df.exp %0 : (tensor<3xi32>) -> tensor<3xi32>",
        "df.neg %0 : (tensor<3xi1>) -> tensor<3xi1>",
        "df.div %0, %1 : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>",
        "df.add %0, %1 : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>",
        "df.matmul %0, %1 : (tensor<2x2xi1>, tensor<2x2xi1>) -> tensor<2x2xi1>",
        "df.reduce_mean %0 : (tensor<3xi64>) -> tensor<i64>",
        "df.softmax %0 : (tensor<3xi32>) -> tensor<3xi32>",
        "df.max_pool2d %0 {kernel = array<i64: 1, 1>} : (tensor<1x1x2x2xi32>) -> "
        "tensor<1x1x2x2xi32>",
        "df.conv2d %0, %1 : (tensor<1x1x2x2xi64>, tensor<1x1x1x1xi64>) -> tensor<1x1x2x2xi64>",
        "df.addn %0 : (tensor<3xi1>) -> tensor<3xi1>",
    ],
    ids=op_name,
)
def test_verify_rejects_element_types(line: str) -> None:
    message = verify_error(line)
    assert message.startswith(op_name(line) + ": "), message
    assert "element type" in message


@pytest.mark.parametrize(
    "line",
    [
        "df.add %0, %1 : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>",
        "df.select %0, %1, %2 : (tensor<4x1xi1>, tensor<1x8xi32>, tensor<i32>) -> tensor<4x8xi32>",
        "df.conv2d %0, %1, %2 {pads = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 1>} : "
        "(tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<2x4x4x8xf32>",
        "df.reduce_sum %0 {axes = array<i64: -1>, keepdims = true} : (tensor<3x4xi64>) -> "
        "tensor<3x1xi64>",
        "df.cast %0 : (tensor<2x3xi1>) -> tensor<2x3xf64>",
    ],
    ids=op_name,
)
def test_verify_accepts_good_ops(line: str) -> None:
    parse_op(line).verify()


def test_verify_conv2d_too_large_window_names_shapes() -> None:
    message = verify_error(
        "df.conv2d %0, %1 : (tensor<1x1x2x2xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x1x1xf32>"
    )
    assert message.startswith("df.conv2d: ")
    assert "1x1x2x2" in message and "1x1x5x5" in message
