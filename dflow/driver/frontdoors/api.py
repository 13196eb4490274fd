"""The Python API: `dflow.compile(program)` gives a `Program` one calls with arrays.

    program = dflow.compile("model.mlir", devices="cpu:0,cpu:1")
    loss, probabilities = program(x=x, w1=w1, ...)   # by position or argument name
    program.signature("main"), program.source, program.memory, program.interpret(...)

`program` may be a `Graph` of the builder, an xDSL `ModuleOp`, MLIR text, a path
to an `.mlir` file, or an ONNX model (a `.onnx` path or an `onnx.ModelProto`). The
program is checked as `dflow run` checks it, compiled
through the same pipeline and kept in the same on-disk cache (keyed by its text,
the options and the compiler), so a second `compile` of it, in this process or a
later one, loads it at once. Calls are safe from several threads (each call takes
its own arenas, `runtime/program.py`). Bad feeds raise `FeedError` with the message
`dflow run` prints; a program dflow cannot compile raises `DflowError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from dflow.dialects.devices import DeviceList
from dflow.dialects.df.arrays import numpy_dtype
from dflow.dialects.df.symbols import device_modules, graph_functions
from dflow.driver.compilation.compiler import cached_program, compiled_program
from dflow.driver.compilation.devices import DEFAULT, check_gpus, devices_for
from dflow.driver.compilation.interpreted import interpret
from dflow.driver.errors import DflowError
from dflow.driver.loading import feeds
from dflow.driver.loading.arrays import EntrySignature, Parameter
from dflow.driver.loading.checked import ProgramLike, check_runnable_module, load
from dflow.driver.loading.onnx_input import Shapes, is_model, model_key, symbolic_inputs
from dflow.driver.loading.partitioned import entry_signature, is_partitioned
from dflow.driver.loading.pipeline import parsed_pipeline
from dflow.driver.loading.run_options import checked_device_option, request_key
from dflow.driver.loading.targets import cpu_target
from dflow.driver.tools.memory_report import memory_figures
from dflow.runtime import LoadedProgram, ProgramError
from dflow.runtime.channels import DEFAULT_RECV_TIMEOUT_S
from dflow.runtime.trace import Trace

if TYPE_CHECKING:
    from dflow.runtime.mpi import MpiProgram

Array = NDArray[Any]


class FeedError(ValueError):
    """Arguments that do not fit the entry: a missing, extra or unknown argument, or
    an array of the wrong shape or dtype. The message is the one `dflow run`
    prints for the same mistake."""


@dataclass(frozen=True)
class TensorSpec:
    """One argument or result: its name (`x` for `%x`; results are `out0`, ...), its
    shape and its NumPy dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def __str__(self) -> str:
        return f"{self.name}: {self.dtype}{list(self.shape)}"


@dataclass(frozen=True)
class Signature:
    """What an entry takes and returns."""

    entry: str
    arguments: tuple[TensorSpec, ...]
    results: tuple[TensorSpec, ...]

    def __str__(self) -> str:
        taken = ", ".join(map(str, self.arguments))
        given = ", ".join(map(str, self.results))
        return f"@{self.entry}({taken}) -> ({given})"


def _specs(types: Sequence[Any], names: Sequence[str]) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(name, tuple(type.get_shape()), numpy_dtype(type.element_type))
        for name, type in zip(names, types, strict=True)
    )


