"""Shapes as dflow spells them in messages (`4x8`, `scalar`): one spelling for the
compiler's errors and for what the command line prints of arrays, importable without
the compiler."""

from __future__ import annotations

from collections.abc import Sequence


def format_shape(shape: Sequence[int]) -> str:
    """Print a shape as in a tensor type: `4x8`, or `scalar` for rank 0."""
    return "x".join(str(d) for d in shape) if shape else "scalar"
