"""xDSL interpreter functions for the `df` dialect.

Every op with NumPy semantics runs them (`semantics.evaluate`), one entry per op in
the table of `DfFunctions`, made from the dialect's own list of ops (`DF`), so a new
op needs no entry here; `df.fused` runs its body op by op (`fusion.run_fused`);
`df.send` and `df.recv` meet in `Channels` (the runtime's, shared by the compiled
device threads), so one module, or several device modules run in threads, can
exchange values; `df.yield` ends a fused body and is never run alone.
`run_function` is the convenience entry.
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
from dflow.dialects.df import DF, fusion
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.semantics import HasSemantics, evaluate
from dflow.runtime.channels import DEFAULT_RECV_TIMEOUT_S, Channels


def _by_semantics(op_type: type[Operation]) -> OpImpl[DfFunctions, Operation]:
    """The implementation of an op with NumPy semantics: `semantics.evaluate`."""

    def run(
        functions: DfFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        return evaluate(op, args)

    return impl(op_type)(run)


def _with_semantics(functions: type[DfFunctions]) -> type[DfFunctions]:
    """`functions` with `run_NAME` for every op of the `df` dialect that states its
    NumPy semantics, so that the table follows the dialect's registry (`DF`)."""
    for op_type in DF.operations:
        if issubclass(op_type, HasSemantics):
            setattr(functions, f"run_{op_type.name.removeprefix('df.')}", _by_semantics(op_type))
    return functions


@register_impls
@_with_semantics
class DfFunctions(InterpreterFunctions):
    """Runs `df` ops; values are NumPy arrays. The ops with NumPy semantics are added
    from the dialect (`_with_semantics`); the others have their own functions here."""

    def __init__(self, channels: Channels | None = None):
        self.channels = Channels(DEFAULT_RECV_TIMEOUT_S) if channels is None else channels

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
