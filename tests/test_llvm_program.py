"""The llvm target runs programs: `--target llvm`, `target=`, `$DFLOW_TARGET`.

Each CPU device's program is one LLVM module beside a Python module that loads it;
its launches run as segments (one call into machine code per stretch of LLVM
kernels), a kernel the printer refuses as the numba target's. Checked against the
interpreter: one segment for a whole MLP, products through OpenBLAS (batched,
transposed, empty), segments split by a numba kernel and by transfers between
devices; the object cache (a hit compiles nothing, its files private); traces of
segments; and the target's name checked where it is given. The suites of compiled
programs run on this target too (`DFLOW_TARGET=llvm`, `tests/run.sh`).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.cli_support import run_dflow
from support.compiled_support import assert_same, normal

import dflow
from dflow import conv2d
from dflow.backend.llvm import convolution
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.driver.errors import DflowError
from dflow.driver.loading.source import parse_module
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function
from dflow.runtime import llvm_jit
from dflow.runtime.program import load_program

ROOT = Path(__file__).resolve().parents[1]
MLP = (ROOT / "examples" / "mlp.mlir").read_text()


def _compiled(module: Any, directory: Path, devices: str | None = None) -> Any:
    from dflow.dialects.devices import DeviceList  # noqa: PLC0415

    listed = None if devices is None else DeviceList.parse(devices)
    sources = compile_module(module, listed, target="llvm")
    write_modules(sources, directory)
    return sources, load_program(directory)


def _inputs(module: Any, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    function = next(iter(module.ops))
    return [normal(rng, t.get_shape(), str(t.element_type)) for t in function.function_type.inputs]


def test_an_mlp_runs_as_one_call_into_machine_code(tmp_path: Path) -> None:
    """All six kernels of the MLP (two products through OpenBLAS) are LLVM's: the host
    function makes one segment call, the module imports no numba, and the results are
    the interpreter's."""
    module = parse_module(MLP, "mlp.mlir")
    inputs = _inputs(module, 0)
    expected = run_function(module, "main", inputs)
    sources, program = _compiled(module, tmp_path)
    python = sources["cpu_0.py"]
    assert isinstance(python, str) and "cpu_0.ll" in sources
    host = python[python.index("def main(") : python.index("ENTRIES")]
    assert len(re.findall(r"_segment_main_\d+\(", host)) == 1, host
    assert "numba" not in python
    assert "scipy_cblas_sgemm64_" in str(sources["cpu_0.ll"])
    assert_same(program.run("main", inputs), expected, ["loss", "p"])


def _products(g: Graph, a: Tensor, b: Tensor, c: Tensor, d: Tensor, e: Tensor) -> list[Tensor]:
    return [
        (a @ b).tanh(),
        dflow.matmul(a, a, transpose_b=True),
        dflow.matmul(c, d, transpose_a=True),
        e @ dflow.transpose(e, (0, 2, 1)),
    ]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_products_match_the_interpreter(tmp_path: Path, dtype: str) -> None:
    """Plain, transposed either way, and batched products, each a CBLAS call."""
    rng = np.random.default_rng(1)
    shapes = [(5, 7), (7, 3), (6, 4), (6, 2), (3, 4, 5)]
    arrays = [normal(rng, s, dtype) for s in shapes]
    graph = Graph("main")
    arguments = [graph.input(f"a{i}", a.shape, dtype) for i, a in enumerate(arrays)]
    graph.output(*_products(graph, *arguments))
    module = graph.module()
    expected = run_function(module, "main", arrays)
    _, program = _compiled(module, tmp_path)
    assert_same(program.run("main", arrays), expected, [str(i) for i in range(4)])


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_one_row_products_are_matrix_vector_products(tmp_path: Path, dtype: str) -> None:
    """A product of one row (a batch-1 classifier) is one GEMV, not a GEMM: of a row
    or a transposed column, by a matrix or a transposed one, and each matrix of a
    batch of rows; equal to the interpreter, and no GEMM left in the module."""
    rng = np.random.default_rng(2)
    shapes = [(1, 7), (7, 3), (7, 1), (5, 7), (4, 1, 6), (4, 6, 3)]
    arrays = [normal(rng, s, dtype) for s in shapes]
    graph = Graph("main")
    row, b, column, bt, rows, bs = (
        graph.input(f"a{i}", a.shape, dtype) for i, a in enumerate(arrays)
    )
    graph.output(
        row @ b,
        dflow.matmul(row, bt, transpose_b=True),
        dflow.matmul(column, b, transpose_a=True),
        dflow.matmul(column, bt, transpose_a=True, transpose_b=True),
        rows @ bs,
    )
    module = graph.module()
    expected = run_function(module, "main", arrays)
    sources, program = _compiled(module, tmp_path)
    llvm = str(sources["cpu_0.ll"])
    letter = "s" if dtype == "f32" else "d"
    assert f"call void @scipy_cblas_{letter}gemv64_(" in llvm
    assert f"call void @scipy_cblas_{letter}gemm64_(" not in llvm
    assert_same(program.run("main", arrays), expected, [str(i) for i in range(5)])


