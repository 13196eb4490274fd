"""Architectures defined here with PyTorch's own layers, not taken from torchvision.

PyPI's torchvision is built against a CUDA torch, and `import torchvision` fails
(`RuntimeError: operator torchvision::nms does not exist`) beside the CPU torch wheel a
fresh `pip install -e '.[dev]'` takes; torchvision's model code, on the other hand, is
plain `torch.nn`. So ResNet-18 is written out here as torchvision 0.2x defines it
(`torchvision.models.resnet18()`: a 7x7 stride-2 stem, batch norm, ReLU, a 3x3 max pool,
four stages of two BasicBlocks at 64/128/256/512 channels, the stride-2 blocks with a
1x1 convolution + batch norm on the shortcut, global average pool, a 1000-way Linear),
with torchvision's initialization (Kaiming-normal convolutions, batch norm weight 1 and
bias 0). The tests and `bench/` use it with random weights.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, added to the input (or to its 1x1
    projection when the block changes the shape), then ReLU."""

    def __init__(self, inputs: int, outputs: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.downsample: nn.Module | None = None
        if stride != 1 or inputs != outputs:
            self.downsample = nn.Sequential(
                nn.Conv2d(inputs, outputs, 1, stride, bias=False), nn.BatchNorm2d(outputs)
            )

    def forward(self, x: Any) -> Any:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    """torchvision's `resnet18()` (the layer names match its state dict)."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, padding=1)
        self.layer1 = _stage(64, 64, 1)
        self.layer2 = _stage(64, 128, 2)
        self.layer3 = _stage(128, 256, 2)
        self.layer4 = _stage(256, 512, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, classes)
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.constant_(module.weight, 1)
                nn.init.constant_(module.bias, 0)

    def forward(self, x: Any) -> Any:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _stage(inputs: int, outputs: int, stride: int) -> nn.Sequential:
    return nn.Sequential(BasicBlock(inputs, outputs, stride), BasicBlock(outputs, outputs, 1))


def resnet18() -> ResNet18:
    """ResNet-18 with random weights, as `torchvision.models.resnet18()` makes it."""
    return ResNet18()
