"""Compile time of the df-llvm target's one module against the numba target's kernels
one by one, on the MLP training step (issue 33's measurement).

    taskset -c 0 python bench/llvm_compile.py [--rounds 3]

The MLP training step (784-512-512-10, batch 256, `bench/placement.py`'s `mlp`) is
lowered once; the kernels the df-llvm target prints (all but the library calls of
the products, which it does not print yet) are compiled two ways, each in a fresh
process with fresh caches: as one LLVM module by llvmlite (parse, the new pass
manager at -O3 for the host CPU, machine code, JIT) and by numba, one `@njit`
kernel at a time, each called once (as a program's first call does). Printed: both
times per round, the best of `--rounds`, their ratio, and how many vector
instructions (ymm/zmm registers) the LLVM module's assembly holds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMON = """
import sys, time
sys.path[:0] = [sys.argv[1] + "/bench", sys.argv[1] + "/tests/support"]
from placement import mlp
from dflow.backend.llvm.kernel import KernelPrinter
from dflow.backend.llvm.types import UnsupportedKernelError
from dflow.dialects.df.symbols import kernel_functions
from dflow.driver.compilation.compiler import lower
import dflow.runtime.library.cpu, dflow.runtime.library.vmath  # the runtime, compiled already
module = lower(mlp())
declarations, lines, printed = set(), [], []
for kernel in kernel_functions(module):
    try:
        lines += KernelPrinter(declarations).function(kernel)
        printed.append(kernel)
    except UnsupportedKernelError:
        pass
"""

LLVM = (
    COMMON
    + """
from llvmlite import binding
binding.initialize_native_target()
binding.initialize_native_asmprinter()
started = time.perf_counter()
parsed = binding.parse_assembly("\\n".join(lines + sorted(declarations)) + "\\n")
parsed.verify()
features = binding.get_host_cpu_features().flatten()
machine = binding.Target.from_default_triple().create_target_machine(
    cpu=binding.get_host_cpu_name(), features=features, opt=3)
builder = binding.create_pass_builder(machine, binding.create_pipeline_tuning_options(3))
builder.getModulePassManager().run(parsed, builder)
engine = binding.create_mcjit_compiler(parsed, machine)
engine.finalize_object()
seconds = time.perf_counter() - started
assembly = machine.emit_assembly(parsed)
print(seconds, len(printed), assembly.count("ymm") + assembly.count("zmm"))
"""
)

NUMBA = (
    COMMON
    + """
import importlib.util, tempfile
from pathlib import Path
import numpy as np
from dflow.backend.numba.module import emit_modules
from dflow.dialects.df.arrays import numpy_dtype
path = Path(tempfile.mkdtemp()) / "cpu_0.py"
path.write_text(emit_modules(module)["cpu:0"])
spec = importlib.util.spec_from_file_location("bench_cpu_0", path)
python = importlib.util.module_from_spec(spec)
spec.loader.exec_module(python)
buffers = [[np.zeros(tuple(a.type.get_shape()), numpy_dtype(a.type.element_type))
            for a in kernel.body.block.args] for kernel in printed]
started = time.perf_counter()
for kernel, arguments in zip(printed, buffers):
    getattr(python, kernel.sym_name.data)(*arguments)
print(time.perf_counter() - started, len(printed), 0)
"""
)


def _run(code: str) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as cache:
        environment = {"NUMBA_CACHE_DIR": cache + "/numba", "DFLOW_CACHE_DIR": cache + "/dflow"}
        output = subprocess.run(
            [sys.executable, "-c", code, str(ROOT)],
            env={**os.environ, **environment},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    return float(output[0]), int(output[1]), int(output[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    best = {"df-llvm": float("inf"), "numba": float("inf")}
    for round_ in range(args.rounds):
        llvm_seconds, kernels, vectors = _run(LLVM)
        numba_seconds, _, _ = _run(NUMBA)
        best["df-llvm"] = min(best["df-llvm"], llvm_seconds)
        best["numba"] = min(best["numba"], numba_seconds)
        print(f"round {round_ + 1}: df-llvm {llvm_seconds:.3f} s, numba {numba_seconds:.3f} s")
    print(f"{kernels} kernels of the MLP training step (the products' library calls left out)")
    print(f"df-llvm, one module at -O3: {best['df-llvm']:.3f} s ({vectors} ymm/zmm operands)")
    print(f"numba, kernel by kernel:    {best['numba']:.3f} s")
    print(f"numba / df-llvm: {best['numba'] / best['df-llvm']:.1f}x")


if __name__ == "__main__":
    main()
