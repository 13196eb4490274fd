"""dflow: an MLIR-style multi-level compiler for tensor dataflow graphs, on xDSL.

From Python:

    import dflow

    program = dflow.compile("model.mlir")          # or a dflow.Graph, a module, text
    result = program(x, w)                           # NumPy arrays in and out

    @dflow.jit
    def loss(w, x, y):
        return dflow.reduce_mean(dflow.square(x @ w - y))

    gradient = dflow.grad(loss)(w, x, y)            # through df-autodiff, compiled

    module = dflow.export(torch_model, (x,))         # a PyTorch model as a df module
    fast = torch.compile(torch_model, backend="dflow")

The tensor operations (`dflow.relu`, `dflow.matmul`, `dflow.softmax`, ... one per
`df` op) build graphs and trace jitted functions. Everything dflow installs lives
in this one package, in layers that import downward only (see
`docs/architecture.md`): `dialects`, `analysis` and `interpreters`, `transforms` and
`lowering`, `backend`, `driver`; `runtime` runs emitted modules and imports no
compiler code.

Importing `dflow` loads none of this: each name imports its module on first use
(PEP 562 `__getattr__`), so that `dflow --help` and a cached `dflow run` do not pay
for xDSL and the compiler.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from dflow.driver.errors import (
        DflowError,
    )
    from dflow.driver.frontdoors.api import (
        FeedError,
        Program,
        Signature,
        TensorSpec,
        compile,
    )
    from dflow.driver.frontdoors.jit import (
        grad,
        jit,
        value_and_grad,
    )
    from dflow.frontend.builder import (
        Graph,
        Tensor,
    )
    from dflow.frontend.errors import (
        TraceError,
    )
    from dflow.frontend.ops import (
        abs,
        add,
        addn,
        avg_pool2d,
        avg_pool2d_grad,
        broadcast_to,
        cast,
        ceil,
        concat,
        constant,
        conv2d,
        conv2d_grad_filter,
        conv2d_grad_input,
        cos,
        div,
        equal,
        erf,
        exp,
        floor,
        gather,
        gather_elements,
        greater,
        greater_equal,
        identity,
        layer_norm,
        less,
        less_equal,
        log,
        matmul,
        max_pool2d,
        max_pool2d_grad,
        max_pool2d_grad_indices,
        max_pool2d_indices,
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
        rem,
        reshape,
        round,
        rsqrt,
        scatter_add,
        select,
        sigmoid,
        sin,
        slice,
        softmax,
        sqrt,
        square,
        sub,
        tanh,
        transpose,
        where,
    )
    from dflow.frontend.torch.exported import (
        export,
    )

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
    "ceil",
    "compile",
    "concat",
    "constant",
    "conv2d",
    "conv2d_grad_filter",
    "conv2d_grad_input",
    "cos",
    "div",
    "equal",
    "erf",
    "exp",
    "export",
    "floor",
    "gather",
    "gather_elements",
    "grad",
    "greater",
    "greater_equal",
    "identity",
    "jit",
    "layer_norm",
    "less",
    "less_equal",
    "log",
    "matmul",
    "max_pool2d",
    "max_pool2d_grad",
    "max_pool2d_grad_indices",
    "max_pool2d_indices",
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
    "rem",
    "reshape",
    "round",
    "rsqrt",
    "scatter_add",
    "select",
    "sigmoid",
    "sin",
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
"""Every public name. Written out, not computed, because type checkers and linters
read it (and the `TYPE_CHECKING` imports above): tests/test_namespace.py checks the
two against each other and the tensor operations against the `df` dialect."""

_HOMES: dict[str, str] = {
    "DflowError": "dflow.driver.errors",
    "FeedError": "dflow.driver.frontdoors.api",
    "Graph": "dflow.frontend.builder",
    "Program": "dflow.driver.frontdoors.api",
    "Signature": "dflow.driver.frontdoors.api",
    "Tensor": "dflow.frontend.builder",
    "TensorSpec": "dflow.driver.frontdoors.api",
    "TraceError": "dflow.frontend.errors",
    "compile": "dflow.driver.frontdoors.api",
    "export": "dflow.frontend.torch.exported",
    "grad": "dflow.driver.frontdoors.jit",
    "jit": "dflow.driver.frontdoors.jit",
    "value_and_grad": "dflow.driver.frontdoors.jit",
}
"""The module of each public name that is not a tensor operation."""

_MODULES: dict[str, str] = {
    name: _HOMES.get(name, "dflow.frontend.ops") for name in __all__ if name != "__version__"
}
"""The module that defines each public name, imported when the name is first used:
the tensor operations (every other name of `__all__`) are those of `dflow.frontend.ops`."""


def __getattr__(name: str) -> Any:
    """`dflow.NAME`: imported from its module on first use, then kept here."""
    if name == "__version__":
        return _installed_version()
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'dflow' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def _installed_version() -> str:
    from importlib import metadata  # noqa: PLC0415 (it takes longer to import than dflow)

    try:
        return metadata.version("dflow")
    except metadata.PackageNotFoundError:  # a checkout that was not installed
        return "0+unknown"


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULES, "__version__"})
