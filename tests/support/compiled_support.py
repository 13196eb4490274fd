"""Helpers shared by the compiled suites (`tests/test_compiled_*.py`).

A program is built with the frontend (`build`: `@main` over one argument per array),
compiled with `dflow.driver.compilation.compiler.compile_module`, written with
`write_modules` and loaded with `runtime.load_program` (`compile_to`); `check` runs it
and the reference interpreter (`run_function`) on the same inputs and `assert_same`
compares them: same dtype and shape, floats within `TOLERANCE` (rtol 1e-5 / atol 1e-6
for f32, rtol 1e-10 for f64), integers and booleans exactly. `normal` makes seeded
inputs of each element type (`NAMES`, `DTYPES`, `FLOATS`, `INTEGERS`, `NUMBERS`).

`kernels_typed_as_declared` is an autouse fixture: a suite that imports it has every
kernel its programs ran checked, after each test, against the argument types the
programs declare (`LOADED` holds the test's programs, `DECLARED` the types seen so far).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp

from dflow.dialects.devices import DeviceList
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.types import ALL_ELEMENTS
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.frontend import Graph, Tensor
from dflow.interpreters.df import run_function
from dflow.runtime import LoadedProgram, load_program
from dflow.runtime.dtypes import is_floating

Array = NDArray[Any]
Body = Callable[..., dict[str, Tensor]]

NAMES = {numpy_dtype(element): str(element) for element in ALL_ELEMENTS}
DTYPES = {name: dtype for dtype, name in NAMES.items()}
FLOATS = ("f32", "f64")
INTEGERS = ("i32", "i64")
NUMBERS = (*FLOATS, *INTEGERS)
NARROW = ("f16", "bf16", "i8", "i16", "ui8", "ui16", "ui32", "ui64")
"""The element types held in fewer bits than they compute in (and ui64)."""
TOLERANCE = {
    np.dtype(np.float32): (1e-5, 1e-6),
    np.dtype(np.float64): (1e-10, 1e-12),
    np.dtype(np.float16): (2e-3, 1e-3),  # a unit in the last place, for sums in other orders
    DTYPES["bf16"]: (1.6e-2, 1e-2),
    **dict.fromkeys(
        (DTYPES[name] for name in ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f4E2M1FN")),
        (0.0, 0.0),  # tests keep their sums and products exact in f32: the same bits
    ),
}


def build(arrays: Sequence[Array], body: Body) -> tuple[ModuleOp, list[str]]:
    """`@main` over one argument per array, returning `body(graph, *arguments)`'s values;
    also the results' names (for messages)."""
    graph = Graph("main")
    arguments = [
        graph.input(f"a{i}", array.shape, NAMES[array.dtype]) for i, array in enumerate(arrays)
    ]
    results = body(graph, *arguments)
    graph.output(*results.values())
    return graph.module(), list(results)


LOADED: list[LoadedProgram] = []


def compile_to(module: ModuleOp, directory: Path, devices: str | None = None) -> LoadedProgram:
    """`module` compiled (in place) into `directory` and loaded."""
    sources = compile_module(module, None if devices is None else DeviceList.parse(devices))
    write_modules(sources, directory)
    program = load_program(directory)
    LOADED.append(program)
    return program


DECLARED: dict[int, set[tuple[Any, ...]]] = {}
"""The argument types declared for each kernel dispatcher (by `id`) by every program
loaded so far: a kernel in several programs, or for several dtypes (its text is the
same), is one dispatcher (`runtime/kernel_cache.py`)."""


@pytest.fixture(autouse=True)
def kernels_typed_as_declared() -> Iterator[None]:
    """After each test, every kernel its programs ran was called only with types some
    program's `KERNEL_ARGUMENTS` declares for it (C-contiguous arrays of that dtype
    and rank), which is what the runtime's warm start loads from the cache: a wrong
    entry would leave numba compiling a specialization nobody declared."""
    LOADED.clear()
    yield
    kernels: list[tuple[str, Any]] = []
    for program in LOADED:
        for part in program.parts:
            declared: dict[str, list[tuple[str, int]]] = getattr(
                part.module, "KERNEL_ARGUMENTS", {}
            )
            for name, arguments in declared.items():
                dispatcher = getattr(part.module, name)
                expected = tuple(
                    numba.types.Array(numba.from_dtype(np.dtype(d)), r, "C") for d, r in arguments
                )
                DECLARED.setdefault(id(dispatcher), set()).add(expected)
                kernels.append((f"{part.device} {name}", dispatcher))
    for name, dispatcher in kernels:
        called = set(dispatcher.signatures)
        assert called <= DECLARED[id(dispatcher)], f"{name}: {called} not declared"


def assert_same(
    actual: Sequence[Any], expected: Sequence[Any], names: Sequence[str], f32_atol: float = 1e-6
) -> None:
    """Same dtypes and shapes; floats close (`f32_atol` for sums whose terms cancel)."""
    assert len(actual) == len(expected) == len(names)
    for name, result, want in zip(names, actual, expected, strict=True):
        got = np.asarray(result)
        assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, expected {want.dtype}"
        assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
        if is_floating(want.dtype):
            rtol, atol = TOLERANCE[want.dtype]
            atol = max(atol, f32_atol) if want.dtype == np.float32 else atol
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


def check(
    directory: Path, arrays: Sequence[Array], body: Body, f32_atol: float = 1e-6
) -> LoadedProgram:
    """Compiled `body` over `arrays` equals the interpreter; returns the program."""
    module, names = build(arrays, body)
    expected = run_function(module, "main", arrays)
    program = compile_to(module, directory)
    assert_same(program.run("main", arrays), expected, names, f32_atol)
    return program


def normal(rng: np.random.Generator, shape: Sequence[int], dtype: str, scale: float = 2.0) -> Array:
    """Seeded values of `dtype`: scaled normal floats, integers in [-10, 10), fair booleans."""
    if is_floating(DTYPES[dtype]):
        return (rng.standard_normal(shape) * scale).astype(DTYPES[dtype])
    if dtype == "i1":
        return rng.random(shape) < 0.5
    return rng.integers(0 if dtype.startswith("u") else -10, 10, shape).astype(DTYPES[dtype])
