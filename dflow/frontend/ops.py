"""dflow's tensor operations as functions: one per `df` op, for code written with
the builder or traced by `dflow.jit` (`dflow.relu(x)`, `dflow.matmul(x, w)`, ...).

Each takes `Tensor`s of one graph (a binary op, `select` and `where` also take a
Python or NumPy scalar) and appends its op. Operands of different element types
are converted as NumPy 2 converts them (`promotion`: Python scalars are weak), so
`dflow.add(int32_x, 2.5)` is f64 as `np.add` is. A value that is not a tensor is a
`TraceError` naming the line of the user's code that passed it; an error of the
op's shape rules is a `VerifyException` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from dflow.dialects import df
from dflow.frontend.builder import Graph, Tensor, element_type, elementwise, promoted, unary
from dflow.frontend.errors import trace_error


def _tensor(name: str, position: int, value: object) -> Tensor:
    if isinstance(value, Tensor):
        return value
    raise trace_error(
        f"dflow.{name}: argument {position} is a {type(value).__name__}, not a tensor"
    )


def _tensors(name: str, values: object) -> list[Tensor]:
    if isinstance(values, Tensor) or not isinstance(values, list | tuple) or not values:
        raise trace_error(f"dflow.{name}: expects a non-empty list of tensors")
    items: list[object] = list(values)  # pyright: ignore[reportUnknownArgumentType]
    return [_tensor(name, position, value) for position, value in enumerate(items)]


def _emit(graph: Graph, op: Callable[[], Operation]) -> Tensor:
    """`graph.emit(op())`: a shape or type error names the user's line (`Graph.emit`)."""
    return graph.emit(op())


def _unary(op_type: type[df.UnaryElementwiseOp]) -> Callable[[Tensor], Tensor]:
    name = op_type.name.removeprefix("df.")

    def apply(x: Tensor) -> Tensor:
        return unary(op_type, _tensor(name, 0, x))

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (
        f"`{op_type.name}`, elementwise: {(op_type.__doc__ or name).strip().splitlines()[0]}"
    )
    return apply


def _binary(op_type: type[df.BinaryElementwiseOp]) -> Callable[[Any, Any], Tensor]:
    name = op_type.name.removeprefix("df.")

    def apply(x: Any, y: Any) -> Tensor:
        return elementwise(op_type, x, y)

    apply.__name__ = apply.__qualname__ = name
    summary = (op_type.__doc__ or name).strip().splitlines()[0]
    apply.__doc__ = (
        f"`{op_type.name}`: {summary} Elementwise with NumPy broadcasting and NumPy 2's "
        "type promotion (a Python number on one side is weak: `int32 * 2` is i32)."
    )
    return apply


neg = _unary(df.NegOp)
abs = _unary(df.AbsOp)
square = _unary(df.SquareOp)
relu = _unary(df.ReluOp)
identity = _unary(df.IdentityOp)
reciprocal = _unary(df.ReciprocalOp)
exp = _unary(df.ExpOp)
log = _unary(df.LogOp)
sqrt = _unary(df.SqrtOp)
rsqrt = _unary(df.RsqrtOp)
tanh = _unary(df.TanhOp)
erf = _unary(df.ErfOp)
sigmoid = _unary(df.SigmoidOp)
floor = _unary(df.FloorOp)
ceil = _unary(df.CeilOp)
round = _unary(df.RoundOp)
sin = _unary(df.SinOp)
cos = _unary(df.CosOp)
add = _binary(df.AddOp)
sub = _binary(df.SubOp)
mul = _binary(df.MulOp)
div = _binary(df.DivOp)
maximum = _binary(df.MaximumOp)
minimum = _binary(df.MinimumOp)
pow = _binary(df.PowOp)
rem = _binary(df.RemOp)
greater = _binary(df.GreaterOp)
greater_equal = _binary(df.GreaterEqualOp)
less = _binary(df.LessOp)
less_equal = _binary(df.LessEqualOp)
equal = _binary(df.EqualOp)


def constant(value: Any, dtype: str | Attribute | None = None, *, like: Tensor) -> Tensor:
    """A `df.constant` holding `value` (its dtype, or `dtype`), in `like`'s graph."""
    return _tensor("constant", 0, like).graph.constant(value, dtype)


def select(condition: Tensor, on_true: Any, on_false: Any) -> Tensor:
    """`df.select`: `where(condition, on_true, on_false)`, all three broadcast; the
    two values converted to their common type as `np.where` does (a Python number
    is weak)."""
    mask = _tensor("select", 0, condition)
    if not isinstance(on_true, Tensor) and not isinstance(on_false, Tensor):
        raise trace_error("dflow.select: neither value is a tensor")
    yes, no = promoted("select", [on_true, on_false])
    result = _emit(mask.graph, lambda: df.SelectOp(mask.value, yes.value, no.value))
    result.weak = yes.weak and no.weak
    return result


