"""The Python front end: the builder (`Graph`, `Tensor`) and dflow's tensor
operations as functions (`ops`), for graphs written by hand or traced by
`dflow.jit`."""

from dflow.frontend.builder import Graph, Tensor
from dflow.frontend.errors import TraceError
from dflow.frontend.ops import (
    addn,
    avg_pool2d,
    concat,
    conv2d,
    max_pool2d,
    select,
)

__all__ = [
    "Graph",
    "Tensor",
    "TraceError",
    "addn",
    "avg_pool2d",
    "concat",
    "conv2d",
    "max_pool2d",
    "select",
]
