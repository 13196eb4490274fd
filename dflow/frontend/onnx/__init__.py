"""The ONNX importer: a model file (or `onnx.ModelProto`) in, a df module out.

    module = import_model("resnet18.onnx", shapes={"input": (1, 3, 224, 224)})

`model` reads and checks the model as untrusted input, `importer` builds the
function, `graph` holds what converters share (folding as they emit, the node's
attributes and constant inputs), and `ops` has one module of converters per
family of ONNX ops. Needs the `onnx` package (`pip install 'dflow[onnx]'`).
"""

from dflow.frontend.onnx.errors import OnnxImportError
from dflow.frontend.onnx.importer import NAME_ATTRIBUTE, build_module, import_model
from dflow.frontend.onnx.model import Model, read_model
from dflow.frontend.onnx.ops import SUPPORTED_OPS

__all__ = [
    "NAME_ATTRIBUTE",
    "SUPPORTED_OPS",
    "Model",
    "OnnxImportError",
    "build_module",
    "import_model",
    "read_model",
]
