"""The llvm target's program: per CPU device, one LLVM module of every kernel and of
the host code that launches them, and a Python module that loads and calls it.

    dflow compile model.mlir -o out/ --target llvm   # out/cpu_0.py and out/cpu_0.ll

Each kernel is printed as an LLVM function (`kernel.py`). One that begins with
library calls the printer does not make (a convolution, a pool, a gather) makes them
from Python, calling the numba target's routines as that target does, then calls
the rest of the kernel, an LLVM *epilogue* (the bias, the activation); one the
printer refuses otherwise (`UnsupportedKernelError`: an 8-bit float, ...) stays the
numba target's kernel, printed in the Python module as that target prints it.
The host function stays Python (`rt` calls, as the numba target prints it: outputs,
transfers, fetches), but each run of launches of LLVM kernels between two ops that
read or write buffers from Python becomes one LLVM function, a *segment*, taking the
arena and the other buffers it touches as NumPy arrays (their objects' addresses,
whose data pointers it reads), with the views of the arena as address arithmetic; a
view is made in Python only where Python uses it. So a program whose kernels are all
LLVM's runs as one call into machine code, whatever its number of kernels; one with
a numba kernel or a transfer in the middle, as one call per stretch between them.

The LLVM module is written in *units* (`UNIT` lines): one per kernel, its function
named after the digest of its text, and the host's (segments, entry points); the
runtime compiles and caches each apart, so an edit recompiles only what it changed.

The Python module differs from the numba target's in its header: it loads the LLVM
module beside it (`runtime/llvm_jit.py`: optimized once, object code cached) and
binds each segment as a `ctypes` function; it imports numba only where a kernel is
numba's. `KERNELS` lists the segments (with the ops, flops and bytes of the kernels
they launch) and the numba kernels, so traces and profiles time both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from dflow.backend.llvm.kernel import KernelPrinter
from dflow.backend.llvm.threads import (
    PARALLEL_FOR,
    PARALLEL_MIN_WORK,
    THREADS_DEFINITION,
    THREADS_GLOBAL,
)
from dflow.backend.llvm.types import UnsupportedKernelError
from dflow.backend.numba.cpu_kernel import (
    NO_CODE,
    CpuKernelPrinter,
    library_calls,
    library_signatures,
)
from dflow.backend.numba.host import HostPrinter, entry_record, held_argument
from dflow.backend.numba.module import (
    CONSTANTS_SUFFIX,
    ModulePrinter,
    kernel_facts,
    module_file_name,
)
from dflow.backend.numba.names import Names
from dflow.backend.numba.printer import Lines
from dflow.dialects import dfrt
from dflow.dialects.devices import DEFAULT_DEVICE
from dflow.dialects.df.symbols import device_scopes, kernel_functions

DATA_OFFSET = 16
"""Where a NumPy array object holds its data pointer, on 64-bit platforms (the
runtime checks it: `llvm_jit.ARRAY_DATA_OFFSET`)."""

UNIT = "; ===== unit "
"""The line that begins each unit of a device's LLVM module, followed by its name:
the runtime compiles and caches each unit apart (`runtime/llvm_jit.py`)."""

HOST_UNIT = "host"
"""The name of the unit of the segments."""

FUNCTION_PREFIX = "dflow.k."
"""An LLVM kernel function's name is this and 16 hex digits of its text's digest."""

PLACEHOLDER = "dflow.kernel"
"""The name a kernel is printed under, before `LlvmProgramPrinter.add` names it."""

LLVM_SUFFIX = ".ll"
"""The LLVM module of `cpu_0.py` is `cpu_0.ll`."""

LLVM_IMPORT = "from dflow.runtime.llvm_jit import load_llvm as _load_llvm"
"""The import of the LLVM module's loader, in every module."""

LLVM_HEADER = f"""import numpy as np

{LLVM_IMPORT}
"""
"""The imports of a module whose kernels are all LLVM's."""

