"""An independent checker of buffer plans (written apart from dflow.lowering/).

`check_blocks` checks a plan given as blocks (name, size, offset, first and last
live step) and an arena size:
- every offset is a multiple of the alignment and every block lies inside the arena;
- any two blocks live at a common step share no byte, except a declared in-place
  pair (input, output) where the input dies at the very step the output is born,
  at the same offset and with the same size (the op overwrites element for element);
- a declared slice pair (whole, part) puts the part's bytes inside the whole's (a
  concatenation whose operands were written in place into it): the whole and its
  parts become one block over the hull of their bytes, live from the first birth to
  the last death; its written blocks (those that are no whole) must share no byte;
- a declared view pair (source, view) at the same offset and size is one storage:
  the two blocks become one, live from the first birth to the last death, and an
  in-place pair naming either names that storage (a reshape's result is its
  input's bytes; nothing may overwrite them while either is read).

`check_plan` checks the plan of a schedule (`dflow.analysis.memory`'s model) value
by value the same way. `check_module` reads a planned module (`df.offset` on ops,
`df.arena_bytes` on functions and device modules) and rebuilds everything else from the IR with its
own rules: sizes from shapes and its own element widths, live intervals from the
uses (the return is the last step), which pairs may share in place (its own list of
elementwise op names; a `df.reshape` at its input's offset is a view of it; a
`df.concat` whose operands sit end to end from its offset is made of them);
arguments and constants must have no offset. Pairs are
compared one by one (quadratic, obviously right), not with the planner's sweeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from math import prod

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.hints import isa

from dflow.analysis.memory.liveness import Schedule
from dflow.analysis.memory.memory_plan import MemoryPlan

ALIGNMENT = 64
WIDTHS = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "i1": 1}
UNARY = ("neg", "abs", "square", "relu", "identity", "reciprocal", "exp", "log", "sqrt")
MORE_UNARY = ("rsqrt", "tanh", "sigmoid", "erf")
BINARY = ("add", "sub", "mul", "maximum", "minimum", "div", "pow")
COMPARISONS = ("greater", "greater_equal", "less", "less_equal", "equal")
ELEMENTWISE = {
    f"df.{name}" for family in (UNARY, MORE_UNARY, BINARY, COMPARISONS) for name in family
} | {"df.select", "df.addn"}
"""Ops that may write their result over an operand of the result's type."""


@dataclass(frozen=True)
class Block:
    name: str
    size: int
    offset: int
    start: int
    end: int


def _collide(a: Block, b: Block) -> bool:
    """Both live at a common step and sharing a byte."""
    if a.size == 0 or b.size == 0:
        return False
    in_time = a.start <= b.end and b.start <= a.end
    in_bytes = a.offset < b.offset + b.size and b.offset < a.offset + a.size
    return in_time and in_bytes


def _in_place(a: Block, b: Block, pairs: set[tuple[str, str]]) -> bool:
    """`a` is overwritten by `b` (or the reverse) as a declared in-place pair allows."""
    for first, second in ((a, b), (b, a)):
        if (first.name, second.name) in pairs:
            exact = first.offset == second.offset and first.size == second.size
            if exact and first.end == second.start:
                return True
    return False


def merge_slices(
    blocks: list[Block], pairs: set[tuple[str, str]], slices: set[tuple[str, str]]
) -> tuple[list[Block], set[tuple[str, str]]]:
    """Each whole and its parts as one block (the name of the first of them, the hull of
    their bytes, the union of their lifetimes), its written blocks checked apart, and
    the in-place pairs renamed to match."""
    storage = {block.name: block.name for block in blocks}

    def root(name: str) -> str:
        while storage.get(name, name) != name:
            name = storage[name]
        return name

    for whole, part in sorted(slices):
        if root(whole) != root(part):
            storage[root(part)] = root(whole)
    classes: dict[str, list[Block]] = {}
    for block in blocks:
        classes.setdefault(root(block.name), []).append(block)
    wholes = {whole for whole, _ in slices}
    merged: list[Block] = []
    for name, members in classes.items():
        written = sorted((b for b in members if b.name not in wholes), key=lambda b: b.offset)
        for a, b in pairwise(written):
            assert a.offset + a.size <= b.offset, f"{a.name} overlaps {b.name} in one storage"
        start = min(b.offset for b in members)
        end = max(b.offset + b.size for b in members)
        first = min(b.start for b in members)
        merged.append(Block(name, end - start, start, first, max(b.end for b in members)))
    return merged, {(root(i), root(o)) for i, o in pairs}


