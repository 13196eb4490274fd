"""Models exported at test time by `torch.onnx.export` (TorchScript's exporter, a
symbolic batch axis, the input named `input.1` as PyTorch names it) through dflow,
compiled and compared with ONNX Runtime (one thread) and with PyTorch itself: an MLP
at opsets 11, 13 and 17, a CNN with its BatchNorm kept (a grouped convolution, both
pools, `ceil_mode`), torchvision's ResNet-18 (`tests/support/vision.py`) with
random weights; a small language model's input layer, its token ids fed at run time.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from numpy.typing import NDArray
from onnx import ModelProto
from onnx_models import assert_close, batch_input, onnx_runtime
from optional import require

import dflow

torch = require("torch", "to export models to ONNX (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")
Array = NDArray[Any]


def export(module: Any, shape: Sequence[int], opset: int, fold: bool = True) -> ModelProto:
    """`module` exported by TorchScript's exporter with a symbolic batch axis."""
    module.eval()
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (torch.zeros(*shape),),
            buffer,
            dynamo=False,
            opset_version=opset,
            input_names=["input.1"],
            output_names=["logits"],
            dynamic_axes={"input.1": {0: "batch"}, "logits": {0: "batch"}},
            do_constant_folding=fold,
        )
    return onnx.load_from_string(buffer.getvalue())


class SmallCnn(torch.nn.Module):
    """Conv, BatchNorm, both pools, flatten, Linear, LogSoftmax."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(6, 16, 5, groups=2)
        self.norm = torch.nn.BatchNorm2d(16)
        self.dense = torch.nn.Linear(16 * 5 * 5, 10)
        with torch.no_grad():  # statistics a trained network would have, not 0 and 1
            self.norm.running_mean.uniform_(-0.5, 0.5)
            self.norm.running_var.uniform_(0.5, 2.0)

    def forward(self, x: Any) -> Any:
        functional = torch.nn.functional
        x = functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = functional.avg_pool2d(torch.relu(self.norm(self.conv2(x))), 2, ceil_mode=True)
        return torch.log_softmax(self.dense(torch.flatten(x, 1)), -1)


def small_mlp() -> Any:
    nn = torch.nn
    return nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 16), nn.GELU(), nn.Softmax(-1))


def check_exported(module: Any, model: ModelProto, x: Array) -> None:
    """dflow compiled, fed by the ONNX name `input.1`, against ONNX Runtime and
    against PyTorch."""
    (expected,) = onnx_runtime(model, {"input.1": x})
    with torch.no_grad():
        eager = module(torch.from_numpy(x)).numpy()
    program = dflow.compile(model, shapes={"input.1": x.shape})
    actual = program(**{"input.1": x})
    assert_close(actual, expected)
    assert_close(actual, eager)


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_exported_mlp(opset: int) -> None:
    torch.manual_seed(opset)
    module = small_mlp()
    check_exported(module, export(module, (3, 20), opset), batch_input((5, 20)))


@pytest.mark.parametrize("opset", [11, 17])
def test_exported_cnn_with_its_batch_norm(opset: int) -> None:
    torch.manual_seed(0)
    module = SmallCnn()
    model = export(module, (1, 1, 28, 28), opset, fold=False)
    assert "BatchNormalization" in {node.op_type for node in model.graph.node}
    check_exported(module, model, batch_input((3, 1, 28, 28), seed=opset))


def test_exported_resnet18() -> None:
    from vision import torchvision  # noqa: PLC0415 (imports torch: after the skip above)

    torch.manual_seed(0)
    module = torchvision().models.resnet18()
    model = export(module, (1, 3, 224, 224), 17)
    check_exported(module, model, batch_input((1, 3, 224, 224)))


class TinyLanguageModel(torch.nn.Module):
    """What a language model's input layer exports: token and position embeddings
    (`Gather`, the token ids a graph input), LayerNorm, a head, and the logits of
    chosen tokens picked by `torch.gather` (`GatherElements`, also fed)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = torch.nn.Embedding(50, 16)
        self.positions = torch.nn.Embedding(8, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.head = torch.nn.Linear(16, 50)

    def forward(self, ids: Any, picks: Any) -> Any:
        positions = torch.arange(ids.shape[1])
        hidden = self.norm(self.tokens(ids) + self.positions(positions))
        return torch.gather(self.head(torch.nn.functional.gelu(hidden)), 2, picks)


def test_exported_embeddings_with_token_ids_fed_at_run_time() -> None:
    torch.manual_seed(0)
    module = TinyLanguageModel().eval()
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 50, (2, 8))
    ids[0, :3] = 7  # a repeated token
    picks = rng.integers(-50, 50, (2, 8, 3))
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, (torch.from_numpy(ids), torch.from_numpy(picks % 50)), buffer, dynamo=False,
            opset_version=17, input_names=["ids", "picks"], output_names=["chosen"],
        )  # fmt: skip
    model = onnx.load_from_string(buffer.getvalue())
    assert {"Gather", "GatherElements", "LayerNormalization"} <= {
        n.op_type for n in model.graph.node
    }
    picks %= 50  # ONNX Runtime refuses negative GatherElements indices; dflow takes them
    (expected,) = onnx_runtime(model, {"ids": ids, "picks": picks})
    with torch.no_grad():
        eager = module(torch.from_numpy(ids), torch.from_numpy(picks)).numpy()
    program = dflow.compile(model)
    assert_close(program(ids=ids, picks=picks), expected)
    assert_close(program(ids=ids, picks=picks - 50), eager)  # negative: from the end
    ids[1, 2] = 50
    with pytest.raises(dflow.DflowError, match=r"df\.gather: index 50 is out of range"):
        program(ids=ids, picks=picks)


def test_a_symbolic_batch_is_compiled_per_shape_of_the_feeds() -> None:
    """No `shapes`: each new batch size compiles the model for it on its call (as
    `dflow.jit` retraces); a size seen before reuses its program."""
    torch.manual_seed(1)
    module = small_mlp()
    model = export(module, (3, 20), 17)
    program = dflow.compile(model)
    for batch in (2, 5, 2):
        x = batch_input((batch, 20), seed=batch)
        (expected,) = onnx_runtime(model, {"input.1": x})
        assert_close(program(x), expected)
        assert_close(program(**{"input.1": x}), expected)
    assert sorted(program.programs) == [((2, 20),), ((5, 20),)]  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(dflow.DflowError, match=r"missing: input\.1"):
        program()


def test_dflow_run_takes_a_symbolic_batch_from_the_feeds(tmp_path: Any) -> None:
    """`dflow run model.onnx --inputs x.npz` with no `--shape`: the shapes of the feeds."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    torch.manual_seed(2)
    model = export(small_mlp(), (3, 20), 17)
    onnx.save(model, tmp_path / "mlp.onnx")
    for batch, key in ((4, "input.1"), (7, "arg0")):
        x = batch_input((batch, 20), seed=batch)
        np.savez(tmp_path / "in.npz", **{key: x})
        done = subprocess.run(
            [sys.executable, "-m", "dflow", "run", "mlp.onnx", "--inputs", "in.npz", "--output",
             "out.npz"], cwd=tmp_path, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (expected,) = onnx_runtime(model, {"input.1": x})
        assert_close(np.load(tmp_path / "out.npz")["out0"], expected)
