"""Contractions and windows: matmul, conv2d and its two gradients, pooling."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from dflow.dialects.df import reference, shapes
from dflow.dialects.df.base import FUNCTIONAL_SYNTAX, DfOp, require_elements, require_result
from dflow.dialects.df.elementwise import common_element
from dflow.dialects.df.reference import Array
from dflow.dialects.df.semantics import HasSemantics
from dflow.dialects.df.shapes import ShapeError
from dflow.dialects.df.traits import EpilogueHead
from dflow.dialects.df.types import (
    FLOATS,
    NUMBERS,
    bool_attr,
    flag,
    i64_array,
    i64_attr,
    shape_of,
    static_tensor,
)

Value = Operation | SSAValue

DEFAULT_STRIDES = (1, 1)
DEFAULT_PADS = (0, 0, 0, 0)
DEFAULT_DILATIONS = (1, 1)
DEFAULT_GROUPS = 1


def _type(value: Value) -> Attribute:
    return SSAValue.get(value).type


@irdl_op_definition
class MatmulOp(DfOp, HasSemantics):
    """`A·B` on the last two axes, optionally transposing either; leading axes are a batch."""

    name = "df.matmul"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_a = prop_def(BoolAttr, default_value=bool_attr(False))
    transpose_b = prop_def(BoolAttr, default_value=bool_attr(False))

    traits = traits_def(Pure(), EpilogueHead())
    assembly_format = "$lhs `,` $rhs " + FUNCTIONAL_SYNTAX

    def __init__(
        self, lhs: Value, rhs: Value, *, transpose_a: bool = False, transpose_b: bool = False
    ):
        result = self.infer_type(_type(lhs), _type(rhs), transpose_a, transpose_b)
        super().__init__(
            operands=[lhs, rhs],
            result_types=[result],
            properties={
                "transpose_a": bool_attr(transpose_a),
                "transpose_b": bool_attr(transpose_b),
            },
        )

    @staticmethod
    def infer_type(
        lhs: Attribute, rhs: Attribute, transpose_a: bool, transpose_b: bool
    ) -> TensorType:
        element = common_element((lhs, rhs))
        require_elements("operands", element, NUMBERS)
        shape = shapes.matmul(shape_of(lhs), shape_of(rhs), transpose_a, transpose_b)
        return TensorType(element, shape)

    def verify_types(self) -> None:
        operands = (self.lhs.type, self.rhs.type)
        expected = self.infer_type(*operands, flag(self.transpose_a), flag(self.transpose_b))
        require_result(self.result.type, expected, operands)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return reference.matmul(
            inputs[0], inputs[1], flag(self.transpose_a), flag(self.transpose_b)
        )


def _values(attr: DenseArrayBase[IntegerType]) -> tuple[int, ...]:
    return tuple(attr.get_values())


class WindowOp(DfOp, abc.ABC):
    """Base of the 2-D window ops on NCHW tensors: strides and pads."""

    strides = prop_def(DenseArrayBase[IntegerType], default_value=i64_array(DEFAULT_STRIDES))
    pads = prop_def(DenseArrayBase[IntegerType], default_value=i64_array(DEFAULT_PADS))

    traits = traits_def(Pure())

    @property
    def stride_values(self) -> tuple[int, ...]:
        return _values(self.strides)

    @property
    def pad_values(self) -> tuple[int, ...]:
        """Pads as (top, left, bottom, right)."""
        return _values(self.pads)


class ConvolutionOp(WindowOp, abc.ABC):
    """The conv2d family: strides, pads (top, left, bottom, right), dilations and
    groups (the channels split into that many groups, each output channel reading
    its group's input channels only: depthwise when groups = C; 1, the default, is
    not printed).

    Each member relates an input (NCHW), a filter (O x C/groups x KH x KW) and an
    output (NCHW) by the conv2d shape rule; they differ only in which two are operands.
    """

    dilations = prop_def(DenseArrayBase[IntegerType], default_value=i64_array(DEFAULT_DILATIONS))
    groups = prop_def(IntegerAttr[IntegerType], default_value=i64_attr(DEFAULT_GROUPS))

    @property
    def dilation_values(self) -> tuple[int, ...]:
        return _values(self.dilations)

    @property
    def group_count(self) -> int:
        return self.groups.value.data

    @property
    def window(self) -> dict[str, Any]:
        """The keyword arguments that build an op of the family with this op's
        window: strides, pads, dilations, groups."""
        return {
            "strides": self.stride_values,
            "pads": self.pad_values,
            "dilations": self.dilation_values,
            "groups": self.group_count,
        }

    @staticmethod
    def window_properties(
        strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int], groups: int
    ) -> dict[str, Attribute]:
        return {
            "strides": i64_array(list(strides)),
            "pads": i64_array(list(pads)),
            "dilations": i64_array(list(dilations)),
            "groups": i64_attr(groups),
        }

    def output_type(self, input: Attribute, filter: Attribute) -> TensorType:
        """The conv2d output type for this op's properties."""
        return conv2d_type(input, filter, **self.window)


