"""The PyTorch importer (`dflow.frontend.torch`): small models exported by
`torch.export`, imported, compiled by dflow and compared with eager PyTorch (the
independent reference), op family by op family, with what users write: Python
numbers of other types than the tensor (`int32 * 2.5`), strided slices, size-1
axes, repeated and unused results, an input returned as it is; and the errors: an
op dflow lacks, named with the line of the model that made it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from optional import require

import dflow

torch = require("torch", "to export models (pip install -e '.[dev]')")
pytestmark = pytest.mark.usefixtures("module_cache")

from dflow.frontend.torch import (  # noqa: E402 (imports torch: after the skip)
    SUPPORTED_OPS,
    TorchImportError,
    import_exported,
)

F = torch.nn.functional


class Function(torch.nn.Module):
    """A module computing `function` of its inputs."""

    def __init__(self, function: Callable[..., Any]):
        super().__init__()
        self.function = function

    def forward(self, *inputs: Any) -> Any:
        return self.function(*inputs)


def _run(model: Any, *inputs: Any) -> tuple[Any, Any]:
    """dflow's results and eager PyTorch's, as tuples of arrays."""
    tensors = tuple(torch.from_numpy(np.asarray(x)) for x in inputs)
    module = import_exported(torch.export.export(model, tensors))
    actual = dflow.compile(module)(*inputs)
    actual = actual if isinstance(actual, tuple) else (actual,)
    with torch.no_grad():
        expected = model(*tensors)
    expected = expected if isinstance(expected, tuple) else (expected,)
    return actual, tuple(e.numpy() for e in expected)


def _matches(model: Any, *inputs: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    actual, expected = _run(model, *inputs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, e.dtype, a.shape, e.shape)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


RNG = np.random.default_rng(0)


def _x(*shape: int, dtype: Any = np.float32) -> Any:
    return RNG.standard_normal(shape).astype(dtype)


CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "int32_times_a_float": (lambda x: x * 2.5, (np.arange(6, dtype=np.int32).reshape(2, 3),)),
    "int32_true_division": (lambda x: x / 4, (np.arange(-6, 6, dtype=np.int32),)),
    "floor_division": (lambda x: torch.div(x, 4, rounding_mode="floor"), (np.arange(-6, 6),)),
    "int64_fmod_and_remainder": (
        lambda x: (torch.fmod(x, 4), torch.remainder(x, 4)),
        (np.arange(-6, 6),),
    ),
    "comparisons_and_where": (
        lambda x, y: (torch.where(x > y, x, y * 2), x == y, x.ne(0.5), (x <= 0) & (y > 0)),
        (_x(3, 4), _x(3, 4)),
    ),
    "activations": (
        lambda x: (
            F.gelu(x),
            F.gelu(x, approximate="tanh"),
            F.silu(x),
            F.hardswish(x),
            F.leaky_relu(x, 0.1),
            F.elu(x),
            torch.clamp(x, -0.5, 0.5),
            F.softplus(x),
        ),
        (_x(4, 5),),
    ),
    "unary_math": (
        lambda x: (
            x.exp(),
            x.abs().log1p(),
            x.sin(),
            x.cos(),
            x.tanh(),
            x.sigmoid(),
            x.abs().rsqrt(),
            x.sign(),
            x.floor(),
            x.round(),
            torch.erf(x),
            x.pow(3),
        ),
        (_x(3, 4),),
    ),
    "powers": (
        lambda x, y: (x.abs() ** y, 2.0**y, x**2, x.abs() ** 0.5, torch.rsub(x, 10, alpha=3)),
        (_x(3, 4), _x(3, 4)),
    ),
    "strided_slices_select_flip": (
        lambda x: (x[:, ::2], x[1:, -3:], x[..., 1], x.flip(0), x.narrow(1, 1, 2)),
        (_x(4, 5),),
    ),
    "slice_and_select_scatter": (
        lambda x, y: (
            torch.slice_scatter(x, y, 1, 1, 5, 2),
            torch.select_scatter(x, y[:, 0], 1, -1),
            torch.slice_scatter(x, x[:, :2] * 3, 1, 0, 2),
        ),
        (_x(3, 5), _x(3, 2)),
    ),
    "views_and_size_1_axes": (
        lambda x: (
            x.view(2, 1, 6).squeeze(1),
            x.unsqueeze(0).transpose(0, 2),
            x.t().reshape(-1),
            x.expand(2, 3, 4)[1],
            x.permute(1, 0).contiguous(),
        ),
        (_x(3, 4),),
    ),
    "cat_split_chunk_pad": (
        lambda x: (
            *torch.split(x, [1, 3], dim=1),
            torch.cat([x, x * 2], 0),
            *x.chunk(2, 0),
            F.pad(x, (1, 2, 0, 1), value=-1.0),
            F.pad(x, (-1, 0)),
        ),
        (_x(4, 4),),
    ),
    "reductions": (
        lambda x: (
            x.sum(1),
            x.mean((0, 1), keepdim=True),
            x.amax(0),
            x.min(1).values,
            x.var(1),
            torch.linalg.vector_norm(x, dim=1),
            (x > 0).any(1),
            (x > -3).all(),
            F.log_softmax(x, 1),
            F.softmax(x, 0),
        ),
        (_x(3, 5),),
    ),
    "int32_sums_to_int64": (lambda x: x.sum(0), (np.arange(12, dtype=np.int32).reshape(3, 4),)),
    "indexing": (
        lambda w, i: (
            F.embedding(i, w),
            w[i],
            w.index_select(0, i[0]),
            torch.gather(w, 1, i[:, :2] % 3),
        ),
        (_x(6, 3), np.array([[0, 5, 2], [1, 1, 4]])),
    ),
    "index_with_two_tensors": (
        lambda x, i, j: x[:, i, j],
        (_x(2, 3, 4), np.array([0, 2, -1]), np.array([3, 0, 1])),
    ),
    "repeated_unused_and_passed_through": (
        lambda x, y: (x, x.relu(), x.relu(), y * 0 + 1),
        (
            _x(
                3,
            ),
            _x(
                2,
            ),
        ),
    ),
    "size_zero_axis": (lambda x: (x * 2, x.sum(0)), (_x(0, 3),)),
    "float16": (lambda x: (x * 2.5 + 1).relu().sum(1), (_x(3, 8, dtype=np.float16),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_imported_function_matches_eager_pytorch(name: str) -> None:
    function, inputs = CASES[name]
    tolerance = {"rtol": 1e-3, "atol": 1e-3} if name == "float16" else {}
    _matches(Function(function), *inputs, **tolerance)


class _Net(torch.nn.Module):
    """What networks hold: 1-D, grouped, transposed and strided convolutions, batch
    norms, pools with ceil mode and padding counted, layer norms over two axes,
    attention (causal and not)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1d = torch.nn.Conv1d(3, 6, 3, padding=1, stride=2)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)
        self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.norm = torch.nn.LayerNorm([4, 8])

    def forward(self, image: Any, sequence: Any, q: Any) -> Any:
        y = self.bn(self.depthwise(self.conv(image))).relu()
        pooled = F.max_pool2d(y, 3, 2, ceil_mode=True)
        averaged = F.avg_pool2d(y, 3, 2, padding=1, ceil_mode=True, count_include_pad=True)
        up = self.up(pooled)
        attended = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        return (self.conv1d(sequence), up, averaged, F.adaptive_avg_pool2d(y, 1),
                self.norm(attended), F.scaled_dot_product_attention(q, q * 2, q))  # fmt: skip


