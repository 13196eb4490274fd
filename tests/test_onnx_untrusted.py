"""A model is untrusted input: each fault ends in one line and exit 1.

Each test writes a model with one fault (a truncated or damaged protobuf, a cycle,
an unknown domain, an undefined input, external data outside the model's folder, a
declared size that would exhaust memory, ...) and runs `dflow` on it in-process,
as the fuzzer does; the outcome must hold `fuzz_cli.problems`' property (no
traceback, no internal error, one error line, exit 1) and the error line must say
what is wrong. The command-line options of models (`--shape`, `dflow import`,
feeds by ONNX name) are checked here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx_models
import pytest
from cli_support import run_dflow
from fuzz_cli import Outcome, problems, run_in_process
from numpy.typing import NDArray
from onnx import ModelProto, TensorProto, helper, numpy_helper
from onnx.external_data_helper import set_external_data

pytestmark = pytest.mark.usefixtures("module_cache")
Array = NDArray[Any]


def relu_model(**changes: Any) -> ModelProto:
    """`y = relu(x + w)` for x: 2x3 f32, w an initializer; `changes` replace the
    graph's nodes, initializers or opset."""
    nodes = changes.get(
        "nodes",
        [
            helper.make_node("Add", ["x", "w"], ["s"], name="add"),
            helper.make_node("Relu", ["s"], ["y"], name="relu"),
        ],
    )
    weight = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    graph = helper.make_graph(
        nodes,
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, changes.get("shape", [2, 3]))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        changes.get("initializers", [weight]),
    )
    opset = changes.get("opset", 17)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def refused(path: Path, *options: str, command: str = "run") -> str:
    """The one error line of `dflow COMMAND PATH OPTIONS`, after checking the fuzzer's
    property and exit status 1."""
    argv = [command, str(path), *options]
    outcome = run_in_process(argv)
    assert problems(argv, outcome) == [], outcome.stderr
    assert outcome.status == 1, outcome
    (line,) = outcome.stderr.strip().splitlines()
    assert line.startswith(f"{path}: error: "), line
    return line


def tensor(name: str, dims: list[int], raw: bytes) -> TensorProto:
    """A float tensor with any dims and data (`helper.make_tensor` would check them)."""
    proto = TensorProto(name=name, data_type=TensorProto.FLOAT, raw_data=raw)
    proto.dims.extend(dims)
    return proto


def save(model: ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def test_a_valid_model_runs(tmp_path: Path) -> None:
    """The control: the model the faults are made from runs and is right."""
    path = save(relu_model(), tmp_path / "m.onnx")
    x = np.linspace(-9, 9, 6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "x.npy", x)
    argv = ["run", str(path), "--inputs", str(tmp_path / "x.npy")]
    outcome = run_in_process([*argv, "--output", str(tmp_path / "y.npz")])
    assert outcome.status == 0, outcome.stderr
    (y,) = np.load(tmp_path / "y.npz").values()
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(y, np.maximum(x + w, 0))


@pytest.mark.parametrize("keep", [0.25, 0.5, 0.9])
def test_a_truncated_model(tmp_path: Path, keep: float) -> None:
    data = onnx_models.lenet().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: int(len(data) * keep)])
    line = refused(path, "--shape", "image=1,1,28,28")
    assert "protobuf does not parse" in line or "not an ONNX model" in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "the file is empty"),
        (b"func.func @main() {\n}\n", "not an ONNX model"),
        (bytes(range(256)) * 4, "not an ONNX model"),
    ],
)
def test_a_file_that_is_no_model(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(content)
    assert expected in refused(path)


def test_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    """A damaged string field (found by the fuzzer: protobuf hands it over as bytes)."""
    model = relu_model()
    model.graph.node[1].name = "r\u00e9lu"
    data = model.SerializeToString()
    assert data.count("\u00e9".encode()) == 1
    path = tmp_path / "m.onnx"
    path.write_bytes(data.replace("\u00e9".encode(), b"\xff\xa9"))
    assert refused(path).endswith("not an ONNX model: a name in its graph is not UTF-8 text")


def test_a_cycle(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Add", ["x", "t"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["t"], name="loop"),
        helper.make_node("Relu", ["t"], ["y"], name="relu"),
    ]
    line = refused(save(relu_model(nodes=nodes), tmp_path / "m.onnx"))
    assert line.endswith("the graph has a cycle: node 'add' → node 'loop' → node 'add'")


def test_an_undefined_input(tmp_path: Path) -> None:
    nodes = [helper.make_node("Relu", ["nowhere"], ["y"], name="relu")]
    line = refused(save(relu_model(nodes=nodes), tmp_path / "m.onnx"))
    assert "node 'relu' (Relu) reads 'nowhere', which no input, initializer or node" in line


def test_a_value_defined_twice(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="first"),
        helper.make_node("Abs", ["x"], ["y"], name="second"),
    ]
    line = refused(save(relu_model(nodes=nodes), tmp_path / "m.onnx"))
    assert "'y' is defined twice" in line and "'second'" in line


