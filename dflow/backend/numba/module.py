"""The numba target (level 6): one Python module per device, and `-t numba`.

    xdsl-opt lowered.mlir -t numba        # every device module, one after another
    dflow compile model.mlir -o out/      # out/cpu_0.py, out/gpu_0.py, ...

Input: a module after `df-lower-host` (kernels, library declarations, globals and
host functions; or one such module per device). Each device's module of Python
holds, in order:

- its header (imports, `DEVICE`) and the scalar helpers (`kernel.SCALAR_HELPERS`);
- its constants (`memref.global`) as NumPy arrays, bit for bit: in the source as
  hex, or, from `LARGE_CONSTANT_BYTES` on and when the module is written as files
  (`emit_module_files`), as views into one binary file beside it (`cpu_0.bin`,
  read once when the module loads);
- each kernel as a function named after it (`cpu_kernel`: a numba kernel, or a
  Python function of library calls and an `_epilogue` kernel; `gpu_kernel`);
- each host function as a plain Python function `main(rt, *arguments)` of calls
  to the runtime context `rt` (`host`); a function's Python name is its symbol, or
  `f_...` (a kernel's `k_...`) where the symbol is no Python identifier or a name
  the module uses (`@np`, `@abs`: `python_name`);
- `ENTRIES`: per host function, what the runtime checks and routes: its Python
  name, the part's argument and result indices in the whole entry, and the entry's
  argument and result types as `(shape, dtype)` pairs;
- `KERNELS`: what each kernel the host functions call computes, by Python name:
  the `df` ops it came from and the cost model's flops and bytes (`df.source`,
  `df.work`), for traces and profiles (`runtime/trace.py`);
- `CHANNELS`: every transfer its host functions make, as `(key, source device,
  destination device)`, sorted: a transport between processes numbers its messages
  from them (`runtime/mpi.py`);
- on a CPU, `KERNEL_ARGUMENTS`: each numba kernel's arrays as `(dtype, rank)`
  pairs, and `LIBRARY_CALLS`: the library routines kernels call from Python (a
  kernel that begins with library calls makes them from a plain function, then
  calls a numba kernel of the rest: `cpu_kernel.library_calls`) with theirs, so
  the runtime can load the cached code of both before the first call
  (`runtime/warm_start.py`).
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import IO, Any, cast

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute
from xdsl.utils.target import Target

from dflow.backend.numba.cpu_kernel import (
    CPU_HEADER,
    kernel_arguments,
    library_calls,
    library_signatures,
    print_cpu_kernel,
)
from dflow.backend.numba.gpu_kernel import GPU_HEADER, print_gpu_kernel
from dflow.backend.numba.host import print_host_function
from dflow.backend.numba.kernel import SCALAR_HELPERS
from dflow.backend.numba.names import RESERVED, Names, Namespace, dtype_of
from dflow.backend.numba.printer import Lines
from dflow.dialects import dfrt
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df import annotations
from dflow.dialects.df.symbols import device_scopes, graph_functions, kernel_functions

LARGE_CONSTANT_BYTES = 256
"""Constants from this size on go to the binary file beside the module."""

CONSTANT_ALIGNMENT = 64
"""Each constant in the binary file starts at a multiple of this many bytes."""

CONSTANTS_SUFFIX = ".bin"
"""The binary file of `cpu_0.py`'s constants is `cpu_0.bin`."""

MODULE_GLOBALS = frozenset(
    {
        "DEVICE",
        "THREADS",
        "ENTRIES",
        "CHANNELS",
        "KERNELS",
        "KERNEL_ARGUMENTS",
        "LIBRARY_CALLS",
        "_inline",
        "_kernel",
    }
    | set(re.findall(r"^def (\w+)", SCALAR_HELPERS, re.MULTILINE))
)
"""The names every module defines besides its symbols: globals and helpers."""


