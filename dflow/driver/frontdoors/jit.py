"""`dflow.jit`, `dflow.grad` and `dflow.value_and_grad`: compile Python functions
written with dflow's tensor operations, as `jax.jit` does.

    @dflow.jit
    def predict(w, x):
        return dflow.softmax(dflow.relu(x @ w))

    predict(w, x)            # traced and compiled on the first call of each signature

On a call, the arguments are flattened (tuples, lists and dicts of arrays are
trees whose leaves are the arrays), and the signature (each leaf's shape and dtype,
the tree structure and the values of the `static_argnames`) picks a compiled
program. Arrays and NumPy scalars keep their dtype. A Python scalar argument is fed
as NumPy holds it (`np.asarray`: float64, int64, bool) but traced as a *weak* value,
as a literal in the function's code is (NEP 50, as NumPy 2 and JAX): `x * s` with an
f32 `x` and `s = 2.5` is f32, as `x * 2.5` is, and with an int32 `x` it is float64.
(JAX would give float32 there; dflow follows NumPy 2, its reference semantics.) A
Python int argument that meets an int32 array must fit int32, as NumPy requires of
`int32_x + 2**40`: a call with one that does not is an OverflowError. Operands of
different dtypes promote as NumPy 2 promotes them (`dflow/frontend/promotion.py`).
A new signature
traces the function once: each leaf becomes an argument of a `Graph` (named after
the parameter: `params_0`, `params_w1`), the function runs on those tensors, and
what it returns (a tensor, or a tree of them) becomes the results. The module is
compiled by `dflow.compile` (so it shares the on-disk cache) and the call runs it.
A jitted function called inside another's trace is traced inline.

`grad(fun, argnums)` differentiates `fun`'s scalar result with respect to the
arguments in `argnums` through `df-autodiff`: called on tensors (inside a trace)
it traces `fun` into a function of its own, adds the gradient function beside it
and calls it; called on arrays it is jitted. Both compose with `jit`, either way
round. Code that needs data while it is traced (`if x > 0`, `float(x)`, `np.exp(x)`)
fails with a `TraceError` naming its line.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import PassFailedException, VerifyException

from dflow.dialects.df.arrays import element_type_of, numpy_dtype
from dflow.dialects.df.types import ALL_ELEMENTS
from dflow.driver.frontdoors.api import Program, compile_program
from dflow.driver.loading.source import make_context
from dflow.driver.loading.targets import cpu_target
from dflow.frontend.builder import Graph, Tensor
from dflow.frontend.errors import raised_at, trace_error
from dflow.frontend.promotion import scalar_kind
from dflow.lowering.inline import InlinePass
from dflow.transforms.autodiff import differentiate

# ----------------------------------------------------------------------------- trees


@dataclass(frozen=True)
class Tree:
    """The structure of a value: a leaf, or a tuple, list or dict of trees (None:
    nothing)."""

    kind: str
    children: tuple[Tree, ...] = ()
    keys: tuple[Any, ...] = ()

    def rebuild(self, leaves: Iterable[Any]) -> Any:
        """A value of this structure with `leaves`, in order."""
        return self._build(iter(leaves))

    def _build(self, leaves: Any) -> Any:
        if self.kind == "leaf":
            return next(leaves)
        if self.kind == "none":
            return None
        parts = [child._build(leaves) for child in self.children]
        if self.kind == "dict":
            return dict(zip(self.keys, parts, strict=True))
        return tuple(parts) if self.kind == "tuple" else parts


LEAF = Tree("leaf")


def flatten(value: Any, name: str) -> tuple[list[tuple[str, Any]], Tree]:
    """The leaves of `value`, each with a name from `name` and its path, and its
    structure."""
    if value is None:
        return [], Tree("none")
    if isinstance(value, tuple | list):
        items = list(enumerate(cast(Sequence[Any], value)))
        kind = "tuple" if isinstance(value, tuple) else "list"
    elif isinstance(value, dict):
        mapping = cast(dict[Any, Any], value)
        items = [(key, mapping[key]) for key in sorted(mapping, key=str)]
        kind = "dict"
    else:
        return [(name, value)], LEAF
    leaves: list[tuple[str, Any]] = []
    children: list[Tree] = []
    for key, item in items:
        below, tree = flatten(item, f"{name}.{key}")
        leaves.extend(below)
        children.append(tree)
    keys = tuple(key for key, _ in items) if kind == "dict" else ()
    return leaves, Tree(kind, tuple(children), keys)


@functools.cache
def _identifier(name: str) -> str:
    """`name` as an SSA value or symbol name (no trailing `_<digits>`, which xDSL
    takes for a uniquing suffix and drops)."""
    cleaned = re.sub(r"\W", "_", name)
    cleaned = cleaned if cleaned and not cleaned[0].isdigit() else f"v_{cleaned}"
    return re.sub(r"_(\d+)$", r"\1", cleaned)


# --------------------------------------------------------------------------- arrays


WEAK_DTYPES: dict[type, type[np.generic]] = {bool: np.bool_, int: np.int64, float: np.float64}
"""The dtype a Python scalar argument is fed as: `np.asarray`'s."""


