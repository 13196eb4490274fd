"""torchvision and timm beside the CPU build of torch.

PyPI's torchvision wheel is built against CUDA torch: its C++ operators (`nms`,
`roi_align`, ...) do not load beside the CPU torch, and importing the package fails
where it registers their meta and autograd kernels. The classification models are
plain Python on torch's own operators, which is all the zoo needs; so the two
modules that register kernels for the C++ operators are stood in for by empty ones
before the import (the detection ops stay unusable; nothing here calls them). timm
imports torchvision, so it needs the same.
"""

from __future__ import annotations

import sys
import types
import warnings
from typing import Any

_KERNEL_REGISTRATIONS = ("torchvision._meta_registrations", "torchvision._autograd_registrations")


def torchvision() -> Any:
    """The `torchvision` package, importable beside a CPU torch."""
    for name in _KERNEL_REGISTRATIONS:
        sys.modules.setdefault(name, types.ModuleType(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Failed to load image Python extension"
        import torchvision as package  # noqa: PLC0415

    return package


def timm() -> Any:
    """The `timm` package (it imports torchvision)."""
    torchvision()
    import timm as package  # noqa: PLC0415

    return package
