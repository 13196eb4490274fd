"""xDSL interpreter functions for the `df` dialect.

Every op with reference semantics runs through `semantics.evaluate`, and
`df.fused` runs its body through it op by op (`fusion.run_fused`); `df.send`
and `df.recv` go through a `Mailbox`, so one module, or several device modules
run in threads, can exchange values. `run_function` is the convenience entry.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from dflow.dialects.df import semantics
from dflow.dialects.df.communication import RecvOp, SendOp
from dflow.dialects.df.fusion import FusedOp, run_fused

DEFAULT_RECV_TIMEOUT_S = 30.0


class Mailbox(Protocol):
    """Where sends deposit values and receives take them, keyed by (key, destination)."""

    def put(self, key: str, destination: str, value: Any) -> None: ...

    def get(self, key: str, destination: str, timeout: float) -> Any: ...


class RecvTimeoutError(InterpretationError):
    """A `df.recv` waited past its timeout: its send never ran."""


class RecvAbandonedError(InterpretationError):
    """A `df.recv` stopped waiting because another device failed."""


POLL_S = 0.05
"""How often a waiting receive checks whether the run was abandoned."""


class QueueMailbox:
    """An in-process mailbox: one FIFO queue per (key, destination).

    `abandon()` wakes every waiting receive with `RecvAbandonedError`, so that when
    one device fails the others stop at once instead of waiting out their timeout.
    """

    def __init__(self) -> None:
        self._queues: dict[tuple[str, str], queue.Queue[Any]] = {}
        self._lock = threading.Lock()
        self._abandoned = threading.Event()

    def abandon(self) -> None:
        self._abandoned.set()

    def _queue(self, key: str, destination: str) -> queue.Queue[Any]:
        with self._lock:
            return self._queues.setdefault((key, destination), queue.Queue())

    def put(self, key: str, destination: str, value: Any) -> None:
        self._queue(key, destination).put(value)

    def get(self, key: str, destination: str, timeout: float) -> Any:
        channel = self._queue(key, destination)
        deadline = time.monotonic() + timeout
        while not self._abandoned.is_set():
            try:
                return channel.get(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
            except queue.Empty:
                if time.monotonic() >= deadline:
                    raise RecvTimeoutError(
                        f"df.recv of key {key!r} on {destination} waited {timeout:g} s and no "
                        "send arrived"
                    ) from None
        raise RecvAbandonedError(f"df.recv of key {key!r} on {destination}: another device failed")


class DfFunctions(InterpreterFunctions):
    """Runs `df` ops; values are NumPy arrays.

    The ops with reference semantics get their `@impl` from `semantics` below
    the class, so the list of ops lives in one place.
    """

    def __init__(
        self, mailbox: Mailbox | None = None, recv_timeout: float = DEFAULT_RECV_TIMEOUT_S
    ):
        self.mailbox: Mailbox = QueueMailbox() if mailbox is None else mailbox
        self.recv_timeout = recv_timeout

    @impl(SendOp)
    def run_send(self, interpreter: Interpreter, op: SendOp, args: PythonValues) -> PythonValues:
        self.mailbox.put(op.key.data, op.destination.data, args[0])
        return ()

    @impl(RecvOp)
    def run_recv(self, interpreter: Interpreter, op: RecvOp, args: PythonValues) -> PythonValues:
        key, source, destination = op.key.data, op.source.data, op.destination.data
        try:
            return (self.mailbox.get(key, destination, self.recv_timeout),)
        except RecvTimeoutError:
            raise RecvTimeoutError(
                f"df.recv of key {key!r} from {source} on {destination} waited "
                f"{self.recv_timeout:g} s and no send arrived"
            ) from None

    @impl(FusedOp)
    def run_fused(self, interpreter: Interpreter, op: FusedOp, args: PythonValues) -> PythonValues:
        return run_fused(op, args)


def _make_impl(op_type: type[Operation]) -> Any:
    def run(
        self: DfFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        return semantics.evaluate(op, args)

    return impl(op_type)(run)


for _op_type in semantics.registered_op_types():
    setattr(DfFunctions, f"run_{_op_type.name.removeprefix('df.')}", _make_impl(_op_type))
register_impls(DfFunctions)


def make_interpreter(module: ModuleOp, functions: DfFunctions | None = None) -> Interpreter:
    """An interpreter for a module of `func` functions over `df` ops."""
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(DfFunctions() if functions is None else functions)
    return interpreter


def run_function(module: ModuleOp, name: str, inputs: Sequence[Any]) -> tuple[Any, ...]:
    """Run function `name` of `module` on NumPy inputs and return its results."""
    return tuple(make_interpreter(module).call_op(name, tuple(inputs)))
