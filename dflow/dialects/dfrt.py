"""The `dfrt` dialect: a device's host function, as calls into the dflow runtime.

`df-lower-host` (lowering/lower_host.py) turns each planned `df` function into a
host function of these ops over `memref` values; the `numba` target prints each
op as one runtime call. The ops, in the order a host function uses them:

    %arena = dfrt.arena : memref<4096xi8>
    %v = dfrt.view %arena[128] : memref<4096xi8> -> memref<4x8xf32>
    %x = dfrt.to_device %arg0 : memref<4x8xf32>
    dfrt.launch @fused_add_0(%x, %c, %v) : (memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>)
    dfrt.recv %w {key = "main.k0", from = "cpu:1"} : memref<4x8xf32>
    dfrt.send %v {key = "main.k1", to = "cpu:1"} : memref<4x8xf32>
    %o = dfrt.output : memref<4xf32>
    %r = dfrt.fetch %v : memref<4x8xf32>
    func.return %r, %o : memref<4x8xf32>, memref<4xf32>

- `dfrt.arena`: the device's arena, `N` bytes (the runtime keeps one per device
  and grows it on demand, so a call does not allocate it again);
- `dfrt.view`: the buffer at a byte offset of the arena, of a statically shaped,
  contiguous memref type (`i1` elements take one byte); the offset is a multiple
  of the element width and the view lies inside the arena;
- `dfrt.launch`: runs a kernel (a `func.func` of the same module, over memrefs,
  with no results) on the device; its last operands are the buffers it writes;
- `dfrt.send` / `dfrt.recv`: hand a buffer to another device through the
  channel `key`, or wait for one and copy it into a buffer (the runtime copies
  between host and GPU memory as needed);
- `dfrt.to_device`: a host array (an argument, a constant) copied to the device's
  memory; on a CPU device it is the array itself;
- `dfrt.output`: a host buffer outside the arena that the function fills and
  returns: the caller owns it (a CPU device's results are written there directly;
  the runtime recycles an output only once the caller has dropped it);
- `dfrt.fetch`: a buffer copied out to a new host array, so a result survives
  the next call that reuses the arena (a GPU's results, arguments, constants).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import NoMemoryEffect, SymbolTable
from xdsl.utils.exceptions import VerifyException

from dflow.dialects.devices import DEVICE_FORM, DEVICE_PATTERN


def element_bytes(type: MemRefType[Attribute]) -> int:
    """Bytes of one element of a dflow buffer: integer and float widths, `i1` a byte."""
    width: int = getattr(type.element_type, "bitwidth", 8)
    return max(1, width // 8)


def buffer_bytes(type: MemRefType[Attribute]) -> int:
    """Bytes of a statically shaped buffer."""
    return prod(type.get_shape()) * element_bytes(type)


def _static_memref(value: SSAValue, what: str) -> MemRefType[Attribute]:
    type = value.type
    if not isinstance(type, MemRefType):  # as isa(type, MemRefType[Attribute]), but fast
        raise VerifyException(f"{what} must be a statically shaped memref, got {type}")
    type = cast(MemRefType[Attribute], type)
    if any(d < 0 for d in type.get_shape()):
        raise VerifyException(f"{what} must be a statically shaped memref, got {type}")
    return type


def _arena_memref(value: SSAValue) -> MemRefType[Attribute]:
    type = _static_memref(value, "the arena")
    if len(type.get_shape()) != 1 or type.element_type != IntegerType(8):
        raise VerifyException(f"the arena is a memref<Nxi8>, got {type}")
    return type


@irdl_op_definition
class ArenaOp(IRDLOperation):
    """`%a = dfrt.arena : memref<Nxi8>`: the device's arena of N bytes."""

    name = "dfrt.arena"
    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, size: int):
        super().__init__(result_types=[MemRefType(IntegerType(8), [size])])

    def verify_(self) -> None:
        _arena_memref(self.result)


@irdl_op_definition
class OutputOp(IRDLOperation):
    """`%o = dfrt.output : memref<...>`: a fresh host buffer, returned to the caller."""

    name = "dfrt.output"
    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, type: MemRefType[Attribute]):
        super().__init__(result_types=[type])

    def verify_(self) -> None:
        _static_memref(self.result, "an output")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """`%v = dfrt.view %arena[OFFSET] : memref<Nxi8> -> memref<...>`"""

    name = "dfrt.view"
    arena = operand_def(MemRefType)
    offset = prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)
    traits = traits_def(NoMemoryEffect())
    assembly_format = "$arena `[` $offset `]` attr-dict `:` type($arena) `->` type($result)"

    def __init__(self, arena: SSAValue | Operation, offset: int, type: MemRefType[Attribute]):
        super().__init__(
            operands=[arena],
            properties={"offset": IntegerAttr(offset, i64)},
            result_types=[type],
        )

    def verify_(self) -> None:
        arena = _arena_memref(self.arena)
        view = _static_memref(self.result, "a view")
        if not isinstance(view.layout, NoneAttr):
            raise VerifyException(f"a view is contiguous, without a layout: got {view}")
        start = self.offset.value.data
        end = start + buffer_bytes(view)
        if start < 0:
            raise VerifyException(f"offset {start} is negative")
        if start % element_bytes(view):
            raise VerifyException(
                f"offset {start} is not a multiple of the element width {element_bytes(view)}"
            )
        if end > arena.get_shape()[0]:
            raise VerifyException(
                f"view of {buffer_bytes(view)} bytes at offset {start} ends at {end}, "
                f"past the arena's {arena.get_shape()[0]} bytes"
            )


