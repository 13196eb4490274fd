"""Build `df` functions from Python, in the spirit of NNVM's Symbol API.

    g = Graph("main")
    x = g.input("x", (4, 8))
    w = g.input("w", (8, 16))
    b = g.constant(np.zeros(16, np.float32))
    g.output((x @ w + b).relu())
    module = g.module()            # a verified builtin.module

Every `Tensor` wraps one SSA value; operators and methods append the matching
`df` op, whose builder infers the result type (shape errors raise at once).
Operands of different element types, and Python numbers on either side of an
operator, are converted as NumPy 2 converts them (`promotion`: Python scalars are
weak, `int32 * 2` stays i32, `int32 * 2.5` is f64) by `df.cast` ops and rank-0
constants, so the df ops stay strictly typed. A graph can make any number of
modules: each is a new copy of what was built so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects.builtin import ModuleOp, TensorType, i32, i64
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from dflow.dialects import df
from dflow.dialects.df.arrays import element_type_of, from_array, numpy_dtype
from dflow.dialects.df.types import ALL_ELEMENTS, ELEMENT_NAMES, shape_of, static_tensor
from dflow.frontend import promotion
from dflow.frontend.errors import TraceError, trace_error, user_line

ELEMENT_TYPES: dict[str, Attribute] = {str(element): element for element in ALL_ELEMENTS}
"""Each df element type by its name: `"f32"`, `"bf16"`, `"ui8"`, ..."""


def element_type(spec: str | Attribute | np.dtype[Any] | type) -> Attribute:
    """`"f32"`, an xDSL type, or a NumPy dtype → the df element type."""
    if isinstance(spec, Attribute):
        return spec
    if isinstance(spec, str) and spec in ELEMENT_TYPES:
        return ELEMENT_TYPES[spec]
    try:
        return element_type_of(np.dtype(spec))
    except (TypeError, StopIteration):
        raise ValueError(f"no df element type for {spec!r}; use one of {ELEMENT_NAMES}") from None


class Graph:
    """One function under construction: inputs, ops in order, outputs."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.block = Block()
        self.outputs: list[Tensor] = []
        self.callees: list[FuncOp] = []
        self.narrowed_inputs: set[int] = set()
        """Positions of weak i64 inputs (Python ints) converted to i32: a caller checks
        their values fit, as NumPy raises OverflowError for `int32_array + 2**40`."""

    def input(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str | Attribute = "f32",
        *,
        weak: bool = False,
    ) -> Tensor:
        """A function argument (a feed) named `%name`; `weak`: it stands for a Python
        scalar (a `dflow.jit` argument), which promotes as a literal does."""
        argument = self.block.insert_arg(
            TensorType(element_type(dtype), shape), len(self.block.args)
        )
        argument.name_hint = name
        return Tensor(self, argument, weak=weak)

    def constant(self, value: ArrayLike, dtype: str | Attribute | None = None) -> Tensor:
        """A `df.constant` holding `value` (its dtype, or `dtype` when given)."""
        array = np.asarray(value)
        element = element_type(array.dtype if dtype is None else dtype)
        array = array.astype(numpy_dtype(element))
        return self.emit(df.ConstantOp(from_array(array, TensorType(element, array.shape))))

    def emit(self, op: Operation) -> Tensor:
        """Verify and append an op, and return its (single) result.

        Verifying here makes every type error surface at the line that made it,
        also for ops whose result type is given rather than inferred (reshape);
        the message names that line of the caller's code.
        """
        try:
            op.verify()
        except VerifyException as error:
            raise VerifyException(f"{error} (at {user_line()})") from None
        self.block.add_op(op)
        return Tensor(self, op.results[0])

    def output(self, *tensors: Tensor) -> None:
        """Add results (fetches) of the function, in order."""
        self.outputs.extend(tensors)

    def function(self) -> FuncOp:
        """The function built so far, as a new `func.func` returning the outputs: a
        copy, so the graph can make another (and keep growing)."""
        block = Block(arg_types=[a.type for a in self.block.args])
        copies: dict[SSAValue, SSAValue] = {}
        for argument, copy in zip(self.block.args, block.args, strict=True):
            copy.name_hint = argument.name_hint
            copies[argument] = copy
        for op in self.block.ops:
            block.add_op(op.clone(copies))
        block.add_op(ReturnOp(*(copies[t.value] for t in self.outputs)))
        types = ([a.type for a in self.block.args], [t.type for t in self.outputs])
        return FuncOp(self.name, types, Region(block))

    def call(self, callee: FuncOp, arguments: Sequence[Tensor]) -> list[Tensor]:
        """A `func.call` of `callee`, which joins the module beside this graph's
        function (`dflow.grad` calls the gradient it builds so)."""
        name = callee.sym_name.data
        if all(known.sym_name.data != name for known in self.callees):
            self.callees.append(callee)
        outputs = callee.function_type.outputs.data
        call = CallOp(name, [a.value for a in arguments], list(outputs))
        self.block.add_op(call)
        return [Tensor(self, result) for result in call.results]

    def module(self) -> ModuleOp:
        """The function, and the functions it calls, in a new verified module (each
        call makes an independent one)."""
        module = ModuleOp([self.function(), *(callee.clone() for callee in self.callees)])
        module.verify()
        return module

    def compile(self, **options: Any) -> Any:
        """`dflow.compile(self, **options)`: the graph compiled into a callable
        `dflow.Program` (as often as wanted)."""
        from dflow.driver.frontdoors.api import compile  # noqa: PLC0415 (the driver is the layer above)

        return compile(self, **options)