@dataclass
class ModulePrinter:
    """Prints one device module of a lowered module as Python source."""

    scope: ModuleOp
    parallel: bool = False
    out: Lines = field(default_factory=Lines)
    kernel_names: dict[str, str] = field(default_factory=dict[str, str])
    """The Python name of each kernel, by symbol (`python_name`)."""
    numba_kernels: dict[str, func.FuncOp] = field(default_factory=dict[str, func.FuncOp])
    """The numba kernels of a CPU module by Python name, and the kernel op each was
    printed from (a kernel beginning with library calls is printed as a Python
    function and, if anything is left, a numba kernel of the rest)."""
    library_calls: dict[str, list[list[tuple[str, int]]]] = field(
        default_factory=dict[str, list[list[tuple[str, int]]]]
    )
    """The library routines the CPU module's Python calls, with the (dtype, rank)
    of their arguments per call signature (rank -1: a scalar)."""
    kernels: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """What each kernel computes, by Python name (`KERNELS`)."""
    constants: bytearray | None = None
    """The binary file beside the module that large constants go to (None: every
    constant in the source)."""

    @property
    def device(self) -> str:
        return annotations.device_of(self.scope) or DEFAULT_DEVICE

    @property
    def on_gpu(self) -> bool:
        return self.device.startswith("gpu")

    def print(self) -> str:
        out = self.out
        self.preamble()
        out(f'DEVICE = "{self.device}"')
        self.helpers()
        globals_ = [op for op in self.scope.ops if isinstance(op, memref.GlobalOp)]
        if any(self.in_binary(op) for op in globals_):
            out("")
            out(f"_constants = np.fromfile(__file__[:-3] + {CONSTANTS_SUFFIX!r}, np.uint8)")
        for op in globals_:
            self.global_(op)
        for kernel in kernel_functions(self.scope):
            self.kernel(kernel)
        entries = {f.sym_name.data: self.host(f) for f in graph_functions(self.scope)}
        out("")
        out("")
        out(f"ENTRIES = {entries!r}")
        out(f"CHANNELS = {self.channels()!r}")
        out(f"KERNELS = {self.kernels!r}")
        if not self.on_gpu:
            out(f"KERNEL_ARGUMENTS = {kernel_arguments(self.numba_kernels)!r}")
            out(f"LIBRARY_CALLS = {self.library_calls!r}")
        return out.text()

    def preamble(self) -> None:
        """The module's docstring and imports."""
        self.out(
            f'"""dflow: the program for device {self.device} (emitted by the numba target)."""'
        )
        self.out("")
        self.out((GPU_HEADER if self.on_gpu else CPU_HEADER).rstrip("\n"))

    def helpers(self) -> None:
        """The scalar helpers kernels call (`kernel.SCALAR_HELPERS`), inlined."""
        for helper in SCALAR_HELPERS.strip().split("\n\n\n"):
            self.out("")
            self.out("")
            self.out("@_inline")
            for line in helper.split("\n"):
                self.out(line)

    def in_binary(self, op: memref.GlobalOp) -> bool:
        """Whether constant `op` goes to the binary file beside the module."""
        value = op.initial_value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        return self.constants is not None and len(value.data.data) >= LARGE_CONSTANT_BYTES

    def global_(self, op: memref.GlobalOp) -> None:
        value = op.initial_value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        type = op.type
        dtype = dtype_of(type)
        data = bytes(value.data.data)
        shape = tuple(type.get_shape())
        self.out("")
        if self.constants is not None and self.in_binary(op):
            if str(type.element_type) == "i1":  # xDSL's true is -1; NumPy's bool is 1
                data = bytes(byte & 1 for byte in data)
            self.constants.extend(bytes(-len(self.constants) % CONSTANT_ALIGNMENT))
            start = len(self.constants)
            self.constants.extend(data)
            view = f"_constants[{start}:{len(self.constants)}].view({dtype})"
            self.out(f"{op.sym_name.data} = {view}.reshape({shape})")
            return
        if str(type.element_type) == "i1":
            array = f"(np.frombuffer(bytes.fromhex({data.hex()!r}), np.int8) != 0)"
        else:
            array = (
                f"np.frombuffer(bytes.fromhex({data.hex()!r}), {dtype}.__name__).astype({dtype})"
            )
        self.out(f"{op.sym_name.data} = {array}.reshape({shape})")

    @cached_property
    def module_level_names(self) -> frozenset[str]:
        """The names the module defines: globals, kernels, helpers, its constants."""
        taken = set(MODULE_GLOBALS)
        for op in self.scope.ops:
            if isinstance(op, memref.GlobalOp | func.FuncOp):
                taken.add(op.sym_name.data)
        return frozenset(taken)

    def module_names(self) -> Names:
        """Names for one function's values, none shadowing a name of the module (a
        global, a kernel, a helper), which the function may refer to."""
        return Names(Namespace(frozenset(), outer=self.symbols_taken))

    def kernel(self, op: func.FuncOp) -> None:
        self.out("")
        self.out("")
        name = self.python_name(op.sym_name.data, "k")
        self.kernel_names[op.sym_name.data] = name
        self.kernels[name] = kernel_facts(op)
        if self.on_gpu:
            print_gpu_kernel(self.out, op, self.module_names(), name)
            return
        epilogue = self.symbols_taken.unique(f"{name}_epilogue", "k")
        numba_kernel = print_cpu_kernel(
            self.out, op, self.module_names(), self.parallel, name, epilogue
        )
        if numba_kernel is not None:
            self.numba_kernels[numba_kernel] = op
        for routine, parameters in library_signatures(library_calls(list(op.body.block.ops))):
            known = self.library_calls.setdefault(routine, [])
            if parameters not in known:
                known.append(parameters)

    def channels(self) -> list[tuple[str, str, str]]:
        """Each transfer of the host functions: `(key, source, destination)`, sorted."""
        found: set[tuple[str, str, str]] = set()
        for op in self.scope.walk():
            if isinstance(op, dfrt.SendOp):
                found.add((op.key.data, self.device, op.destination.data))
            elif isinstance(op, dfrt.RecvOp):
                found.add((op.key.data, op.source.data, self.device))
        return sorted(found)

    def host(self, op: func.FuncOp) -> dict[str, Any]:
        self.out("")
        self.out("")
        name = self.python_name(op.sym_name.data, "f")
        return print_host_function(self.out, op, self.module_names(), name, self.kernel_names)

    @cached_property
    def symbols_taken(self) -> Namespace:
        """Module-level Python names given so far, Python's and the emitted code's
        own included (grows as host and epilogue names are made)."""
        return Namespace(RESERVED | self.module_level_names)

    def python_name(self, symbol: str, prefix: str) -> str:
        """The Python name of function `@symbol` (a kernel, prefix `k`, or a host
        function, `f`): the symbol itself where it is an identifier, no keyword and
        no name the module uses (`@np`, `@abs` would hide NumPy, a builtin), else a
        unique `<prefix>_...` (MLIR allows `@pass`, `@a.b`, `@"x y"`)."""
        taken = symbol in RESERVED or symbol in MODULE_GLOBALS
        if symbol.isidentifier() and not keyword.iskeyword(symbol) and not taken:
            return symbol
        return self.symbols_taken.unique(f"{prefix}_{symbol}", prefix)


