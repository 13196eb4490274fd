"""Colocation groups: union-find over a function's ops, with the constraints that
joined them kept as links, so an error can show the chain between two ops.

As TensorFlow's placer (`ColocationGraph`), ops join one group when
- they carry the same `df.colocate` name (`colocate "g"`);
- a generator (an op without operands, e.g. `df.constant`) has exactly one
  consumer, a `df` op: it joins that consumer (`generator of`);
- a metadata-only op (`df.reshape`) joins the producer of its input, unless the
  input is a function argument (`reshape of`).
Ops pinned by `df.device` take no heuristic: their pin decides for them.

`strongly_connected` finds the cycles that contracting groups can make in the
group graph (x → y → z with x and z colocated): the groups of each cycle are
then placed as one unit (rule 4 of `df-place-devices`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Container, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from dflow.dialects.df import annotations
from dflow.dialects.df.traits import ViewLike, has_trait

T = TypeVar("T", bound=Hashable)

COLOCATION = "colocation"
HEURISTIC = "heuristic"


class UnionFind(Generic[T]):
    """Disjoint sets with path halving and union by size."""

    def __init__(self) -> None:
        self.parent: dict[T, T] = {}
        self.size: dict[T, int] = {}

    def find(self, item: T) -> T:
        """The representative of `item`'s set (a new singleton set if unseen)."""
        parent = self.parent.setdefault(item, item)
        while parent != item:
            grandparent = self.parent[parent]
            self.parent[item] = grandparent
            item, parent = parent, self.parent[grandparent]
        return item

    def union(self, a: T, b: T) -> bool:
        """Join the sets of `a` and `b`; False when they were one set already."""
        root_a, root_b = self.find(a), self.find(b)
        if root_a == root_b:
            return False
        if self.size.get(root_a, 1) < self.size.get(root_b, 1):
            root_a, root_b = root_b, root_a
        self.parent[root_b] = root_a
        self.size[root_a] = self.size.get(root_a, 1) + self.size.get(root_b, 1)
        return True


@dataclass(frozen=True)
class Link:
    """One constraint: `follower` goes where `leader` goes. `forward` reads from the
    follower to the leader (`%c -[generator of]- %m`), `backward` the other way."""

    follower: Operation
    leader: Operation
    forward: str
    backward: str
    rule: str


@dataclass
class ColocationGraph:
    """The ops of one function, their groups, and the links that made them."""

    ops: Sequence[Operation]
    sets: UnionFind[Operation] = field(default_factory=UnionFind[Operation])
    neighbours: dict[Operation, list[tuple[Operation, str, str]]] = field(
        default_factory=dict[Operation, list[tuple[Operation, str, str]]]
    )
    followers: dict[Operation, str] = field(default_factory=dict[Operation, str])
    """Ops that joined a group by a heuristic, with the rule."""

    def add(self, link: Link) -> None:
        self.sets.union(link.follower, link.leader)
        self.neighbours.setdefault(link.follower, []).append((link.leader, link.forward, link.rule))
        self.neighbours.setdefault(link.leader, []).append(
            (link.follower, link.backward, link.rule)
        )
        if link.rule == HEURISTIC:
            self.followers.setdefault(link.follower, link.rule)

    def groups(self) -> list[list[Operation]]:
        """The groups, each in op order, ordered by their first op."""
        members: dict[Operation, list[Operation]] = {}
        for op in self.ops:
            members.setdefault(self.sets.find(op), []).append(op)
        return list(members.values())

    def chain(self, start: Operation, end: Operation) -> list[tuple[str, Operation]]:
        """The shortest chain of links from `start` to `end`: (label, op) steps after
        `start`; empty when they are the same op or not linked."""
        came_from: dict[Operation, tuple[Operation, str]] = {}
        queue = deque([start])
        seen = {start}
        while queue and end not in seen:
            op = queue.popleft()
            for neighbour, label, _ in self.neighbours.get(op, []):
                if neighbour not in seen:
                    seen.add(neighbour)
                    came_from[neighbour] = (op, label)
                    queue.append(neighbour)
        steps: list[tuple[str, Operation]] = []
        op = end
        while op in came_from:
            previous, label = came_from[op]
            steps.append((label, op))
            op = previous
        return steps[::-1]

    def reached_by(self, sources: Iterable[Operation]) -> dict[Operation, str]:
        """For each op linked (transitively) to `sources`, the rule of the link on
        which a shortest chain from the op to a source starts."""
        rules: dict[Operation, str] = {}
        queue = deque(sources)
        seen = set(queue)
        while queue:
            op = queue.popleft()
            for neighbour, _, rule in self.neighbours.get(op, []):
                if neighbour not in seen:
                    seen.add(neighbour)
                    rules[neighbour] = rule
                    queue.append(neighbour)
        return rules


