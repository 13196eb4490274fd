"""Ops of upstream MLIR dialects that xDSL (0.74) does not define, with MLIR's names
and semantics, for the kernels the lowering builds.

`arith.remf` is MLIR's floating-point remainder, C's `fmod` (the sign of the
dividend, exact); `df.rem` lowers to it. It is built and printed (to Python by the
numba target, to text by `-p df-bufferize`), not parsed back: xDSL's `arith`
dialect, which the parser consults for `arith.*` names, has no slot for it.
"""

from __future__ import annotations

from xdsl.dialects.arith import FloatingPointLikeBinaryOperation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """`fmod(lhs, rhs)`: `lhs - trunc(lhs / rhs)·rhs`, exactly (MLIR's `arith.remf`)."""

    name = "arith.remf"

    traits = traits_def(Pure())
