"""The Python front end: a builder API for `df` functions."""

from dflow.frontend.builder import (
    Graph,
    Tensor,
    addn,
    avg_pool2d,
    concat,
    conv2d,
    max_pool2d,
    select,
)

__all__ = ["Graph", "Tensor", "addn", "avg_pool2d", "concat", "conv2d", "max_pool2d", "select"]