where = select
"""NumPy's name for `select`."""


def cast(x: Tensor, dtype: str | Attribute) -> Tensor:
    """`df.cast`: `x` in another element type (`"f32"`, `"i32"`, ...)."""
    tensor = _tensor("cast", 0, x)
    return _emit(tensor.graph, lambda: df.CastOp(tensor.value, element_type(dtype)))


def addn(tensors: Sequence[Tensor]) -> Tensor:
    """`df.addn`: the sum of tensors of one shape, converted to their common type."""
    terms = promoted("addn", _tensors("addn", tensors))
    return _emit(terms[0].graph, lambda: df.AddNOp([t.value for t in terms]))


def matmul(a: Tensor, b: Tensor, *, transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
    """`df.matmul`: `a @ b` on the last two axes (leading axes a batch), converted to
    their common type as `np.matmul` does."""
    return _tensor("matmul", 0, a).matmul(_tensor("matmul", 1, b), transpose_a, transpose_b)


def conv2d(
    input: Tensor,
    filter: Tensor,
    bias: Tensor | None = None,
    *,
    strides: Sequence[int] = (1, 1),
    pads: Sequence[int] = (0, 0, 0, 0),
    dilations: Sequence[int] = (1, 1),
    groups: int = 1,
) -> Tensor:
    """`df.conv2d`: NCHW input, OIHW filter (O x C/groups x KH x KW), optional bias;
    pads top, left, bottom, right; `groups` > 1 a grouped convolution (depthwise
    when it is C)."""
    x, w = _tensor("conv2d", 0, input), _tensor("conv2d", 1, filter)
    b = None if bias is None else _tensor("conv2d", 2, bias).value
    return _emit(
        x.graph,
        lambda: df.Conv2DOp(
            x.value, w.value, b, strides=strides, pads=pads, dilations=dilations, groups=groups
        ),
    )


def _conv2d_gradient(
    op_type: type[df.Conv2DGradientOp],
    operands: tuple[Any, Any],
    shape: Sequence[int],
    window: dict[str, Any],
) -> Tensor:
    """A conv2d gradient of `operands`, its result of `shape` (which strides make
    ambiguous)."""
    name = op_type.name.removeprefix("df.")
    first, second = (_tensor(name, i, value) for i, value in enumerate(operands))
    result = TensorType(first.type.element_type, shape)
    return _emit(first.graph, lambda: op_type(first.value, second.value, result, **window))


def conv2d_grad_input(
    output_grad: Tensor, filter: Tensor, input_shape: Sequence[int], **window: Any
) -> Tensor:
    """`df.conv2d_grad_input`: the gradient of `conv2d` in its input (of `input_shape`)."""
    return _conv2d_gradient(df.Conv2DGradInputOp, (output_grad, filter), input_shape, window)


def conv2d_grad_filter(
    input: Tensor, output_grad: Tensor, filter_shape: Sequence[int], **window: Any
) -> Tensor:
    """`df.conv2d_grad_filter`: the gradient of `conv2d` in its filter (of `filter_shape`)."""
    return _conv2d_gradient(df.Conv2DGradFilterOp, (input, output_grad), filter_shape, window)


def _pooling(op_type: type[df.Pool2DOp]) -> Callable[..., Tensor]:
    name = op_type.name.removeprefix("df.")

    def apply(
        input: Tensor,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
    ) -> Tensor:
        x = _tensor(name, 0, input)
        return _emit(x.graph, lambda: op_type(x.value, kernel=kernel, strides=strides, pads=pads))

    apply.__name__ = apply.__qualname__ = name
    summary = (op_type.__doc__ or name).strip().splitlines()[0]
    apply.__doc__ = f"`{op_type.name}` of NCHW windows of `kernel`, moved by `strides`: {summary}"
    return apply


max_pool2d = _pooling(df.MaxPool2DOp)
avg_pool2d = _pooling(df.AvgPool2DOp)
max_pool2d_indices = _pooling(df.MaxPool2DIndicesOp)


def max_pool2d_grad(input: Tensor, output_grad: Tensor, **window: Any) -> Tensor:
    """`df.max_pool2d_grad`: each window's gradient to its (first) maximum."""
    x, dy = _tensor("max_pool2d_grad", 0, input), _tensor("max_pool2d_grad", 1, output_grad)
    return _emit(x.graph, lambda: df.MaxPool2DGradOp(x.value, dy.value, **window))


def max_pool2d_grad_indices(
    output_grad: Tensor, indices: Tensor, input_shape: Sequence[int], **window: Any
) -> Tensor:
    """`df.max_pool2d_grad_indices`: each window's gradient added at its index
    (`max_pool2d_indices`) in a plane of the input's (`input_shape`)."""
    dy = _tensor("max_pool2d_grad_indices", 0, output_grad)
    taken = _tensor("max_pool2d_grad_indices", 1, indices)
    result = TensorType(dy.type.element_type, input_shape)
    return _emit(
        dy.graph, lambda: df.MaxPool2DGradIndicesOp(dy.value, taken.value, result, **window)
    )


def avg_pool2d_grad(output_grad: Tensor, input_shape: Sequence[int], **window: Any) -> Tensor:
    """`df.avg_pool2d_grad`: each window's gradient spread over it (`input_shape`)."""
    dy = _tensor("avg_pool2d_grad", 0, output_grad)
    result = TensorType(dy.type.element_type, input_shape)
    return _emit(dy.graph, lambda: df.AvgPool2DGradOp(dy.value, result, **window))


def transpose(x: Tensor, perm: Sequence[int] | None = None) -> Tensor:
    """`df.transpose`: axes permuted by `perm` (reversed when None)."""
    return _tensor("transpose", 0, x).transpose(perm)


def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    """`df.reshape`: the elements in row-major order under `shape`."""
    tensor = _tensor("reshape", 0, x)
    return _emit(tensor.graph, lambda: df.ReshapeOp(tensor.value, shape))


def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    """`df.broadcast_to`: NumPy's `broadcast_to`."""
    tensor = _tensor("broadcast_to", 0, x)
    return _emit(tensor.graph, lambda: df.BroadcastToOp(tensor.value, shape))


def _reduction(op_type: type[df.ReduceOp]) -> Callable[..., Tensor]:
    name = op_type.name.removeprefix("df.")

    def apply(x: Tensor, axes: Sequence[int] | int | None = None, keepdims: bool = False) -> Tensor:
        tensor = _tensor(name, 0, x)
        over = (axes,) if isinstance(axes, int) else axes
        return _emit(tensor.graph, lambda: op_type(tensor.value, over, keepdims))

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"`{op_type.name}` over `axes` (all when None; negative from the end)."
    return apply


reduce_sum = _reduction(df.ReduceSumOp)
reduce_mean = _reduction(df.ReduceMeanOp)
reduce_max = _reduction(df.ReduceMaxOp)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """`df.softmax` along `axis`, numerically stable."""
    tensor = _tensor("softmax", 0, x)
    return _emit(tensor.graph, lambda: df.SoftmaxOp(tensor.value, axis))


def layer_norm(x: Tensor, scale: Tensor, bias: Tensor, epsilon: float = 1e-5) -> Tensor:
    """`df.layer_norm`: `x` normalized along its last axis (mean 0, variance 1, `epsilon`
    added to the variance), times `scale`, plus `bias` (both of the last axis's length)."""
    tensors = [_tensor("layer_norm", i, t) for i, t in enumerate((x, scale, bias))]
    values = [t.value for t in tensors]
    return _emit(tensors[0].graph, lambda: df.LayerNormOp(*values, epsilon=epsilon))


def concat(tensors: Sequence[Tensor], axis: int) -> Tensor:
    """`df.concat`: NumPy's `concatenate` along `axis` (converted to a common type)."""
    parts = promoted("concat", _tensors("concat", tensors))
    return _emit(parts[0].graph, lambda: df.ConcatOp([t.value for t in parts], axis))


def slice(x: Tensor, start: Sequence[int], limit: Sequence[int]) -> Tensor:
    """`df.slice`: `x[start:limit]` along every axis."""
    tensor = _tensor("slice", 0, x)
    return _emit(tensor.graph, lambda: df.SliceOp(tensor.value, start, limit))


def gather(x: Tensor, indices: Tensor, axis: int = 0) -> Tensor:
    """`df.gather`: NumPy's `take(x, indices, axis)` (an embedding lookup), the
    indices (i32 or i64) read at run time, negative ones from the end, each checked."""
    data, where = _tensor("gather", 0, x), _tensor("gather", 1, indices)
    return _emit(data.graph, lambda: df.GatherOp(data.value, where.value, axis))


def scatter_add(updates: Tensor, indices: Tensor, shape: Sequence[int], axis: int = 0) -> Tensor:
    """`df.scatter_add`: zeros of `shape` with each slice of `updates` added at its
    index along `axis`, repeated indices adding up (the gradient of `gather`)."""
    values, where = _tensor("scatter_add", 0, updates), _tensor("scatter_add", 1, indices)
    return _emit(values.graph, lambda: df.ScatterAddOp(values.value, where.value, shape, axis))


def gather_elements(x: Tensor, indices: Tensor, axis: int = 0) -> Tensor:
    """`df.gather_elements`: NumPy's `take_along_axis(x, indices, axis)` (ONNX's
    `GatherElements`), each index read and checked at run time."""
    data, where = _tensor("gather_elements", 0, x), _tensor("gather_elements", 1, indices)
    return _emit(data.graph, lambda: df.GatherElementsOp(data.value, where.value, axis))