def test_an_unknown_domain(tmp_path: Path) -> None:
    node = helper.make_node("FusedGelu", ["x"], ["y"], name="gelu", domain="com.microsoft")
    model = relu_model(nodes=[node])
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    line = refused(save(model, tmp_path / "m.onnx"))
    assert "domain 'com.microsoft'" in line and "'gelu'" in line


@pytest.mark.parametrize(
    ("opset", "expected"), [(99, "newer than the installed onnx"), (6, "before opset")]
)
def test_an_opset_dflow_does_not_import(tmp_path: Path, opset: int, expected: str) -> None:
    nodes = [helper.make_node("Clip", ["x"], ["y"], name="clip", min=0.0, max=1.0)]
    assert expected in refused(save(relu_model(nodes=nodes, opset=opset), tmp_path / "m.onnx"))


def test_an_unsupported_op_and_attribute_name_the_node(tmp_path: Path) -> None:
    hardmax = [helper.make_node("Hardmax", ["x"], ["y"], name="h")]
    line = refused(save(relu_model(nodes=hardmax), tmp_path / "a.onnx"))
    assert "node 'h' (Hardmax, opset 17): dflow does not import Hardmax" in line
    gelu = [helper.make_node("Gelu", ["x"], ["y"], name="g", approximate="cubic")]
    line = refused(save(relu_model(nodes=gelu, opset=20), tmp_path / "b.onnx"))
    assert "node 'g' (Gelu, opset 20): approximate='cubic' is not supported" in line


def test_a_missing_input_names_the_node(tmp_path: Path) -> None:
    """Gather without its indices (found by the fuzzer)."""
    gather = [helper.make_node("Gather", ["x"], ["y"], name="take")]
    line = refused(save(relu_model(nodes=gather), tmp_path / "m.onnx"))
    assert line.endswith("node 'take' (Gather, opset 17): input 1 is missing")


def test_a_declared_size_is_checked_before_allocation(tmp_path: Path) -> None:
    """2^40 floats declared with no data: refused from the dims alone (allocating them
    would take 4 TiB)."""
    huge = tensor("w", [2**20, 2**20], b"")
    line = refused(save(relu_model(initializers=[huge]), tmp_path / "m.onnx"))
    assert "4096.0 GiB, over the 4 GiB dflow imports" in line


def test_data_shorter_than_its_dims(tmp_path: Path) -> None:
    short = tensor("w", [2, 3], b"\0" * 8)
    line = refused(save(relu_model(initializers=[short]), tmp_path / "m.onnx"))
    assert "(24 bytes) but holds 8 bytes" in line


def external_model(folder: Path, location: str) -> Path:
    """The model with its weight's data in the external file `location`."""
    model = relu_model()
    weight = model.graph.initializer[0]
    data = weight.raw_data
    assert data == np.arange(6, dtype=np.float32).tobytes()
    set_external_data(weight, location, length=len(data))
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    (folder / "weights.bin").write_bytes(data)
    return save(model, folder / "m.onnx")


def test_external_data_inside_the_folder_is_read(tmp_path: Path) -> None:
    path = external_model(tmp_path, "weights.bin")
    x = np.zeros((2, 3), np.float32)
    np.save(tmp_path / "x.npy", x)
    argv = [
        "run",
        str(path),
        "--inputs",
        str(tmp_path / "x.npy"),
        "--output",
        str(tmp_path / "y.npz"),
    ]
    assert run_in_process(argv).status == 0
    (y,) = np.load(tmp_path / "y.npz").values()
    np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_changed_external_data_is_read_again(tmp_path: Path) -> None:
    """The model's bytes are unchanged, its external data not: the second run must
    not take the first one's cache entry (keyed by the model's bytes alone, the cached
    `dflow run` would give the old weights)."""
    path = external_model(tmp_path, "weights.bin")
    np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
    argv = ["run", str(path), "--inputs", str(tmp_path / "x.npy"), "--output"]
    assert run_in_process([*argv, str(tmp_path / "y.npz")]).status == 0
    weights = np.arange(6, dtype=np.float32)[::-1].copy()
    (tmp_path / "weights.bin").write_bytes(weights.tobytes())
    assert run_in_process([*argv, str(tmp_path / "z.npz")]).status == 0
    (y,) = np.load(tmp_path / "y.npz").values()
    (z,) = np.load(tmp_path / "z.npz").values()
    np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(z, weights.reshape(2, 3))


