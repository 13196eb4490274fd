"""The memory plan of a `df` function: its ops as a `liveness.Schedule`, planned.

As NNVM's PlanMemory, the schedule is each function's op order (each device's
part of it, once partitioned); `memory_plan.plan` computes liveness, in-place
sharing and the packing. This module says what each op means for memory:

- every op result is a buffer of `elements * element width` bytes (`i1` takes a
  byte); `df.recv` writes one, `df.send` and `func.return` only read;
- with `hold_sends`, a value `df.send` sends lives to the end of the function too, so
  a transport may read it out of its buffer while the function runs on (MPI's
  nonblocking sends: `runtime/mpi.py`) and no later op overwrites it meanwhile;
- function arguments and `df.constant` results are not in the arena (the caller's
  data and static data): they get no offset and are never overwritten;
- an elementwise op (unary, binary and comparisons, `select`, `addn`, and `cast`
  between types of one width) may write its result over an operand of exactly the
  result's type (shape and element; for `cast`, shape and width) that dies there,
  so broadcast operands never qualify; returned values live to the end;
- a `df.reshape` of a value in the arena is a view of it (`view_source`):
  the same bytes, so the same offset, held until both are dead; its kernel is
  never built. A reshape of an argument or a constant, or whose input or result
  is returned (a result is the caller's own array, not arena bytes), copies;
- a `df.concat` marked `df.view` (`concat_views.py` chooses them) is made of its
  operands, each written in place at its offset in the result (`Step.parts`): it
  copies nothing, and its kernel is never built.

Functions must be straight-line `df` code ending in `func.return`: calls (a callee
would need its own part of the arena), ops of other dialects and ops with regions
are refused, except `df.fused`, which is one step: its results get blocks, the
values inside its body live in the kernel's registers and get none. A fused kernel
never writes in place. In a partitioned module, a failure names the device whose
part holds the function (`cpu:1: @main holds func.call: ...`): every part has its
own `@main`.

`df-plan-buffers` writes the plan into the IR; `df-schedule`, `df-recompute` and
`dflow plan` read it without changing the module. What cannot be planned raises a
`PlanError` headed by the function's label (`cpu:1: @main holds func.call: ...`),
named for no pass: each pass that asks wraps it in its own failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike, Pure, is_side_effect_free
from xdsl.utils.exceptions import VerifyException

from dflow.analysis.memory.liveness import PlanError, Schedule, Step, Value
from dflow.analysis.memory.memory_plan import MemoryPlan, plan
from dflow.analysis.memory.scheduling import Dependences
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df.annotations import VIEW, device_of
from dflow.dialects.df.communication import SendOp
from dflow.dialects.df.fusion import FusedOp
from dflow.dialects.df.shape_ops import ConcatOp
from dflow.dialects.df.symbols import device_scopes, require_function, several_blocks
from dflow.dialects.df.traits import InPlace, ViewLike, has_trait
from dflow.dialects.df.types import tensor_bytes


def inplace_operands(op: Operation) -> list[SSAValue]:
    """The operands `op` may overwrite with its result, element for element: those of
    an elementwise op with exactly the result's type, or a cast's operand of the
    result's width."""
    trait = op.get_trait(InPlace)
    return [] if trait is None else trait.operands(op)


def view_source(op: Operation) -> SSAValue | None:
    """The arena value `op` is a view of, when `op` is `ViewLike` (a reshape) and
    needs no copy: its input is an op's result in the arena (not an argument or a
    constant), and neither input nor result is returned (a returned value lives in
    its own array)."""
    if not has_trait(op, ViewLike):
        return None
    source, result = op.operands[0], op.results[0]
    if not isinstance(source.owner, Operation) or has_trait(source.owner, ConstantLike):
        return None
    if returned(source) or returned(result):
        return None
    return source


def returned(value: SSAValue) -> bool:
    """Whether the function returns `value`."""
    return any(isinstance(use.operation, ReturnOp) for use in value.uses)


def concat_parts(op: ConcatOp) -> list[tuple[SSAValue, int]]:
    """Each operand of `op` and its byte offset in the result, were they laid end to
    end (what they are when `op` is a view: `concat_views.py`)."""
    offsets = accumulate((tensor_bytes(v.type) for v in op.operands), initial=0)
    return list(zip(op.operands, offsets, strict=False))


def is_view(op: Operation) -> bool:
    """Whether `op` is a view the plan makes: a reshape of its input
    (`view_source`), or a concatenation of its operands written in place into it
    (marked `df.view` by `df-bufferize`). A view runs no kernel."""
    return view_source(op) is not None or (isinstance(op, ConcatOp) and VIEW in op.attributes)


def _pure(op: Operation) -> bool:
    """Whether `op` has no effects (`Pure` answers at once; a `df.fused` asks its body)."""
    return has_trait(op, Pure) or is_side_effect_free(op)


def function_label(function: FuncOp) -> str:
    """`@name` for a failure's message, headed by the device of the partitioned
    module's part that holds `function` (`cpu:1: @main`), where every part has its own
    `@main`."""
    scope = function.parent_op()
    device = device_of(scope) if isinstance(scope, ModuleOp) else None
    name = f"@{function.sym_name.data}"
    return f"{device}: {name}" if device is not None else name