def conv2d_type(
    input: Attribute,
    filter: Attribute,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int = DEFAULT_GROUPS,
) -> TensorType:
    element = common_element((input, filter))
    require_elements("operands", element, FLOATS)
    shape = shapes.conv2d(shape_of(input), shape_of(filter), strides, pads, dilations, groups)
    return TensorType(element, shape)


@irdl_op_definition
class Conv2DOp(ConvolutionOp, HasSemantics):
    """2-D convolution (cross-correlation): NCHW input, OIHW filter, optional bias [O]."""

    name = "df.conv2d"

    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(EpilogueHead())
    assembly_format = "$input `,` $filter (`,` $bias^)? " + FUNCTIONAL_SYNTAX

    def __init__(
        self,
        input: Value,
        filter: Value,
        bias: Value | None = None,
        *,
        strides: Sequence[int] = DEFAULT_STRIDES,
        pads: Sequence[int] = DEFAULT_PADS,
        dilations: Sequence[int] = DEFAULT_DILATIONS,
        groups: int = DEFAULT_GROUPS,
    ):
        result = conv2d_type(_type(input), _type(filter), strides, pads, dilations, groups)
        super().__init__(
            operands=[input, filter, [] if bias is None else [bias]],
            result_types=[result],
            properties=self.window_properties(strides, pads, dilations, groups),
        )

    def verify_types(self) -> None:
        operands = [self.input.type, self.filter.type]
        expected = self.output_type(*operands)
        if self.bias is not None:
            operands.append(self.bias.type)
            channels = shape_of(self.filter.type)[0]
            if self.bias.type != TensorType(expected.element_type, [channels]):
                raise ShapeError(
                    f"bias {self.bias.type} must be a vector of {channels} "
                    f"{expected.element_type} (one per output channel)"
                )
        require_result(self.result.type, expected, operands)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        bias = inputs[2] if len(inputs) == 3 else None
        return reference.conv2d(
            inputs[0],
            inputs[1],
            bias,
            self.stride_values,
            self.pad_values,
            self.dilation_values,
            shape_of(self.result.type)[2:],
            self.group_count,
        )


class Conv2DGradientOp(ConvolutionOp, HasSemantics, abc.ABC):
    """A gradient of conv2d: two of (input, filter, d_output) as operands, the third
    as the result, whose type names its shape (which strides make ambiguous)."""

    GRADIENT: ClassVar[Callable[..., Any]]
    """The op's semantics: the NumPy kernel of `reference.py`."""

    def __init__(
        self,
        first: Value,
        second: Value,
        result_type: TensorType,
        *,
        strides: Sequence[int] = DEFAULT_STRIDES,
        pads: Sequence[int] = DEFAULT_PADS,
        dilations: Sequence[int] = DEFAULT_DILATIONS,
        groups: int = DEFAULT_GROUPS,
    ):
        super().__init__(
            operands=[first, second],
            result_types=[result_type],
            properties=self.window_properties(strides, pads, dilations, groups),
        )

    @abc.abstractmethod
    def convolution_types(self) -> tuple[Attribute, Attribute, Attribute]:
        """The types of the convolution's input, filter and output gradient."""

    def verify_types(self) -> None:
        input, filter, output_grad = self.convolution_types()
        expected = self.output_type(input, filter)
        if output_grad != expected:
            raise ShapeError(
                f"output gradient {output_grad} does not match {expected}, the "
                f"conv2d output of input {input} and filter {filter}"
            )

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return self.GRADIENT(
            inputs[0],
            inputs[1],
            shape_of(self.results[0].type),
            self.stride_values,
            self.pad_values,
            self.dilation_values,
            self.group_count,
        )


