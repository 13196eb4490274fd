"""The PyTorch importer's one error: a graph dflow cannot import, said in one line."""

from __future__ import annotations


class TorchImportError(ValueError):
    """An FX graph holding what dflow does not import. The message is one line; where
    a node is at fault it names the ATen op and, where PyTorch recorded it, the line
    of the user's model that made the node (`aten.foo.default at model.py:12 (y =
    foo(x)): ...`)."""

    def __init__(self, message: str):
        self.message = " ".join(message.split())
        super().__init__(self.message)