_PURE = (dfrt.ArenaOp, dfrt.OutputOp, memref.GetGlobalOp, dfrt.ToDeviceOp)
"""Host ops that neither read nor write a buffer's contents (a CPU's `to_device` is
the array itself): printed in Python without ending the segment before them."""


@dataclass
class Segment:
    """Launches of LLVM kernels run as one LLVM function: its arguments are the arena
    and every other buffer they use, in order of first use."""

    symbol: str
    python: str
    launches: list[dfrt.LaunchOp] = field(default_factory=list[dfrt.LaunchOp])
    buffers: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    """Each buffer but the arena's views, with its place among the arguments."""

    def add(self, launch: dfrt.LaunchOp) -> None:
        self.launches.append(launch)
        for argument in launch.arguments:
            if not isinstance(argument.owner, dfrt.ViewOp):
                self.buffers.setdefault(argument, len(self.buffers))

    def arena(self) -> SSAValue | None:
        """The arena its views are in (None: it uses no view)."""
        for launch in self.launches:
            for argument in launch.arguments:
                if isinstance(argument.owner, dfrt.ViewOp):
                    return argument.owner.arena
        return None

    def llvm(self, callees: Mapping[str, str], scalars: Mapping[str, Sequence[int]]) -> list[str]:
        """The segment as an LLVM function of array objects (`ARRAY_DATA_OFFSET`:
        each one's data pointer read first), each view an offset from the arena's;
        `callees`: the LLVM function of each kernel, by symbol; `scalars`: the sizes
        each takes after its buffers (`KernelPrinter.scalars`)."""
        parameters = ["ptr %arena.array"] + [f"ptr %b{i}.array" for i in range(len(self.buffers))]
        lines = [f'define void @"{self.symbol}"({", ".join(parameters)}) {{', "entry:"]
        names = (["%arena"] if self.arena() is not None else []) + [
            f"%b{i}" for i in range(len(self.buffers))
        ]
        lines += data_pointers(names)
        views: dict[SSAValue, str] = {}
        for launch in self.launches:
            pointers: list[str] = []
            for argument in launch.arguments:
                owner = argument.owner
                if isinstance(owner, dfrt.ViewOp):
                    if argument not in views:
                        views[argument] = f"%view{len(views)}"
                        lines.append(
                            f"  {views[argument]} = getelementptr i8, ptr %arena, "
                            f"i64 {owner.offset.value.data}"
                        )
                    pointers.append(f"ptr {views[argument]}")
                else:
                    pointers.append(f"ptr %b{self.buffers[argument]}")
            symbol = launch.callee.root_reference.data
            pointers += [f"i64 {size}" for size in scalars[symbol]]
            lines.append(f"  call void @{callees[symbol]}({', '.join(pointers)})")
        lines += ["  ret void", "}"]
        return lines


def data_pointers(names: Sequence[str]) -> list[str]:
    """Each `<name>.array` (an array object's address) read into `<name>`, its data."""
    lines: list[str] = []
    for name in names:
        lines.append(f"  {name}.data = getelementptr i8, ptr {name}.array, i64 {DATA_OFFSET}")
        lines.append(f"  {name} = load ptr, ptr {name}.data")
    return lines


ARRAYS = ".arrays"
"""The suffix of the function Python calls an epilogue through, with arrays."""


def array_entry_name(callee: str, scalars: Sequence[int]) -> str:
    """`<callee>.arrays`, and the sizes it passes where it passes some: epilogues that
    share a function but not their sizes have an entry each."""
    return callee.strip('"') + ARRAYS + "".join(f".{size}" for size in scalars)