def compile(
    program: ProgramLike,
    *,
    entry: str = "main",
    devices: str | None = None,
    passes: str | None = None,
    parallel: bool = False,
    shapes: Shapes | None = None,
    mpi: bool = False,
    target: str | None = None,
) -> Program | ShapeSpecialized:
    """Compile `program` and load it: a `Program` that runs `entry` when called.

    `program`: a `dflow.Graph`, an xDSL `ModuleOp`, MLIR text, a path to an `.mlir`
    file, or an ONNX model (a `.onnx` path or an `onnx.ModelProto`), whose inputs
    with symbolic dimensions take their static shapes from `shapes` (by ONNX name:
    `{"input": (1, 3, 224, 224)}`); without `shapes`, such a model is compiled
    for the shapes of its feeds on each call with new ones (`ShapeSpecialized`).
    `devices`: a list such as `"cpu:0,gpu:0"` to place and partition on (default: the
    devices the program's pins name, else `cpu:0`). `passes`: an `xdsl-opt` pipeline
    run first (`"df-optimize"`). `parallel`: CPU kernels with numba's `parallel=True`.
    `mpi`: run under `mpirun`, each device on an MPI rank (device `i` on rank
    `i mod N`, or the rank it names: `cpu:0@1`); every rank calls `compile` and then
    the program alike, rank 0's arguments are used and rank 0 gets the results (the
    others get None). `target`: what CPU devices compile for, `"llvm"` (one LLVM
    module per device) or `"numba"` (numba kernels); by default `$DFLOW_TARGET`'s,
    else llvm. Raises
    `DflowError` for a program dflow cannot compile.
    """
    passes = passes or ""
    target = cpu_target(target)
    if shapes is None and not mpi and is_model(program) and (names := symbolic_inputs(program)):
        options = CompileOptions(entry, devices, passes, parallel, target)
        return ShapeSpecialized(program, names, options)
    return compile_program(program, entry, devices, passes, parallel, shapes, mpi, target)


def compile_program(
    program: ProgramLike,
    entry: str = "main",
    devices: str | None = None,
    passes: str | None = None,
    parallel: bool = False,
    shapes: Shapes | None = None,
    mpi: bool = False,
    target: str | None = None,
) -> Program:
    """`compile` of a program of static shapes (given, where symbolic)."""
    passes = passes or ""
    target = cpu_target(target)
    asked = None if devices is None else checked_device_option(devices, "devices")
    if not mpi and is_model(program):
        found = _compiled_model(program, shapes, asked, entry, (parallel, passes, target))
        if found is not None:
            return found
    loaded = load(program, parsed_pipeline(passes), shapes=shapes)
    text, module = loaded.key, loaded.module
    check_runnable_module(module)
    request = request_key(text, asked, passes, ordered=not is_partitioned(module))
    placed = devices_for(module, asked)
    checked = module.clone()
    _check_entry(entry, _entries(checked))
    if mpi:
        ranked = _on_ranks(module, text, placed, parallel, passes, target)
        return Program(cast(LoadedProgram, ranked.parts), lambda: checked, placed, entry, ranked)
    check_gpus(module, placed)
    compiled = compiled_program(
        text, module, placed, parallel, passes=passes, request=request, target=target
    )
    return Program(compiled, lambda: checked, placed, entry)


def _compiled_model(
    model: ProgramLike,
    shapes: Shapes | None,
    asked: DeviceList | None,
    entry: str,
    options: tuple[bool, str, str],
) -> Program | None:
    """An ONNX model compiled before (`options`: parallel, passes, target), loaded from
    its cache entry without importing it: the import was most of a second compile
    (1.5 s of DenseNet-201's 2 s), and `Program.module` imports it when asked. None
    where there is no entry, or the devices name a GPU (checked the whole way). An
    imported model has no pins, so the devices asked for are the devices it runs on."""
    if asked is not None and asked.gpus():
        return None
    key = model_key(model, shapes)
    if key is None:
        return None
    parallel, passes, target = options
    found = cached_program(request_key(key, asked, passes), parallel, passes, target)
    if found is None or entry not in found[1]:
        return None
    compiled, stored = found
    signatures = {name: EntrySignature.from_json(data) for name, data in stored.items()}

    def imported() -> ModuleOp:
        return load(model, parsed_pipeline(passes), shapes=shapes).module

    return Program(compiled, imported, asked, entry, signatures=signatures)


def _entries(module: ModuleOp) -> tuple[str, ...]:
    """The functions of `module` that can be called, by name."""
    parts = [part for _, part in device_modules(module)] or [module]
    names = {f.sym_name.data: None for part in parts for f in graph_functions(part)}
    return tuple(names)


def _check_entry(entry: str, entries: Sequence[str]) -> None:
    if entry not in entries:
        names = ", ".join(f"@{name}" for name in entries) or "none"
        raise DflowError(f"no function @{entry} to run (functions: {names})")


@dataclass(frozen=True)
class CompileOptions:
    """What `compile` was asked besides the program and its shapes."""

    entry: str
    devices: str | None
    passes: str
    parallel: bool
    target: str


