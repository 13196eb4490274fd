"""`-t df-llvm`: each CPU device's LLVM module, checked against the numba target
kernel by kernel.

Each program is lowered by dflow's own pipeline; its kernels are printed by both
targets. The LLVM module's units are parsed, verified, optimized and JIT-compiled by
llvmlite (the one numba ships) as the runtime does (`runtime/llvm_jit.py`); then every
kernel runs on the same random buffers in both, and every buffer must come out the
same (to a float32 rounding: the two targets call different `exp`/`tanh`). A kernel
the printer does not handle yet (4-bit integers) is named in a comment with its
reason, and a convolution's library call made from Python before its epilogue.
"""

from __future__ import annotations

import ctypes
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, ModuleOp

from dflow import conv2d, layer_norm, rem
from dflow.backend.llvm.kernel import KernelPrinter
from dflow.backend.llvm.module import emit_llvm_modules
from dflow.backend.numba.module import emit_modules
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.symbols import kernel_functions
from dflow.driver.compilation.compiler import lower
from dflow.driver.frontdoors.cli import main
from dflow.frontend import Graph, Tensor
from dflow.runtime import llvm_jit

Body = Callable[[Graph], list[Tensor]]


def _elementwise(g: Graph) -> list[Tensor]:
    x, y = g.input("x", (4, 37), "f32"), g.input("y", (37,), "f32")
    z = (x * y + 1.5).exp().tanh()
    return [z, (x > y).cast("f32") * x - y, rem(x * 7.0, abs(y) + 0.5)]


def _integers(g: Graph) -> list[Tensor]:
    a, b = g.input("a", (5, 9), "i32"), g.input("b", (9,), "i64")
    return [a * 3 - a.maximum(2), (b - 2).minimum(b * b).cast("f64"), a.cast("i64") + b]


def _rows(g: Graph) -> list[Tensor]:
    x = g.input("x", (6, 40), "f64")
    s = g.input("s", (40,), "f64")
    return [x.softmax(1), layer_norm(x.tanh(), s, s, 1e-3), x.sum([1]), x.max([0])]


def _half(g: Graph) -> list[Tensor]:
    h = g.input("h", (3, 24), "f16")
    return [(h * h).exp(), h.cast("f32").transpose((1, 0))]


PROGRAMS: dict[str, Body] = {
    "elementwise": _elementwise,
    "integers": _integers,
    "rows": _rows,
    "half": _half,
}


def _lowered(body: Body) -> ModuleOp:
    graph = Graph("main")
    graph.output(*body(graph))
    return lower(graph.module())


def _numba_kernels(module: ModuleOp, directory: Path) -> Any:
    path = directory / "cpu_0.py"
    path.write_text(emit_modules(module)["cpu:0"])
    spec = importlib.util.spec_from_file_location("dflow_llvm_check", path)
    assert spec is not None and spec.loader is not None
    python = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(python)
    return python


def _jit(text: str) -> Any:
    """The module's units compiled as the runtime compiles them, linked in one JIT."""
    machine = llvm_jit.target_machine()
    codes = [llvm_jit.compile_object(unit, machine) for unit in llvm_jit.units(text)]
    return llvm_jit.library_of(codes, machine).engine


def _functions(text: str) -> dict[str, str]:
    """The LLVM function of each kernel, by symbol, from the units' lines
    (`; ===== unit dflow.k.<digest>: kernel, kernel, ...`)."""
    found: dict[str, str] = {}
    for name, kernels in re.findall(r"^; ===== unit (dflow\.k\.\w+): (.*)$", text, re.M):
        found.update(dict.fromkeys(kernels.split(", "), name))
    return found


def _buffers(kernel: Any, rng: np.random.Generator) -> list[np.ndarray[Any, Any]]:
    arrays: list[np.ndarray[Any, Any]] = []
    for argument in kernel.body.block.args:
        assert isinstance(argument.type, MemRefType)
        dtype = numpy_dtype(argument.type.element_type)
        shape = tuple(argument.type.get_shape())
        values = rng.standard_normal(shape) * 3
        arrays.append(np.ascontiguousarray(values.astype(dtype)))
    return arrays


def _sizes(kernel: Any) -> list[int]:
    """The sizes the kernel's LLVM function takes after its buffers."""
    printer = KernelPrinter(set())
    printer.function(kernel)
    return printer.scalars


def _held(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """As the numba target holds it: f16 as its bits."""
    return array.view(np.uint16) if array.dtype == np.float16 else array


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_kernel_computes_as_the_numba_target(name: str, tmp_path: Path) -> None:
    module = _lowered(PROGRAMS[name])
    text = emit_llvm_modules(module)["cpu:0"]
    engine = _jit(text)
    functions = _functions(text)
    python = _numba_kernels(module, tmp_path)
    kernels = kernel_functions(module)
    assert kernels
    rng = np.random.default_rng(len(name))
    for kernel in kernels:
        symbol = kernel.sym_name.data
        ours, theirs = _buffers(kernel, rng), []
        theirs = [array.copy() for array in ours]
        address = engine.get_function_address(functions[symbol])
        assert address
        sizes = _sizes(kernel)  # what a segment passes after the buffers
        arguments = [ctypes.c_void_p] * len(ours) + [ctypes.c_int64] * len(sizes)
        signature = ctypes.CFUNCTYPE(None, *arguments)
        signature(address)(*[array.ctypes.data for array in ours], *sizes)
        getattr(python, symbol)(*[_held(array) for array in theirs])
        for index, (got, want) in enumerate(zip(ours, theirs, strict=True)):
            np.testing.assert_allclose(
                got.astype(np.float64), want.astype(np.float64), rtol=2e-6, atol=1e-6,
                err_msg=f"{symbol} buffer {index}",
            )  # fmt: skip


def test_a_kernel_the_printer_refuses_is_named_with_its_reason() -> None:
    """A kernel of 4-bit integers stays numba's, and a dilated convolution's library
    call is made from Python before its LLVM epilogue: the LLVM module says both."""
    graph = Graph("main")
    x, w = graph.input("x", (1, 2, 5, 5), "f32"), graph.input("w", (3, 2, 3, 3), "f32")
    n = graph.input("n", (4,), "i8")
    dilated = conv2d(x, w, dilations=(2, 2))
    graph.output(dilated.tanh(), (n.cast("i4") * n.cast("i4")).cast("i8"))
    lines = emit_llvm_modules(lower(graph.module()))["cpu:0"].splitlines()
    refused = [line for line in lines if "is the numba target's" in line]
    assert len(refused) == 1 and "is the numba target's: i4 values" in refused[0]
    assert (
        "; @fused_conv2d_0 makes its library calls from Python, then its epilogue "
        "@fused_conv2d_0.epilogue" in lines
    )


MATMUL = """func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %r = df.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
"""


def test_dflow_opt_refuses_an_unlowered_module_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A module not lowered: one line naming the op and the pipeline to run, exit 1."""
    source = tmp_path / "mm.mlir"
    source.write_text(MATMUL)
    assert main(["opt", str(source), "-t", "df-llvm"]) == 1
    error = capsys.readouterr().err
    message = (
        "mm.mlir: error: -t df-llvm: the df-llvm target cannot print df.matmul; it "
        "prints lowered modules: run -p df-inline,"
    )
    assert error.count("\n") == 1 and message in error
