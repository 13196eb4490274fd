"""The project's model zoo: architectures users bring, built with random weights (seed
0, no download) and exported by `torch.onnx.export` (TorchScript's exporter, opset 17,
static shapes), for `tests/test_zoo.py` (a fast subset in CI) and `bench/zoo.py` (all).

- every torchvision classification model of at most 30 M parameters (`TORCHVISION`:
  40 of them, from SqueezeNet to DenseNet-161, ResNets, RegNets, MnasNets,
  MobileNet-V2/V3, EfficientNet-B0 to B4 and V2-S, GoogLeNet, Inception-V3, ConvNeXt-T,
  Swin-T), torchvision's own definitions (`vision.py` imports it beside the CPU
  torch), batch 1, 224x224 (Inception-V3: 299x299);
- timm's ViT-Tiny, DeiT-Tiny, ConvNeXt-Atto, EfficientNet-B0 and MobileNet-V3-Small;
- transformers' BERT, DistilBERT, GPT-2, T5's encoder and ViT from small configs (2
  layers, width 32), a batch of 2 sequences of 16 tokens (ViT: 2 images of 32x32);
- an LSTM and a GRU layer (2 layers, bidirectional) over 16 steps.

Each entry names its family, builds its `nn.Module` (eval mode) and draws its inputs
by ONNX input name.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import torch
import vision

Array = np.ndarray[Any, Any]
VOCABULARY = 100


class LastHidden(torch.nn.Module):
    """A transformers model's last hidden state from one input (its keyword `key`)."""

    def __init__(self, model: Any, key: str = "input_ids") -> None:
        super().__init__()
        self.model, self.key = model, key

    def forward(self, x: Any) -> Any:
        return self.model(**{self.key: x}).last_hidden_state


class Recurrent(torch.nn.Module):
    """A recurrent layer's output sequence."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.layer = getattr(torch.nn, kind)(32, 64, num_layers=2, bidirectional=True)

    def forward(self, x: Any) -> Any:
        return self.layer(x)[0]


def _transformers() -> Any:
    vision.torchvision()  # transformers' models import torchvision when it is installed
    import transformers  # noqa: PLC0415 (an optional package: only its models need it)

    return transformers


def _bert() -> Any:
    t = _transformers()
    config = t.BertConfig(
        vocab_size=VOCABULARY, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64,
    )  # fmt: skip
    return LastHidden(t.BertModel(config))


def _distilbert() -> Any:
    t = _transformers()
    config = t.DistilBertConfig(
        vocab_size=VOCABULARY, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
        max_position_embeddings=64,
    )  # fmt: skip
    return LastHidden(t.DistilBertModel(config))


def _gpt2() -> Any:
    t = _transformers()
    config = t.GPT2Config(
        vocab_size=VOCABULARY, n_embd=32, n_layer=2, n_head=2, n_positions=64,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    return LastHidden(t.GPT2Model(config))


def _t5_encoder() -> Any:
    t = _transformers()
    config = t.T5Config(
        vocab_size=VOCABULARY, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2
    )
    return LastHidden(t.T5EncoderModel(config))


def _vit() -> Any:
    t = _transformers()
    config = t.ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        image_size=32, patch_size=8,
    )  # fmt: skip
    return LastHidden(t.ViTModel(config), "pixel_values")


def _image(shape: tuple[int, ...]) -> Callable[[np.random.Generator], Array]:
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def _tokens(rng: np.random.Generator) -> Array:
    return rng.integers(0, VOCABULARY, (2, 16))


@dataclass(frozen=True)
class ZooModel:
    name: str
    family: str
    build: Callable[[], Any]
    draw: Callable[[np.random.Generator], Array]
    """The input, drawn from a generator (fed as `x`)."""

    def module(self) -> Any:
        torch.manual_seed(0)
        return self.build().eval()

    def input(self, seed: int = 0) -> Array:
        return self.draw(np.random.default_rng(seed))

    def export(self, module: Any, example: Array | None = None) -> onnx.ModelProto:
        """`module` exported at opset 17 with its input named `x`, output `y`, traced
        on `example` (by default the model's input)."""
        example = self.input() if example is None else example
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module, (torch.from_numpy(example),), buffer, dynamo=False,
                opset_version=17, input_names=["x"], output_names=["y"],
            )  # fmt: skip
        return onnx.load_from_string(buffer.getvalue())

    def half(self, seed: int = 0) -> tuple[Any, Array]:
        """The model converted to float16 (`module.half()`) and its input in float16
        (token ids stay integers)."""
        x = self.input(seed)
        return self.module().half(), x.astype(np.float16) if x.dtype == np.float32 else x

    def eager(self, module: Any, x: Array) -> Array:
        with torch.no_grad():
            return module(torch.from_numpy(x)).numpy()


