"""Arrays in and out of an entry function, without the IR: its signature as plain
data (kept beside a cached program, so that a cached `dflow run` never imports
xDSL), seeded random inputs, feeds from `.npz`/`.npy` files checked against the
signature, and outputs saved and summarized. `dflow.driver.loading.feeds` makes the
signature of a parsed function."""

from __future__ import annotations

import math
import os
import sys
import tokenize
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dflow.driver.errors import DflowError, first_line
from dflow.runtime.dtypes import as_dtype, dtype_name, dtype_named, is_floating
from dflow.runtime.shapes import format_shape

Array = NDArray[Any]
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Parameter:
    """One argument of an entry, as feeds are checked against it: worked out once
    from the IR, then cheap to check many feeds with (`dflow.compile`'s calls)."""

    function: str
    index: int
    name: str
    alias: str | None
    type: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    location: str | None
    index_bound: int | None = None
    """The size of the smallest axis the argument's values index (token ids), so that
    random inputs are drawn in range; None when they index nothing."""

    def check(self, value: Array, name: str | None = None) -> Array:
        """`value` when it has this argument's exact dtype and shape, else a one-line
        error naming the input (`name`, by default the argument's)."""
        name = self.name if name is None else name
        where = f"argument {self.index} of @{self.function} is {self.type}"
        value = as_dtype(value, self.dtype)
        if value.dtype != self.dtype:
            raise DflowError(
                f"input {name!r} has dtype {value.dtype} but {where} ({self.dtype})",
                self.location,
            )
        if value.shape != self.shape:
            raise DflowError(
                f"input {name!r} has shape {format_shape(value.shape)} but {where}", self.location
            )
        return value

    def keys(self) -> set[str]:
        """The names a feed may give this argument: `x`, `arg0`, and its alias."""
        return {self.name, f"arg{self.index}"} | ({self.alias} if self.alias else set())


@dataclass(frozen=True)
class EntrySignature:
    """An entry function's name, where it is defined, and its parameters."""

    function: str
    location: str | None
    parameters: tuple[Parameter, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "location": self.location,
            "parameters": [
                [p.name, p.alias, p.type, list(p.shape), dtype_name(p.dtype), p.index_bound]
                for p in self.parameters
            ],
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> EntrySignature:
        function, where = str(data["function"]), data["location"]
        parameters = tuple(
            Parameter(
                function, i, name, alias, kind, tuple(shape), dtype_named(dtype), where, bound
            )
            for i, (name, alias, kind, shape, dtype, bound) in enumerate(data["parameters"])
        )
        return EntrySignature(function, where, parameters)

    def inputs(self, files: list[str] | None, seed: int = DEFAULT_SEED) -> list[Array]:
        """A run's inputs, the cached way and the whole way alike: those of the
        `--inputs` files matched to this signature, else seeded random ones."""
        if files is None:
            return self.random_inputs(seed)
        return self.match_inputs(load_inputs(files), " ".join(files))

    def random_inputs(self, seed: int = DEFAULT_SEED) -> list[Array]:
        """Seeded inputs: normal floats, integers in [-10, 10) (in [0, 10) unsigned, in
        [0, n) where they index an axis of size n), fair booleans; each made in its
        own dtype, after checking that all of them fit in memory."""
        self._check_fits()
        rng = np.random.default_rng(seed)
        return [_random(rng, p) for p in self.parameters]

    def _check_fits(self) -> None:
        needed = sum(math.prod(p.shape) * p.dtype.itemsize for p in self.parameters)
        available = available_memory()
        if needed > available:
            raise DflowError(
                f"the random inputs of @{self.function} would take {needed / 2**30:.1f} GiB, "
                f"more than the {available / 2**30:.1f} GiB of memory available: give "
                "--inputs, or smaller argument types",
                self.location,
            )

    def match_inputs(self, feeds: Mapping[str, Array], source: str) -> list[Array]:
        """Order `feeds` as the arguments, by name (`x`), position (`arg0`) or alias."""
        keys = [p.keys() for p in self.parameters]
        for key in feeds:
            if not any(key in known for known in keys):
                names = ", ".join(p.name for p in self.parameters) or "none"
                raise DflowError(
                    f"input {key!r} in {source} matches no argument of "
                    f"@{self.function} (arguments: {names})",
                    self.location,
                )
        return [
            self._feed(p, known, feeds, source)
            for p, known in zip(self.parameters, keys, strict=True)
        ]

    def _feed(
        self, parameter: Parameter, known: set[str], feeds: Mapping[str, Array], source: str
    ) -> Array:
        given = sorted(key for key in feeds if key in known)
        if len(given) > 1:
            raise DflowError(
                f"argument {parameter.name!r} is given twice in {source}, as {given[0]!r} "
                f"and {given[1]!r}"
            )
        if not given:
            raise DflowError(
                f"{source} has no input for argument {parameter.index} ({parameter.name!r}, "
                f"{parameter.type}) of @{self.function}",
                self.location,
            )
        return parameter.check(feeds[given[0]], parameter.name)


def _random(rng: np.random.Generator, parameter: Parameter) -> Array:
    dtype, shape = parameter.dtype, parameter.shape
    if is_floating(dtype):  # NumPy draws float32 and float64 only
        wide = dtype if dtype.itemsize >= 4 else np.dtype(np.float32)
        return rng.standard_normal(shape, dtype=wide).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape, dtype=np.uint8).view(np.bool_)
    if parameter.index_bound is not None:
        return rng.integers(0, max(1, parameter.index_bound), shape, dtype=dtype)
    if dtype.kind == "V":  # ml_dtypes' 2- and 4-bit integers: NumPy draws none
        signed = dtype.name.startswith("int")
        low, high = (-2, 2) if signed else (0, 4)
        return rng.integers(low, high, shape, dtype=np.int8).astype(dtype)
    return rng.integers(0 if dtype.kind == "u" else -10, 10, shape, dtype=dtype)


