"""An independent checker of buffer plans (written apart from dflow.lowering/).

`check_blocks` checks a plan given as blocks (name, size, offset, first and last
live step) and an arena size:
- every offset is a multiple of the alignment and every block lies inside the arena;
- any two blocks live at a common step share no byte, except a declared in-place
  pair (input, output) where the input dies at the very step the output is born,
  at the same offset and with the same size (the op overwrites element for element);
- a declared view pair (source, view) at the same offset and size is one storage:
  the two blocks become one, live from the first birth to the last death, and an
  in-place pair naming either names that storage (a reshape's result is its
  input's bytes; nothing may overwrite them while either is read).

`check_module` reads a planned module (`df.offset` on ops, `df.arena_bytes` on
functions and device modules) and rebuilds everything else from the IR with its
own rules: sizes from shapes and its own element widths, live intervals from the
uses (the return is the last step), which pairs may share in place (its own list of
elementwise op names; a `df.reshape` at its input's offset is a view of it);
arguments and constants must have no offset. Pairs are
compared one by one (quadratic, obviously right), not with the planner's sweeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.hints import isa

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
        assert (a.offset, a.size) == (b.offset, b.size), f"{view} is not at {source}'s bytes"
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
) -> None:
    """AssertionError naming the first fault; `pairs` are `(input, output)` names that
    may share in place, `views` `(source, view)` names that are one storage."""
    blocks, allowed = merge_views(blocks, pairs or set(), views or set())
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


def _function_blocks(
    function: FuncOp,
) -> tuple[list[Block], set[tuple[str, str]], set[tuple[str, str]]]:
    ops = list(function.body.block.ops)
    step = {op: index for index, op in enumerate(ops)}
    names: dict[SSAValue, str] = {}
    placed: dict[SSAValue, int] = {}
    blocks: list[Block] = []
    pairs: set[tuple[str, str]] = set()
    views: set[tuple[str, str]] = set()
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
            end = max((step[use.operation] for use in result.uses), default=index)
            blocks.append(Block(names[result], _size(result.type), offset, index, end))
            pairs |= {
                (names[o], names[result])
                for o in op.operands
                if o in names and _may_share(op, o, result)
            }
    return blocks, pairs, views


def check_function(function: FuncOp) -> int:
    """Check one planned function; returns the number of blocks."""
    arena = _int(function.attributes.get("df.arena_bytes"), f"@{function.sym_name.data}")
    blocks, pairs, views = _function_blocks(function)
    check_blocks(blocks, arena, pairs, views=views)
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
