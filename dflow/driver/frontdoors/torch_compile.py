"""`torch.compile(model, backend="dflow")`: PyTorch's graphs compiled by dflow.

    model = torch.compile(model, backend="dflow")                   # inference
    model = torch.compile(model, backend="dflow", options={"memory_budget": 2**28})

PyTorch finds the backend by its entry point (`torch_dynamo_backends`, in
`pyproject.toml`). Dynamo hands it each graph it captured and the graph's example
inputs; `aot_autograd` (with PyTorch's Core ATen decompositions) functionalizes it
and, when some input needs a gradient, splits the training step into a forward and
a backward graph, which `dflow.frontend.torch` imports and `dflow.compile`
compiles. What the backward graph reads of the forward's values is chosen by
`partition.py` (dflow's cost model decides what to recompute).

- Frozen inference: in a graph that computes no gradient, the model's parameters
  and buffers are made constants (`options={"freeze": False}` keeps them
  arguments); a call after one of them changed (`load_state_dict`, an optimizer
  step) compiles again rather than use the old values.
- Tensors pass to NumPy and back without a copy (CPU tensors, contiguous ones;
  others are made so).
- Shapes: a graph PyTorch made dynamic after a shape changed is compiled for each
  new shape on its first call (dflow compiles static shapes).
- A graph dflow cannot import (an op it lacks) runs in eager PyTorch, with one
  warning naming the op and the line of the model.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import warnings
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import torch
from torch import fx
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd
from torch._subclasses.fake_tensor import unset_fake_temporarily

from dflow.driver.errors import DflowError
from dflow.driver.frontdoors.api import Program, compile
from dflow.driver.frontdoors.torch_partition import dflow_partition
from dflow.frontend.torch import Imported, TorchImportError, import_graph
from dflow.frontend.torch.call import array_of

Boxed = Callable[[list[Any]], Any]


@dataclass(frozen=True)
class TorchOptions:
    """`torch.compile(..., backend="dflow", options={...})`."""

    freeze: bool = True
    """Inference graphs take the parameters and buffers as constants."""
    memory_budget: int | None = None
    """Bytes the forward graph may keep for the backward one (training): the
    partition recomputes what is cheapest to recompute until the rest fits."""
    target: str | None = None
    """dflow's CPU target (`"llvm"`, `"numba"`; by default `dflow.compile`'s)."""

    @staticmethod
    def of(options: dict[str, Any] | None) -> TorchOptions:
        known = {f.name for f in fields(TorchOptions)}
        unknown = sorted(set(options or {}) - known)
        if unknown:
            raise DflowError(
                f"torch.compile: backend 'dflow' has no option {unknown[0]!r} "
                f"(it has: {', '.join(sorted(known))})"
            )
        return TorchOptions(**(options or {}))


DECOMPOSITIONS = core_aten_decompositions()
"""What `aot_autograd` decomposes: PyTorch's Core ATen table."""


def dflow_backend(
    graph: fx.GraphModule, example_inputs: list[Any], options: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """The backend `torch.compile` calls for each graph Dynamo captured."""
    settings = TorchOptions.of(options)
    if any(not isinstance(value, torch.Tensor) for value in example_inputs):
        return _PerShape(graph, settings)
    return _compiled(graph, example_inputs, settings)


def _compiled(
    graph: fx.GraphModule, inputs: list[Any], options: TorchOptions
) -> Callable[..., Any]:
    """`graph` through `aot_autograd` with dflow compiling its graphs; eager (with
    one warning) where dflow cannot import it."""
    state = _state_positions(graph)
    compilers = functools.partial(_GraphCompiler, inputs=inputs, state=state, options=options)
    backend = aot_autograd(
        fw_compiler=compilers(kind="forward"),
        bw_compiler=compilers(kind="backward"),
        inference_compiler=compilers(kind="inference"),
        partition_fn=functools.partial(dflow_partition, memory_budget=options.memory_budget),
        decompositions=DECOMPOSITIONS,
    )
    try:
        with _without_onednn():
            return backend(graph, inputs)
    except (TorchImportError, DflowError) as error:  # an op dflow lacks, or fails to compile
        warnings.warn(
            f"dflow could not take this graph, which runs in eager PyTorch: {error.message}",
            stacklevel=2,
        )
        return graph.forward


@contextlib.contextmanager
def _without_onednn() -> Generator[None]:
    """oneDNN off while the graphs are traced, so that recurrent layers decompose
    into their steps rather than into oneDNN's `mkldnn_rnn_layer` (without the
    warning PyTorch gives on the way about TF32 on Intel GPUs)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="TF32 acceleration", category=UserWarning)
        with torch.backends.mkldnn.flags(enabled=False):
            yield


def _state_positions(graph: fx.GraphModule) -> frozenset[int]:
    """The inputs that are the model's parameters and buffers (Dynamo's sources)."""
    positions: set[int] = set()
    placeholders = [node for node in graph.graph.nodes if node.op == "placeholder"]
    for position, node in enumerate(placeholders):
        argument = node.meta.get("grapharg")
        source = getattr(argument, "source", None)
        name = getattr(source, "name", "")
        name = name() if callable(name) else str(name)
        if "._parameters[" in name or "._buffers[" in name:
            positions.add(position)
    return frozenset(positions)


class _PerShape:
    """A graph with symbolic sizes, compiled for each set of static shapes it is
    called with."""

    def __init__(self, graph: fx.GraphModule, options: TorchOptions):
        self.graph, self.options = graph, options
        self.compiled: dict[tuple[Any, ...], Callable[..., Any]] = {}

    def __call__(self, *arguments: Any) -> Any:
        key = tuple(
            (tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else a for a in arguments
        )
        found = self.compiled.get(key)
        if found is None:
            found = self.compiled[key] = _compiled(self.graph, list(arguments), self.options)
        return found(*arguments)


@dataclass
class _GraphCompiler:
    """Compiles the graphs `aot_autograd` hands over (`kind`: forward, backward or
    inference), freezing an inference graph's state to the values in `inputs`."""

    inputs: list[Any]
    state: frozenset[int]
    options: TorchOptions
    kind: Literal["forward", "backward", "inference"]

    def __call__(self, graph: fx.GraphModule, example_inputs: Sequence[Any]) -> Boxed:
        frozen = self._frozen(graph)
        with unset_fake_temporarily():  # the frozen values are read as they are
            imported = import_graph(graph, {i: self.inputs[i] for i in frozen}, pass_inputs=True)
        program = compile(imported.module, target=self.options.target)
        assert isinstance(program, Program)
        run = _Run(program, imported, {i: self.inputs[i] for i in frozen})
        if not frozen:
            return run
        return _Refreezing(run, self, graph, example_inputs)

    def _frozen(self, graph: fx.GraphModule) -> frozenset[int]:
        if self.kind != "inference" or not self.options.freeze:
            return frozenset()
        placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(self.inputs):  # aot_autograd added or dropped some
            return frozenset()
        return frozenset(
            i for i in self.state if _same_kind(placeholders[i].meta.get("val"), self.inputs[i])
        )


