"""dflow: an MLIR-style multi-level compiler for tensor dataflow graphs, on xDSL.

From Python:

    import dflow

    program = dflow.compile("model.mlir")          # or a dflow.Graph, a module, text
    result = program(x, w)                           # NumPy arrays in and out

    @dflow.jit
    def loss(w, x, y):
        return dflow.reduce_mean(dflow.square(x @ w - y))

    gradient = dflow.grad(loss)(w, x, y)            # through df-autodiff, compiled

The tensor operations (`dflow.relu`, `dflow.matmul`, `dflow.softmax`, ... one per
`df` op) build graphs and trace jitted functions. Everything dflow installs lives
in this one package, in layers that import downward only (see
`docs/architecture.md`): `dialects`, `analysis` and `interpreters`, `transforms` and
`lowering`, `backend`, `driver`; `runtime` runs emitted modules and imports no
compiler code.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from dflow.driver.api import FeedError, Program, Signature, TensorSpec, compile
from dflow.driver.errors import DflowError
from dflow.driver.jit import grad, jit, value_and_grad
from dflow.frontend.builder import Graph, Tensor
from dflow.frontend.errors import TraceError
from dflow.frontend.ops import (
    abs,
    add,
    addn,
    avg_pool2d,
    avg_pool2d_grad,
    broadcast_to,
    cast,
    concat,
    constant,
    conv2d,
    conv2d_grad_filter,
    conv2d_grad_input,
    div,
    equal,
    erf,
    exp,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    log,
    matmul,
    max_pool2d,
    max_pool2d_grad,
    maximum,
    minimum,
    mul,
    neg,
    pow,
    reciprocal,
    reduce_max,
    reduce_mean,
    reduce_sum,
    relu,
    reshape,
    rsqrt,
    select,
    sigmoid,
    slice,
    softmax,
    sqrt,
    square,
    sub,
    tanh,
    transpose,
    where,
)

try:
    __version__ = _version("dflow")
except PackageNotFoundError:  # a checkout that was not installed
    __version__ = "0+unknown"

__all__ = [
    "DflowError",
    "FeedError",
    "Graph",
    "Program",
    "Signature",
    "Tensor",
    "TensorSpec",
    "TraceError",
    "__version__",
    "abs",
    "add",
    "addn",
    "avg_pool2d",
    "avg_pool2d_grad",
    "broadcast_to",
    "cast",
    "compile",
    "concat",
    "constant",
    "conv2d",
    "conv2d_grad_filter",
    "conv2d_grad_input",
    "div",
    "equal",
    "erf",
    "exp",
    "grad",
    "greater",
    "greater_equal",
    "identity",
    "jit",
    "less",
    "less_equal",
    "log",
    "matmul",
    "max_pool2d",
    "max_pool2d_grad",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "pow",
    "reciprocal",
    "reduce_max",
    "reduce_mean",
    "reduce_sum",
    "relu",
    "reshape",
    "rsqrt",
    "select",
    "sigmoid",
    "slice",
    "softmax",
    "sqrt",
    "square",
    "sub",
    "tanh",
    "transpose",
    "value_and_grad",
    "where",
]
