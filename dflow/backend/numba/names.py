"""Names and literals of the Python that the numba target prints.

`Names` gives each SSA value a Python name, unique in its function, after the IR's
own name where it has one (`%logits` prints as `logits`), so the emitted code reads
like the graph it came from; `literal` prints a scalar constant in its element type
(`numba.float32(0.5)`), NaN and infinities included (an f16 one as its bits).
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, SSAValue

from dflow.dialects.df.arrays import numpy_dtype

NUMBA_SCALARS = {
    "f8E4M3FN": "uint8",
    "f8E4M3FNUZ": "uint8",
    "f8E5M2": "uint8",
    "f8E5M2FNUZ": "uint8",
    "f4E2M1FN": "uint8",
    "f16": "uint16",
    "bf16": "uint16",
    "f32": "float32",
    "f64": "float64",
    "i2": "int8",
    "i4": "int8",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui2": "uint8",
    "ui4": "uint8",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
    "i1": "boolean",
}
"""The numba scalar type of each df element type. f16, bf16 and the 8- and 4-bit
floats are held as their bits: numba has no arithmetic on them (f16 only on GPUs),
and kernels only load, store and convert them (`df-widen`; `_bits_to_float`, ...).
The 2- and 4-bit integers are held in a byte each, sign-extended when signed."""
DTYPES = {name: "bool_" if name == "i1" else scalar for name, scalar in NUMBA_SCALARS.items()}
"""The NumPy dtype name each df element type is stored as in an emitted module."""
HELD_AS_BITS = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f8E4M3FN": "float8_e4m3fn",
    "f8E4M3FNUZ": "float8_e4m3fnuz",
    "f8E5M2": "float8_e5m2",
    "f8E5M2FNUZ": "float8_e5m2fnuz",
    "f4E2M1FN": "float4_e2m1fn",
}
"""The float types an emitted module holds as their bits, and their given dtypes."""
HELD_IN_BYTES = {"i2": "int2", "i4": "int4", "ui2": "uint2", "ui4": "uint4"}
"""The integer types an emitted module holds in a byte each, and their given dtypes
(`ml_dtypes` keeps only the low bits of each byte: arguments are converted, not
viewed)."""
GIVEN_DTYPES = {**DTYPES, **HELD_AS_BITS, **HELD_IN_BYTES}
"""The NumPy dtype name of each df element type as the user gives and gets it."""
RESERVED = frozenset({"rt", "lib", "vm", "np", "math", "numba", "cuda", *dir(builtins)})
"""Names every emitted module uses for itself: the runtime context, its imports, and
Python's builtins (a kernel calls `abs` and `range`: a value named `%abs` must not
hide them)."""


def element_name(type: Attribute) -> str:
    """`f32` for a tensor, memref or element type of f32."""
    return str(cast(Attribute, getattr(type, "element_type", type)))


def dtype_of(type: Attribute) -> str:
    """`np.float32` for a tensor, memref or element type of f32."""
    return f"np.{DTYPES[element_name(type)]}"


@dataclass
class Namespace:
    """Python identifiers given out in one scope: each unique, none of `reserved`
    and none taken in the `outer` scope (a function's in its module's, which grows
    as the module is printed). The next suffix of each base is remembered, so that
    a function of thousands of unnamed values (`v`, `v_1`, ...) is not named in
    quadratic time."""

    reserved: frozenset[str] = RESERVED
    outer: Namespace | None = None
    taken: set[str] = field(default_factory=set[str])
    suffixes: dict[str, int] = field(default_factory=dict[str, int])

    def __contains__(self, name: str) -> bool:
        if name in self.taken or name in self.reserved:
            return True
        return self.outer is not None and name in self.outer

    def unique(self, hint: str | None, fallback: str) -> str:
        """An identifier from `hint` (else `fallback`), now taken: no keyword, no
        leading digit, `_n` appended on a clash."""
        base = re.sub(r"\W", "_", hint) if hint else fallback
        if not base or base[0].isdigit() or keyword.iskeyword(base):
            base = f"v_{base}"
        name, n = base, self.suffixes.get(base, 1)
        while name in self:
            name, n = f"{base}_{n}", n + 1
        self.suffixes[base] = n
        self.taken.add(name)
        return name


@dataclass
class Names:
    """Python names of SSA values, unique in a function; a value may instead stand
    for an expression (`alias`: a constant's literal, a cast's source)."""

    namespace: Namespace = field(default_factory=Namespace)
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    aliases: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])

    def define(self, value: SSAValue, fallback: str = "v") -> str:
        name = self.namespace.unique(value.name_hint, fallback)
        self.names[value] = name
        return name

    def alias(self, value: SSAValue, expression: str) -> None:
        self.aliases[value] = expression

    def __getitem__(self, value: SSAValue) -> str:
        return self.aliases.get(value) or self.names[value]


def _type_name(attribute: object) -> str:
    """`f32` for `1.0 : f32`."""
    return str(cast(Attribute, getattr(attribute, "type")))  # noqa: B009 (typed as Unknown)


def literal(attribute: Attribute) -> str:
    """A scalar constant as Python: `numba.float32(0.5)`, `math.inf`, `True`, `3`."""
    if isinstance(attribute, FloatAttr):
        value = float(attribute.value.data)
        if _type_name(cast(object, attribute)) in HELD_AS_BITS:
            dtype = numpy_dtype(cast(Attribute, attribute.type))  # pyright: ignore[reportUnknownMemberType]
            held = NUMBA_SCALARS[_type_name(cast(object, attribute))]
            return f"numba.{held}({int(np.array(value, dtype).view(held))})"
        if np.isfinite(value):
            text = repr(value)
        else:
            text = "math.nan" if np.isnan(value) else f"{'-' if value < 0 else ''}math.inf"
        return f"numba.{NUMBA_SCALARS[_type_name(cast(object, attribute))]}({text})"
    assert isinstance(attribute, IntegerAttr)
    value = attribute.value.data
    type_name = _type_name(cast(object, attribute))
    if type_name == "index":
        return str(value)
    if type_name == "i1":
        return "True" if value else "False"
    return f"numba.{NUMBA_SCALARS[type_name]}({value})"