def merge_views(
    blocks: list[Block], pairs: set[tuple[str, str]], views: set[tuple[str, str]]
) -> tuple[list[Block], set[tuple[str, str]]]:
    """Each view and its source as one block (the name of the first, the union of
    their lifetimes), and the in-place pairs renamed to match."""
    storage = {block.name: block.name for block in blocks}
    by_name = {block.name: block for block in blocks}

    def root(name: str) -> str:  # names outside the arena (pairs may hold them) stay
        while storage.get(name, name) != name:
            name = storage[name]
        return name

    for source, view in sorted(views):
        a, b = by_name[root(source)], by_name[root(view)]
        inside = a.offset <= b.offset and b.offset + b.size <= a.offset + a.size
        assert inside, f"{view} is not inside {source}'s bytes"
        merged = Block(a.name, a.size, a.offset, min(a.start, b.start), max(a.end, b.end))
        by_name[a.name] = merged
        storage[b.name] = a.name
    merged_blocks = [by_name[b.name] for b in blocks if root(b.name) == b.name]
    return merged_blocks, {(root(i), root(o)) for i, o in pairs}


def check_blocks(
    blocks: list[Block],
    arena_bytes: int,
    pairs: set[tuple[str, str]] | None = None,
    alignment: int = ALIGNMENT,
    views: set[tuple[str, str]] | None = None,
    slices: set[tuple[str, str]] | None = None,
) -> None:
    """AssertionError naming the first fault; `pairs` are `(input, output)` names that
    may share in place, `views` `(source, view)` names that are one storage, `slices`
    `(whole, part)` names whose part lies in the whole."""
    blocks, allowed = merge_slices(blocks, pairs or set(), slices or set())
    blocks, allowed = merge_views(blocks, allowed, views or set())
    for block in blocks:
        assert block.offset % alignment == 0, f"{block.name} at {block.offset} is not aligned"
        assert block.offset >= 0, f"{block.name} at a negative offset {block.offset}"
        assert block.offset + block.size <= arena_bytes, (
            f"{block.name} [{block.offset}, {block.offset + block.size}) is outside the "
            f"arena of {arena_bytes} bytes"
        )
        assert block.start <= block.end, f"{block.name} dies before it is born"
    for i, a in enumerate(blocks):
        for b in blocks[i + 1 :]:
            if _collide(a, b) and not _in_place(a, b, allowed):
                raise AssertionError(
                    f"{a.name} [{a.offset}, {a.offset + a.size}) steps {a.start}-{a.end} "
                    f"overlaps {b.name} [{b.offset}, {b.offset + b.size}) steps {b.start}-{b.end}"
                )


def _size(type: Attribute) -> int:
    assert isa(type, TensorType[Attribute]), f"{type} is not a tensor"
    return prod(type.get_shape()) * WIDTHS[str(type.element_type)]


def _int(attribute: Attribute | None, what: str) -> int:
    assert isinstance(attribute, IntegerAttr), f"{what} has no integer df.arena_bytes"
    return attribute.value.data


def _offsets(op: Operation) -> list[int] | None:
    attribute = op.attributes.get("df.offset")
    if attribute is None:
        return None
    assert isinstance(attribute, DenseArrayBase), f"{op.name}: df.offset is not an array"
    return [int(v) for v in attribute.get_values()]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType, reportUnknownMemberType]


def _may_share(op: Operation, operand: SSAValue, result: SSAValue) -> bool:
    if op.name == "df.cast":
        return _size(operand.type) == _size(result.type)
    return op.name in ELEMENTWISE and operand.type == result.type


def _is_view(op: Operation, offsets: list[int], placed: dict[SSAValue, int]) -> bool:
    """A reshape whose result sits at its input's offset: the input's own bytes."""
    source = op.operands[0] if op.name == "df.reshape" else None
    return source is not None and placed.get(source) == offsets[0]


