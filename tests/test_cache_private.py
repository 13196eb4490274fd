"""The compile cache is private and `dflow cache clear` empties it (issue 30, point 4).

Everything dflow writes under `$DFLOW_CACHE_DIR` must be readable by its user only,
whatever the umask: a program's entry (its modules, signatures and Python's
`__pycache__`), the kernel store (numba's `.nbi` and `.nbc` files, which numba
itself would create with the umask's modes) and `roofline.json` (`--profile`). The
runs here go through the real command under the usual umask `0022`, with bytecode
writing on, so that each of those files really is made; the walk then checks that
every folder is `0700` and every file `0600`, and that the files it expected are
there (it cannot pass on an empty cache).

Also: a compile that fails in placement leaves no `.new-*` scratch folder;
`dflow cache clear` removes every program, kernel, the emptied `kernels/` folder and
`roofline.json`, and leaves the root and the user's own files; and a
`DFLOW_CACHE_DIR` that is a file, or lies under one, is one line that says so
(not `File exists` or `Not a directory`).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_support import ROOT, run_dflow

MATMUL_EXP = """func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %p = df.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = df.exp %p : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
"""

PINNED_AWAY = """func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = df.exp %x {df.device = "cpu:7"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
"""

ENTRY = re.compile(r"[0-9a-f]{24}")
"""A program's or kernel's folder name: 24 hex digits of its key."""

HINT = "set DFLOW_CACHE_DIR to a folder you can write"


@contextmanager
def usual_umask() -> Generator[None]:
    """The umask `0022` (files `0644`, folders `0755` unless made otherwise) for the
    subprocesses started meanwhile, which inherit it; the old one restored."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def environment(cache: Path) -> dict[str, str]:
    """This environment with `cache` as the cache root, the default size bound (no
    trim of what the tests look for) and bytecode writing on (so `__pycache__` holds
    a `.pyc`, which Python makes with the mode of its folder's umask)."""
    env = {**os.environ, "DFLOW_CACHE_DIR": str(cache)}
    env.pop("DFLOW_CACHE_MAX_BYTES", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def dflow(cache: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`dflow ARGS` with `cache` as its cache root, under umask `0022`."""
    with usual_umask():
        return run_dflow(*args, env=environment(cache))


def succeeded(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


@dataclass(frozen=True)
class Walk:
    """What a walk of the cache found: paths relative to the root, and modes."""

    folders: dict[str, int]
    files: dict[str, int]
    others: list[str]


def walk(root: Path) -> Walk:
    """Every folder and file under `root` (and `root` itself, as `.`) with its
    permission bits; `others` for anything else (a link, a socket), followed never."""
    folders = {".": stat.S_IMODE(root.lstat().st_mode)}
    files: dict[str, int] = {}
    others: list[str] = []
    for top, names, leaves in os.walk(root, followlinks=False):
        for name in [*names, *leaves]:
            path = Path(top) / name
            mode = path.lstat().st_mode
            relative = str(path.relative_to(root))
            if stat.S_ISDIR(mode):
                folders[relative] = stat.S_IMODE(mode)
            elif stat.S_ISREG(mode):
                files[relative] = stat.S_IMODE(mode)
            else:
                others.append(relative)
    return Walk(folders, files, others)


@pytest.fixture(scope="module")
def used_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh cache root after three runs under umask `0022`: a compiled run of
    `examples/mlp.mlir` (its CPU kernels go to the kernel store), a traced run of a
    matrix product and an exp, and a profiled run of `examples/convnet.mlir` (which
    measures the roofline into the root). The tests only read it."""
    work = tmp_path_factory.mktemp("private")
    cache = work / "cache"
    program = work / "matmul_exp.mlir"
    program.write_text(MATMUL_EXP)
    succeeded(dflow(cache, "run", ROOT / "examples" / "mlp.mlir"))
    traced = succeeded(dflow(cache, "run", program, "--trace", work / "trace.json"))
    assert (work / "trace.json").is_file(), traced.stderr
    succeeded(dflow(cache, "run", ROOT / "examples" / "convnet.mlir", "--profile"))
    return cache


def test_every_folder_is_0700_and_every_file_0600(used_cache: Path) -> None:
    """First that the walk found what each run writes, so that it cannot pass on a
    cache with nothing in it: the three programs' entries with their module,
    signatures and bytecode, numba's index and code files of kernels in the store (or
    the llvm target's object files),
    and the roofline; no scratch or temporary file left. Then the modes of all."""
    found = walk(used_cache)
    programs = sorted(path for path in found.folders if ENTRY.fullmatch(path))
    assert len(programs) == 3
    for entry in programs:
        assert {f"{entry}/cpu_0.py", f"{entry}/signatures.json"} <= found.files.keys()
        assert f"{entry}/__pycache__" in found.folders
        bytecode = [path for path in found.files if path.startswith(f"{entry}/__pycache__/")]
        assert [Path(path).suffix for path in bytecode] == [".pyc"]
    kernels = [path for path in found.folders if re.fullmatch(r"kernels/[0-9a-f]{24}", path)]
    assert kernels
    for kernel in kernels:  # numba's index and code, or the llvm target's object code
        suffixes = {Path(path).suffix for path in found.files if path.startswith(f"{kernel}/")}
        assert suffixes in ({".nbi", ".nbc"}, {".o"}), kernel
    assert "roofline.json" in found.files
    left = [path for path in [*found.folders, *found.files] if ".new-" in path or ".tmp" in path]
    assert left == []
    assert found.others == []

    wrong = {path: oct(mode) for path, mode in found.folders.items() if mode != 0o700}
    wrong |= {path: oct(mode) for path, mode in found.files.items() if mode != 0o600}
    assert wrong == {}


def test_a_compile_that_fails_in_placement_leaves_no_scratch_folder(tmp_path: Path) -> None:
    """An op pinned to `cpu:7` run on `--devices cpu:0` fails in placement, inside the
    compile of `compiled_program`, after its `.new-*` scratch folder was made in the
    root: the folder goes with the failure, and nothing else is left."""
    cache = tmp_path / "cache"
    program = tmp_path / "pinned.mlir"
    program.write_text(PINNED_AWAY)
    result = dflow(cache, "run", program, "--devices", "cpu:0")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{program}: error: df-place-devices: df.exp (%y, line 2) is pinned to cpu:7, "
        "which is not in the device list cpu:0"
    ]
    assert cache.is_dir()  # the root was made: a scratch folder could have been left in it
    assert sorted(path.name for path in cache.iterdir()) == []


def size_text(count: int) -> str:
    """A byte count as `dflow cache` writes it (`120 bytes`, `4.5 KiB`, `1.2 MiB`)."""
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"


def test_cache_clear_removes_everything_dflow_made(used_cache: Path, tmp_path: Path) -> None:
    """On a copy of the used cache (the other tests read the original), with a file of
    the user's own in the root: `clear` names what it removed, from the programs and
    kernels counted here; what is left is the root and the user's file; and `info`
    then finds nothing."""
    root = (tmp_path / "cache").resolve()
    shutil.copytree(used_cache, root, symlinks=True)
    programs = [path for path in root.iterdir() if ENTRY.fullmatch(path.name)]
    kernels = [path for path in (root / "kernels").iterdir() if ENTRY.fullmatch(path.name)]
    assert len(programs) == 3 and kernels and (root / "roofline.json").is_file()
    size = sum(path.lstat().st_size for path in root.rglob("*") if path.is_file())
    (root / "notes.txt").write_text("mine\n")

    cleared = succeeded(dflow(root, "cache", "clear"))
    expected = (
        f"removed {len(programs)} programs, {len(kernels)} kernels, roofline.json, "
        f"{size_text(size)} from {root}"
    )
    assert cleared.stdout.splitlines() == [expected]
    assert cleared.stderr == ""
    assert root.is_dir()
    assert sorted(path.name for path in root.iterdir()) == ["notes.txt"]

    info = succeeded(dflow(root, "cache", "info"))
    assert info.stdout.splitlines() == [
        f"cache: {root}",
        "entries: 0 programs, 0 kernels, 0 bytes (kept under 1.0 GiB: DFLOW_CACHE_MAX_BYTES)",
    ]


@pytest.mark.parametrize("under", [False, True], ids=["a-file", "under-a-file"])
@pytest.mark.parametrize(
    ("command", "where"),
    [(("run",), "program"), (("cache", "info"), "cache"), (("cache", "clear"), "cache")],
    ids=["run", "cache-info", "cache-clear"],
)
def test_a_cache_root_that_is_a_file_is_one_line(
    tmp_path: Path, under: bool, command: tuple[str, ...], where: str
) -> None:
    """`mkdir` would say only `File exists` (the root a file) or `Not a directory` (a
    folder above it a file): the line names the file and what to do, and the file is
    left as it was."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file\n")
    root = blocker / "dflow" / "cache" if under else blocker
    program = tmp_path / "matmul_exp.mlir"
    program.write_text(MATMUL_EXP)
    args = [*command, program] if where == "program" else list(command)
    result = dflow(root, *args)
    which = f"{blocker} is" if under else "it is"
    head = program if where == "program" else "cache"
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{head}: error: cannot use the cache folder {root}: {which} a file, not a folder; {HINT}"
    ]
    assert blocker.read_text() == "a file\n"