class ShapeSpecialized:
    """An ONNX model with symbolic dimensions, compiled per shape of its feeds: the
    first call with a shape compiles the model with those static shapes (as
    `dflow.jit` traces per shape) and later calls with it reuse that program
    (`programs`, by the inputs' shapes); calls take the inputs in the model's order
    or by their ONNX names, as a `Program` does."""

    def __init__(self, model: object, names: list[str], options: CompileOptions):
        self.model = model
        self.names = names
        """The model's inputs, in order."""
        self.options = options
        self.programs: dict[tuple[tuple[int, ...], ...], Program] = {}

    def __call__(self, *arguments: Any, **named: Any) -> Any:
        return self.specialized(arguments, named)(*arguments, **named)

    def specialized(self, arguments: Sequence[Any], named: Mapping[str, Any]) -> Program:
        """The program compiled for the shapes of these inputs."""
        values = dict(zip(self.names, arguments, strict=False)) | dict(named)
        missing = [name for name in self.names if name not in values]
        if len(arguments) > len(self.names) or missing:
            raise DflowError(
                f"the model takes {len(self.names)} inputs ({', '.join(self.names)}); "
                f"{'missing: ' + ', '.join(missing) if missing else 'too many given'}"
            )
        shapes = {name: tuple(np.shape(values[name])) for name in self.names}
        key = tuple(shapes.values())
        if key not in self.programs:
            o = self.options
            self.programs[key] = compile_program(
                self.model, o.entry, o.devices, o.passes, o.parallel, shapes, target=o.target
            )
        return self.programs[key]


def _on_ranks(
    module: ModuleOp,
    text: str,
    devices: DeviceList | None,
    parallel: bool,
    passes: str,
    target: str | None,
) -> MpiProgram:
    """This MPI rank's part of the program, every rank ready (`driver/compilation/ranks.py`)."""
    from dflow.driver.compilation import ranks  # noqa: PLC0415 (imports mpi4py and starts MPI)

    world = ranks.start_world()
    options = ranks.RankOptions(text, passes=passes, parallel=parallel, target=target)
    timeout = DEFAULT_RECV_TIMEOUT_S
    return ranks.ready(world, lambda: ranks.rank_program(world, module, devices, options), timeout)


def _result(outputs: Sequence[Array]) -> Array | tuple[Array, ...]:
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


