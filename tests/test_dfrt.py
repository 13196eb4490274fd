"""dfrt.launch's kernel lookup: an index kept between verifications must never give
a stale answer when the module changes in between."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import VerifyException

from dflow.driver.loading.source import parse_module

PROGRAM = """
func.func private @k0(%a: memref<4xf32>) attributes {df.kernel} {
  func.return
}
func.func private @k1(%a: memref<4xf32>) attributes {df.kernel} {
  func.return
}
func.func @main(%x: memref<4xf32>) {
  dfrt.launch @k0(%x) : (memref<4xf32>)
  dfrt.launch @k1(%x) : (memref<4xf32>)
  func.return
}
"""


def kernel(module: ModuleOp, name: str) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == name)


def test_renamed_and_removed_kernels_are_seen() -> None:
    module = parse_module(PROGRAM, "launch.mlir")
    module.verify()
    kernel(module, "k1").sym_name = StringAttr("renamed")
    with pytest.raises(VerifyException, match=r"kernel @k1 is not a func\.func of this module"):
        module.verify()
    kernel(module, "renamed").sym_name = StringAttr("k1")
    module.verify()
    removed = kernel(module, "k0")
    removed.detach()
    with pytest.raises(VerifyException, match=r"kernel @k0 is not a func\.func of this module"):
        module.verify()


def test_a_second_module_is_looked_up_in_its_own_table() -> None:
    first, second = parse_module(PROGRAM, "a.mlir"), parse_module(PROGRAM, "b.mlir")
    first.verify()
    kernel(second, "k0").detach()
    with pytest.raises(VerifyException, match="kernel @k0"):
        second.verify()
    first.verify()