def test_empty_products_zero_or_skip(tmp_path: Path) -> None:
    """A product over an empty inner axis is zeros; one with no rows writes nothing."""
    a, b = np.ones((3, 0), np.float32), np.ones((0, 4), np.float32)
    c, d = np.ones((0, 2), np.float32), np.ones((2, 5), np.float32)
    graph = Graph("main")
    x, y = graph.input("a", a.shape, "f32"), graph.input("b", b.shape, "f32")
    z, w = graph.input("c", c.shape, "f32"), graph.input("d", d.shape, "f32")
    graph.output(x @ y + 1.0, z @ w)
    module = graph.module()
    _, program = _compiled(module, tmp_path)
    first, second = program.run("main", [a, b, c, d])
    np.testing.assert_array_equal(first, np.ones((3, 4), np.float32))
    assert second.shape == (0, 5)


def test_a_library_call_from_python_splits_the_segments(tmp_path: Path) -> None:
    """A convolution between LLVM kernels that the printer does not generate (dilated):
    its routine (numba's, as the numba target calls it) runs from Python, then its
    LLVM epilogue; a segment before, one after."""
    rng = np.random.default_rng(2)
    x, w = normal(rng, (2, 3, 6, 6), "f32"), normal(rng, (4, 3, 3, 3), "f32")
    graph = Graph("main")
    gx, gw = graph.input("x", x.shape, "f32"), graph.input("w", w.shape, "f32")
    graph.output(conv2d(gx.tanh(), gw, dilations=(2, 2)).relu().sum([1]).exp())
    module = graph.module()
    expected = run_function(module, "main", [x, w])
    sources, program = _compiled(module, tmp_path)
    python = str(sources["cpu_0.py"])
    host = python[python.index("def main(") : python.index("ENTRIES")]
    calls = re.findall(r"^    (\w+)\(", host, re.MULTILINE)
    assert calls[0].startswith("_segment_") and calls[-1].startswith("_segment_"), host
    conv = next(call for call in calls if "conv2d" in call)
    assert re.search(
        rf"^def {conv}\(.*\n    lib\.conv2d_f32\(.*\n    _epilogue_{conv}\(", python, re.M
    )
    llvm = str(sources["cpu_0.ll"])
    message = f"; @{conv} makes its library calls from Python, then its epilogue @{conv}.epilogue"
    assert message in llvm.splitlines()
    assert_same(program.run("main", [x, w]), expected, ["y"], f32_atol=1e-4)


def test_a_kernel_the_printer_refuses_stays_numbas(tmp_path: Path) -> None:
    """A kernel of 4-bit integers (which the LLVM printer does not hold yet) is the
    numba target's, between LLVM segments, and the results are still right."""
    a = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
    graph = Graph("main")
    x = graph.input("x", (4, 4), "i8")
    graph.output((x.cast("i4") + x.cast("i4")).cast("f32").exp())
    module = graph.module()
    expected = run_function(module, "main", [a])
    sources, program = _compiled(module, tmp_path)
    assert re.search(r"^; @\w+ is the numba target's: i4 values", str(sources["cpu_0.ll"]), re.M)
    assert "@_kernel(" in str(sources["cpu_0.py"])
    assert_same(program.run("main", [a]), expected, ["y"])


def test_two_devices_exchange_values_between_segments(tmp_path: Path) -> None:
    """examples/towers.mlir on cpu:0,cpu:1: the transfers run between segments."""
    text = (ROOT / "examples" / "towers.mlir").read_text()
    module = parse_module(text, "towers.mlir")
    inputs = _inputs(module, 3)
    expected = run_function(parse_module(text, "towers.mlir"), "main", inputs)
    sources, program = _compiled(module, tmp_path, "cpu:0,cpu:1")
    assert {"cpu_0.ll", "cpu_1.ll"} <= set(sources)
    assert any("rt.send(" in str(s) for s in sources.values())
    assert_same(program.run("main", inputs, timeout=20), expected, ["r"], f32_atol=1e-4)