@irdl_op_definition
class Conv2DGradInputOp(Conv2DGradientOp):
    """Gradient of conv2d with respect to its input: (d_output, filter) → d_input."""

    name = "df.conv2d_grad_input"
    GRADIENT = staticmethod(reference.conv2d_grad_input)

    output_grad = operand_def(TensorType)
    filter = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$output_grad `,` $filter " + FUNCTIONAL_SYNTAX

    def convolution_types(self) -> tuple[Attribute, Attribute, Attribute]:
        return self.result.type, self.filter.type, self.output_grad.type


@irdl_op_definition
class Conv2DGradFilterOp(Conv2DGradientOp):
    """Gradient of conv2d with respect to its filter: (input, d_output) → d_filter."""

    name = "df.conv2d_grad_filter"
    GRADIENT = staticmethod(reference.conv2d_grad_filter)

    input = operand_def(TensorType)
    output_grad = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input `,` $output_grad " + FUNCTIONAL_SYNTAX

    def convolution_types(self) -> tuple[Attribute, Attribute, Attribute]:
        return self.input.type, self.result.type, self.output_grad.type


@irdl_op_definition
class Conv2DNchwcOp(WindowOp, HasSemantics):
    """2-D convolution in the blocked channel layout `df-layout` chooses: input NCHWc
    `[N, C/bi, H, W, bi]`, filter `[O/bo, C/bi/groups, KH, KW, bi, bo]`, optional bias
    `[O]`, output NCHWc `[N, O/bo, OH, OW, bo]` (`y[n, o/bo, p, q, o%bo]` is
    `df.conv2d`'s `y[n, o, p, q]`); dilation 1; in `groups` (1, the default, not
    printed), each of whole blocks of input and output channels. An input block of 1
    is NCHW read as 5-D (a network's first convolution, of 3 channels). A tap's
    filter block is a row of output-channel vectors per input channel, so a kernel
    holds output channels in vector lanes and broadcasts the inputs."""

    name = "df.conv2d_nchwc"

    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    groups = prop_def(IntegerAttr[IntegerType], default_value=i64_attr(DEFAULT_GROUPS))

    traits = traits_def(Pure(), EpilogueHead())
    assembly_format = "$input `,` $filter (`,` $bias^)? " + FUNCTIONAL_SYNTAX

    def __init__(
        self,
        input: Value,
        filter: Value,
        bias: Value | None = None,
        *,
        strides: Sequence[int] = DEFAULT_STRIDES,
        pads: Sequence[int] = DEFAULT_PADS,
        groups: int = DEFAULT_GROUPS,
    ):
        result = self.infer_type(_type(input), _type(filter), strides, pads, groups)
        super().__init__(
            operands=[input, filter, [] if bias is None else [bias]],
            result_types=[result],
            properties={
                "strides": i64_array(list(strides)),
                "pads": i64_array(list(pads)),
                "groups": i64_attr(groups),
            },
        )

    @property
    def group_count(self) -> int:
        return self.groups.value.data

    @staticmethod
    def infer_type(
        input: Attribute,
        filter: Attribute,
        strides: Sequence[int],
        pads: Sequence[int],
        groups: int = DEFAULT_GROUPS,
    ) -> TensorType:
        element = common_element((input, filter))
        require_elements("operands", element, FLOATS)
        shape = shapes.conv2d_nchwc(shape_of(input), shape_of(filter), strides, pads, groups)
        return TensorType(element, shape)

    def verify_types(self) -> None:
        operands = [self.input.type, self.filter.type]
        expected = self.infer_type(
            self.input.type, self.filter.type, self.stride_values, self.pad_values, self.group_count
        )
        if self.bias is not None:
            operands.append(self.bias.type)
            _, blocks, _, _, block = shape_of(expected)
            if self.bias.type != TensorType(expected.element_type, [blocks * block]):
                raise ShapeError(
                    f"bias {self.bias.type} must be a vector of {blocks * block} "
                    f"{expected.element_type} (one per output channel)"
                )
        require_result(self.result.type, expected, operands)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        bias = inputs[2] if len(inputs) == 3 else None
        return reference.conv2d_nchwc(
            inputs[0], inputs[1], bias, self.stride_values, self.pad_values, self.group_count
        )


def _pool_properties(
    kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int]
) -> dict[str, Attribute]:
    return {
        "kernel": i64_array(list(kernel)),
        "strides": i64_array(list(strides)),
        "pads": i64_array(list(pads)),
    }


