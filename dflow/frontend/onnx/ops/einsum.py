"""ONNX's `Einsum`, composed: each operand's repeated labels taken on their diagonal
(a gather of the flattened pair), labels that no later operand and not the output
use summed away, then the operands contracted two at a time as one batched
`df.matmul` each (batch labels, the left's own, the contracted, the right's own),
and the result transposed to the output's order. `...` stands for the broadcast
axes, aligned from the right across the operands as NumPy's `einsum` does; without
`->` the output is the labels used once, in alphabetical order (after `...`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from dflow.dialects import df
from dflow.frontend.builder import Tensor
from dflow.frontend.onnx.graph import Node, converter
from dflow.frontend.onnx.ops.nn import numpy_matmul

BROADCAST_LABELS = "".join(chr(0x3B1 + i) for i in range(24))
"""The labels `...` is spelt as: Greek letters, which no ONNX equation uses."""

Labelled = tuple[Tensor, str]
"""An operand with one label per axis."""


def _terms(node: Node, equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """The labels of each operand and of the output, `...` spelt out as
    `BROADCAST_LABELS` (the broadcast axes, aligned from the right)."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        raise node.error(f"equation {equation!r} names {len(terms)} operands, {len(ranks)} given")
    owns = [rank - len(term.replace("...", "")) for term, rank in zip(terms, ranks, strict=True)]
    spread = max((own for own, term in zip(owns, terms, strict=True) if "..." in term), default=0)
    broadcast = BROADCAST_LABELS[:spread]
    spelt = [
        term.replace("...", broadcast[spread - own :])
        for term, own in zip(terms, owns, strict=True)
    ]
    for term, rank in zip(spelt, ranks, strict=True):
        if len(term) != rank or (term and not term.isalpha()):
            raise node.error(f"term {term!r} of {equation!r} does not fit a rank-{rank} operand")
    if not arrow:
        counts = Counter("".join(spelt))
        own = sorted(c for c in counts if counts[c] == 1 and c not in broadcast)
        output = broadcast + "".join(own)
    return spelt, output.replace("...", broadcast)


def _diagonal(node: Node, x: Tensor, labels: str) -> Labelled:
    """`x` with each repeated label taken on its diagonal (once per label)."""
    while (repeated := next((c for c in labels if labels.count(c) > 1), None)) is not None:
        first, second = (i for i, c in enumerate(labels) if c == repeated)
        rest = [i for i in range(len(labels)) if i not in (first, second)]
        x = x.transpose([*rest, first, second])
        n = x.shape[-1]
        if x.shape[-2] != n:
            raise node.error(f"label {repeated!r} has sizes {x.shape[-2]} and {n}")
        flat = x.reshape((*x.shape[:-2], n * n))
        diagonal = x.graph.constant(np.arange(n, dtype=np.int64) * (n + 1))
        x = x.graph.emit(df.GatherOp(flat.value, diagonal.value, len(rest)))
        labels = "".join(labels[i] for i in rest) + repeated
    return x, labels


def _keep(x: Tensor, labels: str, needed: str) -> Labelled:
    """`x` summed over the labels not `needed`."""
    axes = [i for i, c in enumerate(labels) if c not in needed]
    if not axes:
        return x, labels
    return x.sum(axes), "".join(c for c in labels if c in needed)


def _arranged(x: Tensor, labels: str, order: str, sizes: dict[str, int]) -> Tensor:
    """`x` transposed to `order` and broadcast to the labels' full sizes."""
    perm = [labels.index(c) for c in order]
    if perm != list(range(len(perm))):
        x = x.transpose(perm)
    full = tuple(sizes[c] for c in order)
    return x.broadcast_to(full) if x.shape != full else x


def _contract(node: Node, a: Labelled, b: Labelled, needed: str) -> Labelled:
    """The product of two operands over their shared labels that are not `needed`
    (by the output or a later operand), as one batched matmul."""
    (x, xl), (y, yl) = a, b
    sizes = {c: max(x.shape[xl.index(c)] if c in xl else 1, y.shape[yl.index(c)] if c in yl else 1)
             for c in xl + yl}  # fmt: skip
    batch = "".join(c for c in xl if c in yl and c in needed)
    summed = "".join(c for c in xl if c in yl and c not in needed)
    left = "".join(c for c in xl if c not in yl)
    right = "".join(c for c in yl if c not in xl)
    x = _arranged(x, xl, batch + left + summed, sizes)
    y = _arranged(y, yl, batch + summed + right, sizes)
    count = [math.prod(sizes[c] for c in group) for group in (batch, left, summed, right)]
    product = numpy_matmul(
        node, x.reshape((count[0], count[1], count[2])), y.reshape((count[0], count[2], count[3]))
    )
    labels = batch + left + right
    return product.reshape(tuple(sizes[c] for c in labels)), labels


@converter("Einsum", attributes={"equation"})
def einsum(node: Node) -> list[Tensor]:
    operands = [node.input(i) for i in range(len(node.proto.input))]
    terms, output = _terms(node, node.string("equation", ""), [len(t.shape) for t in operands])
    labelled = [_diagonal(node, x, labels) for x, labels in zip(operands, terms, strict=True)]
    later = ["".join(labels for _, labels in labelled[i + 1 :]) for i in range(len(labelled))]
    result = _keep(*labelled[0], later[0] + output)
    for index in range(1, len(labelled)):
        operand = _keep(*labelled[index], result[1] + later[index] + output)
        result = _contract(node, result, operand, later[index] + output)
    x, labels = _keep(*result, output)
    if sorted(labels) != sorted(output):
        raise node.error(f"output labels {output!r} are not among the operands' ({labels!r})")
    perm = [labels.index(c) for c in output]
    return [x.transpose(perm) if perm != list(range(len(perm))) else x]
