"""A builder graph that folds as it goes, for the importers (ONNX, PyTorch).

`FoldingGraph.emit` folds an op whose operands are all constants into a
`df.constant` (by the ops' reference semantics, under `FoldPolicy`), so the shape
arithmetic exporters write (ONNX's `Shape` → `Gather` → `Concat` → `Reshape`) and
what a frozen model computes from its parameters alone (a batch norm's scale and
shift) become constants while the model is imported.
"""

from __future__ import annotations

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.traits import Pure

from dflow.dialects import df
from dflow.dialects.df.folding import fold_op
from dflow.frontend.builder import Graph, Tensor


class FoldingGraph(Graph):
    """A builder graph that folds constant ops as they are emitted."""

    def emit(self, op: Operation) -> Tensor:
        op.verify()
        folded = fold_op(op) if op.operands else None
        if folded is not None:
            op.drop_all_references()
            op = df.ConstantOp(folded[0])  # pyright: ignore[reportArgumentType]
        self.block.add_op(op)
        return Tensor(self, op.results[0])

    def function(self) -> FuncOp:
        """The function built (a copy, as `Graph.function` makes it) without the pure
        ops nothing uses (the constants folding left behind), last first."""
        function = super().function()
        block = function.body.block
        for op in reversed(list(block.ops)):
            if op.has_trait(Pure) and all(not result.uses for result in op.results):
                block.erase_op(op)
        return function