def _concat_parts(op: Operation, offsets: list[int], placed: dict[SSAValue, int]) -> bool:
    """A concatenation along an axis after size-1 axes only, each operand at the
    concatenation's offset plus the bytes of the operands before it: made of them."""
    if op.name != "df.concat":
        return False
    shape = _shape(op.results[0].type)
    axis = op.properties["axis"]
    assert isinstance(axis, IntegerAttr)
    if prod(shape[: axis.value.data % len(shape)]) != 1:
        return False
    at = offsets[0]
    for operand in op.operands:
        if placed.get(operand) != at:
            return False
        at += _size(operand.type)
    return True


def _shape(type: Attribute) -> tuple[int, ...]:
    assert isa(type, TensorType[Attribute]), f"{type} is not a tensor"
    return tuple(type.get_shape())


Planned = tuple[list[Block], set[tuple[str, str]], set[tuple[str, str]], set[tuple[str, str]]]
"""Blocks, in-place pairs, views and slices."""


def _function_blocks(function: FuncOp) -> Planned:
    ops = list(function.body.block.ops)
    step = {op: index for index, op in enumerate(ops)}
    names: dict[SSAValue, str] = {}
    placed: dict[SSAValue, int] = {}
    blocks: list[Block] = []
    pairs: set[tuple[str, str]] = set()
    views: set[tuple[str, str]] = set()
    slices: set[tuple[str, str]] = set()
    for index, op in enumerate(ops):
        offsets = _offsets(op)
        if op.name == "df.constant" or not op.results:
            assert offsets is None, f"{op.name} at step {index} is not in the arena: no offset"
            continue
        assert offsets is not None and len(offsets) == len(op.results), (
            f"{op.name} at step {index} has offsets {offsets} for {len(op.results)} results"
        )
        for number, (result, offset) in enumerate(zip(op.results, offsets, strict=True)):
            names[result] = f"%{result.name_hint or ''}#{index}.{number}"
            placed[result] = offset
            if _is_view(op, offsets, placed):
                views.add((names[op.operands[0]], names[result]))
            if _concat_parts(op, offsets, placed):
                slices |= {(names[result], names[o]) for o in op.operands}
            end = max((step[use.operation] for use in result.uses), default=index)
            blocks.append(Block(names[result], _size(result.type), offset, index, end))
            pairs |= {
                (names[o], names[result])
                for o in op.operands
                if o in names and _may_share(op, o, result)
            }
    return blocks, pairs, views, slices


def check_function(function: FuncOp) -> int:
    """Check one planned function; returns the number of blocks."""
    arena = _int(function.attributes.get("df.arena_bytes"), f"@{function.sym_name.data}")
    blocks, pairs, views, slices = _function_blocks(function)
    check_blocks(blocks, arena, pairs, views=views, slices=slices)
    return len(blocks)


def check_module(module: ModuleOp) -> int:
    """Check every function of a planned module (each device module of a partitioned
    one); returns the number of blocks checked."""
    scopes = [op for op in module.ops if isinstance(op, ModuleOp)] or [module]
    total = 0
    for scope in scopes:
        functions = [f for f in scope.ops if isinstance(f, FuncOp) and not f.is_declaration]
        for function in functions:
            total += check_function(function)
        if scope is not module:
            assert isinstance(scope.attributes.get("df.device"), StringAttr)
            arena = _int(scope.attributes.get("df.arena_bytes"), "a device module")
            for function in functions:
                assert _int(function.attributes.get("df.arena_bytes"), "") <= arena
    return total


def check_plan(schedule: Schedule, memory: MemoryPlan) -> None:
    """Check a pure plan value by value: each value's raw size at its offset, live over
    its own interval; the schedule's candidates are the only pairs that may share."""
    offsets = memory.value_offsets()
    blocks = [
        Block(f"v{v}", schedule.values[v].size, offsets[v], *memory.intervals[v])
        for v in memory.intervals
    ]
    candidates = {(f"v{i}", f"v{o}") for step in schedule.steps for o, i in step.inplace}
    views = {(f"v{i}", f"v{o}") for step in schedule.steps for o, i in step.alias}
    slices = {(f"v{step.writes[0]}", f"v{p}") for step in schedule.steps for p, _ in step.parts}
    check_blocks(blocks, memory.arena_bytes, candidates, views=views, slices=slices)
    assert memory.lower_bound_bytes <= memory.arena_bytes <= memory.naive_bytes
    for name, arena in memory.arenas.items():
        assert arena >= memory.lower_bound_bytes, name
