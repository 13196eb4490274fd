"""Whole programs compiled (the numba target and the runtime) against the reference
interpreter.

Built with the frontend or parsed from text, each is compiled and loaded as in
`test_compiled_ops.py` and its results must equal the interpreter's on the same
inputs, within the same tolerances (`compiled_support.assert_same`): returned
constants, arguments and values (twice), a program run again with new inputs,
parallel kernels, calls inlined with every function an entry, the MLP's gradient;
real programs (unused values and groups dropped, entries returning nothing or a
constant, several functions, size-0 dimensions, an empty constant, every element
type), each on one device and on cpu:0,cpu:1; then seeded random fused graphs and
random placements over cpu:0 and cpu:1 (against the single-device interpreter run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import ROOT
from compiled_support import (
    NUMBERS,
    Array,
    assert_same,
    build,
    check,
    compile_to,
    # an autouse fixture: imported so that pytest runs it around each test here
    kernels_typed_as_declared,  # noqa: F401  # pyright: ignore[reportUnusedImport]
    normal,
)
from graphgen import random_graph
from xdsl.dialects.builtin import ModuleOp, StringAttr

from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import parse_module
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function
from dflow.runtime import LoadedProgram, load_program

# ----------------------------------------------------------------------------- constants, results


def test_constants_and_returned_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    x = normal(rng, (2, 3), "f32")

    def body(g: Graph, x: Tensor) -> dict[str, Tensor]:
        dense = g.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        exp = x.exp()
        return {
            "returned dense f32 constant": dense,
            "returned splat f64": g.constant(np.full((2, 2), 1.5)),
            "returned i32 constant": g.constant(np.array([1, -2, 3], np.int32)),
            "returned i64 scalar": g.constant(np.asarray(2**40, np.int64)),
            "returned i1 constant": g.constant(np.array([[True, False], [False, True]])),
            "constant used by an op": x + dense,
            "splat used by an op": x * g.constant(np.full((1, 3), -2.0, np.float32)),
            "an argument returned": x,
            "the same argument again": x,
            "a reshaped argument": x.reshape([3, 2]),
            "a value returned": exp,
            "the same value again": exp,
            "the same constant again": dense,
            "constant-only op": dense * dense,
        }

    check(tmp_path, [x], body)


def test_a_program_runs_again_with_new_inputs(tmp_path: Path) -> None:
    """The arena is kept between runs; results of one run are not views into it."""
    rng = np.random.default_rng(13)
    first = [normal(rng, (8, 16), "f32"), normal(rng, (16, 4), "f32")]
    second = [normal(rng, (8, 16), "f32"), normal(rng, (16, 4), "f32")]

    def body(g: Graph, x: Tensor, w: Tensor) -> dict[str, Tensor]:
        h = (x @ w).relu()
        return {"h": h, "softmax": h.softmax(), "sum": h.sum([0])}

    module, names = build(first, body)
    want_first = run_function(module, "main", first)
    want_second = run_function(module, "main", second)
    program = compile_to(module, tmp_path)
    got_first = program.run("main", first)
    got_second = program.run("main", second)
    assert_same(got_first, want_first, names)
    assert_same(got_second, want_second, names)


def test_parallel_kernels(tmp_path: Path) -> None:
    """`parallel=True`: the outer loop of each nest is a `prange`, except a single trip
    (a scalar result), which numba's parfors cannot store; 0-d arrays are read with
    `.item()`, since parfors pass them to a `prange` body as scalars."""
    rng = np.random.default_rng(14)
    arrays = [normal(rng, (8, 16), "f32"), normal(rng, (16, 4), "f32"), normal(rng, (3, 5), "f64")]

    def body(g: Graph, x: Tensor, w: Tensor, v: Tensor) -> dict[str, Tensor]:
        h = (x @ w).relu()
        return {
            "h": h,
            "softmax": h.softmax(0),
            "loss": h.mean(),
            "sum keepdims": v.sum([0], keepdims=True),
            "max to scalar": (v * v).max(),
            "elementwise": (v.exp() - 1.0) * v,
            "scaled by a scalar": v * v.sum(),  # a prange reading a 0-d array
        }

    module, names = build(arrays, body)
    expected = run_function(module, "main", arrays)
    sources = compile_module(module, parallel=True, target="numba")
    source = sources["cpu_0.py"]
    assert isinstance(source, str)
    assert "numba.prange" in source
    assert ".item()" in source
    write_modules(sources, tmp_path)
    assert_same(load_program(tmp_path).run("main", arrays), expected, names)


CALLS = """
func.func @helper(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = df.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = df.exp %s : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e, %a : tensor<4xf32>, tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:2 = func.call @helper(%x, %y)
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %q:2 = func.call @helper(%r#0, %x)
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %q#0, %r#1, %q#1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
"""


def test_calls_are_inlined_and_every_function_is_an_entry(tmp_path: Path) -> None:
    module = parse_module(CALLS, "calls.mlir")
    inputs = [np.linspace(-1, 1, 4, dtype=np.float32), np.full(4, 0.5, np.float32)]
    expected = {entry: run_function(module, entry, inputs) for entry in ("main", "helper")}
    program = compile_to(module, tmp_path)
    for entry, want in expected.items():
        assert_same(program.run(entry, inputs), want, [f"{entry} {i}" for i in range(len(want))])


@pytest.mark.parametrize("devices", [None, "cpu:0,cpu:1"])
def test_a_gradient_program(tmp_path: Path, devices: str | None) -> None:
    """`df-autodiff`'s @main_grad of the MLP (matmul with transposes, reductions,
    broadcasting gradients), compiled, equals the interpreter."""
    module = parse_module((ROOT / "examples" / "mlp.mlir").read_text(), "mlp.mlir")
    apply_pipeline(module, "df-autodiff{func=main wrt=1,2,3,4}")
    inputs = random_inputs(next(iter(module.ops)), 4)  # type: ignore[arg-type]
    expected = run_function(module, "main_grad", inputs)
    program = compile_to(module, tmp_path, devices)
    names = ["loss", "p", "d w1", "d b1", "d w2", "d b2"]
    assert_same(program.run("main_grad", inputs), expected, names)


# ----------------------------------------------------------------------------- real programs

TWO_CPUS = [None, "cpu:0,cpu:1"]

UNUSED_VALUES = """
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %a = df.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.neg %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = df.softmax %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = df.matmul %x, %w {df.device = "cpu:1"}
      : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = df.relu %m {df.device = "cpu:1"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = df.reduce_sum %r {axes = array<i64: 1>, df.device = "cpu:1"}
      : (tensor<4x3xf32>) -> tensor<4xf32>
  %y = df.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = df.tanh %y {df.device = "cpu:1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = df.reduce_max %c {axes = array<i64: 1>, df.device = "cpu:1"}
      : (tensor<4x8xf32>) -> tensor<4xf32>
  %u = df.sigmoid %k : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y, %k : tensor<4x8xf32>, tensor<4xf32>
}
"""


def check_text(
    directory: Path, text: str, devices: str | None = None, entries: Sequence[str] = ("main",)
) -> LoadedProgram:
    """The program `text`, compiled for `devices`, equals the interpreter on seeded
    inputs for each of `entries`; returns the program."""
    module = parse_module(text, "program.mlir")
    runs: list[tuple[str, list[Array], Sequence[Any]]] = []
    for entry in entries:
        function = next(f for f in module.ops if getattr(f, "sym_name", None) == StringAttr(entry))
        inputs = random_inputs(function, 5)  # type: ignore[arg-type]
        runs.append((entry, inputs, run_function(module, entry, inputs)))
    program = compile_to(module, directory, devices)
    for entry, inputs, expected in runs:
        names = [f"@{entry} result {i}" for i in range(len(expected))]
        assert_same(program.run(entry, inputs, timeout=20), expected, names)
    return program


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_unused_values_and_groups_are_dropped(tmp_path: Path, devices: str | None) -> None:
    """Two chained unused elementwise ops (a fused group with no results), an unused
    softmax, a whole unused matmul group and an unused sigmoid of a value received
    from another device: the lowering drops them (`df-prune` before `df-fuse`), so
    the program compiles, launches no kernel for them, and still equals the
    interpreter, on the one device the pins name and on cpu:0,cpu:1."""
    module = parse_module(UNUSED_VALUES, "unused.mlir")
    inputs = random_inputs(next(iter(module.ops)), 3)  # type: ignore[arg-type]
    pruned = apply_pipeline(module.clone(), "df-inline,df-prune")
    assert_same(
        run_function(pruned, "main", inputs), run_function(module, "main", inputs), ["y", "k"]
    )
    program = check_text(tmp_path, UNUSED_VALUES, devices)
    kernels = [  # a segment of the llvm target names the kernels it launches
        kernel
        for part in program.parts
        for name, facts in part.module.KERNELS.items()
        for kernel in facts.get("kernels", [name])
    ]
    assert not [k for k in kernels if re.match(r"(softmax|neg|sigmoid|fused_exp)", k)], kernels
    # Without devices the pins name only cpu:1, so every op runs there and relu, tanh
    # and reduce_max make one group; on cpu:0,cpu:1 relu stays on cpu:0 (two kernels).
    assert len(kernels) == (1 if devices is None else 2), kernels


RETURNED = """
func.func @main(%x: tensor<2x3xf32>, %n: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>,
    tensor<2x3xf32>, tensor<3xi32>, tensor<2xf64>, tensor<2xf64>, tensor<i1>, tensor<2x3xf32>) {
  %c = df.constant dense<[2.0, -1.5]> : tensor<2xf64>
  %t = df.constant dense<true> : tensor<i1>
  %y = df.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = df.neg %y {df.device = "cpu:1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y, %y, %x, %n, %c, %c, %t, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
      tensor<3xi32>, tensor<2xf64>, tensor<2xf64>, tensor<i1>, tensor<2x3xf32>
}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_results_returned_twice_arguments_and_constants(
    tmp_path: Path, devices: str | None
) -> None:
    """A value returned twice, a returned argument and a returned constant (twice),
    and a result computed from a value sent to another device."""
    program = check_text(tmp_path, RETURNED, devices)
    inputs = random_inputs(next(iter(parse_module(RETURNED, "r.mlir").ops)), 1)  # type: ignore[arg-type]
    kept = inputs[0].copy()
    program.run("main", inputs)[2][...] = 0  # the returned argument is a copy
    assert np.array_equal(inputs[0], kept)


NOTHING_USED = """
func.func @main(%x: tensor<4xf32>) {
  %a = df.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = df.softmax %a {df.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
func.func @only_constant() -> tensor<2xi64> {
  %c = df.constant dense<[3, -4]> : tensor<2xi64>
  func.return %c : tensor<2xi64>
}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_an_entry_that_returns_nothing_and_one_of_a_constant(
    tmp_path: Path, devices: str | None
) -> None:
    check_text(tmp_path, NOTHING_USED, devices, entries=("main", "only_constant"))


SEVERAL_FUNCTIONS = """
func.func @layer(%x: tensor<2x4xf64>, %w: tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>) {
  %m = df.matmul %x, %w : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %h = df.tanh %m : (tensor<2x4xf64>) -> tensor<2x4xf64>
  %unused = df.exp %h : (tensor<2x4xf64>) -> tensor<2x4xf64>
  func.return %h, %x : tensor<2x4xf64>, tensor<2x4xf64>
}
func.func @main(%x: tensor<2x4xf64>, %w: tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>) {
  %a:2 = func.call @layer(%x, %w)
      : (tensor<2x4xf64>, tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>)
  %b:2 = func.call @layer(%a#0, %w)
      : (tensor<2x4xf64>, tensor<4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>)
  %s = df.add %b#0, %a#1 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  func.return %s, %b#1 : tensor<2x4xf64>, tensor<2x4xf64>
}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
def test_several_functions_calling_each_other(tmp_path: Path, devices: str | None) -> None:
    """Calls inlined; the callee's unused value and returned argument, and the callee as
    an entry of its own."""
    check_text(tmp_path, SEVERAL_FUNCTIONS, devices, entries=("main", "layer"))


SIZE_ZERO = """
func.func @main(%x: tensor<0x8xf32>, %w: tensor<8x3xf32>, %v: tensor<3x0xf32>,
    %u: tensor<0x5xf32>, %r: tensor<1x8xf32>) -> (tensor<0x8xf32>, tensor<8xf32>, tensor<0xf32>,
    tensor<1x8xf32>, tensor<0x3xf32>, tensor<3x5xf32>, tensor<0x8xf32>, tensor<8xf32>,
    tensor<8x0xf32>, tensor<0x8xi1>) {
  %e = df.exp %x : (tensor<0x8xf32>) -> tensor<0x8xf32>
  %a = df.add %e, %r : (tensor<0x8xf32>, tensor<1x8xf32>) -> tensor<0x8xf32>
  %s = df.reduce_sum %a {axes = array<i64: 0>} : (tensor<0x8xf32>) -> tensor<8xf32>
  %m = df.reduce_max %a {axes = array<i64: 1>, df.device = "cpu:1"}
      : (tensor<0x8xf32>) -> tensor<0xf32>
  %k = df.reduce_mean %x {axes = array<i64: 0>, keepdims = true}
      : (tensor<0x8xf32>) -> tensor<1x8xf32>
  %p = df.matmul %x, %w : (tensor<0x8xf32>, tensor<8x3xf32>) -> tensor<0x3xf32>
  %q = df.matmul %v, %u {df.device = "cpu:1"}
      : (tensor<3x0xf32>, tensor<0x5xf32>) -> tensor<3x5xf32>
  %f = df.softmax %a : (tensor<0x8xf32>) -> tensor<0x8xf32>
  %t = df.transpose %a {perm = array<i64: 1, 0>} : (tensor<0x8xf32>) -> tensor<8x0xf32>
  %g = df.greater %a, %r : (tensor<0x8xf32>, tensor<1x8xf32>) -> tensor<0x8xi1>
  %c = df.reduce_sum %t {axes = array<i64: 1>} : (tensor<8x0xf32>) -> tensor<8xf32>
  func.return %a, %s, %m, %k, %p, %q, %f, %c, %t, %g : tensor<0x8xf32>, tensor<8xf32>,
      tensor<0xf32>, tensor<1x8xf32>, tensor<0x3xf32>, tensor<3x5xf32>, tensor<0x8xf32>,
      tensor<8xf32>, tensor<8x0xf32>, tensor<0x8xi1>
}
"""


@pytest.mark.filterwarnings("ignore:Mean of empty slice")  # NumPy's, in the interpreter
@pytest.mark.parametrize("devices", TWO_CPUS)
def test_size_zero_dimensions(tmp_path: Path, devices: str | None) -> None:
    """Size-0 axes through elementwise ops (broadcast against a size-1 axis), compares,
    reductions over and beside them (sums of nothing are 0), softmax, transpose and
    products with an empty outer or inner dimension (the latter all zeros)."""
    check_text(tmp_path, SIZE_ZERO, devices)


EMPTY_CONSTANT = """
func.func @main(%x: tensor<0x3xf32>, %y: tensor<1x3xf32>) -> (tensor<0x3xf32>, tensor<3xf32>) {
  %e = df.constant dense<> : tensor<0x3xf32>
  %a = df.add %x, %e : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
  %b = df.mul %a, %y : (tensor<0x3xf32>, tensor<1x3xf32>) -> tensor<0x3xf32>
  %s = df.reduce_sum %b {axes = array<i64: 0>} : (tensor<0x3xf32>) -> tensor<3xf32>
  func.return %b, %s : tensor<0x3xf32>, tensor<3xf32>
}
"""


def test_an_empty_constant_in_a_fused_group(tmp_path: Path) -> None:
    """Found by generated programs: an empty constant is a splat of nothing, and the
    group's kernel read its element 0 (an IndexError while lowering)."""
    check_text(tmp_path, EMPTY_CONSTANT)


def every_element_type(element: str) -> str:
    """A program over `element`: compare, select, transpose, casts to f64 and back,
    reshape, concat and slice, and for numbers also add, abs, reduce_max and matmul;
    results of each kind, an argument among them."""
    t, v = f"tensor<3x4x{element}>", f"tensor<4x{element}>"
    lines = [
        f"%g = df.greater_equal %x, %y : ({t}, {v}) -> tensor<3x4xi1>",
        f'%e = df.select %g, %x, %y {{df.device = "cpu:1"}} : (tensor<3x4xi1>, {t}, {v}) -> {t}',
        f"%p = df.transpose %e {{perm = array<i64: 1, 0>}} : ({t}) -> tensor<4x3x{element}>",
        f"%f = df.cast %p : (tensor<4x3x{element}>) -> tensor<4x3xf64>",
        "%r = df.reshape %f : (tensor<4x3xf64>) -> tensor<3x4xf64>",
        f"%k = df.cast %r : (tensor<3x4xf64>) -> {t}",
        f"%c = df.concat %e, %k {{axis = 0}} : ({t}, {t}) -> tensor<6x4x{element}>",
        "%h = df.slice %c {start = array<i64: 2, 0>, limit = array<i64: 5, 4>}"
        f" : (tensor<6x4x{element}>) -> {t}",
    ]
    results = {"%e": t, "%g": "tensor<3x4xi1>", "%x": t, "%p": f"tensor<4x3x{element}>"}
    results |= {"%r": "tensor<3x4xf64>", "%h": t}
    if element != "i1":
        lines += [
            f"%a = df.add %x, %y : ({t}, {v}) -> {t}",
            f'%b = df.abs %a {{df.device = "cpu:1"}} : ({t}) -> {t}',
            f"%s = df.reduce_max %b {{axes = array<i64: 0>}} : ({t}) -> {v}",
            f"%m = df.matmul %x, %a {{transpose_b = true}} : ({t}, {t}) -> tensor<3x3x{element}>",
        ]
        results |= {"%b": t, "%s": v, "%m": f"tensor<3x3x{element}>"}
    types = ", ".join(results.values())
    body = "\n  ".join(lines)
    return f"""
func.func @main(%x: {t}, %y: {v}) -> ({types}) {{
  {body}
  func.return {", ".join(results)} : {types}
}}
"""


@pytest.mark.parametrize("devices", TWO_CPUS)
@pytest.mark.parametrize("element", [*NUMBERS, "i1"])
def test_every_element_type(tmp_path: Path, element: str, devices: str | None) -> None:
    check_text(tmp_path, every_element_type(element), devices)


# ----------------------------------------------------------------------------- random graphs


@pytest.mark.parametrize("seed", range(6))
def test_random_fused_graphs(tmp_path: Path, seed: int) -> None:
    dtype = "f64" if seed % 2 == 0 else "f32"
    module = random_graph(seed, min_ops=30, dtype=dtype)
    main = next(iter(module.ops))
    inputs = random_inputs(main, seed)  # type: ignore[arg-type]
    expected = run_function(module, "main", inputs)
    program = compile_to(module, tmp_path)
    assert_same(program.run("main", inputs), expected, [f"out{i}" for i in range(len(expected))])


def place_on_cpus(module: ModuleOp, seed: int) -> None:
    """Every df op on cpu:0 or cpu:1 at random."""
    rng = np.random.default_rng(seed)
    for op in module.walk():
        if op.name.startswith("df."):
            op.attributes["df.device"] = StringAttr(str(rng.choice(["cpu:0", "cpu:1"])))


@pytest.mark.parametrize("seed", range(4))
def test_random_placements_over_two_cpus(tmp_path: Path, seed: int) -> None:
    dtype = "f64" if seed % 2 == 0 else "f32"
    module = random_graph(100 + seed, min_ops=30, dtype=dtype)
    main = next(iter(module.ops))
    inputs = random_inputs(main, seed)  # type: ignore[arg-type]
    expected = run_function(module, "main", inputs)
    place_on_cpus(module, seed)
    program = compile_to(module, tmp_path, devices="cpu:0,cpu:1")
    assert sorted(program.devices) == ["cpu:0", "cpu:1"]
    assert "rt.send(" in (tmp_path / "cpu_0.py").read_text() + (tmp_path / "cpu_1.py").read_text()
    names = [f"out{i}" for i in range(len(expected))]
    assert_same(program.run("main", inputs, timeout=20), expected, names)
    assert_same(program.run("main", inputs, timeout=20), expected, names)  # and again
