"""`df.fused` and `df.yield`: a fusion group, the unit that becomes one kernel.

`df-fuse` (lowering/fuse.py) moves the ops of each fusion group into the region of
one `df.fused`. Its operands are the group's inputs from outside, its results the
group's values used outside, and its single block takes one argument per operand
and ends with `df.yield` of the results:

    %r:2 = df.fused(%x = %a, %y = %b) {kind = "elementwise", name = "fused_add_0"}
        : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
      %s = df.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %t = df.relu %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
      df.yield %s, %t : tensor<4x8xf32>, tensor<4x8xf32>
    }

(printed on one line up to the `{`). `%x = %a` binds block argument `%x` to
operand `%a`. The attribute dictionary holds, as for every `df` op, discardable
attributes (`df.device`) then the properties: `kind` (`"elementwise"`,
`"reduction"` when a reduction or softmax closes the group, `"contraction"` when
a matmul or conv2d heads it) and `name` (an identifier for the kernel it becomes);
the functional type follows. The body is isolated from above: it reads only
its arguments and the constants it holds itself.

The op runs its body op by op through the reference semantics (`run_fused`), so
the interpreter and every differential test run fused programs as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
    ReturnLike,
)
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.df import annotations
from dflow.dialects.df.base import DfOp
from dflow.dialects.df.semantics import evaluate, has_semantics

KINDS = ("elementwise", "reduction", "contraction")
"""What a fusion group is: elementwise ops only; closed by a reduction or softmax;
headed by a matmul or conv2d with an elementwise epilogue."""

NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""Kernel names are identifiers, so every target can use them as function names."""

PROPERTIES = ("kind", "name")


def _require_same_types(
    got: Sequence[SSAValue], want: Sequence[SSAValue], names: tuple[str, str], count: str
) -> None:
    """`got[i]` has the type of `want[i]` for every `i`; `count` is the message when
    their numbers differ, `names` what the two sides are called in the others."""
    if len(got) != len(want):
        raise VerifyException(count)
    for index, (value, expected) in enumerate(zip(got, want, strict=True)):
        if value.type != expected.type:
            raise VerifyException(
                f"{names[0]} {index} has type {value.type}, but {names[1]} {index} has "
                f"type {expected.type}"
            )


@irdl_op_definition
class FusedOp(DfOp):
    """A fusion group: its ops in a region isolated from above, ended by `df.yield`."""

    name = "df.fused"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    kind = prop_def(StringAttr)
    kernel_name = prop_def(StringAttr, prop_name="name")

    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
        kind: str,
        name: str,
        attributes: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            operands=[inputs],
            result_types=[result_types],
            regions=[body],
            properties={"kind": StringAttr(kind), "name": StringAttr(name)},
            attributes=attributes,
        )

    @property
    def yield_op(self) -> YieldOp:
        terminator = self.body.block.last_op
        assert isinstance(terminator, YieldOp), "df.fused verifies that df.yield ends it"
        return terminator

    def verify_types(self) -> None:
        self._verify_properties()
        block = self.body.block
        _require_same_types(
            block.args,
            self.inputs,
            ("body argument", "operand"),
            f"the body has {len(block.args)} arguments for {len(self.inputs)} operands",
        )
        for op in block.ops:
            if op is not block.last_op:
                self._verify_body_op(op)
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            found = "nothing" if terminator is None else terminator.name
            raise VerifyException(f"the body must end with df.yield, found {found}")
        self._verify_yield(terminator)

    def _verify_properties(self) -> None:
        if self.kind.data not in KINDS:
            shown = ", ".join(f'"{kind}"' for kind in KINDS)
            raise VerifyException(f'kind must be one of {shown}, got "{self.kind.data}"')
        if not NAME_PATTERN.fullmatch(self.kernel_name.data):
            raise VerifyException(
                "name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), "
                f'got "{self.kernel_name.data}"'
            )

    def _verify_body_op(self, op: Operation) -> None:
        if isinstance(op, FusedOp) or not has_semantics(op):
            raise VerifyException(
                f"the body may hold only df ops with reference semantics, not {op.name}"
            )
        device = self.attributes.get(annotations.DEVICE)
        inner = op.attributes.get(annotations.DEVICE)
        if inner is not None and inner != device:
            where = "unplaced" if device is None else f"on {device}"
            raise VerifyException(f"{op.name} in the body is on {inner}, but the op is {where}")

    def _verify_yield(self, terminator: YieldOp) -> None:
        _require_same_types(
            terminator.values,
            self.outputs,
            ("df.yield value", "result"),
            f"df.yield gives {len(terminator.values)} values for {len(self.outputs)} results",
        )

    def print(self, printer: Printer) -> None:
        with printer.in_parens():
            for index, (argument, operand) in enumerate(
                zip(self.body.block.args, self.inputs, strict=False)
            ):
                if index:
                    printer.print_string(", ")
                printer.print_ssa_value(argument)
                printer.print_string(" = ")
                printer.print_ssa_value(operand)
        printer.print_op_attributes({**self.attributes, **self.properties})
        printer.print_string(" : ")
        printer.print_function_type(self.inputs.types, self.outputs.types)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> FusedOp:
        def binding() -> tuple[Parser.UnresolvedArgument, UnresolvedOperand]:
            argument = parser.parse_argument(expect_type=False)
            parser.parse_punctuation("=")
            return argument, parser.parse_unresolved_operand()

        bindings = parser.parse_comma_separated_list(parser.Delimiter.PAREN, binding)
        attributes = parser.parse_optional_attr_dict()
        properties = {name: attributes.pop(name) for name in PROPERTIES if name in attributes}
        parser.parse_punctuation(":")
        where = parser.pos
        function_type = parser.parse_function_type()
        input_types = function_type.inputs.data
        if len(input_types) != len(bindings):
            parser.raise_error(
                f"df.fused binds {len(bindings)} operands but its type has "
                f"{len(input_types)} inputs",
                where,
                parser.pos,
            )
        arguments = [
            argument.resolve(t) for (argument, _), t in zip(bindings, input_types, strict=True)
        ]
        operands = [
            parser.resolve_operand(operand, t)
            for (_, operand), t in zip(bindings, input_types, strict=True)
        ]
        body = parser.parse_region(arguments)
        return cls.build(
            operands=[operands],
            result_types=[function_type.outputs.data],
            regions=[body],
            properties=properties,
            attributes=attributes,
        )


@irdl_op_definition
class YieldOp(DfOp):
    """`df.yield %a, %b : tensor<4xf32>, tensor<4xf32>`: the results of a `df.fused` body."""

    name = "df.yield"

    values = var_operand_def(TensorType)

    traits = traits_def(Pure(), IsTerminator(), ReturnLike(), HasParent(FusedOp))
    assembly_format = "$values attr-dict (`:` type($values)^)?"

    def __init__(self, *values: Operation | SSAValue):
        super().__init__(operands=[values])

    def verify_types(self) -> None:
        """The enclosing `df.fused` checks the yielded types against its results."""


def run_fused(op: FusedOp, inputs: Sequence[Any]) -> tuple[Any, ...]:
    """The results of `op` on NumPy `inputs`: its body run op by op through the
    reference semantics."""
    block: Block = op.body.block
    values: dict[SSAValue, Any] = dict(zip(block.args, inputs, strict=True))
    for inner in block.ops:
        if isinstance(inner, YieldOp):
            return tuple(values[value] for value in inner.values)
        results = evaluate(inner, [values[operand] for operand in inner.operands])
        values.update(zip(inner.results, results, strict=True))
    raise AssertionError("df.fused verifies that df.yield ends its body")
