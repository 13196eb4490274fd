"""What every `df` op shares: tensor-typed values, the functional-type syntax,
annotation checks, and shape errors reported with the op's name."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.interfaces import HasCanonicalizationPatternsInterface, HasFolderInterface
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict
from xdsl.pattern_rewriter import RewritePattern
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.devices import DEVICE_FORM, DEVICE_PATTERN
from dflow.dialects.df import annotations
from dflow.dialects.df.folding import fold_op
from dflow.dialects.df.shapes import ShapeError
from dflow.dialects.df.types import element_class_name, static_tensor

FUNCTIONAL_SYNTAX = "attr-dict `:` functional-type(operands, results)"
"""Shared tail of the custom syntax: `{props} : (operand types) -> result type`."""


class DfOp(IRDLOperation, HasFolderInterface, HasCanonicalizationPatternsInterface, abc.ABC):
    """Base of all `df` ops.

    Subclasses check their own typing rule in `verify_types`; shape rules raise
    `ShapeError`, which is reported here prefixed with the op name so every
    message says which op and which shapes disagree.

    Every op folds when its operands are constants (through its NumPy semantics,
    `folding.fold_op`) and offers its canonical-form patterns, so upstream
    `canonicalize` simplifies `df` programs.
    """

    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        try:
            for value in (*self.operands, *self.results):
                static_tensor(value.type)
            self.verify_types()
        except VerifyException as error:
            raise VerifyException(f"{self.name}: {error}") from error
        self._verify_annotations()

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        return fold_op(self)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        """The op's canonical forms, kept with the other rewrite patterns and imported
        when `canonicalize` asks (as xDSL's ops import theirs)."""
        from dflow.transforms.canonicalization_patterns.df import canonicalization_patterns

        return canonicalization_patterns(cls)

    @abc.abstractmethod
    def verify_types(self) -> None:
        """Check operand, result and property types; raise VerifyException."""

    def _verify_annotations(self) -> None:
        device = self.attributes.get(annotations.DEVICE)
        if device is None:
            return
        if not isinstance(device, StringAttr) or not DEVICE_PATTERN.fullmatch(device.data):
            raise VerifyException(
                f"{self.name}: {annotations.DEVICE} must be a string {DEVICE_FORM}, got {device}"
            )


def require_elements(what: str, element: Attribute, allowed: frozenset[Attribute]) -> None:
    if element not in allowed:
        raise VerifyException(
            f"{what} must have {element_class_name(allowed)} element type, got {element}"
        )


def require_result(result: Attribute, expected: TensorType, operands: Sequence[Attribute]) -> None:
    """The declared result type must equal the type the op's rule infers."""
    if result != expected:
        shown = ", ".join(str(t) for t in operands)
        raise ShapeError(f"result type {result} does not match {expected} inferred from {shown}")