class Tensor:
    """A value of the graph; operators build df ops.

    A tensor holds no data while its graph is built (or a function is traced), so
    what needs data fails with a `TraceError` naming the line: its truth value (`if
    x > 0:`), `float(x)`, NumPy on it (`np.exp(x)`: use `dflow.exp`), and `==`
    against a number (`x.equal(0)` or `dflow.equal` build the comparison; between
    tensors, `==` is identity, so tensors can be dictionary keys).

    A *weak* tensor stands for a Python scalar (a `dflow.jit` argument that is one,
    or elementwise arithmetic on such alone): it promotes as a literal does.
    """

    __array_priority__ = 1000  # NumPy defers `array * tensor` to `Tensor.__rmul__`

    def __init__(self, graph: Graph, value: SSAValue, *, weak: bool = False):
        self.graph = graph
        self.value = value
        self.weak = weak

    def __repr__(self) -> str:
        return f"<dflow.Tensor {self.value.name_hint or ''}: {self.type}>"

    def __bool__(self) -> bool:
        raise trace_error(
            "a traced tensor has no truth value (it holds no data yet): "
            "choose with dflow.select, or make the condition a static argument"
        )

    def _no_data(self, what: str) -> TraceError:
        return trace_error(f"{what} of a traced tensor: it holds no data yet")

    def __float__(self) -> float:
        raise self._no_data("float()")

    def __int__(self) -> int:
        raise self._no_data("int()")

    def __index__(self) -> int:
        raise self._no_data("an index")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._no_data("a NumPy array (np.asarray)")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        raise trace_error(
            f"np.{ufunc.__name__} cannot compute on a traced tensor: use dflow's "
            f"operations (dflow.{ufunc.__name__} where there is one)"
        )

    def __array_function__(self, function: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise trace_error(
            f"np.{function.__name__} cannot compute on a traced tensor: use dflow's "
            "operations (dflow.reduce_sum, dflow.reshape, ...)"
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Tensor):
            return self is other
        raise trace_error("== on a traced tensor: use x.equal(y) or dflow.equal(x, y)")

    def __ne__(self, other: object) -> bool:
        if isinstance(other, Tensor):
            return self is not other
        raise trace_error("!= on a traced tensor: build it with dflow.equal and dflow.select")

    __hash__ = object.__hash__

    @property
    def type(self) -> TensorType[Attribute]:
        return static_tensor(self.value.type)

    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self.type)

    @property
    def element(self) -> Attribute:
        """The element type (`f32`, `i32`, ...)."""
        return self.type.element_type

    def lift(self, other: Tensor | float | int | bool) -> Tensor:
        """`other` as a tensor: itself, or a number made a constant of this tensor's
        element type (ONNX's rule for scalars; operators promote as NumPy instead)."""
        if isinstance(other, Tensor):
            return other
        dtype = numpy_dtype(self.type.element_type)
        return self.graph.constant(np.asarray(other, dtype=dtype))

    def _binary(
        self, op_type: type[df.BinaryElementwiseOp], other: Any, swap: bool = False
    ) -> Tensor:
        return elementwise(op_type, other, self) if swap else elementwise(op_type, self, other)

    def _unary(self, op_type: type[df.UnaryElementwiseOp]) -> Tensor:
        return unary(op_type, self)

    def __add__(self, other: Any) -> Tensor:
        return self._binary(df.AddOp, other)

    def __radd__(self, other: Any) -> Tensor:
        return self._binary(df.AddOp, other, swap=True)

    def __sub__(self, other: Any) -> Tensor:
        return self._binary(df.SubOp, other)

    def __rsub__(self, other: Any) -> Tensor:
        return self._binary(df.SubOp, other, swap=True)

    def __mul__(self, other: Any) -> Tensor:
        return self._binary(df.MulOp, other)

    def __rmul__(self, other: Any) -> Tensor:
        return self._binary(df.MulOp, other, swap=True)

    def __truediv__(self, other: Any) -> Tensor:
        return self._binary(df.DivOp, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return self._binary(df.DivOp, other, swap=True)

    def __pow__(self, other: Any) -> Tensor:
        return self._binary(df.PowOp, other)

    def __rpow__(self, other: Any) -> Tensor:
        return self._binary(df.PowOp, other, swap=True)

    def __gt__(self, other: Any) -> Tensor:
        return self._binary(df.GreaterOp, other)

    def __ge__(self, other: Any) -> Tensor:
        return self._binary(df.GreaterEqualOp, other)

    def __lt__(self, other: Any) -> Tensor:
        return self._binary(df.LessOp, other)

    def __le__(self, other: Any) -> Tensor:
        return self._binary(df.LessEqualOp, other)

    def equal(self, other: Any) -> Tensor:
        """Elementwise `==` (a method, so tensors stay hashable)."""
        return self._binary(df.EqualOp, other)

    def maximum(self, other: Any) -> Tensor:
        return self._binary(df.MaximumOp, other)

    def minimum(self, other: Any) -> Tensor:
        return self._binary(df.MinimumOp, other)

    def __neg__(self) -> Tensor:
        return self._unary(df.NegOp)

    def __abs__(self) -> Tensor:
        return self._unary(df.AbsOp)

    def __matmul__(self, other: Tensor) -> Tensor:
        return self.matmul(other)

    def matmul(self, other: Tensor, transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
        """`df.matmul` of the two, converted to their common type as `np.matmul` does."""
        lhs, rhs = promoted("matmul", [self, other])
        op = df.MatmulOp(lhs.value, rhs.value, transpose_a=transpose_a, transpose_b=transpose_b)
        return self.graph.emit(op)

    def reciprocal(self) -> Tensor:
        return self._unary(df.ReciprocalOp)

    def exp(self) -> Tensor:
        return self._unary(df.ExpOp)

    def log(self) -> Tensor:
        return self._unary(df.LogOp)

    def sqrt(self) -> Tensor:
        return self._unary(df.SqrtOp)

    def rsqrt(self) -> Tensor:
        return self._unary(df.RsqrtOp)

    def tanh(self) -> Tensor:
        return self._unary(df.TanhOp)

    def erf(self) -> Tensor:
        return self._unary(df.ErfOp)

    def sigmoid(self) -> Tensor:
        return self._unary(df.SigmoidOp)

    def floor(self) -> Tensor:
        return self._unary(df.FloorOp)

    def ceil(self) -> Tensor:
        return self._unary(df.CeilOp)

    def round(self) -> Tensor:
        return self._unary(df.RoundOp)

    def sin(self) -> Tensor:
        return self._unary(df.SinOp)

    def cos(self) -> Tensor:
        return self._unary(df.CosOp)

    def relu(self) -> Tensor:
        return self._unary(df.ReluOp)

    def square(self) -> Tensor:
        return self._unary(df.SquareOp)

    def identity(self) -> Tensor:
        return self._unary(df.IdentityOp)

    def cast(self, dtype: str | Attribute) -> Tensor:
        return self.graph.emit(df.CastOp(self.value, element_type(dtype)))

    def transpose(self, perm: Sequence[int] | None = None) -> Tensor:
        """Permute axes; reverse them when `perm` is None (as NumPy's `.T`)."""
        order = tuple(reversed(range(len(self.shape)))) if perm is None else tuple(perm)
        return self.graph.emit(df.TransposeOp(self.value, order))

    @property
    def T(self) -> Tensor:  # noqa: N802 (NumPy's name)
        return self.transpose()

    def reshape(self, shape: Sequence[int]) -> Tensor:
        return self.graph.emit(df.ReshapeOp(self.value, shape))

    def broadcast_to(self, shape: Sequence[int]) -> Tensor:
        return self.graph.emit(df.BroadcastToOp(self.value, shape))

    def sum(self, axes: Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return self.graph.emit(df.ReduceSumOp(self.value, axes, keepdims))

    def mean(self, axes: Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return self.graph.emit(df.ReduceMeanOp(self.value, axes, keepdims))

    def max(self, axes: Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return self.graph.emit(df.ReduceMaxOp(self.value, axes, keepdims))

    def softmax(self, axis: int = -1) -> Tensor:
        return self.graph.emit(df.SoftmaxOp(self.value, axis))

    def __getitem__(self, index: int | slice | tuple[int | slice, ...]) -> Tensor:
        """NumPy basic indexing with step 1: `x[1:3, :]`, `x[0]` (drops the axis)."""
        parts = index if isinstance(index, tuple) else (index,)
        if len(parts) > len(self.shape):
            raise IndexError(f"{len(parts)} indices for a tensor of rank {len(self.shape)}")
        start: list[int] = []
        limit: list[int] = []
        kept: list[int] = []
        for axis, dim in enumerate(self.shape):
            part = parts[axis] if axis < len(parts) else slice(None)
            begin, end = _bounds(part, dim)
            start.append(begin)
            limit.append(end)
            if isinstance(part, slice):
                kept.append(end - begin)
        sliced = self.graph.emit(df.SliceOp(self.value, start, limit))
        return sliced if len(kept) == len(self.shape) else sliced.reshape(kept)


def _bounds(part: int | slice, dim: int) -> tuple[int, int]:
    """`[begin, end)` of one index along an axis of size `dim`."""
    if isinstance(part, slice):
        begin, end, step = part.indices(dim)
        if step != 1:
            raise ValueError(f"df.slice has no step; got {part}")
        return begin, max(begin, end)
    if not -dim <= part < dim:
        raise IndexError(f"index {part} is out of range for an axis of size {dim}")
    return part % dim, part % dim + 1


# ------------------------------------------------------------------- promotion

Operand = Tensor | promotion.Scalar
"""An operand of an elementwise op: a tensor, or a Python scalar (weak)."""


def unary(op_type: type[df.UnaryElementwiseOp], x: Tensor) -> Tensor:
    """`op_type` of `x`; weak when `x` is (`-n` of a Python scalar `n` stays weak)."""
    result = x.graph.emit(op_type(x.value))
    result.weak = x.weak
    return result


def elementwise(op_type: type[df.BinaryElementwiseOp], x: Any, y: Any) -> Tensor:
    """`op_type` of `x` and `y` (tensors, or a Python or NumPy scalar on one side),
    converted to the element type NumPy 2 computes in and giving NumPy's result type
    (`promotion.binary_types`); weak when both operands are."""
    name = op_type.name.removeprefix("df.")
    graph, operands = _operands(name, (x, y))
    operand, result = promotion.binary_types(op_type, [_kind(o) for o in operands])
    lhs, rhs = (_converted(graph, name, o, operand) for o in operands)
    out = graph.emit(op_type(lhs.value, rhs.value))
    if out.element != result:
        out = out.cast(result)
    out.weak = all(_is_weak(o) for o in operands)
    return out


def promoted(name: str, values: Sequence[Any]) -> list[Tensor]:
    """`values` (tensors and scalars) converted to their common element type, as NumPy
    2 converts the operands of `np.where`, `np.matmul` or `np.concatenate`."""
    graph, operands = _operands(name, values)
    common = promotion.common_dtype([_kind(o) for o in operands])
    element = promotion.element_of_dtype(name, common)
    return [_converted(graph, name, o, element) for o in operands]


def _operands(name: str, values: Sequence[Any]) -> tuple[Graph, list[Operand]]:
    """The graph of the first tensor among `values`, and each value as an operand:
    NumPy scalars and arrays become (strong) constants; anything else is refused."""
    graph = next((v.graph for v in values if isinstance(v, Tensor)), None)
    if graph is None:
        raise trace_error(f"dflow.{name}: no argument is a tensor")
    return graph, [_operand(graph, name, i, value) for i, value in enumerate(values)]


def _operand(graph: Graph, name: str, position: int, value: Any) -> Operand:
    if isinstance(value, np.ndarray | np.generic):
        array: np.ndarray[Any, Any] = np.asarray(cast(Any, value))
        try:
            return graph.constant(array)
        except ValueError as error:
            raise trace_error(f"dflow.{name}: argument {position}: {error}") from None
    if isinstance(value, Tensor | bool | int | float):
        return value
    raise trace_error(
        f"dflow.{name}: argument {position} is a {type(value).__name__}, not a tensor"
    )


def _kind(operand: Operand) -> promotion.Operand:
    """The operand as promotion sees it: a strong tensor's dtype, else its kind."""
    if not isinstance(operand, Tensor):
        return promotion.scalar_kind(operand)
    if operand.weak:
        return promotion.weak_kind(operand.element)
    return numpy_dtype(operand.element)


def _is_weak(operand: Operand) -> bool:
    return operand.weak if isinstance(operand, Tensor) else True


def _converted(graph: Graph, name: str, operand: Operand, element: Attribute) -> Tensor:
    """`operand` as a tensor of `element`: a `df.cast` of a tensor of another type,
    a constant of a scalar (NumPy's conversion, overflow refused)."""
    if not isinstance(operand, Tensor):
        return graph.constant(promotion.scalar_array(name, operand, element))
    if operand.element == element:
        return operand
    value = operand.value
    if (
        operand.weak
        and (operand.element, element) == (i64, i32)
        and isinstance(value, BlockArgument)
    ):
        graph.narrowed_inputs.add(value.index)
    return operand.cast(element)
