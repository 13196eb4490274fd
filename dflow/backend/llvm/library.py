"""Library calls of a kernel as LLVM IR: float matrix products as calls of NumPy's
OpenBLAS.

`func.call @dflow_matmul_<f32|f64>(a, b, out, transpose_a, transpose_b)` is one
`cblas_?gemm` (row major, the leading dimensions the row lengths, at least 1 as CBLAS
requires), and `@dflow_batch_matmul_*` one per matrix of the batch, in a loop whose
operand offsets broadcast as NumPy's `matmul` does. Every shape is static, so the
sizes are constants; an empty product writes nothing, and a product over an empty
inner axis zeros its result. The routines are OpenBLAS's `scipy_cblas_?gemm64_` (64-bit
integers), which `runtime/library/blas.py` loads into LLVM's symbols, so the
numba and llvm targets call the same code.

`@dflow_conv2d_f32` and `@dflow_conv2d_bias_f32` of dilation 1 (any groups:
`direct_convolution`), and `@dflow_max_pool2d_f32` and `@dflow_avg_pool2d_f32`
(`direct_pool`), call a direct convolution or pool generated for their shapes
(`convolution.py`), defined in the kernel's unit; `@dflow_conv2d_nchwc[_bias]_f32` of
block 16 the blocked convolution and `@dflow_{max,avg}_pool2d_nchwc_f32` the blocked
pools (`nchwc.py`, `direct_nchwc`, `direct_nchwc_pool`). Other routines (integer products,
dilated convolutions, pools of float64, gradients, indexing) are refused:
such a kernel makes its calls from Python (`program.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import TYPE_CHECKING, cast

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Attribute, SSAValue

from dflow.backend.llvm.convolution import DECLARATIONS, DirectConv
from dflow.backend.llvm.nchwc import BLOCK, GeneratedConvolution, NchwcConv, NchwcPool
from dflow.lowering.kernels.names import LIBRARY_PREFIX

if TYPE_CHECKING:
    from dflow.backend.llvm.kernel import KernelPrinter

SGEMM = "scipy_cblas_sgemm64_"
"""NumPy's OpenBLAS's float32 product (64-bit integers)."""


def gemm_declaration(name: str, ty: str) -> str:
    """The declaration of a `cblas_?gemm` of 64-bit integers, of `ty` scalars."""
    return (
        f"declare void @{name}(i32, i32, i32, i64, i64, i64, {ty}, ptr, i64, ptr, i64, {ty}, "
        "ptr, i64)"
    )


GEMM = {"f32": (SGEMM, "float"), "f64": ("scipy_cblas_dgemm64_", "double")}
"""Each float element's CBLAS product in NumPy's OpenBLAS, and its LLVM type."""

GEMV = {"f32": "scipy_cblas_sgemv64_", "f64": "scipy_cblas_dgemv64_"}
"""Each float element's CBLAS matrix-vector product in NumPy's OpenBLAS."""

ROW_MAJOR, NO_TRANSPOSE, TRANSPOSE = 101, 111, 112
"""The CBLAS enumerations (`CblasRowMajor`, `CblasNoTrans`, `CblasTrans`)."""


def library_routine(op: func.CallOp) -> tuple[str, str] | None:
    """`(routine, element)` of a float product this printer makes, else None."""
    callee = op.callee.root_reference.data.removeprefix(LIBRARY_PREFIX)
    routine, _, element = callee.rpartition("_")
    if routine in ("matmul", "batch_matmul") and element in GEMM:
        return routine, element
    return None


def direct_convolution(op: func.CallOp) -> DirectConv | None:
    """The direct convolution of a `conv2d` or `conv2d_bias` call of float32 and
    dilation 1, else None (the call is made from Python with numba's routine).

    Measured on one core (2026-11-29, GFLOP/s, SGEMM 101): every convolution of
    ResNet-18 and of the conv net benchmark with a filter larger than 1x1 ran faster
    direct (80-110 of stride 1, 79-105 of stride 2 with the 7x7 stem) than as im2col
    and SGEMM (48-91, 64-83), and as fast as PyTorch or faster at stride 1 except at
    256 channels (101 against 109). A 1x1 filter ran faster direct than as a
    product per image (OpenBLAS's SGEMM) at every shape of MobileNet-V2's and
    ResNet-50's: 85-116 against 33-98 of stride 1 (100-116 against 68-98 from 14x14
    up; the products of 16-32 input channels ran at 33-52), 37-79 against 32-67 of
    stride 2, and faster than PyTorch at each. Depthwise convolutions of
    MobileNet-V2's shapes ran 1.7-12x faster than numba's routine and 1.1-2.1x
    faster than PyTorch; grouped ones (4 and 8 groups) 2.3x and 1.1-1.4x."""
    callee = op.callee.root_reference.data.removeprefix(LIBRARY_PREFIX)
    if callee not in ("conv2d_f32", "conv2d_bias_f32"):
        return None
    bias = callee == "conv2d_bias_f32"
    geometry = [_integer(v) for v in op.arguments[4 if bias else 3 :]]
    sh, sw, top, left, bottom, right, dh, dw, groups = geometry
    n, c, h, w = _shape(op.arguments[0])
    k, _, kh, kw = _shape(op.arguments[1])
    if (dh, dw) != (1, 1):
        return None
    return DirectConv(n, c, h, w, k, kh, kw, top, left, bottom, right, bias, sh, sw, groups)


def direct_pool(op: func.CallOp) -> DirectConv | None:
    """The generated max or average pool of a `max_pool2d` or `avg_pool2d` call of
    float32, else None. Numba's max pool took 4-5 s to compile on a first use after
    installing (ResNet-18's one pool): generated, it compiles with the rest of the
    module. Numba's average pool, a scalar loop over the taps with a branch per tap,
    took 2.1x PyTorch's time (Inception-V3's pools, 3x3 of stride 1, were a fifth of
    its run)."""
    callee = op.callee.root_reference.data.removeprefix(LIBRARY_PREFIX)
    if callee not in ("max_pool2d_f32", "avg_pool2d_f32"):
        return None
    kh, kw, sh, sw, top, left, bottom, right = (_integer(v) for v in op.arguments[2:])
    n, c, h, w = _shape(op.arguments[0])
    average = callee == "avg_pool2d_f32"
    return DirectConv(
        n, c, h, w, c, kh, kw, top, left, bottom, right, False, sh, sw, pool=True, average=average
    )


def direct_nchwc_pool(op: func.CallOp) -> NchwcPool | None:
    """The generated NCHWc pool (`nchwc.py`) of a `max_pool2d_nchwc` or
    `avg_pool2d_nchwc` call of float32 and block 16, else None."""
    callee = op.callee.root_reference.data.removeprefix(LIBRARY_PREFIX)
    if callee not in ("max_pool2d_nchwc_f32", "avg_pool2d_nchwc_f32"):
        return None
    kh, kw, sh, sw, top, left, bottom, right = (_integer(v) for v in op.arguments[2:])
    n, cb, h, w, block = _shape(op.arguments[0])
    if block != BLOCK:
        return None
    average = callee == "avg_pool2d_nchwc_f32"
    return NchwcPool(n, cb, h, w, kh, kw, top, left, bottom, right, sh, sw, average)


def direct_nchwc(op: func.CallOp) -> NchwcConv | None:
    """The generated blocked convolution (`nchwc.py`) of a `conv2d_nchwc` call of
    float32 and output block 16 (input block 16 or 1) of groups it generates, else
    None (numba's routine, from Python)."""
    callee = op.callee.root_reference.data.removeprefix(LIBRARY_PREFIX)
    if callee not in ("conv2d_nchwc_f32", "conv2d_nchwc_bias_f32"):
        return None
    bias = callee == "conv2d_nchwc_bias_f32"
    geometry = [_integer(v) for v in op.arguments[4 if bias else 3 :]]
    sh, sw, top, left, bottom, right, groups = geometry
    n, cb, h, w, lanes = _shape(op.arguments[0])
    ob, _, kh, kw, _, block = _shape(op.arguments[1])
    if block != BLOCK or lanes not in (1, BLOCK):
        return None
    shapes = (n, cb, h, w, ob, kh, kw, top, left, bottom, right)
    conv = NchwcConv(*shapes, bias, sh, sw, lanes, groups)
    return conv if conv.supported else None


def print_convolution(
    printer: KernelPrinter, op: func.CallOp, conv: GeneratedConvolution, rest: Sequence[str] = ()
) -> None:
    """The direct convolution `op` calls: its function defined in the unit (once for
    all its kernels, or after the kernel with its elementwise `rest`'s buffers),
    called."""
    printer.declarations.update(DECLARATIONS)
    if isinstance(conv, NchwcConv):
        for tile in conv.tiles():
            printer.declarations.add(tile.declaration())
            printer.shared[tile.name] = tile.definition()
    if conv.fused:
        printer.chunks.append(conv.definition().splitlines())
    else:
        printer.declarations.add(conv.definition())
    buffers = op.arguments[: 2 if conv.pool else 4 if conv.bias else 3]
    arguments = [*(f"ptr {printer.value(v)}" for v in buffers), *(f"ptr {r}" for r in rest)]
    if isinstance(conv, NchwcConv):
        arguments.append(f"i64 {printer.size_argument(conv.cb)}")
    printer.emit(f'call void @"{conv.name}"({", ".join(arguments)})')


def _shape(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a buffer passed to a routine (through its `memref.cast`)."""
    owner = value.owner
    source = owner.source if isinstance(owner, memref.CastOp) else value
    return tuple(cast(MemRefType[Attribute], source.type).get_shape())


def _integer(value: SSAValue) -> int:
    """A routine's integer argument, a constant."""
    owner = value.owner
    assert isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr)
    return owner.value.value.data


def _flag(value: SSAValue) -> bool:
    return bool(_integer(value))


def print_product(printer: KernelPrinter, op: func.CallOp, routine: str, element: str) -> None:
    """The product `op` calls, as CBLAS calls."""
    a, b, out = (_shape(v) for v in op.arguments[:3])
    pointers = [printer.value(v) for v in op.arguments[:3]]
    transposes = (_flag(op.arguments[3]), _flag(op.arguments[4]))
    rows, columns = out[-2:]
    inner = a[-2] if transposes[0] else a[-1]
    if rows == 0 or columns == 0 or 0 in out:
        return
    ty = GEMM[element][1]
    if inner == 0:
        printer.declarations.add("declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
        size = prod(out) * (4 if ty == "float" else 8)
        printer.emit(f"call void @llvm.memset.p0.i64(ptr {pointers[2]}, i8 0, i64 {size}, i1 0)")
        return
    gemm = Gemm(
        printer, element, (rows, columns, inner), (max(1, a[-1]), max(1, b[-1])), transposes
    )
    if routine == "matmul":
        gemm.call(*pointers)
        return
    _batched(printer, gemm, (a, b, out), pointers)


class Gemm:
    """One `cblas_?gemm` call of fixed sizes, on pointers given per call; of one row, a
    `cblas_?gemv` instead (`out = op(b)^T a`).

    A product of one row (a batch-1 classifier, a decoder's step) reads each weight
    once: OpenBLAS's SGEMM packs the whole of `b` first, SGEMV reads it in place.
    Measured on one core (2026-11-29): 1 x 1280 by 1280 x 1000 (MobileNet-V2's
    classifier) 686 us as SGEMM of `b` transposed, 241 us not, 67 us as SGEMV either
    way; 1 x 768 by 768 x 768 38 and 32 us; as fast or faster at every size tried."""

    def __init__(
        self,
        printer: KernelPrinter,
        element: str,
        sizes: tuple[int, int, int],
        leading: tuple[int, int],
        transposes: tuple[bool, bool],
    ):
        self.printer = printer
        self.name, self.ty = GEMM[element]
        self.sizes, self.leading, self.transposes = sizes, leading, transposes
        if sizes[0] == 1:
            self.name = GEMV[element]
            printer.declarations.add(
                f"declare void @{self.name}(i32, i32, i64, i64, {self.ty}, ptr, i64, ptr, i64, "
                f"{self.ty}, ptr, i64)"
            )
        else:
            printer.declarations.add(gemm_declaration(self.name, self.ty))

    def call(self, a: str, b: str, out: str) -> None:
        rows, columns, inner = self.sizes
        if rows == 1:
            self.vector_call(a, b, out)
            return
        op_a, op_b = (TRANSPOSE if t else NO_TRANSPOSE for t in self.transposes)
        one, zero = "0x3FF0000000000000", "0x0000000000000000"
        self.printer.emit(
            f"call void @{self.name}(i32 {ROW_MAJOR}, i32 {op_a}, i32 {op_b}, i64 {rows}, "
            f"i64 {columns}, i64 {inner}, {self.ty} {one}, ptr {a}, i64 {self.leading[0]}, "
            f"ptr {b}, i64 {self.leading[1]}, {self.ty} {zero}, ptr {out}, i64 {columns})"
        )

    def vector_call(self, a: str, b: str, out: str) -> None:
        """`out = op(b)^T a` as one GEMV: of `b` (inner x columns, row major) its
        transpose, of `b` transposed (columns x inner) itself. `a`, a row or (as
        `op(a)`) a column, is contiguous either way."""
        _, columns, inner = self.sizes
        transposed = self.transposes[1]
        rows_b, columns_b = (columns, inner) if transposed else (inner, columns)
        op_b = NO_TRANSPOSE if transposed else TRANSPOSE
        one, zero = "0x3FF0000000000000", "0x0000000000000000"
        self.printer.emit(
            f"call void @{self.name}(i32 {ROW_MAJOR}, i32 {op_b}, i64 {rows_b}, i64 {columns_b}, "
            f"{self.ty} {one}, ptr {b}, i64 {self.leading[1]}, ptr {a}, i64 1, {self.ty} {zero}, "
            f"ptr {out}, i64 1)"
        )


def _batched(
    printer: KernelPrinter,
    gemm: Gemm,
    shapes: tuple[tuple[int, ...], ...],
    pointers: list[str],
) -> None:
    """A loop over the batch: each operand's matrix at the offset its broadcast batch
    index gives (an axis of size 1, or missing, repeats its one matrix)."""
    out = shapes[2]
    batch = out[:-2]
    count = prod(batch)
    ty = gemm.ty
    index = printer.fresh("b")
    printer.counter += 1
    header, body, done = (
        f"batch{printer.counter}",
        f"bbody{printer.counter}",
        f"bdone{printer.counter}",
    )
    before = printer.block
    printer.emit(f"br label %{header}")
    printer.label(header)
    following = printer.fresh("b")
    printer.emit(f"{index} = phi i64 [ 0, %{before} ], [ {following}, %{body} ]")
    test = printer.fresh("t")
    printer.emit(f"{test} = icmp slt i64 {index}, {count}")
    printer.emit(f"br i1 {test}, label %{body}, label %{done}")
    printer.label(body)
    matrices = [
        _matrix(printer, pointer, shape, batch, index, ty)
        for pointer, shape in zip(pointers, shapes, strict=True)
    ]
    gemm.call(*matrices)
    printer.emit(f"{following} = add i64 {index}, 1")
    printer.emit(f"br label %{header}")
    printer.label(done)


def _matrix(
    printer: KernelPrinter,
    pointer: str,
    shape: tuple[int, ...],
    batch: tuple[int, ...],
    index: str,
    ty: str,
) -> str:
    """The address of matrix `index` (of the whole batch, row major) in an operand of
    `shape`, broadcast to `batch`."""
    own = (1,) * (len(batch) - len(shape[:-2])) + shape[:-2]
    size = prod(shape[-2:])
    offset = "0"
    for axis, extent in enumerate(batch):
        if own[axis] == 1:
            continue
        position = printer.fresh("q")
        inner = prod(batch[axis + 1 :])
        printer.emit(f"{position} = udiv i64 {index}, {inner}")
        wrapped = printer.fresh("q")
        printer.emit(f"{wrapped} = urem i64 {position}, {extent}")
        stride = prod(own[axis + 1 :]) * size
        term = printer.fresh("q")
        printer.emit(f"{term} = mul i64 {wrapped}, {stride}")
        total = printer.fresh("q")
        printer.emit(f"{total} = add i64 {offset}, {term}")
        offset = total
    address = printer.fresh("m")
    printer.emit(f"{address} = getelementptr {ty}, ptr {pointer}, i64 {offset}")
    return address
