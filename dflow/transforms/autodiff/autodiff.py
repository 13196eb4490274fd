"""`df-autodiff`: reverse-mode differentiation of a scalar loss (NNVM's gradient pass).

`df-autodiff{func=main wrt=0,1}` adds `@main_grad`: the same arguments as `@main`,
returning `@main`'s results followed by the gradient of result 0 (the loss, a float
tensor of one element) with respect to each `wrt` argument, in order.

The forward body is cloned as is; a forward sweep marks the values that depend on
a `wrt` argument (active), then a reverse sweep seeds the loss adjoint with 1 and
applies each op's gradient rule (`rules.py`), summing the contributions that reach
one value with a single `df.addn`. Every backward op carries `df.backward`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df import annotations
from dflow.dialects.df import elementwise as ew
from dflow.dialects.df.shapes import num_elements
from dflow.dialects.df.symbols import function_named, require_function
from dflow.dialects.df.types import element_of, is_float, shape_of, static_tensor
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import PassStatistics
from dflow.transforms.autodiff.rules import Emitter, differentiable, rule_for

fail = pass_failure("df-autodiff")


def _is_float_tensor(value: SSAValue) -> bool:
    try:
        return is_float(element_of(value.type))
    except VerifyException:
        return False


def _single_block(function: FuncOp) -> Block:
    blocks = list(function.body.blocks)
    if len(blocks) != 1:
        raise fail(f"@{function.sym_name.data} must have a body of exactly one block")
    return blocks[0]


def check_arguments(function: FuncOp, wrt: Sequence[int]) -> None:
    name = function.sym_name.data
    inputs = function.function_type.inputs.data
    for index in wrt:
        if not 0 <= index < len(inputs):
            count = f"{len(inputs)} argument{'' if len(inputs) == 1 else 's'}"
            raise fail(f"wrt argument {index} is out of range: @{name} has {count}")
        if not _is_float_tensor(_single_block(function).args[index]):
            raise fail(
                f"argument {index} of @{name} has type {inputs[index]}; only floating-point "
                "arguments can be differentiated"
            )


def check_loss(function: FuncOp) -> None:
    name = function.sym_name.data
    outputs = function.function_type.outputs.data
    if not outputs:
        raise fail(f"@{name} has no results; its result 0 must be the scalar loss")
    loss = outputs[0]
    try:
        scalar = num_elements(shape_of(loss)) == 1 and is_float(element_of(loss))
    except VerifyException:
        scalar = False
    if not scalar:
        raise fail(f"the loss (result 0 of @{name}) must be a scalar, got {loss}")


@dataclass
class Differentiator:
    """The reverse sweep over one cloned function body."""

    block: Block
    wrt: tuple[int, ...]
    emitter: Emitter = field(default_factory=Emitter)
    origin: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    """Active values: for each, the lowest wrt argument it depends on."""
    adjoints: dict[SSAValue, list[SSAValue]] = field(default_factory=dict[SSAValue, list[SSAValue]])

    def mark_active(self, ops: Sequence[Operation]) -> None:
        for index in self.wrt:
            argument = self.block.args[index]
            self.origin[argument] = min(index, self.origin.get(argument, index))
        for op in ops:
            sources = [
                self.origin[v] for inner in op.walk() for v in inner.operands if v in self.origin
            ]
            if sources:
                for result in op.results:
                    self.origin[result] = min(sources)

    def contribute(self, value: SSAValue, grad: SSAValue) -> None:
        assert grad.type == value.type, f"gradient {grad.type} for a value of {value.type}"
        self.adjoints.setdefault(value, []).append(grad)

    def total(self, value: SSAValue) -> SSAValue | None:
        """The summed adjoint of `value`, or None when nothing reached it."""
        grads = self.adjoints.get(value)
        if not grads:
            return None
        if len(grads) > 1:
            self.adjoints[value] = [self.emitter.emit(ew.AddNOp(grads))]
        return self.adjoints[value][0]

    def backward(self, op: Operation) -> None:
        grads = [self.total(result) for result in op.results]
        if all(grad is None for grad in grads):
            return
        rule = rule_for(op)
        grad = grads[0]
        if rule is None or grad is None or len(grads) != 1:
            raise fail(f"{op.name} has no gradient rule {self._path(op.results[0])}")
        wanted = [self._wants(op, index, value) for index, value in enumerate(op.operands)]
        if not any(wanted):  # only a non-differentiable operand (a condition) is active
            return
        contributions = rule(self.emitter, op, grad, wanted)
        for value, want, contribution in zip(op.operands, wanted, contributions, strict=True):
            if want:
                assert contribution is not None, f"{op.name} gave no gradient to operand {value}"
                self.contribute(value, contribution)

    def _wants(self, op: Operation, index: int, value: SSAValue) -> bool:
        if value not in self.origin or not differentiable(op, index):
            return False
        if not _is_float_tensor(value):
            raise fail(
                f"no gradient through {op.name} from {element_of(value.type)} {self._path(value)}"
            )
        return True

    def _path(self, value: SSAValue) -> str:
        return f"(on the path from argument {self.origin[value]} to the loss)"

    def run(self, ops: Sequence[Operation], loss: SSAValue) -> list[SSAValue]:
        """Seed the loss, sweep `ops` backwards; the gradient of each wrt argument."""
        self.mark_active(ops)
        if loss in self.origin:
            self.contribute(loss, self.emitter.constant(1.0, static_tensor(loss.type)))
        for op in reversed(ops):
            self.backward(op)
        return [self._argument_gradient(self.block.args[index]) for index in self.wrt]

    def _argument_gradient(self, argument: SSAValue) -> SSAValue:
        grad = self.total(argument)
        return self.emitter.zeros(argument.type) if grad is None else grad


def differentiate(function: FuncOp, wrt: Sequence[int], name: str | None = None) -> FuncOp:
    """A new function `name` (default `<function>_grad`): `function`'s results followed
    by the gradient of its result 0 with respect to each argument in `wrt`."""
    check_loss(function)
    check_arguments(function, wrt)
    clone = function.clone()
    clone.sym_name = StringAttr(name or function.sym_name.data + "_grad")
    block = _single_block(clone)
    ret = block.last_op
    if not isinstance(ret, ReturnOp):
        raise fail(f"@{function.sym_name.data} must end with func.return")
    forward = list(block.ops)[:-1]
    differentiator = Differentiator(block, tuple(wrt))
    grads = differentiator.run(forward, ret.arguments[0])
    block.insert_ops_before(differentiator.emitter.ops, ret)
    results = [*ret.arguments, *grads]
    block.insert_op_before(ReturnOp(*results), ret)
    ret.detach()
    ret.erase()
    clone.function_type = FunctionType.from_lists(
        clone.function_type.inputs.data, [value.type for value in results]
    )
    if clone.res_attrs is not None:
        extra = [DictionaryAttr({}) for _ in grads]
        clone.res_attrs = ArrayAttr([*clone.res_attrs.data, *extra])
    return clone


def _backward_ops(function: FuncOp) -> int:
    return sum(1 for op in function.walk() if annotations.BACKWARD in op.attributes)


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Append `@<func>_grad`, the gradient of `@<func>`'s scalar loss w.r.t. `wrt`."""

    name = "df-autodiff"

    func: str = "main"
    wrt: tuple[int, ...] = (0,)
    stats: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        function = require_function(op, self.func, fail)
        grad_name = self.func + "_grad"
        if function_named(op, grad_name) is not None:
            raise fail(f"@{grad_name} already exists")
        gradient = differentiate(function, self.wrt, grad_name)
        op.body.block.insert_op_after(gradient, function)
        added = _backward_ops(gradient) - _backward_ops(function)
        statistics.count("backward ops", added)
        statistics.finish(op)