def array_entry(callee: str, arity: int, scalars: Sequence[int]) -> list[str]:
    """`@"<callee>.arrays..."`: LLVM function `callee` called with NumPy array objects
    (as a segment is), and its `scalars`, for Python."""
    names = [f"%b{i}" for i in range(arity)]
    parameters = ", ".join(f"ptr {n}.array" for n in names)
    arguments = ", ".join([*(f"ptr {n}" for n in names), *(f"i64 {s}" for s in scalars)])
    entry = array_entry_name(callee, scalars)
    head = f'define void @"{entry}"({parameters}) {{'
    call = f"  call void @{callee}({arguments})"
    return [head, "entry:", *data_pointers(names), call, "  ret void", "}"]


class SegmentedHostPrinter(HostPrinter):
    """A host function whose launches of LLVM kernels (`llvm_kernels`, by symbol) are
    gathered into segments; every other op is printed as the numba target prints it,
    after the segment before it is called."""

    def __init__(self, out: Lines, names: Names, program: LlvmProgramPrinter, host: str):
        super().__init__(out, names, program.kernel_names)
        self.program = program
        self.host = host
        self.pending: Segment | None = None
        self.deferred: set[SSAValue] = set()

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.host_op(op)
        self.flush()

    def host_op(self, op: Operation) -> None:
        if isinstance(op, dfrt.ViewOp):
            self.deferred.add(op.result)
            return
        if isinstance(op, dfrt.LaunchOp) and self.program.is_llvm(op):
            if self.pending is None:
                self.pending = self.program.new_segment(self.host)
            self.pending.add(op)
            return
        if not isinstance(op, _PURE):
            self.flush()
        self.materialize(op.operands)
        self.print_op(op)

    def materialize(self, values: Sequence[SSAValue]) -> None:
        """The views among `values` made in Python, where not made yet."""
        for value in values:
            if value in self.deferred:
                self.deferred.discard(value)
                assert isinstance(value.owner, dfrt.ViewOp)
                self.print_op(value.owner)

    def flush(self) -> None:
        """The pending segment's call: its arena's address, then its buffers'."""
        segment, self.pending = self.pending, None
        if segment is None:
            return
        arena = segment.arena()
        arrays = ["None" if arena is None else self.value(arena)]
        arrays += [self.value(b) for b in segment.buffers]
        self.out(f"{segment.python}({', '.join(arrays)})")