class Program:
    """A compiled program: call it like its entry function (`Program.entry`).

    `program(x, w)` or `program(x=x, w=w)` returns the entry's result, or a tuple
    of them; `program["other"]` is another entry; `entries`, `signature()`,
    `source`, `memory` and `interpret()` tell what was compiled and how.
    """

    def __init__(
        self,
        loaded: LoadedProgram,
        module: Callable[[], ModuleOp],
        devices: DeviceList | None,
        entry: str = "main",
        ranked: MpiProgram | None = None,
        *,
        signatures: Mapping[str, EntrySignature] | None = None,
    ):
        """`entry` is one of the program's (`compile_program` checks it before
        compiling). `loaded`: the compiled program (under MPI, `ranked`'s parts); `module`: gives
        the program as it was checked, before the lowering, when first asked
        (`interpret`, `memory`); `signatures`: its entries' signatures as the cache
        entry keeps them, which spare the module to a call."""
        self.loaded = loaded
        self._module = module
        self.signatures: Mapping[str, EntrySignature] = signatures or {}
        self.devices = devices
        """The devices it runs on (None: one, `cpu:0`)."""
        self.entry = entry
        self.timeout = DEFAULT_RECV_TIMEOUT_S
        """Seconds a device waits for a value another device sends."""
        self.callable_entries: dict[str, Entry] = {}
        self.ranked = ranked
        """This rank's part, under MPI (`mpi=True`)."""

    @cached_property
    def module(self) -> ModuleOp:
        """The program as it was checked, before the lowering (for `interpret`); a
        model loaded from the cache is imported again at the first ask."""
        return self._module()

    @cached_property
    def entries(self) -> tuple[str, ...]:
        """The functions that can be called, by name."""
        return tuple(self.signatures) or _entries(self.module)

    def _names(self) -> str:
        return ", ".join(f"@{name}" for name in self.entries) or "none"

    def function(self, entry: str) -> FuncOp:
        """The whole function `entry`, to match and check feeds against."""
        try:
            if is_partitioned(self.module):
                return entry_signature(self.module, entry)
            return feeds.find_entry(self.module, entry)
        except DflowError as error:
            raise KeyError(error.message) from None

    def signature(self, entry: str | None = None) -> Signature:
        """The argument and result names, shapes and dtypes of `entry` (default: the
        program's entry)."""
        entry = entry or self.entry
        function = self.function(entry)
        names = [feeds.argument_name(argument) for argument in function.args]
        outputs = function.function_type.outputs.data
        return Signature(
            entry,
            _specs(function.function_type.inputs.data, names),
            _specs(outputs, [f"out{i}" for i in range(len(outputs))]),
        )

    def __getitem__(self, entry: str) -> Entry:
        found = self.callable_entries.get(entry)
        if found is None:
            if entry not in self.entries:
                raise KeyError(f"no function @{entry} (functions: {self._names()})")
            found = self.callable_entries.setdefault(entry, Entry(self, entry))
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Array | tuple[Array, ...] | None:
        return self[self.entry](*args, **kwargs)

    def interpret(self, *args: Any, **kwargs: Any) -> Array | tuple[Array, ...]:
        """The entry run by the reference interpreter on the same feeds."""
        return self[self.entry].interpret(*args, **kwargs)

    def trace(self, *args: Any, **kwargs: Any) -> Trace | None:
        """The entry run once on these feeds, traced: `Entry.trace`."""
        return self[self.entry].trace(*args, **kwargs)

    @cached_property
    def source(self) -> dict[str, str]:
        """The emitted Python of each device, by file name (`cpu_0.py`), and on the llvm
        target its LLVM module (`cpu_0.ll`)."""
        found: dict[str, str] = {}
        for part in self.loaded.parts:
            path = Path(part.module.__file__ or "")
            found[path.name] = path.read_text()
            llvm = path.with_suffix(".ll")
            if llvm.is_file():
                found[llvm.name] = llvm.read_text()
        return found

    @cached_property
    def memory(self) -> dict[str, dict[str, int | None]]:
        """Per device, the entry's memory plan as `dflow plan --json` gives it: the lower
        bound as written and in the order chosen, the optimum (None where not computed),
        the arena and the naive size in bytes."""
        return memory_figures(self.module.clone(), self.entry, self.devices)

    def __repr__(self) -> str:
        devices = self.devices or DEFAULT
        return f"<dflow.Program {self.signature()} on {devices}>"


