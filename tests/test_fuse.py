"""df-fuse and df.fused.

Random graphs (tests/support/graphgen.py), unplaced, randomly placed, and randomly placed
then partitioned, are fused and must give the interpreter's results bit for bit
(a fused body runs the same NumPy code on the same arrays). An independent checker
written apart from dflow.lowering/fuse.py then takes every fused module apart: it maps
each value back to the op computing it, through block arguments and yields, and
checks that no path leaves a group and re-enters it (send → recv edges included),
that every block uses values only after defining them, and that every group obeys
the rules (two ops or more, one device, a contraction first, a reduction last).
Kernels (fused ops and other ops, not constants, sends or receives) must be fewer.
Every lit program must keep its results through df-fuse too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from io import StringIO
from typing import Any

import numpy as np
import pytest
from graphgen import random_graph
from partition_checker import check_partitioned
from test_partition import CYCLE, place_randomly
from test_transform_differential import LIT_FUNCTIONS, _parse, _programs, _runnable
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from dflow.dialects.df import (
    Conv2DOp,
    FusedOp,
    MatmulOp,
    RecvOp,
    ReduceOp,
    SendOp,
    SoftmaxOp,
    YieldOp,
)
from dflow.driver.compilation.interpreted import run_partitioned
from dflow.driver.loading.feeds import random_inputs
from dflow.driver.loading.pipeline import apply_pipeline
from dflow.driver.loading.source import make_context, parse_module
from dflow.interpreters.df import run_function

SEEDS = range(16)


# --- the independent checker ----------------------------------------------------------


def _functions(module: ModuleOp) -> dict[str, list[FuncOp]]:
    parts: dict[str, list[FuncOp]] = defaultdict(list)
    for op in module.walk():
        if isinstance(op, FuncOp) and not op.is_declaration:
            parts[op.sym_name.data].append(op)
    return parts


def _source(value: SSAValue) -> Operation | None:
    """The op (outside any df.fused, or in a body) that computes `value`; None for
    a function argument."""
    while True:
        owner = value.owner
        if isinstance(owner, FusedOp):
            yielded = owner.body.block.last_op
            assert isinstance(yielded, YieldOp)
            value = yielded.operands[value.index]  # type: ignore[attr-defined]
        elif isinstance(owner, Block):
            parent = owner.parent_op()
            if not isinstance(parent, FusedOp):
                return None
            assert isinstance(value, BlockArgument)
            value = parent.operands[value.index]
        else:
            return owner


def _ops(functions: list[FuncOp]) -> list[Operation]:
    """The top-level ops of the functions' blocks (several, where a function branches)."""
    return [op for f in functions for block in f.body.blocks for op in block.ops]


def _graph(functions: list[FuncOp]) -> tuple[dict[Operation, set[Operation]], dict[Operation, int]]:
    """The dependency graph of the ops of one function's parts, fused ops opened up,
    and the fused op (by number) each op belongs to."""
    nodes: list[Operation] = []
    group: dict[Operation, int] = {}
    for op in _ops(functions):
        if isinstance(op, FusedOp):
            for inner in op.body.block.ops:
                if not isinstance(inner, YieldOp):
                    nodes.append(inner)
                    group[inner] = id(op)
        else:
            nodes.append(op)
    edges: dict[Operation, set[Operation]] = {op: set() for op in nodes}
    sends = {op.key.data: op for op in nodes if isinstance(op, SendOp)}
    for op in nodes:
        for operand in op.operands:
            source = _source(operand)
            if source is not None:
                edges[source].add(op)
        if isinstance(op, RecvOp) and op.key.data in sends:
            edges[sends[op.key.data]].add(op)
    return edges, group


def check_convex(module: ModuleOp) -> int:
    """No path leaves a group and comes back into it; returns the number of groups."""
    count = 0
    for functions in _functions(module).values():
        edges, group = _graph(functions)
        members: dict[int, set[Operation]] = defaultdict(set)
        for op, g in group.items():
            members[g].add(op)
        for g, inside in members.items():
            count += 1
            frontier = [t for op in inside for t in edges[op] if t not in inside]
            seen = set(frontier)
            while frontier:
                op = frontier.pop()
                for target in edges[op]:
                    assert target not in inside, f"a path leaves group {g} and re-enters it"
                    if target not in seen:
                        seen.add(target)
                        frontier.append(target)
    return count


def check_order(module: ModuleOp) -> None:
    """Every block uses a value only after it is defined."""
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                defined: set[SSAValue] = set(block.args)
                for inner in block.ops:
                    for operand in inner.operands:
                        owner = operand.owner
                        local = (owner is block) or (
                            isinstance(owner, Operation) and owner.parent is block
                        )
                        assert not local or operand in defined, f"{inner.name} uses a later value"
                    defined.update(inner.results)


def fused_ops(module: ModuleOp) -> Iterator[FusedOp]:
    return (op for op in module.walk() if isinstance(op, FusedOp))