class PoolingOp(WindowOp, abc.ABC):
    """Base of the pooling ops and their gradients: a `kernel` window moved by `strides`
    over an NCHW input padded by `pads`."""

    kernel = prop_def(DenseArrayBase[IntegerType])

    @property
    def kernel_values(self) -> tuple[int, ...]:
        return _values(self.kernel)

    @property
    def window(self) -> dict[str, tuple[int, ...]]:
        """The keyword arguments that build a pooling op with this op's window:
        kernel, strides, pads."""
        strides, pads = self.stride_values, self.pad_values
        return {"kernel": self.kernel_values, "strides": strides, "pads": pads}

    def pooled_type(self, input: Attribute) -> TensorType:
        """The pooled output type of `input` under this op's properties."""
        return Pool2DOp.infer_type(input, self.kernel_values, self.stride_values, self.pad_values)

    def require_output_grad(self, output_grad: Attribute, input: Attribute) -> None:
        expected = self.pooled_type(input)
        if output_grad != expected:
            raise ShapeError(
                f"output gradient {output_grad} does not match {expected}, the pooled "
                f"output of input {input}"
            )


class Pool2DOp(PoolingOp, HasSemantics, abc.ABC):
    """2-D pooling over NCHW: a `kernel` window moved by `strides` over a padded input."""

    POOL: ClassVar[Callable[..., Any]]
    """The op's semantics: the NumPy kernel of `reference.py` pooling each window."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input " + FUNCTIONAL_SYNTAX

    def __init__(
        self,
        input: Value,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = DEFAULT_STRIDES,
        pads: Sequence[int] = DEFAULT_PADS,
    ):
        result = self.infer_type(_type(input), kernel, strides, pads)
        super().__init__(
            operands=[input],
            result_types=[result],
            properties=_pool_properties(kernel, strides, pads),
        )

    @staticmethod
    def infer_type(
        input: Attribute, kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int]
    ) -> TensorType:
        element = common_element((input,))
        require_elements("operand", element, FLOATS)
        return TensorType(element, shapes.pool2d(shape_of(input), kernel, strides, pads))

    def verify_types(self) -> None:
        require_result(self.result.type, self.pooled_type(self.input.type), [self.input.type])

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return self.POOL(
            inputs[0],
            self.kernel_values,
            self.stride_values,
            self.pad_values,
            shape_of(self.result.type)[2:],
        )


@irdl_op_definition
class MaxPool2DOp(Pool2DOp):
    """Maximum over each window; padding never wins."""

    name = "df.max_pool2d"
    POOL = staticmethod(reference.max_pool2d)


@irdl_op_definition
class AvgPool2DOp(Pool2DOp):
    """Mean over each window, counting only elements inside the input (not padding)."""

    name = "df.avg_pool2d"
    POOL = staticmethod(reference.avg_pool2d)


class Pool2DNchwcOp(Pool2DOp, abc.ABC):
    """2-D pooling over NCHWc `[N, C/b, H, W, b]` (the layout `df-layout` chooses):
    its NCHW op's windows over axes 2 and 3 (`POOL`, applied to the unblocked
    input), each channel of a block apart."""

    @staticmethod
    def infer_type(
        input: Attribute, kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int]
    ) -> TensorType:
        element = common_element((input,))
        require_elements("operand", element, FLOATS)
        shape = shape_of(input)
        if len(shape) != 5:
            raise ShapeError(f"input {shapes.format_shape(shape)} must be 5-D (NCHWc)")
        n, c, oh, ow = shapes.pool2d((*shape[:2], *shape[2:4]), kernel, strides, pads)
        return TensorType(element, (n, c, oh, ow, shape[4]))

    def pooled_type(self, input: Attribute) -> TensorType:
        return self.infer_type(input, self.kernel_values, self.stride_values, self.pad_values)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        shape = shape_of(self.result.type)
        plain = reference.from_nchwc(inputs[0])
        pooled = self.POOL(
            plain, self.kernel_values, self.stride_values, self.pad_values, shape[2:4]
        )
        return reference.to_nchwc(pooled, shape[4])


@irdl_op_definition
class MaxPool2DNchwcOp(Pool2DNchwcOp):
    """`df.max_pool2d` of NCHWc."""

    name = "df.max_pool2d_nchwc"
    POOL = staticmethod(reference.max_pool2d)


@irdl_op_definition
class AvgPool2DNchwcOp(Pool2DNchwcOp):
    """`df.avg_pool2d` of NCHWc (padding not counted)."""

    name = "df.avg_pool2d_nchwc"
    POOL = staticmethod(reference.avg_pool2d)


@irdl_op_definition
class MaxPool2DGradOp(PoolingOp, HasSemantics):
    """Gradient of max_pool2d: (input, d_output) → d_input.

    Each window's gradient goes to the first position (in row-major window order)
    holding the window's maximum, as in TensorFlow's MaxPoolGrad.
    """

    name = "df.max_pool2d_grad"

    input = operand_def(TensorType)
    output_grad = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input `,` $output_grad " + FUNCTIONAL_SYNTAX

    def __init__(
        self,
        input: Value,
        output_grad: Value,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = DEFAULT_STRIDES,
        pads: Sequence[int] = DEFAULT_PADS,
    ):
        super().__init__(
            operands=[input, output_grad],
            result_types=[_type(input)],
            properties=_pool_properties(kernel, strides, pads),
        )

    def verify_types(self) -> None:
        self.require_output_grad(self.output_grad.type, self.input.type)
        require_result(self.result.type, static_tensor(self.input.type), [self.input.type])

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return reference.max_pool2d_grad(
            inputs[0], inputs[1], self.kernel_values, self.stride_values, self.pad_values
        )


@irdl_op_definition
class MaxPool2DIndicesOp(Pool2DOp):
    """Where each window's maximum lies, as an i64 `h * W + w` in the input's plane.

    These are PyTorch's `max_pool2d_with_indices` indices: the first maximum in
    row-major window order or the first NaN; padding never wins. `df-autodiff` puts it
    in place of a `df.max_pool2d` that needs a gradient: the forward pass reads the
    maxima there (`df.gather_elements`) and keeps the indices for
    `df.max_pool2d_grad_indices`."""

    name = "df.max_pool2d_indices"
    POOL = staticmethod(reference.max_pool2d_indices)

    @staticmethod
    def infer_type(
        input: Attribute, kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int]
    ) -> TensorType:
        return TensorType(i64, Pool2DOp.infer_type(input, kernel, strides, pads).get_shape())

    def pooled_type(self, input: Attribute) -> TensorType:
        return self.infer_type(input, self.kernel_values, self.stride_values, self.pad_values)

    def verify_types(self) -> None:
        pooled = shape_of(self.pooled_type(self.input.type))
        if 0 in shape_of(self.input.type)[2:] and 0 not in pooled[2:]:
            raise ShapeError(
                f"input {self.input.type} has an empty plane: its windows hold no element"
            )
        super().verify_types()


@irdl_op_definition
class MaxPool2DGradIndicesOp(PoolingOp, HasSemantics):
    """Gradient of max_pool2d from its indices: (d_output, indices) → d_input, each
    window's gradient added at its index (`df.max_pool2d_indices`) in the plane. The
    result type names the input's; the window checks the operands' shapes."""

    name = "df.max_pool2d_grad_indices"

    output_grad = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$output_grad `,` $indices " + FUNCTIONAL_SYNTAX

    def __init__(
        self,
        output_grad: Value,
        indices: Value,
        input_type: TensorType,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = DEFAULT_STRIDES,
        pads: Sequence[int] = DEFAULT_PADS,
    ):
        super().__init__(
            operands=[output_grad, indices],
            result_types=[input_type],
            properties=_pool_properties(kernel, strides, pads),
        )

    def verify_types(self) -> None:
        self.require_output_grad(self.output_grad.type, self.result.type)
        expected = TensorType(i64, shape_of(self.output_grad.type))
        if self.indices.type != expected:
            raise ShapeError(
                f"indices {self.indices.type} must be {expected}, one per output gradient"
            )

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return reference.max_pool2d_grad_indices(inputs[0], inputs[1], shape_of(self.result.type))


@irdl_op_definition
class AvgPool2DGradOp(PoolingOp, HasSemantics):
    """Gradient of avg_pool2d: d_output → d_input, each window's gradient spread evenly
    over its elements inside the input. The result type names the input shape."""

    name = "df.avg_pool2d_grad"

    output_grad = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$output_grad " + FUNCTIONAL_SYNTAX

    def __init__(
        self,
        output_grad: Value,
        input_type: TensorType,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = DEFAULT_STRIDES,
        pads: Sequence[int] = DEFAULT_PADS,
    ):
        super().__init__(
            operands=[output_grad],
            result_types=[input_type],
            properties=_pool_properties(kernel, strides, pads),
        )

    def verify_types(self) -> None:
        self.require_output_grad(self.output_grad.type, self.result.type)

    def semantics(self, inputs: Sequence[Array]) -> Array:
        return reference.avg_pool2d_grad(
            inputs[0],
            shape_of(self.result.type),
            self.kernel_values,
            self.stride_values,
            self.pad_values,
        )
