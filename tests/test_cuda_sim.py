"""The GPU path (CUDA kernels, `runtime.library.gpu`, `GpuContext`) on numba's CUDA simulator.

There is no GPU here, so each program placed on `gpu:0` (alone, or beside `cpu:0`
with `df.send`/`df.recv` between them) is compiled with `compile_module`, written,
loaded and run twice (the arena is reused) in a child process that has
`NUMBA_ENABLE_CUDASIM=1` in its environment: the simulator must be chosen before
numba is imported, and the rest of the suite imports numba without it. Each result
must equal the interpreter's (`run_function`): floats within rtol 1e-5 / atol 1e-6
(f32) or 1e-10 (f64), a unit in the last place for f16 and bf16, integers and
booleans exactly. The simulator runs each CUDA
thread as Python, slowly, so the shapes stay near 1e3 elements.

The simulator runs kernels as Python, not as CUDA: it cannot tell whether they
compile for a GPU. So the child also records every launch (kernel and argument
types), and a second child, without the simulator, compiles each launched kernel to
PTX for sm_90 (`numba.cuda.compile_ptx`: numba's typing and lowering, then NVVM from
the `numba-cuda[cu13]` extra; no driver needed), what a real launch does before the
driver loads it; an emitted kernel that no case launched fails that test too.

    python tests/test_cuda_sim.py simulate RECORDS.jsonl   # the first child, by hand
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dflow.dialects.devices import DeviceList
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.symbols import function_named
from dflow.driver.compilation.compiler import compile_module, write_modules
from dflow.driver.loading.source import parse_module
from dflow.interpreters.df import run_function
from dflow.runtime import load_program
from dflow.runtime.dtypes import is_floating
from dflow.runtime.program import _import  # pyright: ignore[reportPrivateUsage]

# numba itself is imported inside the children's functions only: the first child runs
# under the simulator, the second without it, and numba reads the choice on import.

ROOT = Path(__file__).resolve().parent.parent

CASE_DIRECTORY = ROOT / "tests" / "data" / "cuda_sim"
"""One program per file; its first line names the devices: `// devices: cpu:0,gpu:0`
(explicit `df.device` placements in it are kept)."""


def _cases() -> dict[str, tuple[str, str]]:
    cases: dict[str, tuple[str, str]] = {}
    for path in sorted(CASE_DIRECTORY.glob("*.mlir")):
        text = path.read_text()
        devices = text.splitlines()[0].removeprefix("// devices:").strip()
        cases[path.stem] = (text, devices)
    return cases


CASES = _cases()

TOLERANCE = {
    "float32": (1e-5, 1e-6),
    "float64": (1e-10, 1e-12),
    "float16": (1e-3, 1e-3),  # a unit in the last place: f32 results on either side of a tie
    "bfloat16": (8e-3, 8e-3),
}
SIMULATOR_TIMEOUT_S = 300


# ----------------------------------------------------------------------------- children


def _inputs(module: Any) -> list[Any]:
    """Seeded inputs for `@main`: normal floats, small integers (non-negative unsigned)."""
    rng = np.random.default_rng(0)
    arrays: list[Any] = []
    for type in function_named(module, "main").function_type.inputs:
        shape, dtype = tuple(type.get_shape()), numpy_dtype(type.element_type)
        if is_floating(dtype):
            arrays.append(rng.standard_normal(shape).astype(dtype))
        else:
            arrays.append(rng.integers(0 if dtype.kind == "u" else -9, 10, shape).astype(dtype))
    return arrays


def _compare(got: Any, expected: Any) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype.name in TOLERANCE:
        rtol, atol = TOLERANCE[got.dtype.name]
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, expected)


def _run_case(name: str, text: str, devices: str, directory: Path) -> dict[str, Any]:
    start = time.perf_counter()
    reference = parse_module(text, name)
    arguments = _inputs(reference)
    expected = run_function(reference, "main", arguments)
    sources = compile_module(parse_module(text, name), DeviceList.parse(devices))
    assert any(source.startswith("gpu") for source in sources), sorted(sources)
    write_modules(sources, directory / name)
    program = load_program(directory / name)
    compiled = time.perf_counter()
    for _ in range(2):  # the second run reuses the arena
        results = program.run("main", arguments)
        assert len(results) == len(expected)
        for got, want in zip(results, expected, strict=True):
            _compare(got, want)
    return {
        "ok": True,
        "devices": sorted(name for name in sources if name.endswith(".py")),
        "compile_s": round(compiled - start, 2),
        "run_s": round(time.perf_counter() - compiled, 2),
    }


def _record_launches(records: set[str]) -> None:
    """Record each simulated kernel launch: its function, closure and argument types."""
    from numba.cuda.simulator import kernel  # noqa: PLC0415
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray  # noqa: PLC0415

    def describe(value: Any) -> list[Any]:
        if isinstance(value, FakeCUDAArray | np.ndarray):
            array = value._ary if isinstance(value, FakeCUDAArray) else value
            layout = "C" if array.flags.c_contiguous else "A"
            return ["array", array.dtype.name, array.ndim, layout]
        if isinstance(value, bool | np.bool_):
            return ["scalar", "bool"]
        if isinstance(value, np.generic):
            return ["scalar", value.dtype.name]
        return ["scalar", "int64" if isinstance(value, int) else "float64"]

    launch = kernel.FakeCUDAKernel.__call__

    def recording(self: Any, *args: Any) -> Any:
        if not (self._device or kernel._kernel_context):
            function = self.fn
            closure = [str(c.cell_contents) for c in function.__closure__ or ()]
            where = [function.__code__.co_filename, function.__qualname__, closure]
            records.add(json.dumps([*where, [describe(a) for a in args]]))
        return launch(self, *args)

    kernel.FakeCUDAKernel.__call__ = recording


def simulate(records_path: Path) -> dict[str, Any]:
    """The first child (under the simulator): every case's outcome, by name."""
    try:
        from numba import cuda  # noqa: PLC0415
    except Exception as error:
        return {"skip": f"numba.cuda does not import: {type(error).__name__}: {error}"}
    if not cuda.is_available():
        return {"skip": "the CUDA simulator is not available"}
    records: set[str] = set()
    _record_launches(records)
    outcomes: dict[str, Any] = {}
    for name, (text, devices) in CASES.items():  # programs beside the records, for `typecheck`
        try:
            outcomes[name] = _run_case(name, text, devices, records_path.parent)
        except Exception as error:
            outcomes[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    records_path.write_text("".join(line + "\n" for line in sorted(records)))
    return {"cases": outcomes}


LIBRARY = (ROOT / "dflow" / "runtime" / "library" / "gpu.py").resolve()


def _dispatchers(path: str, name: str) -> list[Any]:
    """The `@cuda.jit` dispatchers of the module at `path` (imported without the
    simulator), also those held in dicts of the module."""
    from numba.cuda.dispatcher import CUDADispatcher  # noqa: PLC0415

    if Path(path).resolve() == LIBRARY:
        module = importlib.import_module("dflow.runtime.library.gpu")
    else:
        module = _import(Path(path), name)
    found: list[Any] = []
    for value in vars(module).values():
        for item in value.values() if isinstance(value, dict) else [value]:
            if isinstance(item, CUDADispatcher):
                found.append(item)
    return found


def _numba_type(described: list[Any]) -> Any:
    from numba.cuda import types  # noqa: PLC0415
    from numba.cuda.np.numpy_support import from_dtype  # noqa: PLC0415

    if described[0] == "array":
        return types.Array(from_dtype(np.dtype(described[1])), described[2], described[3])
    return types.boolean if described[1] == "bool" else from_dtype(np.dtype(described[1]))


def _ptx(kernel: Any, arguments: list[Any]) -> str:
    """PTX for sm_90 of one kernel at one launch's argument types."""
    from numba import cuda  # noqa: PLC0415

    signature = tuple(_numba_type(a) for a in arguments)
    ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx, ptx[:400]
    return ptx


def _match(kernels: list[Any], path: str, qualname: str, closure: list[str]) -> Any:
    matches = [
        k
        for k in kernels
        if k.py_func.__qualname__ == qualname
        and [str(c.cell_contents) for c in k.py_func.__closure__ or ()] == closure
    ]
    assert len(matches) == 1, f"{len(matches)} kernels named {qualname} in {path}"
    return matches[0]


def typecheck(records_path: Path) -> dict[str, Any]:
    """The second child (no simulator): each recorded launch compiled to PTX for sm_90
    (`numba.cuda.compile_ptx`: typing, lowering, NVVM; no driver needed), and the
    kernels of the emitted modules that no launch reached (device functions are
    compiled inside the kernels that call them)."""
    try:
        from numba.cuda import compile_ptx  # noqa: F401, PLC0415 (used by _ptx)
        from numba.cuda.np import numpy_support  # noqa: F401, PLC0415 (used by _numba_type)
    except Exception as error:
        return {"skip": f"numba-cuda's compiler does not import: {type(error).__name__}: {error}"}

    modules: dict[str, list[Any]] = {}
    compiled: set[int] = set()
    failures: list[str] = []
    lines = [line for line in records_path.read_text().splitlines() if line]
    for line in lines:
        path, qualname, closure, arguments = json.loads(line)
        if path not in modules:
            modules[path] = _dispatchers(path, f"dflow_typecheck_{len(modules)}")
        try:
            kernel = _match(modules[path], path, qualname, closure)
            _ptx(kernel, arguments)
            compiled.add(id(kernel))
        except Exception as error:
            failures.append(f"{qualname}{arguments}: {type(error).__name__}: {error}"[:2000])
    unlaunched = [
        f"{Path(path).name}:{k.py_func.__qualname__}"
        for path, kernels in modules.items()
        if Path(path).resolve() != LIBRARY
        for k in kernels
        if id(k) not in compiled and not k.targetoptions.get("device")
    ]
    return {"checked": len(lines), "failures": failures, "unlaunched": unlaunched}


# ----------------------------------------------------------------------------- the tests


def _child(mode: str, records: Path, simulator: bool) -> dict[str, Any]:
    environment = dict(os.environ)
    environment.pop("NUMBA_ENABLE_CUDASIM", None)
    if simulator:
        environment["NUMBA_ENABLE_CUDASIM"] = "1"
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), environment.get("PYTHONPATH")) if p
    )
    done = subprocess.run(
        [sys.executable, __file__, mode, str(records)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=environment,
        timeout=SIMULATOR_TIMEOUT_S,
    )
    last = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    assert last, f"the {mode} child failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(last[0])


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cuda_sim") / "launches.jsonl"


@pytest.fixture(scope="module")
def simulated(records: Path) -> dict[str, Any]:
    outcome = _child("simulate", records, simulator=True)
    if "skip" in outcome:
        pytest.skip(outcome["skip"])
    return outcome["cases"]


@pytest.mark.parametrize("case", list(CASES))
def test_on_the_simulator_equals_the_interpreter(simulated: dict[str, Any], case: str) -> None:
    outcome = simulated[case]
    assert outcome["ok"], outcome["error"]
    assert "gpu_0.py" in outcome["devices"]
    if CASES[case][1] == "cpu:0,gpu:0":
        assert outcome["devices"] == ["cpu_0.py", "gpu_0.py"]


def test_launched_kernels_compile_to_ptx(simulated: dict[str, Any], records: Path) -> None:
    outcome = _child("typecheck", records, simulator=False)
    if "skip" in outcome:
        pytest.skip(outcome["skip"])
    assert outcome["checked"] >= len(CASES), outcome
    assert not outcome["failures"], "\n\n".join(outcome["failures"])
    assert not outcome["unlaunched"], f"emitted kernels no case launched: {outcome['unlaunched']}"


if __name__ == "__main__":
    mode, path = sys.argv[1], Path(sys.argv[2])
    result = simulate(path) if mode == "simulate" else typecheck(path)
    print(json.dumps(result))
