"""The lists that follow the `df` dialect's registry (`DF`) and the pass registry
(`dflow.driver.universe.PASSES`) name what those registries hold.

Adding an op to `df` touches its class (in the family's module of
`dflow/dialects/df/`) and the places checked here, each of which names the op again
or decides for it: the dialect's `DF` and `__all__`, the gradient rules of
`df-autodiff`, the scalar lowering of elementwise ops and the kernel families of the
lowering, the CPU and GPU library routines with the GPU's pending list, and the
README's op table. Elsewhere: the op's function in `dflow.frontend.ops` and the
`dflow` namespace (tests/test_namespace.py), the interpreter's table, which is made
from `DF` (tests/test_semantics.py checks every op runs), the op's numerics
(tests/test_semantics.py) and the random programs that must hold every op with
semantics (tests/support/programgen.py, checked by tests/test_generated.py). Adding a pass
touches its class and `PASSES`, checked here and in tests/test_universe.py.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass

import dflow.dialects.df
import dflow.lowering
import dflow.transforms
from dflow.backend.numba.capabilities import GPU_PENDING
from dflow.dialects.df import (
    DF,
    AddNOp,
    BinaryElementwiseOp,
    CastOp,
    CompareOp,
    ConstantOp,
    Conv2DNchwcOp,
    Conv2DOp,
    ConvolutionOp,
    IdentityOp,
    IndexingOp,
    MatmulOp,
    PoolingOp,
    SelectOp,
    UnaryElementwiseOp,
)
from dflow.dialects.df.semantics import HasSemantics
from dflow.dialects.df.traits import Elementwise, Reduction
from dflow.driver.universe import PASSES, get_all_passes
from dflow.lowering.kernels import builder, scalar_ops
from dflow.runtime.library import cpu
from dflow.transforms.autodiff import rules

ROOT = Path(__file__).resolve().parent.parent

OPS: frozenset[type[Operation]] = frozenset(DF.operations)
"""Every op the dialect registers."""


def _modules(package: ModuleType) -> Iterator[ModuleType]:
    """Every module of `package`, imported."""
    for found in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        yield importlib.import_module(found.name)


def test_every_op_class_of_the_dialect_is_registered_and_exported() -> None:
    """An op class defined in `dflow/dialects/df/` (one with a `df.` name; the
    families' bases have none) is in `DF` and in the package's `__all__`."""
    defined = {
        value
        for module in _modules(dflow.dialects.df)
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, IRDLOperation)
        and str(getattr(value, "name", "")).startswith("df.")
    }
    assert defined == OPS, sorted(op.__name__ for op in defined ^ OPS)
    assert {op.__name__ for op in OPS} <= set(dflow.dialects.df.__all__)


WITHOUT_GRADIENT: dict[str, str] = {
    "df.conv2d_grad_input": "a gradient op: df-autodiff makes it and takes no second derivative",
    "df.conv2d_grad_filter": "a gradient op: df-autodiff makes it and takes no second derivative",
    "df.max_pool2d_grad": "a gradient op: df-autodiff makes it and takes no second derivative",
    "df.avg_pool2d_grad": "a gradient op: df-autodiff makes it and takes no second derivative",
    "df.max_pool2d_grad_indices": (
        "a gradient op: df-autodiff makes it and takes no second derivative"
    ),
    "df.max_pool2d_indices": "its result is i64: df-autodiff makes it for df.max_pool2d's gradient",
    "df.conv2d_nchwc": "made by df-layout, in the lowering",
    "df.max_pool2d_nchwc": "made by df-layout, in the lowering",
    "df.avg_pool2d_nchwc": "made by df-layout, in the lowering",
    "df.send": "made by df-partition, after differentiation",
    "df.recv": "made by df-partition, after differentiation",
    "df.fused": "made by df-fuse, in the lowering",
    "df.yield": "ends a df.fused body, made in the lowering",
}
"""The ops `df-autodiff` has no rule for, each with its reason (on the path to a
loss they stop the pass, which names the op)."""


def test_every_op_has_a_gradient_rule_or_a_reason_not_to() -> None:
    ruled = rules._RULES  # pyright: ignore[reportPrivateUsage]
    assert set(ruled) <= OPS
    assert {op.name for op in OPS - set(ruled)} == set(WITHOUT_GRADIENT)


def _of(family: type) -> set[type[Operation]]:
    """The ops of `DF` of `family` (a class the ops derive from)."""
    return {op for op in OPS if issubclass(op, family)}


def test_every_elementwise_op_lowers_to_scalar_ops() -> None:
    """The tables of `scalar_ops` cover their families: a unary op is the identity, a
    `math` op or a composite; a comparison has its predicates; any other binary op
    its float and its integer `arith` op. The rest, `select`, `cast` and `addn`, are
    cases of their own in `lower_scalar`."""
    unary = {IdentityOp} | set(scalar_ops._MATH_UNARY) | set(scalar_ops._COMPOSITE_UNARY)  # pyright: ignore[reportPrivateUsage]
    assert unary == _of(UnaryElementwiseOp)
    assert set(scalar_ops._PREDICATES) == _of(CompareOp)  # pyright: ignore[reportPrivateUsage]
    arithmetic = _of(BinaryElementwiseOp) - _of(CompareOp)
    assert set(scalar_ops._FLOAT_BINARY) == arithmetic  # pyright: ignore[reportPrivateUsage]
    assert set(scalar_ops._INT_BINARY) == arithmetic  # pyright: ignore[reportPrivateUsage]
    elementwise = {op for op in OPS if op.has_trait(Elementwise)}
    assert elementwise - _of(UnaryElementwiseOp) - _of(BinaryElementwiseOp) == {
        SelectOp,
        CastOp,
        AddNOp,
    }


LIBRARY_OPS: tuple[type[Operation], ...] = (
    MatmulOp,
    ConvolutionOp,
    Conv2DNchwcOp,
    PoolingOp,
    IndexingOp,
)
"""The families whose kernels call a library routine (`builder.is_library_op`)."""


def _routines() -> dict[type[Operation], tuple[str, ...]]:
    """The library routines each library op calls (`builder._library_call`)."""
    windows = builder._WINDOW_ROUTINES  # pyright: ignore[reportPrivateUsage]
    indexing = builder._INDEXING_ROUTINES  # pyright: ignore[reportPrivateUsage]
    return {
        MatmulOp: ("matmul", "batch_matmul"),
        Conv2DOp: ("conv2d", "conv2d_bias"),
        Conv2DNchwcOp: ("conv2d_nchwc", "conv2d_nchwc_bias"),
        **{op: (routine,) for op, routine in windows.items()},
        **{op: (f"{routine}_i32", f"{routine}_i64") for op, routine in indexing.items()},
    }


def test_every_computing_op_has_its_kernel_family() -> None:
    """Each op with semantics but `df.constant` becomes a kernel: elementwise,
    a reduction, a library call, or data movement (`builder.is_kernel_op`)."""
    data_movement = set(builder._DATA_MOVEMENT)  # pyright: ignore[reportPrivateUsage]
    library = {op for op in OPS if issubclass(op, LIBRARY_OPS)}
    assert set(_routines()) == library
    for op in _of(HasSemantics) - {ConstantOp}:
        families = [
            op.has_trait(Elementwise),
            op.has_trait(Reduction),
            op in library,
            op in data_movement,
        ]
        assert families.count(True) == 1, (op.name, families)


def _gpu_routines() -> set[str]:
    """The routines `runtime/library/gpu.py` defines, read from its text (it imports
    CUDA)."""
    tree = ast.parse((ROOT / "dflow" / "runtime" / "library" / "gpu.py").read_text())
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return {name for name in names if not name.startswith("_")}


def test_every_library_op_has_its_routines_on_the_cpu_and_on_the_gpu_unless_pending() -> None:
    """Each routine of a library op exists in the CPU library for floats; on the GPU
    it exists exactly where the op is not `GPU_PENDING`."""
    gpu = _gpu_routines()
    assert set(_routines()) >= GPU_PENDING
    for op, routines in _routines().items():
        for routine in routines:
            assert hasattr(cpu, f"{routine}_f32") and hasattr(cpu, f"{routine}_f64"), routine
            named = routine.removesuffix("_i32").removesuffix("_i64")  # an indexing op's
            assert (named in gpu) == (op not in GPU_PENDING), (op.name, routine)


def _readme_op_table() -> set[str]:
    """The words of the table in the README's section on the `df` dialect."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## The `df` dialect\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return {word for row in rows for word in re.findall(r"\w+", row)}


def test_the_readme_names_every_op() -> None:
    """Each op is in the README's op table, or named `df.NAME` where the README
    tells of it (the gradient ops of pools under the passes, `df.fused` under
    fusion)."""
    readme = (ROOT / "README.md").read_text()
    table = _readme_op_table()
    unnamed = [
        op.name
        for op in OPS
        if op.name.removeprefix("df.") not in table and f"`{op.name}" not in readme
    ]
    assert not unnamed, sorted(unnamed)


def _subclasses(base: type[ModulePass]) -> Iterator[type[ModulePass]]:
    for subclass in base.__subclasses__():
        yield subclass
        yield from _subclasses(subclass)


def test_every_pass_of_dflow_is_registered_under_its_name() -> None:
    """A pass class of `dflow.transforms` or `dflow.lowering` is in `PASSES` under its
    `name` (as itself, or as the subclass the numba target places with)."""
    imported = [*_modules(dflow.transforms), *_modules(dflow.lowering)]
    assert imported
    registered = {name: load() for name, load in get_all_passes().items()}
    ours = [
        found
        for found in _subclasses(ModulePass)
        if found.__module__.startswith(("dflow.transforms.", "dflow.lowering."))
    ]
    assert ours
    for found in ours:
        assert found.name in PASSES, found.name
        assert issubclass(registered[found.name], found), found.name