def test_network_ops_match_eager_pytorch() -> None:
    torch.manual_seed(0)
    model = _Net()
    with torch.no_grad():  # running statistics that are not the defaults
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    _matches(model.eval(), _x(2, 3, 9, 9), _x(2, 3, 10), _x(2, 2, 4, 8), rtol=1e-4, atol=1e-5)


def test_parameters_can_stay_arguments() -> None:
    """`freeze=False`: the parameters become arguments (before the inputs, in
    `torch.export`'s order), named by their qualified names."""
    model = torch.nn.Linear(4, 3)
    module = import_exported(torch.export.export(model, (torch.zeros(2, 4),)), freeze=False)
    function = next(iter(module.ops))
    names = [argument.name_hint for argument in function.body.block.args]  # pyright: ignore[reportAttributeAccessIssue]
    assert names == ["weight", "bias", "input"]
    x = _x(2, 4)
    weight, bias = model.weight.detach().numpy(), model.bias.detach().numpy()
    np.testing.assert_allclose(
        dflow.compile(module)(weight, bias, x), x @ weight.T + bias, rtol=1e-6
    )


class _Cumulative(torch.nn.Module):
    def forward(self, x: Any) -> Any:
        return torch.cumsum(x, 0) + 1  # the line the error names


class _Double(torch.nn.Module):
    def forward(self, x: Any) -> Any:
        return x * 2


def test_an_op_dflow_lacks_is_one_line_naming_it_and_the_models_line() -> None:
    with pytest.raises(TorchImportError) as raised:
        import_exported(torch.export.export(_Cumulative(), (torch.zeros(3),)))
    message = str(raised.value)
    assert "\n" not in message
    assert "aten.cumsum.default" in message and "does not import" in message
    assert f"test_torch_frontend.py:{_line_of('torch.cumsum(x, 0) + 1')}" in message


def _line_of(text: str) -> int:
    with Path(__file__).open(encoding="utf-8") as source:
        return next(
            n for n, line in enumerate(source, 1) if text in line and "_line_of" not in line
        )


def test_symbolic_sizes_are_refused_in_one_line() -> None:
    batch = torch.export.Dim("batch")
    program = torch.export.export(_Double(), (torch.zeros(4, 3),), dynamic_shapes=({0: batch},))
    with pytest.raises(TorchImportError, match="static shapes"):
        import_exported(program)


def test_supported_ops_cover_the_ops_every_case_used() -> None:
    """Every overload named is a real ATen overload (no typo in a registration)."""
    for name in SUPPORTED_OPS:
        namespace, op, overload = name.split(".")
        assert namespace == "aten"
        assert hasattr(getattr(torch.ops.aten, op), overload), name


def test_an_exported_model_runs_under_dflow_run(tmp_path: Any) -> None:
    """`dflow.export` writes a program the command line takes as it is."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh())
    x = _x(2, 4)
    path = tmp_path / "model.mlir"
    path.write_text(str(dflow.export(model, (x,))))
    np.savez(tmp_path / "in.npz", input=x)
    command = [sys.executable, "-m", "dflow", "run", str(path), "--inputs",
               str(tmp_path / "in.npz"), "--output", str(tmp_path / "out.npz")]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    (result,) = np.load(tmp_path / "out.npz").values()
    with torch.no_grad():
        np.testing.assert_allclose(result, model(torch.from_numpy(x)).numpy(), rtol=1e-5)