def check_groups(module: ModuleOp, max_ops: int = 64) -> None:
    """Each group: two to `max_ops` ops besides its constants, all on its device, a
    contraction only first, a reduction or softmax only last."""
    for fused in fused_ops(module):
        body = [op for op in fused.body.block.ops if not isinstance(op, YieldOp)]
        ops = [op for op in body if op.name != "df.constant"]
        assert 2 <= len(ops) <= max_ops, f"{fused.kernel_name.data} holds {len(ops)} ops"
        device = fused.attributes.get("df.device")
        assert all(op.attributes.get("df.device") == device for op in body)
        contractions = [i for i, op in enumerate(body) if isinstance(op, MatmulOp | Conv2DOp)]
        reductions = [i for i, op in enumerate(body) if isinstance(op, ReduceOp | SoftmaxOp)]
        assert contractions in ([], [0]), fused.kernel_name.data
        assert reductions in ([], [len(body) - 1]), fused.kernel_name.data
        assert not (contractions and reductions)
        expected = "contraction" if contractions else "reduction" if reductions else "elementwise"
        assert fused.kind.data == expected


def count_kernels(module: ModuleOp) -> int:
    return sum(
        1
        for functions in _functions(module).values()
        for op in _ops(functions)
        if op.name.startswith("df.") and op.name not in ("df.constant", "df.send", "df.recv")
    )


def check_fused(module: ModuleOp, max_ops: int | None = 64) -> None:
    """All the checks; the group rules only when `max_ops` is given (the lit
    programs hold hand-written df.fused ops that df-fuse would not make)."""
    module.verify()
    check_order(module)
    check_convex(module)
    if max_ops is not None:
        check_groups(module, max_ops)


# --- the checker catches what it should ----------------------------------------------


def test_checker_catches_a_group_waiting_on_another_device() -> None:
    module = parse_module(THROUGH_GPU, "t")
    module.verify()
    check_order(module)
    with pytest.raises(AssertionError, match=r"leaves group .* and re-enters it"):
        check_convex(module)


def test_checker_catches_a_use_before_its_definition() -> None:
    # xDSL's parser, not dflow's front door, which rejects such a program itself.
    module = Parser(make_context(), USE_BEFORE_DEFINITION).parse_module()
    with pytest.raises(AssertionError, match=r"df\.neg uses a later value"):
        check_order(module)


def test_checker_catches_a_contraction_inside_a_group() -> None:
    module = parse_module(MATMUL_SECOND, "t")
    module.verify()
    with pytest.raises(AssertionError, match="late"):
        check_groups(module)


THROUGH_GPU = """
builtin.module {
  builtin.module attributes {df.device = "cpu:0"} {
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %v = df.recv {df.device = "cpu:0", key = "k1", from = "gpu:0", to = "cpu:0"}
          : () -> tensor<4xf32>
      %a, %c = df.fused(%bx = %x, %bv = %v)
          {df.device = "cpu:0", kind = "elementwise", name = "late"}
          : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
        %ia = df.exp %bx {df.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
        %ic = df.add %ia, %bv {df.device = "cpu:0"}
            : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        df.yield %ia, %ic {df.device = "cpu:0"} : tensor<4xf32>, tensor<4xf32>
      }
      df.send %a {df.device = "cpu:0", key = "k0", from = "cpu:0", to = "gpu:0"}
          : (tensor<4xf32>) -> ()
      func.return %c : tensor<4xf32>
    }
  }
  builtin.module attributes {df.device = "gpu:0"} {
    func.func @main() {
      %r = df.recv {df.device = "gpu:0", key = "k0", from = "cpu:0", to = "gpu:0"}
          : () -> tensor<4xf32>
      %s = df.sqrt %r {df.device = "gpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
      df.send %s {df.device = "gpu:0", key = "k1", from = "gpu:0", to = "cpu:0"}
          : (tensor<4xf32>) -> ()
      func.return
    }
  }
}
"""

