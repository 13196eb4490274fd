"""The converters of ONNX ops to df ops, one module per family; importing this
package registers them all (`graph.CONVERTERS`)."""

from dflow.frontend.onnx.graph import CONVERTERS
from dflow.frontend.onnx.ops import (
    einsum,
    elementwise,
    nd_indexing,
    nn,
    quantization,
    recurrent,
    reductions,
    resize,
    tensors,
)

SUPPORTED_OPS: tuple[str, ...] = tuple(sorted(CONVERTERS))
"""The ONNX op types dflow imports."""

__all__ = [
    "SUPPORTED_OPS",
    "einsum",
    "elementwise",
    "nd_indexing",
    "nn",
    "quantization",
    "recurrent",
    "reductions",
    "resize",
    "tensors",
]
