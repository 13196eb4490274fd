"""The PyTorch importer: an FX graph of Core ATen ops (`torch.export`'s after
`run_decompositions()`, or one `aot_autograd` hands a backend) in, a df module out.

    imported = import_graph(graph_module, constants={0: weight})
    module = import_exported(torch.export.export(model, (x,)))

`importer` walks the graph, `call` holds what converters share (a node's arguments
by schema name, PyTorch's dtypes, errors naming the node and the user's line), and
`ops` has one module of converters per family of ATen ops. Needs `torch`.
"""

from dflow.frontend.torch.errors import TorchImportError
from dflow.frontend.torch.exported import export, import_exported
from dflow.frontend.torch.importer import Imported, check_graph, import_graph
from dflow.frontend.torch.ops import SUPPORTED_OPS

__all__ = [
    "SUPPORTED_OPS",
    "Imported",
    "TorchImportError",
    "check_graph",
    "export",
    "import_exported",
    "import_graph",
]