USE_BEFORE_DEFINITION = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %v = df.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %a, %c = df.fused(%bx = %x, %bv = %v) {kind = "elementwise", name = "k"}
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %ia = df.exp %bx : (tensor<4xf32>) -> tensor<4xf32>
    %ic = df.add %ia, %bv : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    df.yield %ia, %ic : tensor<4xf32>, tensor<4xf32>
  }
  func.return %c : tensor<4xf32>
}
"""

MATMUL_SECOND = """
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %r = df.fused(%bx = %x) {kind = "contraction", name = "late"}
      : (tensor<2x2xf32>) -> tensor<2x2xf32> {
    %e = df.exp %bx : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %m = df.matmul %e, %e : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    df.yield %m : tensor<2x2xf32>
  }
  func.return %r : tensor<2x2xf32>
}
"""


# --- random graphs --------------------------------------------------------------------


def _run(module: ModuleOp, seed: int) -> tuple[list[Any], tuple[Any, ...]]:
    main = next(iter(module.ops))
    assert isinstance(main, FuncOp)
    inputs = random_inputs(main, seed)
    return inputs, run_function(module, "main", inputs)


def _same(actual: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_random_graphs_keep_their_results(seed: int, dtype: str) -> None:
    module = random_graph(seed, min_ops=40, dtype=dtype)
    inputs, expected = _run(module, seed)
    kernels = count_kernels(module)
    apply_pipeline(module, "df-fuse")
    check_fused(module)
    assert any(fused_ops(module))
    assert count_kernels(module) < kernels
    _same(run_function(module, "main", inputs), expected)


def test_fusion_removes_most_kernels() -> None:
    before = after = 0
    for seed in SEEDS:
        module = random_graph(seed, min_ops=40)
        before += count_kernels(module)
        apply_pipeline(module, "df-fuse")
        after += count_kernels(module)
    assert after < 0.5 * before, (before, after)


@pytest.mark.parametrize("seed", range(8))
def test_max_ops_bounds_every_group(seed: int) -> None:
    module = random_graph(seed, min_ops=40)
    inputs, expected = _run(module, seed)
    apply_pipeline(module, "df-fuse{max-ops=3}")
    check_fused(module, max_ops=3)
    _same(run_function(module, "main", inputs), expected)


@pytest.mark.parametrize("seed", range(8))
def test_random_placements_fuse_per_device(seed: int) -> None:
    module = random_graph(seed, min_ops=40)
    inputs, expected = _run(module, seed)
    place_randomly(module, seed)
    apply_pipeline(module, "df-fuse")
    check_fused(module)
    _same(run_function(module, "main", inputs), expected)


@pytest.mark.parametrize("seed", range(10))
def test_partitioned_graphs_fuse_and_run_like_one_device(seed: int) -> None:
    module = random_graph(seed, min_ops=40)
    inputs, expected = _run(module, seed)
    place_randomly(module, seed)
    apply_pipeline(module, "df-partition")
    kernels = count_kernels(module)
    apply_pipeline(module, "df-fuse")
    check_fused(module)
    assert check_partitioned(module) > 0
    assert count_kernels(module) <= kernels
    _same(run_partitioned(module, "main", inputs, timeout=10), expected)


@pytest.mark.parametrize("seed", range(4))
def test_fused_graphs_round_trip_and_fuse_no_further(seed: int) -> None:
    module = random_graph(seed, min_ops=40)
    apply_pipeline(module, "df-fuse")
    text = str(module)
    assert str(parse_module(text, "t")) == text
    generic = parse_module(text, "t")
    stream = StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(generic)
    assert str(parse_module(stream.getvalue(), "t")) == text
    apply_pipeline(module, "df-fuse")
    assert str(module) == text


@pytest.mark.parametrize("seed", range(4))
def test_cleanup_passes_keep_fused_programs_valid(seed: int) -> None:
    module = random_graph(seed, min_ops=40)
    inputs, expected = _run(module, seed)
    apply_pipeline(module, "df-fuse,canonicalize,cse,df-prune")
    check_fused(module)
    _same(run_function(module, "main", inputs), expected)


# --- lit programs, errors and statistics ----------------------------------------------


def _top_level_runnable(module: ModuleOp) -> list[str]:
    """Functions of the top module that run alone (the differential tests' selection)."""
    return [op.sym_name.data for op in _runnable(module)]


def _run_named(module: ModuleOp, names: list[str]) -> dict[str, tuple[Any, ...]]:
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
    return {
        name: run_function(module, name, random_inputs(functions[name], seed=7)) for name in names
    }


def test_lit_programs_keep_their_results() -> None:
    """df-fuse takes every lit program (a refusal fails here) and keeps every runnable
    function's results; none drops out silently."""
    checked = fused = 0
    for where, text in _programs():
        module = _parse(text, where)
        if module is None:
            continue
        names = _top_level_runnable(module)
        before = _run_named(module, names)
        apply_pipeline(module, "df-fuse")
        check_fused(module, max_ops=None)
        fused += sum(1 for _ in fused_ops(module))
        after = _run_named(module, names)
        for name in names:
            _same(after[name], before[name])
            checked += 1
    assert checked >= LIT_FUNCTIONS and fused >= 20, (checked, fused)


def test_max_ops_must_be_positive() -> None:
    with pytest.raises(PassFailedException, match=r"^df-fuse: max-ops must be at least 1, got 0$"):
        apply_pipeline(random_graph(0), "df-fuse{max-ops=0}")


def test_devices_waiting_on_each_other_are_refused() -> None:
    with pytest.raises(PassFailedException, match=r"parts of @main wait on each other in a cycle"):
        apply_pipeline(parse_module(CYCLE, "t"), "df-fuse")


def test_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    module = parse_module(MLP, "t")
    apply_pipeline(module, "df-fuse{stats=true}")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [  # ops: 6 and the return, then 2 df.fused and their df.yield join them
        "df-fuse: 2 rewrites; ops 7 -> 11 (+4); constant bytes 0 -> 0 (+0)",
        "  ContractionGroups: 1",
        "  ReductionGroups: 1",
        "  (kernels after: 3)",
        "  (kernels before: 6)",
        "  (ops fused: 5)",
    ]


MLP = """
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %m = df.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %a = df.add %m, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %r = df.relu %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = df.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %e = df.exp %t : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %s = df.reduce_sum %e {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
"""