def test_a_cached_module_loads_without_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The object code is stored under the kernel store (a `0600` file in a `0700`
    folder); a new load of the same IR reads it and compiles nothing."""
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(llvm_jit, "_engines", {})  # not loaded by an earlier test
    module = parse_module(MLP, "mlp.mlir")
    _compiled(module, tmp_path / "first")
    objects = list((tmp_path / "cache").rglob(llvm_jit.OBJECT_FILE))
    text = (tmp_path / "first" / "cpu_0.ll").read_text()
    assert len(objects) == len(llvm_jit.units(text)) == 7  # six kernels and the host
    for path in objects:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

    def refuse(*_: Any) -> bytes:
        raise AssertionError("compiled again")

    monkeypatch.setattr(llvm_jit, "compile_object", refuse)
    monkeypatch.setattr(llvm_jit, "_engines", {})
    library = llvm_jit.load_llvm(tmp_path / "first" / "cpu_0.ll")
    assert library.function("dflow.segment.main.0", 9)


def test_a_trace_times_each_segment(tmp_path: Path) -> None:
    """`dflow run --trace` on the llvm target: a kernel slice per segment, naming the
    kernels it launched."""
    trace = tmp_path / "trace.json"
    result = run_dflow("run", "examples/mlp.mlir", "--target", "llvm", "--trace", trace)
    assert result.returncode == 0, result.stderr
    import json  # noqa: PLC0415

    events = json.loads(trace.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert [e["name"] for e in kernels] == ["_segment_main_0"]
    assert "fused_matmul_0" in kernels[0]["args"]["kernels"]


def test_the_target_is_checked_where_it_is_named() -> None:
    with pytest.raises(DflowError, match=r"target=cuda: the CPU targets are numba or llvm$"):
        dflow.compile(MLP, target="cuda")
    result = run_dflow("run", "examples/mlp.mlir", env={**os.environ, "DFLOW_TARGET": "jax"})
    assert result.returncode == 1
    assert result.stderr == (
        "examples/mlp.mlir: error: DFLOW_TARGET=jax: the CPU targets are numba or llvm\n"
    )


def test_compile_and_jit_take_the_target() -> None:
    """`dflow.compile(..., target="llvm")` and `dflow.jit(target="llvm")` run on it."""
    program = dflow.compile(MLP, target="llvm")
    module = program.loaded.parts[0].module
    assert module.__doc__.endswith("(emitted by the llvm target).")
    assert 'define void @"dflow.segment.main.0"' in program.source["cpu_0.ll"]

    @dflow.jit(target="llvm")
    def scaled(x: Any) -> Any:
        return dflow.tanh(x) * 2.0

    x = np.linspace(-3, 3, 12, dtype=np.float32)
    np.testing.assert_allclose(scaled(x), np.tanh(x) * 2.0, rtol=1e-6)


def _large(g: Graph) -> list[Tensor]:
    x, w = g.input("x", (512, 300), "f32"), g.input("w", (300,), "f64")
    h = (x * 1.5 + 0.25).tanh()
    return [h, h.sum([1]), x.softmax(1), (w.cast("f32") * x).max([0]), x.mean()]


def test_parallel_kernels_split_their_outer_loops_over_threads(tmp_path: Path) -> None:
    """With `parallel`, each kernel of enough work runs its outer loop as chunks on
    threads (`backend/llvm/threads.py`): row-wise and column-wise reductions and an
    elementwise kernel equal the interpreter, and a small kernel (the scalar mean's)
    stays in one piece."""
    rng = np.random.default_rng(5)
    x, w = normal(rng, (512, 300), "f32"), normal(rng, (300,), "f64")
    graph = Graph("main")
    graph.output(*_large(graph))
    module = graph.module()
    expected = run_function(module, "main", [x, w])
    sources = compile_module(module, parallel=True, target="llvm")
    write_modules(sources, tmp_path)
    text = str(sources["cpu_0.ll"])
    split = [unit for unit in llvm_jit.units(text) if "@dflow.parallel_for(" in unit]
    assert split and all(u.count("define internal void @dflow.parallel_for(") == 1 for u in split)
    assert text.count('@"dflow.threads" = global i64 1') == 1  # in the host's unit
    chunks = re.findall(r'^define internal void @"(dflow\.k\.\w+)\.chunk\d+"', text, re.M)
    kernels = re.findall(r'^define void @"(dflow\.k\.\w+)"', text, re.MULTILINE)
    assert chunks and set(chunks) < set(kernels)  # the mean's kernel is not split
    assert "_llvm.set_threads('dflow.threads')" in str(sources["cpu_0.py"])
    program = load_program(tmp_path)
    names = ["h", "rows", "softmax", "columns", "mean"]
    assert_same(program.run("main", [x, w]), expected, names, f32_atol=1e-4)


def test_identical_kernels_compile_once(tmp_path: Path) -> None:
    """Repeated blocks print the same kernels (a network's layers): each text is
    defined once and every launch of it calls that one function."""
    rng = np.random.default_rng(9)
    x = normal(rng, (6, 10), "f32")
    graph = Graph("main")
    h = graph.input("x", x.shape, "f32")
    for _ in range(4):
        h = (h * 1.5).tanh().softmax(1)
    graph.output(h)
    module = graph.module()
    expected = run_function(module, "main", [x])
    sources, program = _compiled(module, tmp_path)
    llvm = str(sources["cpu_0.ll"])
    defined = re.findall(r'^define void @"(dflow\.k\.\w+)"\(', llvm, re.MULTILINE)
    segment = llvm[llvm.index('define void @"dflow.segment.main.0"') :]
    called = re.findall(r'call void @"(dflow\.k\.\w+)"\(', segment)
    assert len(called) == 4 and len(set(called)) == 1 and defined == called[:1], llvm
    assert_same(program.run("main", [x]), expected, ["y"])


def test_kernels_differing_in_their_outer_extent_compile_once(tmp_path: Path) -> None:
    """Softmaxes of 6, 40 and 9 rows of 32 (a network's layers of different batch or
    channels) print one kernel, whose outer loop runs the rows its caller passes;
    each result is the interpreter's."""
    rng = np.random.default_rng(12)
    shapes = [(6, 32), (40, 32), (9, 32)]
    xs = [normal(rng, shape, "f32") for shape in shapes]
    graph = Graph("main")
    inputs = [graph.input(f"x{i}", shape, "f32") for i, shape in enumerate(shapes)]
    graph.output(*((h * 1.5).softmax(1) for h in inputs))
    module = graph.module()
    expected = run_function(module, "main", xs)
    sources, program = _compiled(module, tmp_path)
    llvm = str(sources["cpu_0.ll"])
    defined = re.findall(r'^define void @"(dflow\.k\.\w+)"\(.*, i64 %s0\) \{', llvm, re.MULTILINE)
    segment = llvm[llvm.index('define void @"dflow.segment.main.0"') :]
    calls = re.findall(r'call void @"(dflow\.k\.\w+)"\(.*, i64 (\d+)\)', segment)
    assert len(defined) == 1 and calls == [(defined[0], str(r)) for r, _ in shapes], llvm
    assert_same(program.run("main", xs), expected, ["y0", "y1", "y2"])


def test_tiny_loops_stay_scalar_and_large_ones_vectorize(tmp_path: Path) -> None:
    """A loop run at most `SCALAR_LOOP_MAX_TRIPS` times a call is marked not to be
    vectorized, and LLVM's optimized code for it has no vector type; the same kernel
    over more elements vectorizes. Both equal the interpreter."""
    from dflow.backend.llvm.kernel import SCALAR_LOOP_MAX_TRIPS  # noqa: PLC0415

    rng = np.random.default_rng(11)
    small, large = normal(rng, (2, 8), "f32"), normal(rng, (64, 64), "f32")
    assert small.size <= SCALAR_LOOP_MAX_TRIPS < large.size
    graph = Graph("main")
    a, b = graph.input("a", small.shape, "f32"), graph.input("b", large.shape, "f32")
    graph.output((a * 1.5).exp(), (b * 1.5).exp())
    module = graph.module()
    expected = run_function(module, "main", [small, large])
    sources, program = _compiled(module, tmp_path)
    kernels = [u for u in llvm_jit.units(str(sources["cpu_0.ll"])) if "@dflow.exp.f32(" in u]
    machine = llvm_jit.target_machine()
    vectorized = ["x float>" in llvm_jit.optimized(unit, machine) for unit in kernels]
    marked = ["llvm.loop.vectorize.enable" in unit for unit in kernels]
    assert sorted(zip(marked, vectorized, strict=True)) == [(False, True), (True, False)]
    assert_same(program.run("main", [small, large]), expected, ["small", "large"])


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_maximum_and_minimum_are_numpys_bit_for_bit(tmp_path: Path, dtype: str) -> None:
    """`df.maximum`/`df.minimum` (and relu's maximum with 0) as NumPy computes them:
    a NaN of either operand propagated, and of two equal zeros the second operand
    kept (LLVM's `llvm.maximum` would give +0 for maximum(+0, -0)); in a loop long
    enough to vectorize and in a short scalar one."""
    specials = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 3.5]
    pairs = np.array([(a, b) for a in specials for b in specials]).T
    count = pairs.shape[1]
    a, b = (
        np.tile(row, 3).astype(np.dtype({"f32": "float32", "f64": "float64"}[dtype]))
        for row in pairs
    )
    graph = Graph("main")
    x, y = graph.input("a", a.shape, dtype), graph.input("b", b.shape, dtype)
    short_x, short_y = (
        graph.input("c", (count // 2,), dtype),
        graph.input("d", (count // 2,), dtype),
    )
    graph.output(x.maximum(y), x.minimum(y), x.relu(), short_x.maximum(short_y))
    module = graph.module()
    half = count // 2
    _, program = _compiled(module, tmp_path)
    got = program.run("main", [a, b, a[:half], b[:half]])
    expected = [
        np.maximum(a, b),
        np.minimum(a, b),
        np.maximum(a, 0),
        np.maximum(a[:half], b[:half]),
    ]
    for result, reference in zip(got, expected, strict=True):
        assert result.tobytes() == reference.astype(result.dtype).tobytes()


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "pads", "strides", "bias"),
    [
        ((1, 3, 9, 7), (16, 3, 3, 3), (1, 1, 1, 1), (1, 1), False),  # two tiles of 8
        ((2, 5, 6, 6), (10, 5, 3, 3), (1, 1, 1, 1), (1, 1), True),  # 8 channels, then 2
        ((1, 4, 7, 9), (3, 4, 2, 3), (0, 2, 1, 0), (1, 1), True),  # only a narrow tile
        ((1, 16, 5, 5), (12, 16, 1, 3), (0, 1, 0, 1), (1, 1), False),  # a 1x3 filter
        ((1, 2, 20, 20), (4, 2, 5, 5), (2, 2, 2, 2), (1, 1), True),  # tiles past one row
        ((2, 3, 9, 8), (9, 3, 3, 3), (1, 1, 1, 1), (2, 2), True),  # stride 2: 4 phases
        ((1, 3, 15, 15), (8, 3, 7, 7), (3, 3, 3, 3), (2, 2), False),  # a ResNet stem
        ((1, 2, 10, 9), (5, 2, 3, 2), (0, 1, 2, 0), (3, 2), False),  # strides 3 and 2
        ((2, 6, 5, 7), (9, 6, 1, 1), (0, 0, 0, 0), (1, 1), True),  # 1x1: 32 + 3 masked
        ((1, 40, 8, 4), (24, 40, 1, 1), (0, 0, 0, 0), (1, 1), False),  # 1x1: one whole tile
        ((2, 3, 4, 5), (11, 3, 1, 1), (0, 0, 0, 0), (1, 1), True),  # 1x1: 16 + 4 masked
        ((1, 4, 8, 7), (8, 4, 1, 1), (0, 0, 0, 0), (2, 2), False),  # of the first phase
        ((1, 3, 6, 6), (5, 3, 1, 1), (1, 0, 2, 1), (2, 1), True),  # of a padded phase
        ((1, 8, 9, 9), (8, 1, 3, 3), (1, 1, 1, 1), (1, 1), True),  # depthwise
        ((2, 6, 8, 7), (12, 1, 3, 3), (1, 1, 1, 1), (2, 2), False),  # depthwise, x2
        ((2, 3, 11, 37), (3, 1, 5, 5), (2, 2, 2, 2), (1, 1), True),  # 3 vectors a row
        ((1, 4, 12, 35), (4, 1, 5, 5), (2, 1, 1, 2), (2, 2), True),  # stride 2, 2 vectors
        ((1, 2, 7, 40), (4, 1, 3, 4), (0, 3, 2, 0), (1, 2), False),  # (1, 2), 4 columns
        ((1, 3, 5, 4), (3, 1, 3, 7), (1, 3, 1, 3), (2, 1), True),  # wider than the input
        ((1, 4, 7, 7), (16, 2, 3, 3), (1, 1, 1, 1), (1, 1), True),  # 2 groups of 8
        ((1, 6, 6, 6), (9, 2, 1, 1), (0, 0, 0, 0), (1, 1), False),  # 3 groups of 3, 1x1
    ],
)
def test_direct_convolutions_match_the_interpreter(
    tmp_path: Path,
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    pads: tuple[int, int, int, int],
    strides: tuple[int, int],
    bias: bool,
) -> None:
    """A float32 convolution of dilation 1 is a direct convolution
    generated in the kernel's unit (`backend/llvm/convolution.py`), no call from
    Python: tails of output channels and of positions, asymmetric pads, a bias, a
    1x3 filter, strides of 2 and of 3 by 2, 1x1 filters (in place, the positions past
    the whole tiles masked; or of the input's first phase), depthwise and grouped
    convolutions (tiles within a
    group or across groups), batches of two, and the ReLU after it in the same
    kernel, all equal to the interpreter."""
    rng = np.random.default_rng(sum(x_shape) + sum(w_shape))
    x, w, b = (
        normal(rng, x_shape, "f32"),
        normal(rng, w_shape, "f32"),
        normal(rng, w_shape[:1], "f32"),
    )
    graph = Graph("main")
    gx, gw = graph.input("x", x.shape, "f32"), graph.input("w", w.shape, "f32")
    gb = graph.input("b", b.shape, "f32")
    groups = x_shape[1] // w_shape[1]
    graph.output(
        conv2d(gx, gw, gb if bias else None, strides=strides, pads=pads, groups=groups).relu()
    )
    module = graph.module()
    expected = run_function(module, "main", [x, w, b])
    sources, program = _compiled(module, tmp_path)
    llvm = str(sources["cpu_0.ll"])
    assert re.search(r'call void @"dflow\.k\.\w+\.conv\.', llvm), "not the kernel's own"
    assert '.elementwise"(' in llvm, "the ReLU is not fused"
    assert "library calls from Python" not in llvm
    assert "lib.conv2d" not in str(sources["cpu_0.py"])
    assert_same(program.run("main", [x, w, b]), expected, ["y"], f32_atol=1e-4)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "pads", "strides"),
    [
        ((2, 5, 6, 7), (10, 5, 3, 3), (1, 1, 1, 1), (1, 1)),  # rows copied out, batch 2
        ((2, 6, 5, 7), (9, 6, 1, 1), (0, 0, 0, 0), (1, 1)),  # in place: 32 + 3 masked
        ((1, 40, 8, 4), (24, 40, 1, 1), (0, 0, 0, 0), (1, 1)),  # in place, whole tiles
        ((1, 4, 9, 8), (8, 4, 3, 3), (1, 1, 1, 1), (2, 2)),  # strided: 4 phases
        ((1, 8, 9, 9), (8, 1, 3, 3), (1, 1, 1, 1), (1, 1)),  # depthwise, row by row
        ((2, 4, 10, 20), (8, 1, 5, 5), (2, 2, 2, 2), (2, 2)),  # depthwise, stride 2
        ((1, 1, 70, 70), (2, 1, 3, 3), (1, 1, 1, 1), (1, 1)),  # (small limit) by rows
        ((1, 3, 20, 23), (20, 3, 1, 1), (0, 0, 0, 0), (1, 1)),  # (small limit) by tiles
    ],
)
def test_fused_rests_match_the_interpreter(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    pads: tuple[int, int, int, int],
    strides: tuple[int, int],
) -> None:
    """A convolution's elementwise rest runs on each piece of its output as it is
    written (`backend/llvm/epilogue.py`): a bias, a residual add, ReLU6 and a
    per-channel scale (MobileNet's block end, ResNet's), in both ways a convolution
    writes (rows copied out of its scratch, or tiles written in place with a masked
    last one), over batches of two, equal to the interpreter. A NaN and both
    infinities in the residual pass through the clamp as NumPy's does. The rest runs
    on the whole image or plane once written, or past `WHOLE_REST_MAX` elements on
    each tile or row as it is written (the limit lowered to 4,096 here, so that the
    last two cases take those ways)."""
    monkeypatch.setattr(convolution, "WHOLE_REST_MAX", 1 << 12)
    rng = np.random.default_rng(sum(x_shape) + sum(w_shape))
    x, w = normal(rng, x_shape, "f32"), normal(rng, w_shape, "f32")
    b, s = normal(rng, w_shape[:1], "f32"), normal(rng, (1, w_shape[0], 1, 1), "f32")
    groups = x_shape[1] // w_shape[1]
    graph = Graph("main")
    gx, gw = graph.input("x", x.shape, "f32"), graph.input("w", w.shape, "f32")
    gb, gs = graph.input("b", b.shape, "f32"), graph.input("s", s.shape, "f32")
    y = conv2d(gx, gw, gb, strides=strides, pads=pads, groups=groups)
    r = normal(rng, y.shape, "f32")
    r.flat[[0, 7, -1]] = [np.nan, np.inf, -np.inf]
    gr = graph.input("r", r.shape, "f32")
    graph.output((y + gr).maximum(0.0).minimum(6.0) * gs)
    module = graph.module()
    inputs = [x, w, b, s, r]
    expected = run_function(module, "main", inputs)
    sources, program = _compiled(module, tmp_path)
    llvm = str(sources["cpu_0.ll"])
    assert '.elementwise"(' in llvm and "library calls from Python" not in llvm
    (got,) = program.run("main", inputs)
    assert np.isnan(got).any()
    np.testing.assert_allclose(got, expected[0], rtol=1e-5, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "pads"),
    [
        ((1, 16, 40, 40), (24, 16, 1, 1), (0, 0, 0, 0)),  # in place: tiles of 32
        ((1, 24, 7, 7), (24, 1, 5, 5), (2, 2, 2, 2)),  # depthwise: rows of 7
        ((1, 8, 14, 14), (16, 8, 3, 3), (1, 1, 1, 1)),  # copied out: rows of 14
    ],
)
def test_fused_rests_are_vector_code(
    tmp_path: Path,
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    pads: tuple[int, int, int, int],
) -> None:
    """After LLVM's optimizations, a convolution with its SiLU fused is vector code
    only: 16-lane FMAs, the SiLU's exp and division on 16 lanes, and no scalar FMA,
    division or exp left (a scalar remainder loop of the short runs the rest is
    called on, which LLVM's own vectorizing choice left for runs under 32 or 64)."""
    graph = Graph("main")
    gx, gw = graph.input("x", x_shape, "f32"), graph.input("w", w_shape, "f32")
    y = conv2d(gx, gw, pads=pads, groups=x_shape[1] // w_shape[1])
    graph.output(y * y.sigmoid())
    sources = compile_module(graph.module(), None, target="llvm")
    (unit,) = [u for u in llvm_jit.units(str(sources["cpu_0.ll"])) if ".elementwise" in u]
    optimized = llvm_jit.optimized(unit, llvm_jit.target_machine())
    assert "@llvm.fma.v16f32(" in optimized and "fdiv <16 x float>" in optimized
    assert not re.search(r"fdiv float |@llvm\.fma\.f32\(|@dflow\.exp\.f32\(", optimized)


def _conv_rest(activation: str) -> Graph:
    """A 3x3 convolution whose fused rest is `y · f(y · 0.7071)`."""
    graph = Graph("main")
    gx, gw = graph.input("x", (1, 4, 9, 9), "f32"), graph.input("w", (8, 4, 3, 3), "f32")
    y = conv2d(gx, gw, pads=(1, 1, 1, 1))
    graph.output(y * getattr(y * 0.7071, activation)())
    return graph


@pytest.mark.parametrize(("activation", "forced"), [("sin", False), ("erf", True)])
def test_a_rest_is_vectorized_only_where_llvm_can(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], activation: str, forced: bool
) -> None:
    """A fused rest calling `llvm.sin` (C's `sinf` per element: no vector code here) is
    not asked to vectorize: LLVM would print a warning ("loop not vectorized") on
    every compile. One calling erf of float, a GELU's (`vmath.py`'s own, straight-line
    code), is. Both run fused, equal to the interpreter."""
    rng = np.random.default_rng(5)
    x, w = normal(rng, (1, 4, 9, 9), "f32"), normal(rng, (8, 4, 3, 3), "f32")
    module = _conv_rest(activation).module()
    expected = run_function(module, "main", [x, w])
    sources, program = _compiled(module, tmp_path)
    llvm = str(sources["cpu_0.ll"])
    assert '.elementwise"(' in llvm
    assert ("vectorize.predicate" in llvm) == forced
    # sin: y reaches 78, where y * sin(0.7071 y) changes 55 times faster than y: the
    # conv's float32 rounding in another summation order (1e-5) becomes 5e-4 there.
    # C's sinf itself is within 3.3e-8 of float64's sin over [-30, 30], as NumPy's is.
    tolerance = 1e-3 if activation == "sin" else 1e-5
    assert_same(program.run("main", [x, w]), expected, ["y"], f32_atol=tolerance)
    assert "remark" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("shape", "kernel", "strides", "pads"),
    [
        ((1, 3, 8, 8), (2, 2), (2, 2), (0, 0, 0, 0)),  # the conv net's
        ((2, 5, 9, 7), (3, 3), (2, 2), (1, 1, 1, 1)),  # ResNet's, odd sizes, batch 2
        ((1, 2, 7, 6), (3, 2), (1, 3), (0, 1, 2, 0)),  # asymmetric everything
        ((1, 18, 10, 10), (3, 3), (1, 1), (1, 1, 1, 1)),  # stride 1
        ((1, 2, 5, 5), (1, 1), (2, 2), (0, 0, 0, 0)),  # 1x1: a subsampling, not a product
    ],
)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_generated_pools_match_the_interpreter(
    tmp_path: Path,
    shape: tuple[int, ...],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    kind: str,
) -> None:
    """A float32 max or average pool is generated in the kernel's unit (no numba
    routine): a max pool's padding never wins, an average's is not counted, a NaN
    propagates, as the interpreter (NumPy) computes it."""
    rng = np.random.default_rng(sum(shape))
    x = normal(rng, shape, "f32")
    x[0, 0, 2, 0] = np.nan
    graph = Graph("main")
    gx = graph.input("x", x.shape, "f32")
    pool = dflow.max_pool2d if kind == "max" else dflow.avg_pool2d
    graph.output(pool(gx, kernel, strides, pads=pads) * 2.0)
    module = graph.module()
    expected = run_function(module, "main", [x])
    sources, program = _compiled(module, tmp_path)
    assert f'call void @"dflow.{kind}_pool.' in str(sources["cpu_0.ll"])
    assert f"lib.{kind}_pool2d" not in str(sources["cpu_0.py"])
    (got,) = program.run("main", [x])
    assert np.isnan(got[0, 0]).any()
    if kind == "max":  # a maximum is exact; an average's sum is taken in tap order
        assert np.array_equal(got, expected[0], equal_nan=True)
    np.testing.assert_allclose(got, expected[0], rtol=1e-6, atol=1e-7, equal_nan=True)