SUPPORTED_DTYPES = frozenset(numpy_dtype(element) for element in ALL_ELEMENTS)
SUPPORTED_NAMES = ", ".join(sorted(dtype.name for dtype in SUPPORTED_DTYPES))
"""The dtypes of df's element types: what a leaf may hold."""


def as_array(value: Any) -> np.ndarray[Any, Any]:
    """A leaf as the array it feeds, as NumPy holds it: arrays and NumPy scalars keep
    their dtype; Python floats are float64, ints int64 and bools bool."""
    if is_weak(value):
        return np.asarray(value, dtype=WEAK_DTYPES[scalar_kind(value)])
    return np.asarray(value)


def is_weak(value: Any) -> bool:
    """Whether a leaf is a Python scalar (weak, as a literal), not a NumPy scalar
    (`np.float64` is a `float` too, but strong)."""
    return isinstance(value, bool | int | float) and not isinstance(value, np.generic)


def _contains_tensor(values: Iterable[Any]) -> bool:
    for value in values:
        leaves, _ = flatten(value, "")
        if any(isinstance(leaf, Tensor) for _, leaf in leaves):
            return True
    return False


# ----------------------------------------------------------------------------- jit


@dataclass(frozen=True)
class Compiled:
    """One signature's program and the structure of what it returns."""

    program: Program
    results: Tree
    int32_leaves: tuple[int, ...] = ()
    """Leaves (Python ints) the program converts to int32: each call checks they fit."""

    def check(self, leaves: Sequence[tuple[str, Any]]) -> None:
        """An OverflowError, NumPy's, for a Python int leaf that int32 cannot hold."""
        bounds = np.iinfo(np.int32)
        for index in self.int32_leaves:
            value = leaves[index][1]
            if not bounds.min <= value <= bounds.max:
                raise OverflowError(f"Python integer {value} out of bounds for int32")