@pytest.mark.parametrize("location", ["../weights.bin", "sub/../../weights.bin", "/etc/passwd"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "weights.bin").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    path = external_model(folder, location)
    line = refused(path)
    assert "outside the model's folder" in line or "relative to the model's folder" in line


def test_a_symbolic_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    (folder / "link.bin").symlink_to(tmp_path / "secret.bin")
    assert "outside the model's folder" in refused(external_model(folder, "link.bin"))


def test_external_data_longer_than_its_file(tmp_path: Path) -> None:
    path = external_model(tmp_path, "weights.bin")
    (tmp_path / "weights.bin").write_bytes(b"\0" * 10)
    assert "declares 24 bytes at offset 0 of weights.bin" in refused(path)


# ----------------------------------------------------------------------------- options


def test_a_symbolic_dimension_needs_a_shape(tmp_path: Path) -> None:
    path = save(relu_model(shape=["N", 3]), tmp_path / "m.onnx")
    line = refused(path)
    assert "input 'x' has shape [N, 3]: give its static shape (--shape x=D0,D1,..." in line
    assert "no input of the model (inputs: x)" in refused(path, "--shape", "z=2,3")
    assert "shape" in refused(path, "--shape", "x=2,4")  # not the initializer's 2x3
    outcome = run_in_process(["run", str(path), "--shape", "x=2,3"])
    assert outcome.status == 0 and "out0: shape 2x3 float32" in outcome.stdout


def test_a_shape_on_mlir_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.mlir"
    path.write_text(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  func.return %x : tensor<2xf32>\n"
        "}\n"
    )
    assert "--shape" in refused(path, "--shape", "x=2")


def test_import_writes_mlir_that_runs_alike(tmp_path: Path) -> None:
    """`dflow import` in a real process, its text run as the model is run."""
    model = onnx_models.lenet()
    path = save(model, tmp_path / "lenet.onnx")
    out = tmp_path / "lenet.mlir"
    imported = run_dflow("import", path, "--shape", "image=2,1,28,28", "-o", out)
    assert imported.returncode == 0 and imported.stderr == ""
    text = out.read_text()
    assert text.startswith("builtin.module {\n  func.func @main(%image: tensor<2x1x28x28xf32>)")
    assert 'dense<"0x' in text  # weights in hex, not decimal literals
    x = np.random.default_rng(0).standard_normal((2, 1, 28, 28)).astype(np.float32)
    np.savez(tmp_path / "x.npz", image=x)
    results = []
    for source in (path, out):
        shape = ["--shape", "image=2,1,28,28"] if source == path else []
        argv = ["run", str(source), *shape, "--inputs", str(tmp_path / "x.npz"), "--interpret"]
        argv += ["--output", str(tmp_path / f"{source.suffix[1:]}.npz")]
        assert run_in_process(argv).status == 0
        results.append(np.load(tmp_path / f"{source.suffix[1:]}.npz")["out0"])
    (expected,) = onnx_models.onnx_runtime(model, {"image": x})
    for result in results:
        onnx_models.assert_close(result, expected)


def test_feeds_by_onnx_name(tmp_path: Path) -> None:
    """An input named `input:0` becomes `%input`; an .npz keyed by either name feeds it."""
    model = relu_model()
    model.graph.input[0].name = "input:0"
    model.graph.node[0].input[0] = "input:0"
    path = save(model, tmp_path / "m.onnx")
    text = run_in_process(["import", str(path)]).stdout
    assert '%input: tensor<2x3xf32> {df.name = "input:0"}' in text
    x = np.full((2, 3), -100, np.float32)
    for key in ("input:0", "input"):
        np.savez(tmp_path / "x.npz", **{key: x})
        argv = ["run", str(path), "--inputs", str(tmp_path / "x.npz")]
        assert run_in_process([*argv, "--output", str(tmp_path / "y.npz")]).status == 0
        np.testing.assert_array_equal(np.load(tmp_path / "y.npz")["out0"], np.zeros((2, 3)))


@pytest.mark.parametrize("command", ["plan", "viz", "compile"])
def test_other_commands_take_a_model(tmp_path: Path, command: str) -> None:
    path = save(onnx_models.mlp(), tmp_path / "mlp.onnx")
    argv = [command, str(path), "--shape", "input=4,64"]
    if command != "plan":
        argv += ["-o", str(tmp_path / ("out.dot" if command == "viz" else "out"))]
    outcome: Outcome = run_in_process(argv)
    assert outcome.status == 0, outcome.stderr
    if command == "plan":
        assert "cpu:0" in outcome.stdout
    elif command == "viz":
        assert "digraph" in (tmp_path / "out.dot").read_text()
    else:
        assert (tmp_path / "out" / "cpu_0.py").is_file() and (
            tmp_path / "out" / "cpu_0.bin"
        ).is_file()