def test_a_scratch_buffer_is_allocated_and_freed(tmp_path: Path) -> None:
    """A squeeze-and-excitation gate (EfficientNet's): the 1x1 convolution of the
    pooled channels is not a result, so its kernel writes it into a scratch buffer
    (`memref.alloc`) that the epilogue reads back; the kernel is LLVM's, its scratch
    from `malloc` and freed before it returns, and the result the interpreter's."""
    rng = np.random.default_rng(13)
    x, w = normal(rng, (1, 6, 5, 5), "f32"), normal(rng, (6, 3, 1, 1), "f32")
    p, b = normal(rng, (1, 3, 1, 1), "f32"), normal(rng, (6,), "f32")
    graph = Graph("main")
    gx, gw = graph.input("x", x.shape, "f32"), graph.input("w", w.shape, "f32")
    gp, gb = graph.input("p", p.shape, "f32"), graph.input("b", b.shape, "f32")
    graph.output(conv2d(gp, gw, gb).sigmoid() * gx)
    module = graph.module()
    expected = run_function(module, "main", [x, w, p, b])
    sources, program = _compiled(module, tmp_path)
    llvm = str(sources["cpu_0.ll"])
    assert "is the numba target's" not in llvm and "from Python" not in llvm, llvm[:400]
    scratch = re.search(r"(%scratch\d+) = call ptr @malloc\(i64 24\)", llvm)
    assert scratch is not None and f"call void @free(ptr {scratch[1]})" in llvm
    assert_same(program.run("main", [x, w, p, b]), expected, ["y"], f32_atol=1e-5)