class Entry:
    """One entry of a `Program`, callable with arrays by position or argument name."""

    def __init__(self, program: Program, name: str):
        self.program = program
        self.name = name

    @property
    def signature(self) -> Signature:
        return self.program.signature(self.name)

    @cached_property
    def parameters(self) -> list[Parameter]:
        stored = self.program.signatures.get(self.name)
        if stored is not None:
            return list(stored.parameters)
        function = self.program.function(self.name)
        try:
            return [feeds.parameter(function, argument) for argument in function.args]
        except DflowError as error:
            raise FeedError(error.message) from None

    def feeds(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Array]:
        """The arguments as the entry's arrays, checked; `FeedError` for a mistake."""
        try:
            return bind_feeds(self.parameters, args, kwargs)
        except DflowError as error:
            raise FeedError(error.message) from None

    def __call__(self, *args: Any, **kwargs: Any) -> Array | tuple[Array, ...] | None:
        ranked = self.program.ranked
        if ranked is not None:
            return self._call_on_ranks(ranked, args, kwargs)
        inputs = self.feeds(args, kwargs)
        try:
            return _result(self.program.loaded.run(self.name, inputs, self.program.timeout))
        except ProgramError as error:
            raise DflowError(str(error)) from None

    def trace(self, *args: Any, **kwargs: Any) -> Trace | None:
        """This entry run once, every kernel, library call, transfer and copy of each
        device timed (`dflow.runtime.trace`): `trace.results` are the results (as a
        list), `trace.write("trace.json")` writes the Chrome trace Perfetto opens,
        `trace.slices` are the timings. A first call loads (or compiles) the kernels:
        call the program once before the run you mean to look at. Under MPI
        (`mpi=True`) a collective call: rank 0 gets every rank's trace, others None."""
        ranked = self.program.ranked
        if ranked is not None:
            from dflow.driver.compilation import ranks  # noqa: PLC0415 (MPI is loaded only for mpi=True)

            inputs = self.feeds(args, kwargs) if ranked.world.rank == ranks.ROOT else None
            types = ranks.entry_types(self.program.function(self.name))
            return ranks.trace_on_ranks(ranked, self.name, types, inputs, self.program.timeout)
        inputs = self.feeds(args, kwargs)
        try:
            return self.program.loaded.trace(self.name, inputs, self.program.timeout)
        except ProgramError as error:
            raise DflowError(str(error)) from None

    def _call_on_ranks(
        self, ranked: MpiProgram, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> Array | tuple[Array, ...] | None:
        """A collective call: rank 0's feeds, rank 0's results (None elsewhere)."""
        from dflow.driver.compilation import ranks  # noqa: PLC0415 (MPI is loaded only for mpi=True)

        inputs = self.feeds(args, kwargs) if ranked.world.rank == ranks.ROOT else None
        types = ranks.entry_types(self.program.function(self.name))
        outputs = ranks.run_on_ranks(ranked, self.name, types, inputs, self.program.timeout)
        return None if outputs is None else _result(outputs)

    def interpret(self, *args: Any, **kwargs: Any) -> Array | tuple[Array, ...]:
        """This entry run by the reference interpreter on the same feeds."""
        inputs = self.feeds(args, kwargs)
        module = self.program.module.clone()
        devices = self.program.devices
        return _result(interpret(module, self.name, inputs, devices, self.program.timeout))

    def __repr__(self) -> str:
        return f"<dflow.Entry {self.signature}>"


def bind_feeds(
    parameters: Sequence[Parameter], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> list[Array]:
    """`args` and `kwargs` as the arrays of an entry's `parameters`, in order: by
    position, then by name (`x` for `%x`, or `arg0`); each checked for its exact shape
    and dtype. Python numbers and lists take the argument's dtype; arrays must have it.
    An argument that keeps the name it had in a model (`df.name`) takes that name too."""
    names = [parameter.name for parameter in parameters]
    where = f"@{parameters[0].function}" if parameters else "the entry"
    if len(args) > len(names):
        raise DflowError(f"{where} takes {len(names)} arguments, {len(args)} given")
    given: dict[int, Any] = dict(enumerate(args))
    aliases = {p.alias: p.index for p in parameters if p.alias is not None and p.alias not in names}
    for key, value in kwargs.items():
        index = aliases[key] if key in aliases else _index_of(key, names, where)
        if index in given:
            raise DflowError(f"argument {names[index]!r} of {where} is given twice")
        given[index] = value
    missing = [name for index, name in enumerate(names) if index not in given]
    if missing:
        raise DflowError(f"{where} is missing argument {missing[0]!r} (of {', '.join(names)})")
    return [p.check(_as_array(given[p.index], p)) for p in parameters]


def _index_of(key: str, names: Sequence[str], where: str) -> int:
    """The position of the argument a keyword names: its name, or `arg<N>`."""
    matches = [index for index, name in enumerate(names) if name == key]
    if len(matches) > 1:
        raise DflowError(
            f"{where} has {len(matches)} arguments named {key!r}: pass them by position"
        )
    if matches:
        return matches[0]
    if key.startswith("arg") and key[3:].isdigit() and int(key[3:]) < len(names):
        return int(key[3:])
    raise DflowError(f"{where} has no argument {key!r} (arguments: {', '.join(names) or 'none'})")


def _as_array(value: Any, parameter: Parameter) -> Array:
    """An array as given; anything else (numbers, lists) in the argument's dtype."""
    if isinstance(value, np.ndarray | np.generic):
        return np.asarray(cast(Array, value))
    try:
        return np.asarray(value, dtype=parameter.dtype)
    except (TypeError, ValueError) as error:
        raise DflowError(
            f"argument {parameter.name!r} of @{parameter.function}: "
            f"cannot make a {parameter.dtype} array of {type(value).__name__} ({error})"
        ) from None
