"""Architectures defined here with PyTorch's own layers, not taken from torchvision.

PyPI's torchvision is built against a CUDA torch, and `import torchvision` fails
(`RuntimeError: operator torchvision::nms does not exist`) beside the CPU torch wheel a
fresh `pip install -e '.[dev]'` takes; torchvision's model code, on the other hand, is
plain `torch.nn`. So ResNet-18 is written out here as torchvision 0.2x defines it
(`torchvision.models.resnet18()`: a 7x7 stride-2 stem, batch norm, ReLU, a 3x3 max pool,
four stages of two BasicBlocks at 64/128/256/512 channels, the stride-2 blocks with a
1x1 convolution + batch norm on the shortcut, global average pool, a 1000-way Linear),
with torchvision's initialization (Kaiming-normal convolutions, batch norm weight 1 and
bias 0); MobileNet-V2, EfficientNet-B0, SqueezeNet 1.1, ShuffleNet-V2 and DenseNet-121
likewise, as torchvision's `mobilenet_v2()`, `efficientnet_b0()`, `squeezenet1_1()`,
`shufflenet_v2_x1_0()` and `densenet121()` stack their layers (PyTorch's default
initialization). The
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


class Fire(nn.Module):
    """SqueezeNet's block: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated."""

    def __init__(self, inputs: int, squeezed: int, ones: int, threes: int) -> None:
        super().__init__()
        self.squeeze = nn.Conv2d(inputs, squeezed, 1)
        self.expand1x1 = nn.Conv2d(squeezed, ones, 1)
        self.expand3x3 = nn.Conv2d(squeezed, threes, 3, padding=1)

    def forward(self, x: Any) -> Any:
        x = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.expand1x1(x)), torch.relu(self.expand3x3(x))], 1)


def squeezenet1_1() -> nn.Module:
    """torchvision's `squeezenet1_1()`: ceil-mode pools, eight Fire blocks, a 1x1
    convolution classifier."""
    pool = lambda: nn.MaxPool2d(3, 2, ceil_mode=True)  # noqa: E731
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, 2), nn.ReLU(), pool(), Fire(64, 16, 64, 64), Fire(128, 16, 64, 64),
        pool(), Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), pool(),
        Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
        Fire(512, 64, 256, 256), nn.Dropout(0.5), nn.Conv2d(512, 1000, 1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    )  # fmt: skip


class ShuffleUnit(nn.Module):
    """ShuffleNet-V2's unit: half the channels through a 1x1-depthwise-1x1 branch (both
    halves when it strides), concatenated and shuffled between two groups."""

    def __init__(self, inputs: int, outputs: int, stride: int) -> None:
        super().__init__()
        half, self.stride = outputs // 2, stride
        if stride > 1:
            self.branch1 = nn.Sequential(
                _conv_bn(inputs, inputs, 3, stride, inputs, None),
                _conv_bn(inputs, half, 1, 1, 1, nn.ReLU),
            )
        self.branch2 = nn.Sequential(
            _conv_bn(inputs if stride > 1 else half, half, 1, 1, 1, nn.ReLU),
            _conv_bn(half, half, 3, stride, half, None),
            _conv_bn(half, half, 1, 1, 1, nn.ReLU),
        )

    def forward(self, x: Any) -> Any:
        if self.stride == 1:
            kept, changed = x.chunk(2, dim=1)
            out = torch.cat((kept, self.branch2(changed)), 1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), 1)
        n, c, h, w = out.shape
        return out.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous().view(n, c, h, w)


def shufflenet_v2_x1_0() -> nn.Module:
    """torchvision's `shufflenet_v2_x1_0()`: stages of 4, 8 and 4 units."""
    layers: list[nn.Module] = [_conv_bn(3, 24, 3, 2, 1, nn.ReLU), nn.MaxPool2d(3, 2, 1)]
    channels = 24
    for outputs, units in ((116, 4), (232, 8), (464, 4)):
        layers.append(ShuffleUnit(channels, outputs, 2))
        layers += [ShuffleUnit(outputs, outputs, 1) for _ in range(units - 1)]
        channels = outputs
    layers += [_conv_bn(channels, 1024, 1, 1, 1, nn.ReLU), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers, nn.Linear(1024, 1000))


class DenseLayer(nn.Module):
    """DenseNet's layer: batch norm, ReLU, 1x1 to 4·growth, batch norm, ReLU, 3x3 to
    growth, concatenated after its input."""

    def __init__(self, inputs: int, growth: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.BatchNorm2d(inputs), nn.ReLU(), nn.Conv2d(inputs, 4 * growth, 1, bias=False),
            nn.BatchNorm2d(4 * growth), nn.ReLU(),
            nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False),
        )  # fmt: skip

    def forward(self, x: Any) -> Any:
        return torch.cat([x, self.layers(x)], 1)


def densenet121() -> nn.Module:
    """torchvision's `densenet121()`: blocks of 6, 12, 24 and 16 layers (growth 32),
    halving transitions between them."""
    layers: list[nn.Module] = [_conv_bn(3, 64, 7, 2, 1, nn.ReLU), nn.MaxPool2d(3, 2, 1)]
    channels = 64
    for block, count in enumerate((6, 12, 24, 16)):
        for _ in range(count):
            layers.append(DenseLayer(channels, 32))
            channels += 32
        if block < 3:
            halve = nn.Conv2d(channels, channels // 2, 1, bias=False)
            layers += [nn.BatchNorm2d(channels), nn.ReLU(), halve, nn.AvgPool2d(2, 2)]
            channels //= 2
    layers += [nn.BatchNorm2d(channels), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers, nn.Linear(channels, 1000))