@dataclass
class LlvmProgramPrinter(ModulePrinter):
    """One CPU device's program for the llvm target: `print()` is its Python module,
    `llvm` its LLVM module (after `print()`)."""

    """Each LLVM kernel's function (and epilogue's), by symbol."""
    epilogue_names: dict[str, tuple[str, int]] = field(default_factory=dict[str, tuple[str, int]])
    """The Python name and arity of each epilogue, by LLVM symbol."""
    refused: dict[str, str] = field(default_factory=dict[str, str])
    """Why each kernel left to numba is, by symbol."""
    segments: list[Segment] = field(default_factory=list[Segment])
    units: dict[str, Printed] = field(default_factory=dict[str, "Printed"])
    """Each LLVM function, by name: a unit of its own (`UNIT`)."""
    unit_kernels: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """The kernels each LLVM function computes, by its name."""
    scalars: dict[str, tuple[int, ...]] = field(default_factory=dict[str, tuple[int, ...]])
    """The sizes each kernel's function takes after its buffers, by symbol: kernels
    sharing a function may pass different ones."""
    functions: dict[str, str] = field(default_factory=dict[str, str])
    """The LLVM function of each kernel (and epilogue) printed, by symbol: named after
    the digest of its text, so kernels printed the same share one (a network's
    repeated blocks: twelve identical softmaxes compile once) and a kernel keeps its
    cached object code when an edit renumbers the kernels around it."""
    epilogues: dict[str, str | None] = field(default_factory=dict[str, str | None])
    """The kernels whose library calls are made from Python (numba's routines, as the
    numba target makes them) and the rest is LLVM's: the LLVM symbol of each one's
    rest, by kernel symbol (None: nothing is left after the calls)."""

    kernel_ops: dict[str, func.FuncOp] = field(default_factory=dict[str, func.FuncOp])
    """The scope's kernels, by symbol."""

    def __post_init__(self) -> None:
        self.kernel_ops = {k.sym_name.data: k for k in kernel_functions(self.scope)}
        for symbol, kernel in self.kernel_ops.items():
            try:
                self.add(symbol, self.printed(kernel))
            except UnsupportedKernelError as error:
                if not self.with_calls_from_python(kernel):
                    self.refused[symbol] = str(error)

    def printed(self, kernel: func.FuncOp, calls_made: bool = False) -> Printed:
        """`kernel` as LLVM, named `PLACEHOLDER` (`add` names it)."""
        declarations: set[str] = set()
        facts = kernel_facts(kernel)
        split = self.parallel and facts["flops"] + facts["bytes"] >= PARALLEL_MIN_WORK
        printer = KernelPrinter(declarations, parallel_loops=split, calls_made=calls_made)
        lines = printer.function(kernel, PLACEHOLDER)
        arity = len(kernel.args)
        return Printed(lines, declarations, arity, printer.shared, tuple(printer.scalars))

    def add(self, symbol: str, printed: Printed) -> None:
        """Kernel `symbol`'s function, unless an earlier kernel's is the same (a
        network's repeated blocks: twelve identical softmaxes compile once), then
        `symbol` is an alias of that one."""
        text = "\n".join([*printed.lines, *sorted(printed.declarations)])
        name = f"{FUNCTION_PREFIX}{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        self.functions[symbol] = name
        self.scalars[symbol] = printed.scalars
        self.unit_kernels.setdefault(name, []).append(symbol)
        if name in self.units:
            return
        lines = [
            line.replace(f'@"{PLACEHOLDER}"', f'@"{name}"').replace(f'"{PLACEHOLDER}.', f'"{name}.')
            for line in printed.lines
        ]
        self.units[name] = replace(printed, lines=lines)

    def callee(self, symbol: str) -> str:
        """The LLVM function a launch of kernel `symbol` calls, as LLVM writes it."""
        return f'"{self.functions[symbol]}"'

    def with_calls_from_python(self, kernel: func.FuncOp) -> bool:
        """Whether `kernel` begins with library calls and the rest prints (then its
        calls are made from Python and the rest is an LLVM epilogue)."""
        ops = list(kernel.body.block.ops)
        calls = library_calls(ops)
        if not calls:
            return False
        rest = [op for op in ops[len(calls) :] if not isinstance(op, NO_CODE)]
        symbol = kernel.sym_name.data
        if not rest:
            self.epilogues[symbol] = None
            return True
        try:
            self.add(f"{symbol}.epilogue", self.printed(kernel, calls_made=True))
        except UnsupportedKernelError:
            return False
        self.epilogues[symbol] = f"{symbol}.epilogue"
        return True

    def is_llvm(self, launch: dfrt.LaunchOp) -> bool:
        symbol = launch.callee.root_reference.data
        return symbol in self.functions

    def new_segment(self, host: str) -> Segment:
        index = len(self.segments)
        python = self.symbols_taken.unique(f"_segment_{host}_{index}", "k")
        segment = Segment(f"dflow.segment.{host}.{index}", python)
        self.segments.append(segment)
        return segment

    @property
    def uses_numba(self) -> bool:
        """Whether the module has numba kernels or calls library routines."""
        return bool(self.refused or self.epilogues)

    def preamble(self) -> None:
        if self.uses_numba:
            super().preamble()
            self.out(LLVM_IMPORT)
        else:
            self.out(
                f'"""dflow: the program for device {self.device} (emitted by the llvm target)."""'
            )
            self.out("")
            self.out(LLVM_HEADER.rstrip("\n"))

    def helpers(self) -> None:
        if self.uses_numba:
            super().helpers()

    def kernel(self, op: func.FuncOp) -> None:
        if op.sym_name.data in self.refused:
            super().kernel(op)
        elif op.sym_name.data in self.epilogues:
            self.calls_then_epilogue(op)

    def calls_then_epilogue(self, op: func.FuncOp) -> None:
        """A Python function making the kernel's library calls (as the numba target
        prints them), then calling its LLVM epilogue with the same arrays."""
        symbol = op.sym_name.data
        self.out("")
        self.out("")
        name = self.python_name(symbol, "k")
        self.kernel_names[symbol] = name
        self.kernels[name] = kernel_facts(op)
        names = self.module_names()
        arguments = [names.define(a, f"arg{i}") for i, a in enumerate(op.args)]
        calls = library_calls(list(op.body.block.ops))
        wrapper = Lines(self.out.depth + 1)
        printer = CpuKernelPrinter(wrapper, names, self.parallel)
        for call in calls:
            printer.print_op(call)
        epilogue = self.epilogues[symbol]
        if epilogue is not None:
            python = self.symbols_taken.unique(f"_epilogue_{name}", "k")
            self.epilogue_names[epilogue] = (python, len(arguments))
            wrapper(f"{python}({', '.join(arguments)})")
        self.out(f"def {name}({', '.join(arguments)}):")
        self.out.extend(wrapper)
        for routine, parameters in library_signatures(calls):
            known = self.library_calls.setdefault(routine, [])
            if parameters not in known:
                known.append(parameters)

    def host(self, op: func.FuncOp) -> dict[str, Any]:
        self.out("")
        self.out("")
        name = self.python_name(op.sym_name.data, "f")
        names = self.module_names()
        arguments = [names.define(a, f"arg{i}") for i, a in enumerate(op.args)]
        self.out(f"def {name}({', '.join(['rt', *arguments])}):")
        with self.out.indented():
            for argument_name, argument in zip(arguments, op.args, strict=True):
                held = held_argument(argument)
                if held:
                    self.out(f"{argument_name} = {argument_name}{held}")
            SegmentedHostPrinter(self.out, names, self, name).block(op.body.block)
        return {**entry_record(op), "function": name}

    def print(self) -> str:
        text = super().print()
        lines = Lines()
        lines("")
        lines(f"_llvm = _load_llvm(__file__[:-3] + {LLVM_SUFFIX!r})")
        if any(PARALLEL_FOR in unit.declarations for unit in self.units.values()):
            lines(f"_llvm.set_threads({THREADS_GLOBAL!r})")
        for segment in self.segments:
            arity = 1 + len(segment.buffers)
            lines(f"{segment.python} = _llvm.array_function({segment.symbol!r}, {arity})")
        for symbol, (python, arity) in self.epilogue_names.items():
            entry = array_entry_name(self.callee(symbol), self.scalars[symbol])
            lines(f"{python} = _llvm.array_function({entry!r}, {arity})")
        facts = {s.python: self.segment_facts(s) for s in self.segments}
        lines(f"KERNELS.update({facts!r})")
        return text + lines.text()

    def segment_facts(self, segment: Segment) -> dict[str, Any]:
        """What a trace says of a segment: its kernels, their ops, flops and bytes."""
        kernels = [self.kernel_op(launch) for launch in segment.launches]
        facts = [kernel_facts(k) for k in kernels]
        return {
            "kernels": [k.sym_name.data for k in kernels],
            "ops": [o for f in facts for o in f["ops"]],
            "flops": sum(f["flops"] for f in facts),
            "bytes": sum(f["bytes"] for f in facts),
        }

    def kernel_op(self, launch: dfrt.LaunchOp) -> func.FuncOp:
        return self.kernel_ops[launch.callee.root_reference.data]

    def llvm(self) -> str:
        """The device's LLVM module, in units (`UNIT`) that compile and cache apart:
        one per kernel (with the declarations and internal functions it calls), one
        per function kernels share (the NCHWc tiles, compiled once), then the host's
        (its segments and array entries, the kernels they call declared)."""
        lines = [f"; dflow: the program of device {self.device} (emitted by the llvm target)"]
        for symbol, reason in self.refused.items():
            lines.append(f"; @{symbol} is the numba target's: {reason}")
        for symbol, epilogue in self.epilogues.items():
            rest = f", then its epilogue @{epilogue}" if epilogue else ""
            lines.append(f"; @{symbol} makes its library calls from Python{rest}")
        for name, unit in self.units.items():
            kernels = ", ".join(self.unit_kernels[name])
            declarations = sorted(unit.declarations)
            lines += ["", f"{UNIT}{name}: {kernels}", *unit.lines, "", *declarations]
        shared = {name: text for unit in self.units.values() for name, text in unit.shared.items()}
        for name in sorted(shared):
            lines += ["", f"{UNIT}{name}: shared", shared[name]]
        return "\n".join([*lines, "", *self.host_unit()]) + "\n"

    def host_unit(self) -> list[str]:
        """The unit of the segments and the array entries of epilogues."""
        launched = [
            launch.callee.root_reference.data
            for segment in self.segments
            for launch in segment.launches
        ]
        callees = {symbol: self.callee(symbol) for symbol in launched}
        lines = [f"{UNIT}{HOST_UNIT}"]
        for segment in self.segments:
            lines += [*segment.llvm(callees, self.scalars), ""]
        entries = {
            array_entry_name(self.callee(symbol), self.scalars[symbol]): symbol
            for symbol in self.epilogue_names
        }
        for symbol in entries.values():
            arity = self.epilogue_names[symbol][1]
            lines += [*array_entry(self.callee(symbol), arity, self.scalars[symbol]), ""]
        called = {*launched, *self.epilogue_names}
        declared = {self.callee(s): self.units[self.functions[s]] for s in called}
        for callee, unit in sorted(declared.items()):
            types = ["ptr"] * unit.arity + ["i64"] * len(unit.scalars)
            lines.append(f"declare void @{callee}({', '.join(types)})")
        if any(PARALLEL_FOR in unit.declarations for unit in self.units.values()):
            lines.append(THREADS_DEFINITION)
        return lines


