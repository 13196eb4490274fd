"""The changes `dflow reduce` tries on a program to make it smaller.

Each `Shrink` is one kind of change, with its sites numbered in walk order (the
ops it could drop, the uses it could cut, the sizes it could shrink); `candidate`
prints the program with a run of them changed, leaving the program as it was.
Whether a candidate is kept is not decided here: it must verify, be smaller by
`size`, and stay interesting (`dflow.driver.tools.reduce`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, ShapedType, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator
from xdsl.utils.hints import isa

from dflow.dialects.df.arrays import from_array, numpy_dtype, to_array
from dflow.dialects.df.constant import ConstantOp

Sites = Sequence[int]


def functions(module: ModuleOp) -> list[FuncOp]:
    """Every function with a body, nested device modules' too."""
    return [op for op in module.walk() if isinstance(op, FuncOp) and not op.is_declaration]


def body_ops(module: ModuleOp) -> list[Operation]:
    """The ops inside functions that a shrink may drop: all but terminators."""
    return [
        op
        for function in functions(module)
        for op in function.body.walk()
        if not op.has_trait(IsTerminator)
    ]


def size(module: ModuleOp) -> tuple[int, ...]:
    """How big a program is, most telling first: ops, ops other than constants,
    functions (declarations too), results, uses of op results, constants that are
    not splats, elements of the tensors and memrefs, arguments. A kept candidate is
    smaller in this order, so a reduction ends."""
    ops = body_ops(module)
    uses = sum(isinstance(v, OpResult) for op in ops for v in op.operands)
    returns = [op for op in module.walk() if isinstance(op, ReturnOp)]
    return (
        len(ops),
        sum(not isinstance(op, ConstantOp) for op in ops),
        sum(isinstance(op, FuncOp) for op in module.walk()),
        sum(len(op.operands) for op in returns),
        uses + sum(isinstance(v, OpResult) for op in returns for v in op.operands),
        sum(isinstance(op, ConstantOp) and not op.value.is_splat() for op in ops),
        sum(_elements(r.type) for op in ops for r in op.results)
        + sum(_elements(a.type) for f in functions(module) for a in f.args),
        sum(len(f.args) for f in functions(module)),
    )


def _elements(type: Attribute) -> int:
    if isinstance(type, ShapedType) and all(d >= 0 for d in type.get_shape()):
        return int(np.prod(type.get_shape()))
    return 0


def _function_of(op: Operation) -> FuncOp:
    parent = op.parent_op()
    while not isinstance(parent, FuncOp):
        assert parent is not None, "a body op is inside a function"
        parent = parent.parent_op()
    return parent


def _new_argument(function: FuncOp, type: Attribute) -> SSAValue:
    """A new last argument of `function`, of `type` (the function's type follows when
    `_retype` is called)."""
    block = function.body.block
    if function.arg_attrs is not None:
        function.arg_attrs = ArrayAttr([*function.arg_attrs.data, DictionaryAttr({})])
    return block.insert_arg(type, len(block.args))


def _retype(module: ModuleOp) -> ModuleOp:
    for function in functions(module):
        function.update_function_type()
    return module


class Shrink(ABC):
    """One kind of change: how many sites a module has for it, and the text of a
    candidate with some of them changed."""

    name: ClassVar[str]

    @abstractmethod
    def sites(self, module: ModuleOp) -> int: ...

    @abstractmethod
    def candidate(self, module: ModuleOp, chosen: Sites) -> str:
        """`module` with the sites `chosen` changed, printed (`module` is unchanged)."""


class IrShrink(Shrink):
    """A shrink made on a copy of the IR."""

    def candidate(self, module: ModuleOp, chosen: Sites) -> str:
        copy = module.clone()
        self.change(copy, chosen)
        return str(_retype(copy))

    @abstractmethod
    def change(self, module: ModuleOp, chosen: Sites) -> None:
        """Change `module` in place at the sites `chosen`."""


class DropOps(IrShrink):
    """Drop ops; their results' uses take new function arguments instead."""

    name = "drop-ops"

    def sites(self, module: ModuleOp) -> int:
        return len(body_ops(module))

    def change(self, module: ModuleOp, chosen: Sites) -> None:
        ops = body_ops(module)
        for op in reversed([ops[i] for i in chosen]):  # users before what they use
            for result in op.results:
                if result.uses:
                    result.replace_all_uses_with(_new_argument(_function_of(op), result.type))
            op.detach()
            op.erase()


class OpsToConstants(IrShrink):
    """Replace ops of one tensor result by a zero constant of its type (what they
    use may then be dropped)."""

    name = "ops-to-constants"

    def _replaceable(self, module: ModuleOp) -> list[Operation]:
        return [
            op
            for op in body_ops(module)
            if not isinstance(op, ConstantOp)
            and len(op.results) == 1
            and _constant_type(op.results[0].type) is not None
        ]

    def sites(self, module: ModuleOp) -> int:
        return len(self._replaceable(module))

    def change(self, module: ModuleOp, chosen: Sites) -> None:
        ops = self._replaceable(module)
        for op in reversed([ops[i] for i in chosen]):
            type = _constant_type(op.results[0].type)
            assert type is not None
            zero = ConstantOp(from_array(np.zeros(type.get_shape()), type))
            Rewriter.replace_op(op, zero)


def _constant_type(type: Attribute) -> TensorType[Attribute] | None:
    """`type` where a `df.constant` can have it: a static tensor of a df element type."""
    if not isa(type, TensorType[Attribute]) or any(d < 0 for d in type.get_shape()):
        return None
    try:
        numpy_dtype(type.element_type)
    except KeyError:
        return None
    return type


