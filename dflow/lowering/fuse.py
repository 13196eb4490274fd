"""`df-fuse`: group ops into fusion groups, each a `df.fused` that becomes one kernel.

    xdsl-opt placed.mlir -p 'df-fuse{max-ops=64 stats=true}'

What may share a group:
- elementwise ops (unary, binary with broadcasting, compare, select, cast, addn);
- a reduction (`reduce_sum`, `reduce_mean`, `reduce_max`) or `softmax` may close a
  group of elementwise ops whose value it consumes: it is the group's last op and
  nothing joins the group after it, so nothing in the group uses its result;
- a `matmul` or `conv2d` may head a group: it is its first op, its operands come
  from outside, and the elementwise ops after it are its epilogue (bias,
  activation). At most one contraction per group, and no reduction closes it;
- only ops of one block on the same `df.device` (or all unplaced) share a group;
  `df.send`, `df.recv`, shape ops, windows and every other op stay alone.
A group holds at most `max-ops` ops. `df.constant` ops never join: a splat
constant that a group's elementwise op reads is cloned into its body, any other
constant stays outside as an operand. A group of one op stays as it is (a lone
contraction too): every `df.fused` holds at least two ops.

The algorithm is greedy over a topological order of the ops, with a union-find of
groups. Each fusible op `c`, in order, tries to join the groups of its operands'
producers: contraction groups first (so epilogues attach to their matmul), then in
operand order. Joining groups `A` and `B` is refused when the rules above forbid
it, or when it would create a cycle: in the graph whose nodes are the current
groups, a path from `A` or `B` through another group `X` back to `A` or `B` would
need the fused op to run both before and after `X`. The check searches from the
successors of `A` and `B` for either. When `c` joins, only ops up to `c` are
grouped and every later op is alone and reaches only later ops, so the search
stays among the ops before `c` (in practice a few ops: a random graph of 10,000
ops fuses in about 0.7 s). The group graph stays acyclic, so every group is
convex: no path leaves it and re-enters it.

Each group of two or more ops then becomes a `df.fused`: its operands are the
values its ops read from outside (in order of first use), its results the values
of its ops used outside the group (in program order), its body its ops in program
order, and it keeps their `df.device`. Its `name` is `fused_<first op>_<n>`,
numbered through the module. The ops are then put in a topological order that
keeps the original order where it can, each fused op where its last op was.

A partitioned module (`df-partition`) is fused per function, over all the devices'
parts of it at once: a `df.send` and the `df.recv` of its key are an edge of the
graph like a use, so no group waits on a value that another device computes from
the group's own results, and every device's part is ordered by one common
topological order, so the devices cannot wait on each other in a cycle.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import pairwise

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from dflow.dialects.df import annotations
from dflow.dialects.df.arrays import to_array
from dflow.dialects.df.communication import RecvOp, SendOp
from dflow.dialects.df.constant import ConstantOp
from dflow.dialects.df.folding import is_splat
from dflow.dialects.df.fusion import FusedOp, YieldOp
from dflow.dialects.df.traits import Elementwise, EpilogueHead, Reduction, has_trait
from dflow.lowering.kernels.names import KernelNames
from dflow.passes.failures import pass_failure
from dflow.passes.statistics import PassStatistics

DEFAULT_MAX_OPS = 64


_fail = pass_failure("df-fuse")


class Role(Enum):
    """How an op may take part in a fusion group."""

    NONE = "none"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    CONTRACTION = "contraction"


def role_of(op: Operation) -> Role:
    """The op's role, from its traits: `Elementwise`, `Reduction`, `EpilogueHead`."""
    if has_trait(op, Elementwise):
        return Role.ELEMENTWISE
    if has_trait(op, Reduction):
        return Role.REDUCTION
    if has_trait(op, EpilogueHead):
        return Role.CONTRACTION
    return Role.NONE


# --- the graph of one function (all its devices' parts) ------------------------------


