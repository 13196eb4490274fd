"""xDSL interpreter functions for the `df` dialect.

Every op with NumPy semantics runs them (`semantics.evaluate`), one entry per op in
the table of `DfFunctions`; `df.fused` runs its body op by op (`fusion.run_fused`);
`df.send` and `df.recv` meet in `Channels` (the runtime's, shared by the compiled
device threads), so one module, or several device modules run in threads, can
exchange values. `run_function` is the convenience entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImpl,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation

from dflow.dialects import df
from dflow.dialects.df import fusion
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.semantics import evaluate
from dflow.runtime.channels import DEFAULT_RECV_TIMEOUT_S, Channels


def _by_semantics(op_type: type[Operation]) -> OpImpl[DfFunctions, Operation]:
    """The implementation of an op with NumPy semantics: `semantics.evaluate`."""

    def run(
        functions: DfFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        return evaluate(op, args)

    return impl(op_type)(run)


@register_impls
class DfFunctions(InterpreterFunctions):
    """Runs `df` ops; values are NumPy arrays."""

    def __init__(self, channels: Channels | None = None):
        self.channels = Channels(DEFAULT_RECV_TIMEOUT_S) if channels is None else channels

    run_constant = _by_semantics(df.ConstantOp)
    run_neg = _by_semantics(df.NegOp)
    run_abs = _by_semantics(df.AbsOp)
    run_square = _by_semantics(df.SquareOp)
    run_relu = _by_semantics(df.ReluOp)
    run_identity = _by_semantics(df.IdentityOp)
    run_reciprocal = _by_semantics(df.ReciprocalOp)
    run_exp = _by_semantics(df.ExpOp)
    run_log = _by_semantics(df.LogOp)
    run_sqrt = _by_semantics(df.SqrtOp)
    run_rsqrt = _by_semantics(df.RsqrtOp)
    run_tanh = _by_semantics(df.TanhOp)
    run_erf = _by_semantics(df.ErfOp)
    run_sigmoid = _by_semantics(df.SigmoidOp)
    run_add = _by_semantics(df.AddOp)
    run_sub = _by_semantics(df.SubOp)
    run_mul = _by_semantics(df.MulOp)
    run_div = _by_semantics(df.DivOp)
    run_maximum = _by_semantics(df.MaximumOp)
    run_minimum = _by_semantics(df.MinimumOp)
    run_pow = _by_semantics(df.PowOp)
    run_greater = _by_semantics(df.GreaterOp)
    run_greater_equal = _by_semantics(df.GreaterEqualOp)
    run_less = _by_semantics(df.LessOp)
    run_less_equal = _by_semantics(df.LessEqualOp)
    run_equal = _by_semantics(df.EqualOp)
    run_select = _by_semantics(df.SelectOp)
    run_cast = _by_semantics(df.CastOp)
    run_addn = _by_semantics(df.AddNOp)
    run_matmul = _by_semantics(df.MatmulOp)
    run_conv2d = _by_semantics(df.Conv2DOp)
    run_conv2d_grad_input = _by_semantics(df.Conv2DGradInputOp)
    run_conv2d_grad_filter = _by_semantics(df.Conv2DGradFilterOp)
    run_max_pool2d = _by_semantics(df.MaxPool2DOp)
    run_avg_pool2d = _by_semantics(df.AvgPool2DOp)
    run_max_pool2d_grad = _by_semantics(df.MaxPool2DGradOp)
    run_avg_pool2d_grad = _by_semantics(df.AvgPool2DGradOp)
    run_transpose = _by_semantics(df.TransposeOp)
    run_reshape = _by_semantics(df.ReshapeOp)
    run_broadcast_to = _by_semantics(df.BroadcastToOp)
    run_reduce_sum = _by_semantics(df.ReduceSumOp)
    run_reduce_mean = _by_semantics(df.ReduceMeanOp)
    run_reduce_max = _by_semantics(df.ReduceMaxOp)
    run_softmax = _by_semantics(df.SoftmaxOp)
    run_concat = _by_semantics(df.ConcatOp)
    run_slice = _by_semantics(df.SliceOp)

    @impl(df.SendOp)
    def run_send(self, interpreter: Interpreter, op: df.SendOp, args: PythonValues) -> PythonValues:
        value = np.asarray(args[0])  # values are never changed in place: sent as they are
        self.channels.send(op.key.data, op.source.data, op.destination.data, value, owned=True)
        return ()

    @impl(df.RecvOp)
    def run_recv(self, interpreter: Interpreter, op: df.RecvOp, args: PythonValues) -> PythonValues:
        type = op.result.type
        value = np.empty(tuple(type.get_shape()), numpy_dtype(type.element_type))
        self.channels.receive(op.key.data, op.source.data, op.destination.data, value)
        return (value,)

    @impl(df.FusedOp)
    def run_fused(
        self, interpreter: Interpreter, op: df.FusedOp, args: PythonValues
    ) -> PythonValues:
        return fusion.run_fused(op, args)


def make_interpreter(module: ModuleOp, functions: DfFunctions | None = None) -> Interpreter:
    """An interpreter for a module of `func` functions over `df` ops."""
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(DfFunctions() if functions is None else functions)
    return interpreter


def run_function(module: ModuleOp, name: str, inputs: Sequence[Any]) -> tuple[Any, ...]:
    """Run function `name` of `module` on NumPy inputs and return its results."""
    return tuple(make_interpreter(module).call_op(name, tuple(inputs)))
