"""The converters, one module per family of ATen ops; importing this package
registers them all (`CONVERTERS`)."""

from dflow.frontend.torch.call import CONVERTERS
from dflow.frontend.torch.ops import elementwise, indexing, nn, reductions, tensors

__all__ = ["SUPPORTED_OPS", "elementwise", "indexing", "nn", "reductions", "tensors"]

SUPPORTED_OPS: tuple[str, ...] = tuple(sorted(CONVERTERS))
"""Every ATen overload the importer converts (`aten.relu.default`, ...)."""
