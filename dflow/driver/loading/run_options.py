"""`dflow run`'s options, read and checked once, by one function, for both ways a run
can go: from the cache (`dflow.driver.frontdoors.cached_run`, without the compiler) or the whole
way (`dflow.driver.frontdoors.commands.run`).

`run_options(args)` makes every check that needs no program (devices written right,
`--shape` only for an ONNX model and each input once, `--trace`/`--profile` not with
`--interpret`) and reads the program's text once, so a run that the cache answers
refuses exactly what the whole way refuses, with the same line. What needs the program
(pins against `--devices`, the entry, the feeds) is decided by the program and the
options alone, so a cache entry written by a run that passed those checks answers only
the same request (`RunOptions.request`); anything else goes the whole way. Importable
without xDSL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dflow.dialects.devices import DeviceList
from dflow.driver.errors import DflowError
from dflow.driver.loading.arrays import load_inputs
from dflow.driver.loading.onnx_input import is_model, onnx_key, symbolic_inputs
from dflow.driver.loading.program_text import Source, display_name, read_source
from dflow.driver.loading.targets import cpu_target

Shapes = dict[str, list[int]]


@dataclass(frozen=True)
class RunOptions:
    """`dflow run`'s options as checked; `source` is the program's text, read once
    (None for an ONNX model, which is read as bytes)."""

    file: str
    source: Source | None
    entry: str = "main"
    passes: str = ""
    devices: DeviceList | None = None
    shapes: Shapes = field(default_factory=Shapes)
    inputs: list[str] | None = None
    output: str | None = None
    seed: int = 0
    print: bool = False
    interpret: bool = False
    timeout: float = 60.0
    parallel: bool = False
    target: str = "numba"
    mpi: bool = False
    trace: str | None = None
    profile: bool = False

    @property
    def name(self) -> str:
        """How messages name the program."""
        return display_name(self.file)

    def traced(self) -> bool:
        return self.trace is not None or self.profile

    def program_text(self) -> str:
        """What the compile cache keys the program by: its text, or for an ONNX model
        the digest `dflow.driver.loading.onnx_input.import_onnx` gives it when it keeps no data
        in other files (one that does never matches, and goes the whole way)."""
        if self.source is not None:
            return self.source.text
        try:
            data = Path(self.file).read_bytes()
        except OSError:
            return ""  # the whole way says why it cannot be read
        return onnx_key(hashlib.sha256(data).hexdigest(), self.shapes)


def run_options(args: argparse.Namespace) -> RunOptions:
    """`args` of `dflow run`, checked (one-line `DflowError`s), with the program's text
    read (under MPI, rank 0 alone reads it: `commands.run_on_mpi`)."""
    if (args.trace is not None or args.profile) and args.interpret:
        raise DflowError("--trace and --profile time the compiled program: leave out --interpret")
    model = is_model(args.file)
    shapes = checked_shapes(args.shape, model)
    if model and not shapes and args.inputs and not args.mpi:
        shapes = shapes_of_feeds(args.file, args.inputs)
    devices = None if args.devices is None else checked_device_option(args.devices)
    source = None if model or args.mpi else read_source(args.file)
    return RunOptions(
        args.file,
        source,
        args.entry,
        args.passes,
        devices,
        shapes,
        args.inputs,
        args.output,
        args.seed,
        args.print,
        args.interpret,
        args.timeout,
        args.parallel,
        cpu_target(args.target),
        args.mpi,
        args.trace,
        args.profile,
    )


def shapes_of_feeds(file: str, files: list[str]) -> Shapes:
    """The shapes of a model's inputs from the `--inputs` that feed them (by ONNX
    name or position, `argN`) when some input has a symbolic dimension and no
    `--shape` is given: the run is compiled for the feeds it has."""
    names = symbolic_inputs(file)
    if not names:
        return {}
    feeds = load_inputs(files)
    shapes: Shapes = {}
    for index, name in enumerate(names):
        value = feeds.get(name, feeds.get(f"arg{index}"))
        if value is not None:
            shapes[name] = list(value.shape)
    return shapes


def checked_device_option(requested: str, option: str = "--devices") -> DeviceList:
    """`--devices` (or another `option`) parsed once, at the edge
    (`DeviceList.parse`), its errors one-line `DflowError`s."""
    try:
        return DeviceList.parse(requested, option)
    except ValueError as error:
        raise DflowError(str(error)) from None


def require_gpus(devices: Iterable[str]) -> None:
    """Fail in one line when `devices` name a GPU and numba finds none (its own error
    names a system path); the simulator counts."""
    wanted = [device for device in devices if device.startswith("gpu:")]
    if not wanted or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return
    from numba import cuda  # noqa: PLC0415 (only programs for GPUs pay for importing it)

    if not cuda.is_available():
        raise DflowError(
            f"{wanted[0]} is asked for but no CUDA GPU was found: run on the CPU "
            "(--devices cpu:0), or simulate the GPU with NUMBA_ENABLE_CUDASIM=1"
        )


def checked_shapes(given: Iterable[tuple[str, list[int]]], model: bool) -> Shapes:
    """`--shape NAME=D0,...` options by name: each input once, and only for a model."""
    shapes: Shapes = {}
    for name, shape in given:
        if name in shapes:
            raise DflowError(f"--shape gives {name!r} twice")
        shapes[name] = shape
    if shapes and not model:
        raise DflowError("--shape gives the input shapes of an ONNX model (.onnx) only")
    return shapes


def request_text(options: RunOptions, program: str, *, ordered: bool = True) -> str:
    """What a run's cache entry is keyed by (`request_key`): `program` is the program's
    key, its text or a model's digest, as the compile path has it and the fast path
    guesses it (`RunOptions.program_text`)."""
    return request_key(program, options.devices, options.passes, ordered=ordered)


def request_key(
    program: str, devices: DeviceList | None, passes: str, *, ordered: bool = True
) -> str:
    """The key of a compile asked for by `dflow run` or `dflow.compile`: the program's
    key, the devices as the request named them (None: the program's pins decide; in
    their order, or sorted where the order cannot matter: `ordered=False`, for a
    module partitioned already, whose parts fix where everything runs) and every
    installed pass plugin when `passes` are given (an uninstalled pass must fail
    again). Both front doors key alike, so they share entries."""
    ordered = ordered or devices is None or len(devices) < 2  # no order to ignore
    names = None if devices is None else list(devices.names if ordered else sorted(devices))
    asked = json.dumps({"devices": names, "ordered": ordered, "plugins": _plugins(passes)})
    return f"{program}\0run {asked}"


def _plugins(passes: str) -> list[str]:
    if not passes:
        return []
    from importlib import metadata  # noqa: PLC0415 (only with -p)

    found = metadata.entry_points(group="xdsl.universe")
    return sorted(f"{e.name}={e.value} {e.dist.version if e.dist else ''}" for e in found)
