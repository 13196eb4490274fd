"""The reference semantics of `df` ops, in NumPy: the oracle of every test.

Each op class states its own semantics (`HasSemantics.semantics`, as xDSL's arith
ops state `py_operation`), calling NumPy or the kernels of `reference.py`;
`evaluate(op, inputs)` runs it. The interpreter, the constant folder and the
tests all go through `evaluate`, so each op has one definition. Results always
carry the dtype and shape of the op's result type.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from dflow.dialects.df.arrays import Array, numpy_dtype
from dflow.dialects.df.traits import NarrowAsIs, has_trait
from dflow.dialects.df.types import COMPUTE_TYPES, static_tensor

_WIDE_DTYPES: dict[np.dtype[Any], np.dtype[Any]] = {
    numpy_dtype(narrow): numpy_dtype(wide) for narrow, wide in COMPUTE_TYPES.items()
}


class HasSemantics(abc.ABC):
    """An op with NumPy semantics: one result computed from its operands' values."""

    @abc.abstractmethod
    def semantics(self, inputs: Sequence[Array]) -> Array:
        """The op's result from its operands' values (`inputs`, in operand order), as
        NumPy computes it; `evaluate` casts it to the result type."""


def has_semantics(op: Operation) -> bool:
    """Whether `op` states NumPy semantics (`df.send`, `df.recv`, `df.fused` and
    `df.yield` do not: they move values or hold other ops)."""
    return isinstance(op, HasSemantics)


def evaluate(op: Operation, inputs: Sequence[Array]) -> tuple[Array, ...]:
    """Run one op on NumPy arrays; IEEE special values (inf, NaN) are results, not
    errors. Narrow operands (f16, i8, ...) are computed in their `COMPUTE_TYPES`
    unless the op is `NarrowAsIs`; the result is rounded (or wrapped) back."""
    if not isinstance(op, HasSemantics):
        raise KeyError(f"{op.name} has no reference semantics")
    if not has_trait(op, NarrowAsIs):
        inputs = [widened(array) for array in inputs]
    with np.errstate(all="ignore"):
        value = op.semantics(inputs)
    result = static_tensor(op.results[0].type)
    return (np.asarray(value, dtype=numpy_dtype(result.element_type)).reshape(result.get_shape()),)


def widened(array: Array) -> Array:
    """`array` in the type its element type computes in (`COMPUTE_TYPES`), exactly."""
    wide = _WIDE_DTYPES.get(np.asarray(array).dtype)
    return array if wide is None else np.asarray(array).astype(wide)