def kernel_facts(op: func.FuncOp) -> dict[str, Any]:
    """What a trace and a profile say of a kernel: the `df` ops it computes and the
    cost model's flops and bytes (`df.source`, `df.work`; none for a kernel written
    by hand without them)."""
    source = op.attributes.get(annotations.SOURCE)
    work = op.attributes.get(annotations.WORK)
    flops, moved = work.get_values() if isinstance(work, DenseArrayBase) else (0, 0)
    names = cast(ArrayAttr[Attribute], source).data if isinstance(source, ArrayAttr) else ()
    # Not xDSL's `isa(source, ArrayAttr[StringAttr])`, which builds the constraint
    # anew each call: 17 us, twice per kernel.
    ops = [a.data for a in names if isinstance(a, StringAttr)]
    return {"ops": ops, "flops": int(flops), "bytes": int(moved)}


def emit_modules(module: ModuleOp, parallel: bool = False) -> dict[str, str]:
    """The Python source of each device's module, by device."""
    return {
        device or DEFAULT_DEVICE: ModulePrinter(scope, parallel).print()
        for device, scope in device_scopes(module)
    }


def module_file_name(device: str) -> str:
    """`cpu:0` -> `cpu_0.py`, `cpu:0@1` -> `cpu_0_r1.py` (the module of rank 1's cpu:0)."""
    return device.replace(":", "_").replace("@", "_r") + ".py"


def emit_module_files(module: ModuleOp, parallel: bool = False) -> dict[str, str | bytes]:
    """The files of each device's module, by name: its Python source (`cpu_0.py`)
    and, when it has large constants, the binary file they lie in (`cpu_0.bin`)."""
    files: dict[str, str | bytes] = {}
    for device, scope in device_scopes(module):
        constants = bytearray()
        name = module_file_name(device or DEFAULT_DEVICE)
        files[name] = ModulePrinter(scope, parallel, constants=constants).print()
        if constants:
            files[name.removesuffix(".py") + CONSTANTS_SUFFIX] = bytes(constants)
    return files


@dataclass(frozen=True)
class NumbaTarget(Target):
    """`xdsl-opt -t numba`: every device's Python module, each headed by a comment
    line naming its file."""

    name = "numba"

    parallel: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        for device, source in emit_modules(module, self.parallel).items():
            output.write(f"# ----- {module_file_name(device)} -----\n")
            output.write(source)