@pytest.mark.parametrize("build", ["softmax", "layer_norm", "sum"])
def test_row_folds_are_vector_folds(tmp_path: Path, build: str) -> None:
    """A softmax's row maximum and sum, a layer norm's sums and a reduce_sum over rows
    fold in vector lanes after LLVM's optimizations (their combines marked `nsz` and
    `reassoc`: 16-lane `llvm.maximum`/`fadd`, reduced to one value by
    `llvm.vector.reduce.*` at the end); the results equal the interpreter's (the sums
    in another order)."""
    rng = np.random.default_rng(5)
    x = normal(rng, (16, 1000), "f32")
    graph = Graph("main")
    gx = graph.input("x", x.shape, "f32")
    if build == "softmax":
        graph.output(dflow.softmax(gx, axis=1))
    elif build == "layer_norm":
        scale, bias = graph.input("g", (1000,), "f32"), graph.input("b", (1000,), "f32")
        graph.output(dflow.layer_norm(gx, scale, bias))
    else:
        graph.output(dflow.reduce_sum(gx.exp(), axes=[1]))
    module = graph.module()
    inputs = [x] if build != "layer_norm" else [x, normal(rng, (1000,), "f32"), x[0]]
    expected = run_function(module, "main", inputs)
    sources, program = _compiled(module, tmp_path)
    headed = str(sources["cpu_0.ll"]).split("; ===== unit ")[1:]
    name = "fused" if build == "sum" else build  # the exp fused into the sum
    (unit,) = [u.split("\n", 1)[1] for u in headed if name in u.split("\n", 1)[0]]
    optimized = llvm_jit.optimized(unit, llvm_jit.target_machine())
    assert "@llvm.vector.reduce.fadd.v16f32(" in optimized, optimized
    if build == "softmax":
        assert "@llvm.vector.reduce.fmaximum.v16f32(" in optimized
    assert_same(program.run("main", inputs), expected, ["y"], f32_atol=1e-5)