class Jitted:
    """A function compiled on its first call of each argument signature."""

    def __init__(
        self,
        fun: Callable[..., Any],
        *,
        static_argnames: Sequence[str] = (),
        devices: str | None = None,
        passes: str | None = None,
        parallel: bool = False,
        target: str | None = None,
    ):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.parameters = inspect.signature(fun)
        unknown = [n for n in static_argnames if n not in self.parameters.parameters]
        if unknown:
            raise TypeError(f"static_argnames {unknown} are not parameters of {fun.__name__}")
        self.static = frozenset(static_argnames)
        self.options: dict[str, Any] = {
            "devices": devices,
            "passes": passes,
            "parallel": parallel,
            "target": cpu_target(target),
        }
        self.compiled: dict[Any, Compiled] = {}
        self.traces = 0
        """How many times the function was traced (one per new signature)."""
        self.lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _contains_tensor((*args, *kwargs.values())):
            return self.fun(*args, **kwargs)  # inside another trace: inline
        compiled, arrays = self.compiled_for(args, kwargs)
        outputs = compiled.program(*arrays)
        flat = list(outputs) if isinstance(outputs, tuple) else [outputs]
        return compiled.results.rebuild(flat)

    def compiled_for(
        self, args: Sequence[Any], kwargs: dict[str, Any]
    ) -> tuple[Compiled, list[np.ndarray[Any, Any]]]:
        """The compiled program of these arguments' signature (traced and compiled
        when it is new) and the arrays to call it with."""
        bound = self.parameters.bind(*args, **kwargs)
        static, leaves, trees = self._split(bound)
        arrays = [self._array(name, value) for name, value in leaves]
        weak = tuple(is_weak(value) for _, value in leaves)
        key = (static, trees, tuple((a.shape, a.dtype.str) for a in arrays), weak)
        compiled = self.compiled.get(key)
        if compiled is None:
            with self.lock:
                compiled = self.compiled.get(key) or self._trace(key, bound, leaves, arrays)
        compiled.check(leaves)
        return compiled, arrays

    def _array(self, name: str, value: Any) -> np.ndarray[Any, Any]:
        """A leaf as the array it feeds; a TypeError for one of a dtype df has no
        element type for (complex, float8, strings, ...)."""
        array = as_array(value)
        if array.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"argument {name} of {self.fun.__name__} is a {type(value).__name__} of dtype "
                f"{array.dtype}, which dflow has no element type for: use one of "
                f"{SUPPORTED_NAMES}"
            )
        return array

    def lower(self, *args: Any, **kwargs: Any) -> Program:
        """The `dflow.Program` these arguments call (its `source`, `memory`, ...)."""
        return self.compiled_for(args, kwargs)[0].program

    def _split(
        self, bound: inspect.BoundArguments
    ) -> tuple[tuple[tuple[str, Any], ...], list[tuple[str, Any]], tuple[Tree, ...]]:
        static: list[tuple[str, Any]] = []
        leaves: list[tuple[str, Any]] = []
        trees: list[Tree] = []
        for name, value in bound.arguments.items():
            if name in self.static:
                try:
                    hash(value)
                except TypeError:
                    raise TypeError(
                        f"static argument {name!r} of {self.fun.__name__} must be hashable, "
                        f"got a {type(value).__name__}"
                    ) from None
                static.append((name, value))
                continue
            below, tree = flatten(value, _identifier(name))
            leaves.extend(below)
            trees.append(tree)
        return tuple(static), leaves, tuple(trees)

    def _trace(
        self,
        key: Any,
        bound: inspect.BoundArguments,
        leaves: list[tuple[str, Any]],
        arrays: list[np.ndarray[Any, Any]],
    ) -> Compiled:
        """Trace the function on tensors standing for `arrays` and compile it."""
        graph = Graph(_identifier(getattr(self.fun, "__name__", "main")))
        tensors = iter(
            [
                graph.input(name, array.shape, element_type_of(array.dtype), weak=is_weak(value))
                for (name, value), array in zip(leaves, arrays, strict=True)
            ]
        )
        traced = bound.arguments.copy()
        for name, value in bound.arguments.items():
            if name not in self.static:
                _, tree = flatten(value, name)
                traced[name] = tree.rebuild(next(tensors) for _ in range(_count(tree)))
        call = inspect.BoundArguments(self.parameters, traced)
        result = traced_call(self.fun, call)
        results = _outputs(graph, result)
        module = graph.module()
        inline_callees(module, graph.name)
        program = compile_program(module, entry=graph.name, **self.options)
        self.traces += 1
        compiled = Compiled(program, results, tuple(sorted(graph.narrowed_inputs)))
        self.compiled[key] = compiled
        return compiled


def traced_call(fun: Callable[..., Any], call: inspect.BoundArguments) -> Any:
    """`fun` run on tensors; an op that does not fit its operands (raised while the op
    was built) names the user's line."""
    try:
        return fun(*call.args, **call.kwargs)
    except VerifyException as error:
        if "(at " in str(error):
            raise
        raise type(error)(f"{error} (at {raised_at(error.__traceback__)})") from None


def _count(tree: Tree) -> int:
    if tree.kind == "leaf":
        return 1
    return sum(_count(child) for child in tree.children)


def _outputs(graph: Graph, result: Any) -> Tree:
    """Make `result` the graph's results; its structure."""
    leaves, tree = flatten(result, "out")
    for _, leaf in leaves:
        if isinstance(leaf, Tensor):
            if leaf.graph is not graph:
                raise trace_error("the function returns a tensor of another trace")
            graph.output(leaf)
        elif isinstance(leaf, bool | int | float | np.ndarray | np.generic):
            graph.output(graph.constant(as_array(leaf)))
        else:
            raise trace_error(
                f"the function returns a {type(leaf).__name__}: return tensors, numbers "
                "or arrays (or tuples, lists and dicts of them)"
            )
    return tree


def inline_callees(module: ModuleOp, entry: str) -> None:
    """Inline every call into `entry` and drop the callees: one function to compile."""
    InlinePass().apply(make_context(), module)
    for op in list(module.ops):
        if isinstance(op, FuncOp) and op.sym_name.data != entry:
            op.detach()
            op.erase()


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    static_argnames: Sequence[str] = (),
    devices: str | None = None,
    passes: str | None = None,
    parallel: bool = False,
    target: str | None = None,
) -> Any:
    """Compile `fun` on its first call of each argument signature (shapes, dtypes,
    tree structure and the values of `static_argnames`), as `jax.jit`; the result's
    `traces` counts the traces. `devices`, `passes`, `parallel` and `target` are
    `dflow.compile`'s. Use as `@dflow.jit` or `@dflow.jit(static_argnames=...)`."""
    options: dict[str, Any] = {
        "static_argnames": static_argnames,
        "devices": devices,
        "passes": passes,
        "parallel": parallel,
        "target": target,
    }
    if fun is None:

        def decorate(inner: Callable[..., Any]) -> Jitted:
            return Jitted(inner, **options)

        return decorate
    return Jitted(fun, **options)


