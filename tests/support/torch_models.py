"""Architectures defined here with PyTorch's own layers, not taken from torchvision.

PyPI's torchvision is built against a CUDA torch, and `import torchvision` fails
(`RuntimeError: operator torchvision::nms does not exist`) beside the CPU torch wheel a
fresh `pip install -e '.[dev]'` takes; torchvision's model code, on the other hand, is
plain `torch.nn`. So ResNet-18 is written out here as torchvision 0.2x defines it
(`torchvision.models.resnet18()`: a 7x7 stride-2 stem, batch norm, ReLU, a 3x3 max pool,
four stages of two BasicBlocks at 64/128/256/512 channels, the stride-2 blocks with a
1x1 convolution + batch norm on the shortcut, global average pool, a 1000-way Linear),
with torchvision's initialization (Kaiming-normal convolutions, batch norm weight 1 and
bias 0); MobileNet-V2 and EfficientNet-B0 likewise, as torchvision's `mobilenet_v2()`
and `efficientnet_b0()` stack their layers (PyTorch's default initialization). The
tests and `bench/` use them with random weights.
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


def _conv_bn(inputs: int, outputs: int, kernel: int, stride: int, groups: int, act: Any) -> Any:
    """A convolution ("same" padding, no bias), batch norm and an activation (or none)."""
    layers: list[nn.Module] = [
        nn.Conv2d(inputs, outputs, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(outputs),
    ]
    return nn.Sequential(*layers, *([act()] if act is not None else []))


class InvertedResidual(nn.Module):
    """MobileNet-V2's block: a 1x1 expansion (unless the ratio is 1), a depthwise 3x3,
    a linear 1x1 projection, added to the input when the shape is kept."""

    def __init__(self, inputs: int, outputs: int, stride: int, ratio: int) -> None:
        super().__init__()
        hidden = inputs * ratio
        layers = [] if ratio == 1 else [_conv_bn(inputs, hidden, 1, 1, 1, nn.ReLU6)]
        layers += [
            _conv_bn(hidden, hidden, 3, stride, hidden, nn.ReLU6),
            _conv_bn(hidden, outputs, 1, 1, 1, None),
        ]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and inputs == outputs

    def forward(self, x: Any) -> Any:
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    """torchvision's `mobilenet_v2()` (width 1.0): 17 inverted residual blocks."""

    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1))  # fmt: skip
    """(expansion, channels, blocks, first stride) per stage."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = [_conv_bn(3, 32, 3, 2, 1, nn.ReLU6)]
        channels = 32
        for ratio, outputs, count, stride in self.SETTINGS:
            for index in range(count):
                layers.append(
                    InvertedResidual(channels, outputs, stride if index == 0 else 1, ratio)
                )
                channels = outputs
        layers.append(_conv_bn(channels, 1280, 1, 1, 1, nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x: Any) -> Any:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


class SqueezeExcitation(nn.Module):
    """EfficientNet's channel attention: the pooled channels through two 1x1
    convolutions (SiLU, then sigmoid) scale the input."""

    def __init__(self, channels: int, squeezed: int) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(channels, squeezed, 1), nn.Conv2d(squeezed, channels, 1)

    def forward(self, x: Any) -> Any:
        scale = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(nn.functional.silu(self.fc1(scale))))


class MBConv(nn.Module):
    """EfficientNet's block: expansion, depthwise k x k, squeeze-excitation, projection,
    and the residual where the shape is kept (stochastic depth is off in eval)."""

    def __init__(self, inputs: int, outputs: int, kernel: int, stride: int, ratio: int) -> None:
        super().__init__()
        hidden = inputs * ratio
        layers = [] if ratio == 1 else [_conv_bn(inputs, hidden, 1, 1, 1, nn.SiLU)]
        layers += [
            _conv_bn(hidden, hidden, kernel, stride, hidden, nn.SiLU),
            SqueezeExcitation(hidden, max(1, inputs // 4)),
            _conv_bn(hidden, outputs, 1, 1, 1, None),
        ]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and inputs == outputs

    def forward(self, x: Any) -> Any:
        return x + self.block(x) if self.residual else self.block(x)


class EfficientNetB0(nn.Module):
    """torchvision's `efficientnet_b0()`: 16 MBConv blocks with squeeze-excitation."""

    SETTINGS = ((1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
                (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
                (6, 3, 1, 192, 320, 1))  # fmt: skip
    """(expansion, kernel, first stride, inputs, outputs, blocks) per stage."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = [_conv_bn(3, 32, 3, 2, 1, nn.SiLU)]
        for ratio, kernel, stride, inputs, outputs, count in self.SETTINGS:
            for index in range(count):
                first = index == 0
                layers.append(
                    MBConv(
                        inputs if first else outputs, outputs, kernel, stride if first else 1, ratio
                    )
                )
        layers.append(_conv_bn(320, 1280, 1, 1, 1, nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x: Any) -> Any:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))
