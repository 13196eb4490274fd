"""The importer's one error: a model dflow cannot import, said in one line."""

from __future__ import annotations


class OnnxImportError(ValueError):
    """A model that is malformed, unsafe or uses what dflow does not import. The
    message is one line; where a node is at fault it starts with the node's name, op
    type and opset (`node 'conv1' (Conv, opset 17): ...`)."""

    def __init__(self, message: str):
        super().__init__(" ".join(message.split()))
        self.message = " ".join(message.split())