# ---------------------------------------------------------------------------- grad


class Gradient:
    """`grad(fun)` or `value_and_grad(fun)`: on tensors, the gradient built into the
    trace; on arrays, compiled as `jit` does."""

    def __init__(self, fun: Callable[..., Any], argnums: int | Sequence[int], with_value: bool):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.argnums = argnums
        self.with_value = with_value
        self.parameters = inspect.signature(fun)
        self.jitted = Jitted(self)
        self.count = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _contains_tensor((*args, *kwargs.values())):
            return self.jitted(*args, **kwargs)
        return self._traced(args, kwargs)

    def _traced(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        bound = self.parameters.bind(*args, **kwargs)
        wanted = (self.argnums,) if isinstance(self.argnums, int) else tuple(self.argnums)
        positional = list(bound.args)
        for index in wanted:
            if not 0 <= index < len(positional):
                raise trace_error(
                    f"dflow.grad: argnums {index} is out of range for "
                    f"{len(positional)} positional arguments"
                )
        outer = _graph_of((*args, *kwargs.values()))
        self.count += 1
        sub = Graph(f"{_identifier(getattr(self.fun, '__name__', 'loss'))}_{self.count}")
        inputs, traced, ranges = _retrace(sub, bound)
        loss = traced_call(self.fun, traced)
        if not isinstance(loss, Tensor) or loss.graph is not sub:
            raise trace_error("dflow.grad: the function must return a scalar float tensor")
        sub.output(loss)
        wrt = [position for index in wanted for position in ranges[index]]
        if sub.callees:
            raise trace_error("dflow.grad of a function that takes a gradient itself")
        try:
            gradient = differentiate(sub.function(), wrt)
        except PassFailedException as error:
            raise trace_error(f"dflow.grad: {str(error).removeprefix('df-autodiff: ')}") from None
        outputs = outer.call(gradient, inputs)
        grads = iter(outputs[1:])
        trees = [_tree_of(positional[index]) for index in wanted]
        rebuilt = [tree.rebuild(next(grads) for _ in range(_count(tree))) for tree in trees]
        found = rebuilt[0] if isinstance(self.argnums, int) else tuple(rebuilt)
        return (outputs[0], found) if self.with_value else found


def _graph_of(values: Iterable[Any]) -> Graph:
    for value in values:
        for _, leaf in flatten(value, "")[0]:
            if isinstance(leaf, Tensor):
                return leaf.graph
    raise AssertionError("called with tensors")


def _tree_of(value: Any) -> Tree:
    return flatten(value, "")[1]


def _retrace(
    sub: Graph, bound: inspect.BoundArguments
) -> tuple[list[Tensor], inspect.BoundArguments, dict[int, list[int]]]:
    """`bound`'s arguments with each tensor leaf made an input of `sub`; the outer
    tensors they stand for, and for each positional argument its inputs' positions."""
    inputs: list[Tensor] = []
    traced = bound.arguments.copy()
    ranges: dict[int, list[int]] = {}
    for position, (name, value) in enumerate(bound.arguments.items()):
        leaves, tree = flatten(value, _identifier(name))
        replaced: list[Any] = []
        ranges[position] = []
        for leaf_name, leaf in leaves:
            if isinstance(leaf, Tensor):
                ranges[position].append(len(inputs))
                inputs.append(leaf)
                replaced.append(
                    sub.input(leaf_name, leaf.shape, leaf.type.element_type, weak=leaf.weak)
                )
            else:
                replaced.append(leaf)
        traced[name] = tree.rebuild(replaced)
    return inputs, inspect.BoundArguments(bound.signature, traced), ranges


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Gradient:
    """The gradient of `fun`'s scalar float result with respect to its positional
    arguments `argnums` (one, or a tuple: then a tuple of gradients), each of the
    structure of its argument; through `df-autodiff`. Composes with `jit`."""
    return Gradient(fun, argnums, with_value=False)


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Gradient:
    """`fun`'s result and its gradient (see `grad`), as `(value, gradient)`."""
    return Gradient(fun, argnums, with_value=True)