def format_chain(
    graph: ColocationGraph, start: Operation, end: Operation, short: Callable[[Operation], str]
) -> str:
    """`%s -[colocate "g"]- %t -[generator of]- %m`."""
    parts = [short(start)]
    for label, op in graph.chain(start, end):
        parts.append(f"-[{label}]- {short(op)}")
    return " ".join(parts)


def colocate_name(op: Operation) -> str | None:
    attr = op.attributes.get(annotations.COLOCATE)
    return attr.data if isinstance(attr, StringAttr) else None


def _generator_link(op: Operation, members: Container[Operation]) -> Link | None:
    """A generator with exactly one consumer, a `df` op of the function, follows it."""
    if op.operands or len(op.results) != 1:
        return None
    users = op.results[0].uses
    consumers = {use.operation for use in users}
    if len(consumers) != 1 or not all(use.operation in members for use in users):
        return None
    return Link(op, consumers.pop(), "generator of", "fed by generator", HEURISTIC)


def _metadata_link(op: Operation, members: Container[Operation]) -> Link | None:
    """A view (a reshape) follows the producer of its input, when that is a `df` op."""
    if not has_trait(op, ViewLike):
        return None
    producer = op.operands[0].owner
    if not isinstance(producer, Operation) or producer not in members:
        return None
    return Link(op, producer, "reshape of", "reshaped by", HEURISTIC)


def build_colocation(ops: Sequence[Operation], pinned: Container[Operation]) -> ColocationGraph:
    """Join the ops of one function by `df.colocate` names and the two heuristics."""
    graph = ColocationGraph(ops)
    members = set(ops)
    first_of_name: dict[str, Operation] = {}
    for op in ops:
        graph.sets.find(op)
        name = colocate_name(op)
        if name is not None:
            first = first_of_name.setdefault(name, op)
            if first is not op:
                label = f'colocate "{name}"'
                graph.add(Link(op, first, label, label, COLOCATION))
    for op in ops:
        if op in pinned:
            continue
        link = _generator_link(op, members) or _metadata_link(op, members)
        if link is not None:
            graph.add(link)
    return graph


class _Tarjan:
    """Tarjan's strongly connected components, without recursion (chains of
    thousands of groups are common)."""

    def __init__(self, successors: Sequence[Sequence[int]]):
        self.successors = successors
        self.index: dict[int, int] = {}
        self.low: dict[int, int] = {}
        self.stack: list[int] = []
        self.on_stack: set[int] = set()
        self.components: list[list[int]] = []

    def _enter(self, node: int) -> None:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        self.on_stack.add(node)

    def _leave(self, node: int) -> None:
        if self.low[node] != self.index[node]:
            return
        component: list[int] = []
        while not component or component[-1] != node:
            member = self.stack.pop()
            self.on_stack.discard(member)
            component.append(member)
        self.components.append(sorted(component))

    def visit(self, root: int) -> None:
        self._enter(root)
        work = [(root, 0)]
        while work:
            node, position = work[-1]
            if position < len(self.successors[node]):
                work[-1] = (node, position + 1)
                successor = self.successors[node][position]
                if successor not in self.index:
                    self._enter(successor)
                    work.append((successor, 0))
                elif successor in self.on_stack:
                    self.low[node] = min(self.low[node], self.index[successor])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                self.low[parent] = min(self.low[parent], self.low[node])
            self._leave(node)


def strongly_connected(successors: Sequence[Sequence[int]]) -> list[list[int]]:
    """The strongly connected components of a graph over nodes 0..n-1, in a
    topological order of the condensed graph, each sorted."""
    tarjan = _Tarjan(successors)
    for node in range(len(successors)):
        if node not in tarjan.index:
            tarjan.visit(node)
    return tarjan.components[::-1]