class KernelLookup:
    """Finds a launched kernel among the functions of the enclosing symbol table.

    `SymbolTable.lookup_symbol` scans the table on every call, which makes verifying
    a host function of N launches in a module of N kernels quadratic. This keeps the
    functions of the last table by name; an entry is used only while it is still a
    function of that name directly in that table (symbols are unique there), and a
    miss rebuilds the index, so edits between verifications never give a stale
    answer."""

    def __init__(self) -> None:
        self.table: Operation | None = None
        self.functions: dict[str, FuncOp] = {}

    def lookup(self, op: Operation, name: str) -> Operation | None:
        table = op.parent_op()
        while table is not None and not table.has_trait(SymbolTable):
            table = table.parent_op()
        if table is None:
            return None
        found = self.functions.get(name) if table is self.table else None
        if found is None or found.sym_name.data != name or found.parent_op() is not table:
            self.table = table
            self.functions = {
                f.sym_name.data: f for f in table.regions[0].block.ops if isinstance(f, FuncOp)
            }
            found = self.functions.get(name)
        return found or SymbolTable.lookup_symbol(op, name)


KERNELS = KernelLookup()
"""The lookup `dfrt.launch` verifies with."""


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """`dfrt.launch @kernel(%a, %out) : (memref<...>, memref<...>)`"""

    name = "dfrt.launch"
    callee = prop_def(SymbolRefAttr)
    arguments = var_operand_def(MemRefType)
    assembly_format = "$callee `(` $arguments `)` attr-dict `:` `(` type($arguments) `)`"

    def __init__(self, callee: str, arguments: Sequence[SSAValue | Operation]):
        super().__init__(operands=[arguments], properties={"callee": SymbolRefAttr(callee)})

    def verify_(self) -> None:
        kernel = KERNELS.lookup(self, self.callee.root_reference.data)
        if not isinstance(kernel, FuncOp):
            raise VerifyException(f"kernel {self.callee} is not a func.func of this module")
        expected = tuple(kernel.function_type.inputs)
        given = tuple(a.type for a in self.arguments)
        if expected != given or kernel.function_type.outputs.data:
            raise VerifyException(
                f"kernel {self.callee} takes ({', '.join(map(str, expected))}) and returns "
                f"nothing; launched with ({', '.join(map(str, given))})"
            )


def _check_device(device: StringAttr) -> None:
    if not DEVICE_PATTERN.fullmatch(device.data):
        raise VerifyException(f"device {device.data!r} is not of the form {DEVICE_FORM}")


@irdl_op_definition
class SendOp(IRDLOperation):
    """`dfrt.send %v {key = "main.k0", to = "cpu:1"} : memref<...>`"""

    name = "dfrt.send"
    buffer = operand_def(MemRefType)
    key = prop_def(StringAttr)
    destination = prop_def(StringAttr, prop_name="to")
    assembly_format = "$buffer attr-dict `:` type($buffer)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, buffer: SSAValue | Operation, key: str, destination: str):
        super().__init__(
            operands=[buffer],
            properties={"key": StringAttr(key), "to": StringAttr(destination)},
        )

    def verify_(self) -> None:
        _check_device(self.destination)


@irdl_op_definition
class RecvOp(IRDLOperation):
    """`dfrt.recv %v {key = "main.k0", from = "cpu:0"} : memref<...>`: waits for the
    buffer sent on `key` and copies it into `%v`."""

    name = "dfrt.recv"
    buffer = operand_def(MemRefType)
    key = prop_def(StringAttr)
    source = prop_def(StringAttr, prop_name="from")
    assembly_format = "$buffer attr-dict `:` type($buffer)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, buffer: SSAValue | Operation, key: str, source: str):
        super().__init__(
            operands=[buffer],
            properties={"key": StringAttr(key), "from": StringAttr(source)},
        )

    def verify_(self) -> None:
        _check_device(self.source)


class _CopyOp(IRDLOperation):
    """A buffer copied to a new one of the same type."""

    T: ClassVar = VarConstraint("T", base(MemRefType))
    source = operand_def(T)
    result = result_def(T)
    assembly_format = "$source attr-dict `:` type($result)"

    def __init__(self, source: SSAValue | Operation):
        super().__init__(operands=[source], result_types=[SSAValue.get(source).type])


@irdl_op_definition
class ToDeviceOp(_CopyOp):
    """`%d = dfrt.to_device %host : memref<...>`"""

    name = "dfrt.to_device"


@irdl_op_definition
class FetchOp(_CopyOp):
    """`%r = dfrt.fetch %v : memref<...>`"""

    name = "dfrt.fetch"


DFRT = Dialect(
    "dfrt",
    [ArenaOp, OutputOp, ViewOp, LaunchOp, SendOp, RecvOp, ToDeviceOp, FetchOp],
    [],
)
"""The host-level dialect."""