def _check_op(function: FuncOp, op: Operation) -> None:
    """A `PlanError` unless `op` is one step the planner can plan: a df op (a
    `df.fused` of any body, others without regions) or the return."""
    if op.regions and not isinstance(op, FusedOp):
        raise PlanError(
            f"{function_label(function)}: {op.name} has regions; only straight-line code"
        )
    if isinstance(op, CallOp):
        raise PlanError(
            f"{function_label(function)} holds func.call: only df ops are planned "
            "(a callee would need its own part of the arena)"
        )
    if not op.name.startswith("df.") and not isinstance(op, ReturnOp):
        raise PlanError(
            f"{function_label(function)} holds {op.name}, not a df op: only df ops are planned"
        )


@dataclass
class FunctionSchedule:
    """A function as a `Schedule`: its values numbered, one step per op."""

    function: FuncOp
    ops: list[Operation] = field(default_factory=list[Operation])
    values: list[SSAValue] = field(default_factory=list[SSAValue])
    index: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    sizes: list[Value] = field(default_factory=list[Value])
    hold_sends: bool = False
    """Whether sent values live to the end (the function's return reads them)."""

    @staticmethod
    def of(function: FuncOp, hold_sends: bool = False) -> FunctionSchedule:
        schedule = FunctionSchedule(function, hold_sends=hold_sends)
        for argument in function.args:
            schedule.add(argument, in_arena=False)
        for op in function.body.block.ops:
            _check_op(function, op)
            schedule.ops.append(op)
            for result in op.results:
                schedule.add(result, in_arena=not has_trait(op, ConstantLike))
        return schedule

    def add(self, value: SSAValue, in_arena: bool) -> None:
        try:
            size = tensor_bytes(value.type)
        except VerifyException as error:
            raise PlanError(f"{function_label(self.function)}: {error}") from None
        self.index[value] = len(self.values)
        self.values.append(value)
        self.sizes.append(Value(size, in_arena, value.name_hint or ""))

    def step(self, op: Operation) -> Step:
        writes = tuple(self.index[r] for r in op.results)
        pairs = tuple((writes[0], self.index[v]) for v in inplace_operands(op))
        source = view_source(op)
        alias = ((writes[0], self.index[source]),) if source is not None else ()
        parts = (
            tuple((self.index[v], at) for v, at in concat_parts(op))
            if isinstance(op, ConcatOp) and is_view(op)
            else ()
        )
        return Step(tuple(self.index[v] for v in self.reads(op)), writes, pairs, alias, parts)

    def reads(self, op: Operation) -> list[SSAValue]:
        """What `op` reads: its operands; with `hold_sends`, the return also reads
        every value the function sends."""
        if not (self.hold_sends and isinstance(op, ReturnOp)):
            return list(op.operands)
        sent = [o.operands[0] for o in self.ops if isinstance(o, SendOp)]
        return [*op.operands, *sent]

    def schedule(self) -> Schedule:
        return Schedule(tuple(self.sizes), tuple(self.step(op) for op in self.ops))

    def dependences(self, schedule: Schedule) -> Dependences:
        """What the order of the ops (`schedule`: this function's) must keep: data, the
        written order of the ops with effects (sends, receives: each device's sequence
        of transfers), the return last."""
        last = len(self.ops) - 1
        chain = [i for i, op in enumerate(self.ops[:last]) if not _pure(op)]
        return Dependences.of(schedule, chain, last)

    def reorder(self, order: Sequence[int]) -> None:
        """Move the function's ops into `order` (op indices; the return stays last)."""
        block = self.function.body.block
        terminator = self.ops[-1]
        for index in order[:-1]:
            op = self.ops[index]
            op.detach()
            block.insert_op_before(op, terminator)
        self.ops = [self.ops[i] for i in order]


def check_plannable(function: FuncOp) -> None:
    """A `PlanError` unless `function` has one block of straight-line code."""
    if function.is_declaration:
        raise PlanError(f"{function_label(function)} is a declaration: it has no body to plan")
    if (branched := several_blocks(function, function_label(function))) is not None:
        raise PlanError(branched)


def plan_function(
    function: FuncOp, every_packer: bool = False, hold_sends: bool = False
) -> tuple[FunctionSchedule, MemoryPlan]:
    """The schedule of `function` and its plan (`every_packer`: see `memory_plan.plan`;
    `hold_sends`: sent values live to the end); a `PlanError`, headed by the
    function's label, for what cannot be planned."""
    check_plannable(function)
    schedule = FunctionSchedule.of(function, hold_sends)
    try:
        return schedule, plan(schedule.schedule(), every_packer)
    except PlanError as error:
        raise PlanError(f"{function_label(function)}: {error}") from None


def plan_entry(module: ModuleOp, entry: str, every_packer: bool = False) -> dict[str, MemoryPlan]:
    """The plan of function `entry` on each device (an unpartitioned module is one
    device, `DEFAULT_DEVICE`), without changing the module; a `PlanError` where a
    device has no `entry` or it cannot be planned."""
    plans: dict[str, MemoryPlan] = {}
    for device, scope in device_scopes(module):
        function = require_function(scope, entry, PlanError)
        plans[device or DEFAULT_DEVICE] = plan_function(function, every_packer)[1]
    return plans
