"""Small PyTorch models printed as df modules by `dflow.export`, for the lit tests
of the PyTorch importer (`torch_export.mlir`): `python torch_models.py NAME`."""

import sys

import torch

import dflow


class ConvBnRelu(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.max_pool2d(self.bn(self.conv(x)).relu(), 2, ceil_mode=True)


class Attention(torch.nn.Module):
    def forward(self, q: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, q, q)


MODELS = {
    "mlp": (lambda: torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()), (2, 4)),
    "conv_bn_relu": (ConvBnRelu, (1, 3, 5, 5)),
    "attention": (Attention, (1, 2, 4, 8)),
}

torch.manual_seed(0)
build, shape = MODELS[sys.argv[1]]
print(dflow.export(build().eval(), (torch.zeros(shape),)))