@dataclass(frozen=True)
class Printed:
    """A kernel's LLVM function, what it declares and defines besides (intrinsics,
    `vmath`'s functions, the threads' dispatcher), its number of buffers, the
    functions it calls that kernels share (`shared`, by name: the NCHWc tiles, each a
    unit of its own), and the sizes it takes after its buffers
    (`KernelPrinter.scalars`)."""

    lines: list[str]
    declarations: set[str]
    arity: int
    shared: dict[str, str] = field(default_factory=dict[str, str])
    scalars: tuple[int, ...] = ()
    """The sizes it takes after its buffers, of the kernel it was printed for."""


def llvm_program_files(module: ModuleOp, parallel: bool = False) -> dict[str, str | bytes]:
    """The files of each device's program: for a CPU device its Python module, its
    LLVM module and the binary file of its large constants where it has some; a GPU
    device's as the numba target writes them. `parallel`: the outer parallel loops of
    kernels split over threads (`threads.py`; numba's `parallel=True` for its own)."""
    files: dict[str, str | bytes] = {}
    for named, scope in device_scopes(module):
        device = named or DEFAULT_DEVICE
        constants = bytearray()
        name = module_file_name(device)
        if device.startswith("gpu"):
            files[name] = ModulePrinter(scope, parallel, constants=constants).print()
        else:
            printer = LlvmProgramPrinter(scope, parallel, constants=constants)
            files[name] = printer.print()
            files[name.removesuffix(".py") + LLVM_SUFFIX] = printer.llvm()
        if constants:
            files[name.removesuffix(".py") + CONSTANTS_SUFFIX] = bytes(constants)
    return files