TORCHVISION = (
    "squeezenet1_0", "squeezenet1_1", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0",
    "mnasnet1_3", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
    "regnet_y_400mf", "regnet_x_400mf", "regnet_y_800mf", "regnet_x_800mf", "regnet_x_1_6gf",
    "regnet_y_1_6gf", "regnet_x_3_2gf", "regnet_y_3_2gf", "efficientnet_b0", "efficientnet_b1",
    "efficientnet_b2", "efficientnet_b3", "efficientnet_b4", "efficientnet_v2_s", "resnet18",
    "resnet34", "resnet50", "resnext50_32x4d", "densenet121", "densenet169", "densenet201",
    "densenet161", "googlenet", "inception_v3", "convnext_tiny", "swin_t", "swin_v2_t",
)  # fmt: skip
"""torchvision's classification models of at most 30 M parameters (the largest:
DenseNet-161, 28.7 M; EfficientNet-B5 has 30.4 M)."""

TIMM = {
    "vit_tiny": "vit_tiny_patch16_224",
    "deit_tiny": "deit_tiny_patch16_224",
    "convnext_atto": "convnext_atto",
    "timm_efficientnet_b0": "efficientnet_b0",
    "mobilenetv3_small": "mobilenetv3_small_100",
}
"""timm's small models, by zoo name (timm's own name as the value)."""


def _torchvision(name: str) -> Callable[[], Any]:
    return lambda: vision.torchvision().models.get_model(name)


def _timm(name: str) -> Callable[[], Any]:
    return lambda: vision.timm().create_model(name, pretrained=False)


def _side(name: str) -> int:
    return 299 if name == "inception_v3" else 224


MODELS: tuple[ZooModel, ...] = (
    *(
        ZooModel(name, "torchvision", _torchvision(name), _image((1, 3, _side(name), _side(name))))
        for name in TORCHVISION
    ),
    *(ZooModel(name, "timm", _timm(timm), _image((1, 3, 224, 224))) for name, timm in TIMM.items()),
    ZooModel("bert", "transformers", _bert, _tokens),
    ZooModel("distilbert", "transformers", _distilbert, _tokens),
    ZooModel("gpt2", "transformers", _gpt2, _tokens),
    ZooModel("t5_encoder", "transformers", _t5_encoder, _tokens),
    ZooModel("vit", "transformers", _vit, _image((2, 3, 32, 32))),
    ZooModel("lstm", "recurrent", lambda: Recurrent("LSTM"), _image((16, 2, 32))),
    ZooModel("gru", "recurrent", lambda: Recurrent("GRU"), _image((16, 2, 32))),
)
"""Every model of the zoo."""

BY_NAME = {model.name: model for model in MODELS}


HALF_STEPS = 4
"""The tolerance of a float16 model, in float16 units in the last place at the
largest magnitude: an f32 result on the other side of a tie than ONNX Runtime's
rounds one step away, and the step propagates (measured: 1 to 2 steps)."""


def assert_matches_half(actual: Array, expected: Array) -> None:
    """Within `HALF_STEPS` float16 steps at the largest magnitude of `expected`."""
    assert actual.dtype == expected.dtype == np.float16 and actual.shape == expected.shape
    step = float(np.spacing(np.abs(expected).max()))
    difference = float(np.abs(actual.astype(np.float32) - expected.astype(np.float32)).max())
    assert difference <= HALF_STEPS * step, f"{difference} is over {HALF_STEPS} steps of {step}"


def assert_matches(actual: Array, expected: Array) -> None:
    """The zoo's tolerance: rtol 1e-3, atol 1e-4 of the largest magnitude."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-4 * scale)