@dataclass
class FunctionGraph:
    """The ops of one function, or of all the device parts of one partitioned
    function, with the edges between them: uses, and `df.send` → `df.recv` of a key.
    Terminators are left out: they stay last in their blocks."""

    blocks: list[Block]
    ops: list[Operation] = field(default_factory=list[Operation])
    channels: dict[Operation, list[Operation]] = field(
        default_factory=dict[Operation, list[Operation]]
    )
    """Each `df.send` with the receives of its key."""

    def __post_init__(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        self.ops = [op for block in self.blocks for op in block.ops if not _is_terminator(op)]
        receives: dict[str, list[Operation]] = defaultdict(list)
        for op in self.ops:
            if isinstance(op, RecvOp):
                receives[op.key.data].append(op)
        self.channels = {op: receives[op.key.data] for op in self.ops if isinstance(op, SendOp)}

    def successors(self, op: Operation, present: set[Operation]) -> set[Operation]:
        """The ops in `present` that use `op`'s results (or hold a use in their
        regions) or receive what it sends."""
        users = {_top_level(use.operation) for result in op.results for use in result.uses}
        users.update(self.channels.get(op, ()))
        return users & present

    def topological_order(
        self, keys: dict[Operation, int], in_block_order: bool = False
    ) -> list[Operation]:
        """Every op after its producers (and a receive after its send), the smallest
        key first among those ready (Kahn's algorithm). With `in_block_order`, each
        block's order is kept too."""
        present = set(self.ops)
        edges = {op: self.successors(op, present) for op in self.ops}
        if in_block_order:
            for block in self.blocks:
                ops = [op for op in block.ops if op in present]
                for before, after in pairwise(ops):
                    edges[before].add(after)
        waiting = dict.fromkeys(self.ops, 0)
        for targets in edges.values():
            for target in targets:
                waiting[target] += 1
        serial = {op: i for i, op in enumerate(self.ops)}
        ready = [(keys[op], serial[op], op) for op in self.ops if not waiting[op]]
        heapq.heapify(ready)
        order: list[Operation] = []
        while ready:
            *_, op = heapq.heappop(ready)
            order.append(op)
            for target in edges[op]:
                waiting[target] -= 1
                if not waiting[target]:
                    heapq.heappush(ready, (keys[target], serial[target], target))
        if len(order) != len(self.ops):
            function = self.blocks[0].parent_op()
            name = function.sym_name.data if isinstance(function, FuncOp) else "?"
            raise _fail(f"the devices' parts of @{name} wait on each other in a cycle")
        return order

    def reorder(self, keys: dict[Operation, int]) -> None:
        """Put every block in one common topological order."""
        order = self.topological_order(keys)
        for block in self.blocks:
            ops = [op for op in order if op.parent is block]
            if ops != [op for op in block.ops if not _is_terminator(op)]:
                for op in ops:
                    op.detach()
                    _append(block, op)


def _append(block: Block, op: Operation) -> None:
    """Add `op` at the end of `block`, before its terminator."""
    last = block.last_op
    if last is not None and _is_terminator(last):
        block.insert_op_before(op, last)
    else:
        block.add_op(op)


def _top_level(op: Operation) -> Operation:
    """The op of the function body that is or holds `op`."""
    while (parent := op.parent_op()) is not None and not isinstance(parent, FuncOp):
        op = parent
    return op


def _is_terminator(op: Operation) -> bool:
    return has_trait(op, IsTerminator)


# --- grouping -------------------------------------------------------------------------


@dataclass
class Group:
    """One fusion group while grouping: the positions of its ops in the order."""

    members: list[int]
    block: Block | None
    device: str | None
    head: int | None = None
    """The position of the contraction heading the group."""
    closed: bool = False
    """A reduction or softmax closed the group: nothing joins it any more."""

    @property
    def kind(self) -> str:
        if self.head is not None:
            return Role.CONTRACTION.value
        return Role.REDUCTION.value if self.closed else Role.ELEMENTWISE.value


@dataclass
class Grouping:
    """The fusion groups of ops given in a topological order (a union-find over
    their positions)."""

    ops: list[Operation]
    users: list[list[int]]
    """For each op, the positions of the ops that depend on it directly."""
    max_ops: int
    position: dict[Operation, int] = field(default_factory=dict[Operation, int])
    parent: list[int] = field(default_factory=list[int])
    groups: dict[int, Group] = field(default_factory=dict[int, Group])

    def __post_init__(self) -> None:
        self.position = {op: i for i, op in enumerate(self.ops)}
        self.parent = list(range(len(self.ops)))
        for i, op in enumerate(self.ops):
            self.groups[i] = Group([i], op.parent, annotations.device_of(op))

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:
            self.parent[i], i = root, self.parent[i]
        return root

    def run(self) -> None:
        for c, op in enumerate(self.ops):
            role = role_of(op)
            if role is Role.CONTRACTION:
                self.groups[c].head = c
                continue
            if role is Role.NONE:
                continue
            for producer in self._producer_groups(op):
                self._try_join(producer, c, role)
            if role is Role.REDUCTION:
                self.groups[self.find(c)].closed = True

    def _producer_groups(self, op: Operation) -> list[int]:
        """The groups of `op`'s fusible producers: contraction groups first, then in
        operand order."""
        roots: list[int] = []
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner in self.position:
                if role_of(owner) is Role.NONE:
                    continue
                root = self.find(self.position[owner])
                if root not in roots:
                    roots.append(root)
        return sorted(roots, key=lambda root: self.groups[root].head is None)

    def _try_join(self, producer: int, c: int, role: Role) -> None:
        producer, consumer = self.find(producer), self.find(c)
        if producer == consumer:
            return
        if not self._allowed(self.groups[producer], self.groups[consumer], role):
            return
        if self._creates_cycle(producer, consumer, horizon=c):
            return
        self._union(producer, consumer)

    def _allowed(self, a: Group, b: Group, role: Role) -> bool:
        """The rules of the module docstring, for the group `a` of a producer and the
        group `b` of the op `c` joining it."""
        if a.block is not b.block or a.device != b.device or a.closed or b.closed:
            return False
        if len(a.members) + len(b.members) > self.max_ops:
            return False
        if a.head is not None and (b.head is not None or role is Role.REDUCTION):
            return False
        head = a.head if a.head is not None else b.head
        return head is None or head == min(a.members[0], b.members[0])

    def _successors(self, root: int, horizon: int) -> set[int]:
        return {
            self.find(user)
            for member in self.groups[root].members
            for user in self.users[member]
            if user <= horizon
        }

    def _creates_cycle(self, a: int, b: int, horizon: int) -> bool:
        """Whether a path from group `a` or `b` through another group comes back to
        either, among the ops up to `horizon`."""
        seen = {a, b}
        stack = list((self._successors(a, horizon) | self._successors(b, horizon)) - seen)
        seen.update(stack)
        while stack:
            for successor in self._successors(stack.pop(), horizon):
                if successor in (a, b):
                    return True
                if successor not in seen:
                    seen.add(successor)
                    stack.append(successor)
        return False

    def _union(self, a: int, b: int) -> None:
        ga, gb = self.groups.pop(a), self.groups.pop(b)
        root = a if len(ga.members) >= len(gb.members) else b
        self.parent[a + b - root] = root
        self.groups[root] = Group(
            sorted(ga.members + gb.members),
            ga.block,
            ga.device,
            ga.head if ga.head is not None else gb.head,
            ga.closed or gb.closed,
        )

    def fused_groups(self) -> list[Group]:
        """The groups of two or more ops, in the order of their first op."""
        groups = [g for g in self.groups.values() if len(g.members) > 1]
        return sorted(groups, key=lambda g: g.members[0])


# --- building df.fused ----------------------------------------------------------------


def build_fused(members: Sequence[Operation], kind: str, name: str) -> FusedOp:
    """Move `members` (ops of one block, in program order) into a new `df.fused`
    (not yet in any block) and make every use outside the group read its results."""
    inside = set(members)
    device = annotations.device_of(members[0])
    outputs = [
        result
        for op in members
        for result in op.results
        if any(use.operation not in inside for use in result.uses)
    ]
    body = Block()
    inputs: list[SSAValue] = []
    local: dict[SSAValue, SSAValue] = {}
    for op in members:
        for index, operand in enumerate(op.operands):
            if isinstance(operand.owner, Operation) and operand.owner in inside:
                continue
            if operand not in local:
                clone = role_of(op) is not Role.CONTRACTION  # the contraction stays first
                local[operand] = _localize(operand, body, inputs, device, clone)
            op.operands[index] = local[operand]
        op.detach()
        body.add_op(op)
    fused = FusedOp(
        inputs,
        [value.type for value in outputs],
        Region(body),
        kind,
        name,
        {annotations.DEVICE: StringAttr(device)} if device is not None else None,
    )
    for value, result in zip(outputs, fused.outputs, strict=True):
        value.replace_uses_with_if(result, lambda use: use.operation not in inside)
    terminator = YieldOp(*outputs)
    if device is not None:  # in a placed program every df op is placed
        terminator.attributes[annotations.DEVICE] = StringAttr(device)
    body.add_op(terminator)
    for value in local:  # a splat constant now cloned into all its users goes
        owner = value.owner
        if isinstance(owner, ConstantOp) and not value.uses:
            owner.detach()
            owner.erase()
    return fused


def _localize(
    value: SSAValue,
    body: Block,
    inputs: list[SSAValue],
    device: str | None,
    clone_splat: bool,
) -> SSAValue:
    """What stands for `value` inside `body`: a clone of a splat constant (when
    `clone_splat`), else a new block argument bound to `value` as an operand."""
    owner = value.owner
    if clone_splat and isinstance(owner, ConstantOp) and is_splat(to_array(owner.value)):
        clone = ConstantOp(owner.value)
        clone.result.name_hint = value.name_hint
        if device is not None:
            clone.attributes[annotations.DEVICE] = StringAttr(device)
        body.add_op(clone)
        return clone.result
    inputs.append(value)
    argument: BlockArgument = body.insert_arg(value.type, len(body.args))
    return argument


def fuse_function(
    blocks: list[Block], max_ops: int, names: KernelNames
) -> list[tuple[FusedOp, int]]:
    """Fuse the ops of one function's blocks (all its device parts, for a partitioned
    module); returns each new `df.fused` with the number of ops it took."""
    graph = FunctionGraph(blocks)
    order = graph.topological_order({op: i for i, op in enumerate(graph.ops)}, in_block_order=True)
    keys = {op: i for i, op in enumerate(order)}
    present = set(order)
    users = [sorted(keys[user] for user in graph.successors(op, present)) for op in order]
    grouping = Grouping(order, users, max_ops)
    grouping.run()
    made: list[tuple[FusedOp, int]] = []
    for group in grouping.fused_groups():
        members = [order[i] for i in group.members]
        block = members[0].parent
        assert block is not None
        fused = build_fused(
            members, group.kind, names.numbered(f"fused_{members[0].name.removeprefix('df.')}")
        )
        _append(block, fused)
        keys[fused] = group.members[-1]
        made.append((fused, len(members)))
    if made:
        graph.refresh()
        graph.reorder(keys)
    return made


# --- the pass -------------------------------------------------------------------------


def function_parts(module: ModuleOp) -> list[list[FuncOp]]:
    """Every function with a body; the parts of one partitioned function (the same
    name in several device modules) together."""
    parts: dict[str, list[FuncOp]] = defaultdict(list)
    for op in module.walk():
        if isinstance(op, FuncOp) and not op.is_declaration:
            parts[op.sym_name.data].append(op)
    return list(parts.values())


def count_kernels(module: ModuleOp) -> int:
    """The kernels a module launches: `df.fused` ops and the other `df` ops outside
    them, except constants and send/recv (in every block: `dflow opt` takes a function
    of several, which the lowering later refuses)."""
    return sum(
        1
        for functions in function_parts(module)
        for function in functions
        for block in function.body.blocks
        for op in block.ops
        if op.name.startswith("df.") and op.name not in ("df.constant", "df.send", "df.recv")
    )


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Group elementwise ops, reduction prologues and contraction epilogues into
    `df.fused` ops, one per kernel."""

    name = "df-fuse"

    max_ops: int = DEFAULT_MAX_OPS
    """The most ops one fusion group holds (cloned splat constants not counted)."""

    stats: bool = False
    """Print the groups formed by kind, the ops they took and the kernels before and
    after."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_ops < 1:
            raise _fail(f"max-ops must be at least 1, got {self.max_ops}")
        statistics = PassStatistics(self.name, self.stats)
        statistics.start(op)
        kernels_before = count_kernels(op)
        names = KernelNames({f.kernel_name.data for f in op.walk() if isinstance(f, FusedOp)})
        fused_ops = 0
        for functions in function_parts(op):
            blocks = [block for function in functions for block in function.body.blocks]
            for fused, size in fuse_function(blocks, self.max_ops, names):
                statistics.count(f"{fused.kind.data.capitalize()}Groups")
                fused_ops += size
        statistics.record("ops fused", fused_ops)
        statistics.record("kernels before", kernels_before)
        statistics.record("kernels after", count_kernels(op))
        statistics.finish(op)