def available_memory() -> int:
    """Bytes of memory the system can still give (Linux's MemAvailable; elsewhere the
    physical memory)."""
    try:
        meminfo = Path("/proc/meminfo").read_text()
    except OSError:
        meminfo = ""
    for line in meminfo.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


_UNREADABLE_NPZ = (
    OSError,
    ValueError,
    zipfile.BadZipFile,
    EOFError,  # a member cut short
    NotImplementedError,  # an unknown compression method or zip version in a damaged header
    RuntimeError,  # a damaged flag that marks a member encrypted
    tokenize.TokenError,  # a damaged .npy header (NumPy tokenizes it)
)
"""What NumPy and zipfile raise for a damaged `.npz` (found by tests/support/fuzz_cli.py)."""


def load_npz(path: str | Path) -> dict[str, Array]:
    """The arrays of an `.npz` archive by name; a one-line error for one NumPy
    cannot read."""
    if Path(path).is_file() and not zipfile.is_zipfile(path):
        raise DflowError(f"cannot read inputs from {path}: it is not an .npz archive")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except _UNREADABLE_NPZ as error:
        raise _unreadable(path, error) from None


def load_inputs(files: Sequence[str]) -> dict[str, Array]:
    """The inputs of `--inputs`: one `.npz` archive (arrays by argument name or
    `argN`), or `.npy` files, one per argument in order, or `NAME=FILE.npy`."""
    if len(files) == 1 and not _is_npy(files[0]):
        return load_npz(files[0])
    named = [item.partition("=")[::2] if _named(item) else ("", item) for item in files]
    for _, path in named:
        if not _is_npy(path):
            raise DflowError(
                f"cannot read inputs from {path}: give one .npz archive, or .npy files "
                "(one per argument, or NAME=FILE.npy)"
            )
    return {name or f"arg{i}": load_npy(path) for i, (name, path) in enumerate(named)}


def _is_npy(path: str) -> bool:
    return path.endswith(".npy")


def _named(item: str) -> bool:
    return "=" in item and item.partition("=")[0].isidentifier()


def load_npy(path: str | Path) -> Array:
    """One array of an `.npy` file; a one-line error for one NumPy cannot read."""
    try:
        return np.load(path, allow_pickle=False)
    except _UNREADABLE_NPZ as error:
        raise _unreadable(path, error) from None


def _unreadable(path: str | Path, error: BaseException) -> DflowError:
    """Why the inputs at `path` cannot be read, in words (no `[Errno 2] ...`)."""
    if isinstance(error, FileNotFoundError):
        reason = "no such file"
    elif isinstance(error, IsADirectoryError):
        reason = "it is a folder, not a file"
    elif isinstance(error, OSError) and error.strerror:
        reason = error.strerror
    else:
        reason = first_line(error) if str(error) else "the file ends too early"
    return DflowError(f"cannot read inputs from {path}: {reason}")


def save_outputs(path: str | Path, outputs: Sequence[Array]) -> None:
    """Save `outputs` as `out0`, `out1`, ... in an `.npz` archive at exactly `path`
    (NumPy would add `.npz` to a name without it)."""
    if Path(path).is_dir():
        raise DflowError(f"cannot write outputs to {path}: it is a folder")
    named = {f"out{i}": value for i, value in enumerate(outputs)}
    try:
        with Path(path).open("wb") as file:
            np.savez(file, **named)  # pyright: ignore[reportArgumentType] (numpy's stub types **kwds badly)
    except OSError as error:
        raise DflowError(f"cannot write outputs to {path}: {error.strerror}") from None


def in_full(outputs: Sequence[Array]) -> list[str]:
    """Every output in full, in NumPy's formatting, under a line naming it."""
    lines: list[str] = []
    for index, value in enumerate(outputs):
        lines.append(f"out{index}: shape {format_shape(value.shape)} {value.dtype}")
        lines.append(np.array2string(value, threshold=sys.maxsize, max_line_width=100))
    return lines


def summarize(outputs: Sequence[Array]) -> list[str]:
    """One line per output: name, shape, dtype, min/mean/max (NaNs counted apart)."""
    lines: list[str] = []
    for index, value in enumerate(outputs):
        head = f"out{index}: shape {format_shape(value.shape)} {value.dtype}"
        if value.size == 0:
            lines.append(f"{head} (empty)")
            continue
        if value.size == 1:
            lines.append(f"{head} value {value.reshape(-1)[0]:.6g}")
            continue
        numbers = value.astype(np.float64)
        finite = numbers[~np.isnan(numbers)]
        stats = (
            f"min {finite.min():.6g} mean {finite.mean():.6g} max {finite.max():.6g}"
            if finite.size
            else "all NaN"
        )
        nans = value.size - finite.size
        lines.append(f"{head} {stats}" + (f" ({nans} NaN)" if nans and finite.size else ""))
    return lines