def _same_kind(recorded: Any, value: Any) -> bool:
    return (
        isinstance(recorded, torch.Tensor)
        and isinstance(value, torch.Tensor)
        and tuple(recorded.shape) == tuple(value.shape)
        and recorded.dtype == value.dtype
    )


class _Run:
    """Runs a compiled graph on tensors: its arguments as NumPy arrays (no copy),
    its results as tensors, `None` where the graph's output is. Called as
    `aot_autograd` calls a boxed function: with one list, which it empties (so
    that the inputs can be freed while the graph runs)."""

    def __init__(self, program: Program, imported: Imported, frozen: dict[int, torch.Tensor]):
        self._boxed_call = True  # on the instance: `torch._dynamo.disable`'s wrapper copies it
        self.program, self.imported = program, imported
        self.frozen = {i: (t, t._version) for i, t in frozen.items()}  # pyright: ignore[reportPrivateUsage]

    def stale(self, arguments: Sequence[Any]) -> bool:
        """Whether a frozen input is not the tensor it was frozen to, or changed."""
        return any(
            arguments[i] is not t or t._version != version  # pyright: ignore[reportPrivateUsage]
            for i, (t, version) in self.frozen.items()
        )

    def __call__(self, *given: Any) -> list[torch.Tensor | None]:
        arguments = _unboxed(given)
        arrays = [_array(arguments[i]) for i in self.imported.arguments]
        passed = [None if i is None else arguments[i] for i in self.imported.passed]
        if given is not arguments:
            arguments.clear()
        try:
            results = self.program.loaded.run(self.program.entry, arrays, self.program.timeout)
        except Exception as error:
            raise DflowError(str(error)) from None
        return [
            tensor if p is None else _tensor(results[p])
            for p, tensor in zip(self.imported.results, passed, strict=True)
        ]


class _Refreezing:
    """A frozen graph's run that compiles the graph again, frozen to the new values,
    when a frozen input changed."""

    def __init__(
        self, run: _Run, compiler: _GraphCompiler, graph: fx.GraphModule, example: Sequence[Any]
    ):
        self._boxed_call = True
        self.run, self.compiler, self.graph, self.example = run, compiler, graph, example

    def __call__(self, *given: Any) -> Any:
        arguments = _unboxed(given)
        if self.run.stale(arguments):
            warnings.warn(
                "dflow: a frozen parameter or buffer changed since the graph was compiled; "
                "compiling it again (torch.compile(..., options={'freeze': False}) keeps "
                "them arguments)",
                stacklevel=2,
            )
            compiler = dataclasses.replace(self.compiler, inputs=list(arguments))
            fresh = compiler(self.graph, self.example)
            assert isinstance(fresh, _Refreezing)
            self.run = fresh.run
        return self.run(arguments)


def _unboxed(given: tuple[Any, ...]) -> Any:
    """The arguments of a call boxed (one list, as `aot_autograd` calls a function
    marked `_boxed_call`) or not."""
    if len(given) == 1 and isinstance(given[0], list):
        return given[0]  # pyright: ignore[reportUnknownVariableType]
    return given


def _array(value: Any) -> np.ndarray[Any, Any]:
    """A tensor's values as a NumPy array, shared: `Tensor.numpy` directly for a CPU
    tensor of a dtype NumPy has (the common case, on every call), else `array_of`."""
    if not isinstance(value, torch.Tensor):
        return np.asarray(value)
    try:
        return value.detach().numpy()
    except TypeError:  # not on the CPU, or bfloat16
        if not value.is_cpu:
            raise DflowError(
                f"torch.compile(backend='dflow'): a tensor on {value.device}; "
                "dflow takes CPU tensors"
            ) from None
        return array_of(value)


def _tensor(array: np.ndarray[Any, Any]) -> torch.Tensor:
    """A result as a tensor sharing its memory (a copy of a read-only one: a constant
    of the program); bfloat16, which NumPy lacks, through its bits."""
    if not array.flags.writeable:
        array = array.copy()
    if array.dtype.kind == "V":  # ml_dtypes' bfloat16, the only one a graph returns
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)  # pyright: ignore[reportUnknownMemberType]
    return torch.from_numpy(array)  # pyright: ignore[reportUnknownMemberType]
