"""Microkernels written with explicit vectors, for the llvm target.

`gemm_microkernel` is the kernel of a float32 product `C = A @ B` (row major) as a
register-blocked loop nest in the `vector` dialect: each tile of `rows` rows by
`columns` vectors of `lanes` floats of C is held in `rows x columns` vector
accumulators across the whole inner axis; each step loads `columns` vectors of a row
of B, broadcasts one element of A per row, and updates every accumulator with one
fused multiply-add. With 6 rows x 2 vectors of 16 floats (AVX-512: 12 of its 32
registers) this is the shape of the inner kernel of BLIS and of ONNX Runtime's MLAS.
It is the pattern the generated convolutions of the next step follow (a tile of
output pixels by filter blocks); `bench/microkernel.py` measures it against NumPy's
SGEMM, `tests/test_llvm_vectors.py` checks it against NumPy.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf, vector
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser


def gemm_text(m: int, n: int, k: int, rows: int = 6, lanes: int = 16, columns: int = 2) -> str:
    """The MLIR text of `@gemm(A: m x k, B: k x n, C: m x n)`; `m` a multiple of `rows`, `n`
    of `columns · lanes`."""
    width = columns * lanes
    if m % rows or n % width:
        raise ValueError(f"gemm_text: {m}x{n} is not a whole number of {rows}x{width} tiles")
    v = f"vector<{lanes}xf32>"
    accumulators = [f"%acc{r}_{c}" for r in range(rows) for c in range(columns)]
    lines = [
        f"func.func @gemm(%a: memref<{m}x{k}xf32>, %b: memref<{k}x{n}xf32>, "
        f"%c: memref<{m}x{n}xf32>) {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %m = arith.constant {m} : index",
        f"  %n = arith.constant {n} : index",
        f"  %k = arith.constant {k} : index",
        f"  %rows = arith.constant {rows} : index",
        f"  %width = arith.constant {width} : index",
        f"  %zero = arith.constant dense<0.0> : {v}",
        "  scf.for %i = %c0 to %m step %rows {",
        "    scf.for %j = %c0 to %n step %width {",
    ]
    types = (f"memref<{m}x{k}xf32>", f"memref<{k}x{n}xf32>", f"memref<{m}x{n}xf32>")
    lines += _tile(rows, columns, lanes, accumulators, types)
    lines += ["    }", "  }", "  func.return", "}"]
    return "\n".join(lines) + "\n"


def _tile(
    rows: int, columns: int, lanes: int, accumulators: list[str], buffers: tuple[str, str, str]
) -> list[str]:
    """One tile: the accumulators carried over the inner axis, then stored."""
    v = f"vector<{lanes}xf32>"
    a_type, b_type, c_type = buffers
    types = ", ".join([v] * len(accumulators))
    inits = ", ".join(f"%i{name[4:]} = %zero" for name in accumulators)
    body = [f"      %j{c} = arith.addi %j, %o{c} : index" for c in range(columns)]
    body = [f"      %o{c} = arith.constant {c * lanes} : index" for c in range(columns)] + body
    count = len(accumulators)
    body.append(
        f"      %t:{count} = scf.for %kk = %c0 to %k step %c1 iter_args({inits}) -> ({types}) {{"
    )
    for c in range(columns):
        body.append(f"        %b{c} = vector.load %b[%kk, %j{c}] : {b_type}, {v}")
    updated: list[str] = []
    for r in range(rows):
        body.append(f"        %r{r} = arith.addi %i, %c{r}r : index")
        body.append(f"        %s{r} = memref.load %a[%r{r}, %kk] : {a_type}")
        body.append(f"        %a{r} = vector.broadcast %s{r} : f32 to {v}")
        for c in range(columns):
            body.append(f"        %u{r}_{c} = vector.fma %a{r}, %b{c}, %i{r}_{c} : {v}")
            updated.append(f"%u{r}_{c}")
    body.append(f"        scf.yield {', '.join(updated)} : {types}")
    body.append("      }")
    for r in range(rows):
        body.append(f"      %w{r} = arith.addi %i, %c{r}r : index")
        for c in range(columns):
            index = r * columns + c
            body.append(f"      vector.store %t#{index}, %c[%w{r}, %j{c}] : {c_type}, {v}")
    constants = [f"      %c{r}r = arith.constant {r} : index" for r in range(rows)]
    return constants + body


def gemm_microkernel(
    m: int, n: int, k: int, rows: int = 6, lanes: int = 16, columns: int = 2
) -> FuncOp:
    """`gemm_text` parsed: the kernel's `func.func`."""
    context = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, memref.MemRef, scf.Scf, vector.Vector):
        context.load_dialect(dialect)
    text = gemm_text(m, n, k, rows, lanes, columns)
    module = Parser(context, text).parse_module()
    kernel = next(iter(module.ops))
    assert isinstance(kernel, FuncOp)
    kernel.detach()
    return kernel