class CutUses(IrShrink):
    """Replace one use of an op's result by a new function argument, so what is
    used through it alone can go."""

    name = "cut-uses"

    def _uses(self, module: ModuleOp) -> list[tuple[Operation, int]]:
        found: list[tuple[Operation, int]] = []
        for function in functions(module):
            for op in function.body.walk():
                found += [(op, i) for i, v in enumerate(op.operands) if isinstance(v, OpResult)]
        return found

    def sites(self, module: ModuleOp) -> int:
        return len(self._uses(module))

    def change(self, module: ModuleOp, chosen: Sites) -> None:
        uses = self._uses(module)
        for op, index in (uses[i] for i in chosen):
            value = op.operands[index]
            op.operands[index] = _new_argument(_function_of(op), value.type)


class DropResults(IrShrink):
    """Drop results of functions (operands of their `func.return`)."""

    name = "drop-results"

    def _results(self, module: ModuleOp) -> list[tuple[ReturnOp, int]]:
        returns = [op for op in module.walk() if isinstance(op, ReturnOp)]
        return [(op, i) for op in returns for i in range(len(op.operands))]

    def sites(self, module: ModuleOp) -> int:
        return len(self._results(module))

    def change(self, module: ModuleOp, chosen: Sites) -> None:
        results = self._results(module)
        dropped: dict[ReturnOp, set[int]] = {}
        for op, index in (results[i] for i in chosen):
            dropped.setdefault(op, set()).add(index)
        for op, indices in dropped.items():
            kept = [v for i, v in enumerate(op.operands) if i not in indices]
            function = _function_of(op)
            if function.res_attrs is not None:
                attrs = [a for i, a in enumerate(function.res_attrs.data) if i not in indices]
                function.res_attrs = ArrayAttr(attrs)
            Rewriter.replace_op(op, ReturnOp(*kept))


class DropFunctions(IrShrink):
    """Drop whole functions, declarations too."""

    name = "drop-functions"

    def _functions(self, module: ModuleOp) -> list[FuncOp]:
        return [op for op in module.walk() if isinstance(op, FuncOp)]

    def sites(self, module: ModuleOp) -> int:
        return len(self._functions(module))

    def change(self, module: ModuleOp, chosen: Sites) -> None:
        found = self._functions(module)
        for function in (found[i] for i in chosen):
            function.detach()
            function.erase()


class DropArguments(IrShrink):
    """Drop function arguments nothing uses."""

    name = "drop-arguments"

    def _unused(self, module: ModuleOp) -> list[tuple[FuncOp, int]]:
        return [(f, a.index) for f in functions(module) for a in f.args if not a.uses]

    def sites(self, module: ModuleOp) -> int:
        return len(self._unused(module))

    def change(self, module: ModuleOp, chosen: Sites) -> None:
        unused = self._unused(module)
        for function, index in reversed([unused[i] for i in chosen]):
            function.body.block.erase_arg(function.args[index])
            if function.arg_attrs is not None:
                attrs = [a for i, a in enumerate(function.arg_attrs.data) if i != index]
                function.arg_attrs = ArrayAttr(attrs)


class SplatConstants(IrShrink):
    """Make constants splats of their first element."""

    name = "splat-constants"

    def _constants(self, module: ModuleOp) -> list[ConstantOp]:
        ops = body_ops(module)
        return [op for op in ops if isinstance(op, ConstantOp) and not op.value.is_splat()]

    def sites(self, module: ModuleOp) -> int:
        return len(self._constants(module))

    def change(self, module: ModuleOp, chosen: Sites) -> None:
        constants = self._constants(module)
        for op in (constants[i] for i in chosen):
            type = cast(TensorType[Any], op.result.type)
            first = to_array(op.value).reshape(-1)[:1]
            value = np.resize(first, type.get_shape())
            Rewriter.replace_op(op, ConstantOp(from_array(value, type)))


_SHAPE = re.compile(r"((?:tensor|memref)<)((?:(?:\d+|\?)x)+)")


class ShrinkSizes(Shrink):
    """Make a dimension size smaller wherever it appears in a type, all at once: to 1,
    or to half. A shape rule that held with the old size mostly holds with the new
    one; where not, the candidate does not verify and is not kept. Dense constants
    must be splats by then (`SplatConstants` comes first)."""

    name = "shrink-sizes"

    def _changes(self, text: str) -> list[tuple[int, int]]:
        found = {d for m in _SHAPE.finditer(text) for d in m.group(2).split("x")[:-1]}
        sizes = sorted((int(d) for d in found if d != "?" and int(d) > 1), reverse=True)
        return [(s, t) for s in sizes for t in dict.fromkeys((1, max(s // 2, 1)))]

    def sites(self, module: ModuleOp) -> int:
        return len(self._changes(str(module)))

    def candidate(self, module: ModuleOp, chosen: Sites) -> str:
        text = str(module)
        changes = self._changes(text)
        to: dict[str, str] = {}
        for size, new in (changes[i] for i in chosen):
            to.setdefault(str(size), str(new))

        def shrunk(match: re.Match[str]) -> str:
            dims = match.group(2).split("x")[:-1]
            return match.group(1) + "".join(f"{to.get(d, d)}x" for d in dims)

        return _SHAPE.sub(shrunk, text)


SHRINKS: tuple[Shrink, ...] = (
    DropFunctions(),
    DropResults(),
    DropOps(),
    CutUses(),
    OpsToConstants(),
    SplatConstants(),
    ShrinkSizes(),
    DropArguments(),
)
"""The shrinks, in the order each round tries them: the big cuts first."""
