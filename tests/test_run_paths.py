"""`dflow run` from the cache and the whole way: one front door, the same answers.

A run's options are read and checked by one function (`dflow.driver.loading.run_options`),
then the cache answers the request if a run of it compiled before, else the compiler
does (`dflow.driver.frontdoors.cached_run`). The differential: seeded cases draw a program
(plain, with calls, pinned, two towers, partitioned already, an ONNX model) and one
or two of the fuzzer's option mutations (`fuzz_cli.OPTION_MUTATIONS`: devices written
wrong or right, entries, passes, traces, inputs, outputs, ...). Each case runs three
times in-process: with a cache that holds entries of the program's plain runs (on one
device and on two), with a cache that holds none (kernels only), and again with that
one (now holding the case's own entry if it compiled); exit status, stdout and stderr
must be equal. The start-up tests show the cache really answers pinned, partitioned
and ONNX runs (no compiler imported).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import fuzz_cli
import pytest
from fuzz_cli import OWN_PROGRAMS, TWO_CPUS, Outcome, option_case, run_in_process

ROOT = Path(__file__).resolve().parents[1]
CASES = 60
"""Seeded cases run in CI (`python bench/fuzz.py --paths N` runs more)."""


@dataclass(frozen=True)
class RunProgram:
    """A program file and the options every run of it takes (an ONNX model's shapes)."""

    path: Path
    base: tuple[str, ...] = ()


def _partitioned(folder: Path) -> Path:
    """The towers example placed on two CPUs and partitioned, as `dflow opt` writes it."""
    path = folder / "partitioned.mlir"
    pipeline = "df-place-devices{devices=cpu:0,cpu:1},df-partition"
    towers = str(ROOT / "examples" / "towers.mlir")
    outcome = run_in_process(["opt", towers, "-p", pipeline, "-o", str(path)])
    assert outcome.status == 0, outcome.stderr
    return path


def _onnx_model(folder: Path) -> RunProgram:
    from onnx_models import mlp  # noqa: PLC0415 (imports onnx)

    path = folder / "mlp.onnx"
    path.write_bytes(mlp(sizes=(16, 8, 4)).SerializeToString())
    return RunProgram(path, ("--shape", "input=3,16"))


def _programs(folder: Path) -> dict[str, RunProgram]:
    found: dict[str, RunProgram] = {}
    for name in ("dense", "calls", "pinned"):
        (folder / f"{name}.mlir").write_text(OWN_PROGRAMS[name])
        found[name] = RunProgram(folder / f"{name}.mlir")
    found["towers"] = RunProgram(ROOT / "examples" / "towers.mlir")
    found["partitioned"] = RunProgram(_partitioned(folder))
    found["onnx"] = _onnx_model(folder)
    return found


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, RunProgram], Path]]:
    """The programs, and a cache holding each one's plain runs on one device and on
    two (those that can run there)."""
    folder = tmp_path_factory.mktemp("run-paths")
    cache = folder / "warm-cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DFLOW_CACHE_DIR", str(cache))
        programs = _programs(folder)
        for program in programs.values():
            for devices in ((), TWO_CPUS):
                run_in_process(["run", str(program.path), *program.base, *devices])
        yield programs, cache


def _run(cache: Path, argv: list[str], patch: pytest.MonkeyPatch) -> Outcome:
    patch.setenv("DFLOW_CACHE_DIR", str(cache))
    return run_in_process(argv)


def _kernels_only(warm_cache: Path, cache: Path) -> None:
    """A cache with the warm one's compiled kernels and none of its programs."""
    cache.mkdir(mode=0o700)
    kernels = warm_cache / "kernels"
    if kernels.is_dir():
        shutil.copytree(kernels, cache / "kernels")


def _same(first: Outcome, second: Outcome) -> bool:
    return (first.status, first.stdout, first.stderr) == (
        second.status,
        second.stdout,
        second.stderr,
    )


def _shown(label: str, outcome: Outcome) -> str:
    return f"{label}: exit {outcome.status}\n{outcome.stdout}{outcome.stderr}"


@pytest.mark.parametrize("seed", range(CASES))
def test_cached_and_whole_way_agree(
    seed: int,
    warm: tuple[dict[str, RunProgram], Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    programs, warm_cache = warm
    name, mutation, options = option_case(seed, list(programs))
    program = programs[name]
    work = tmp_path / "work"
    work.mkdir()
    argv = ["run", str(program.path), *program.base, *fuzz_cli.RECV_TIMEOUT]
    argv += [option.replace("{folder}", str(work)) for option in options]
    cached = tmp_path / "cached"
    shutil.copytree(warm_cache, cached)
    with_entries = _run(cached, argv, monkeypatch)
    _kernels_only(warm_cache, tmp_path / "fresh")
    whole_way = _run(tmp_path / "fresh", argv, monkeypatch)
    again = _run(tmp_path / "fresh", argv, monkeypatch)
    label = f"seed {seed}: {name} with {mutation}: dflow {' '.join(argv)}"
    assert _same(with_entries, whole_way), "\n".join(
        [label, _shown("with the plain runs' entries", with_entries), _shown("none", whole_way)]
    )
    assert _same(again, whole_way), "\n".join(
        [label, _shown("its own entry", again), _shown("none", whole_way)]
    )


def test_cases_cover_every_kind_of_program_and_mutation(
    warm: tuple[dict[str, RunProgram], Path],
) -> None:
    """The seeds CI runs draw every program, and most mutations."""
    programs, _ = warm
    drawn = [option_case(seed, list(programs)) for seed in range(CASES)]
    assert {name for name, _, _ in drawn} == set(programs)
    mutations = {part for _, mutation, _ in drawn for part in mutation.split("+")}
    assert len(mutations) >= len(fuzz_cli.OPTION_MUTATIONS) * 2 // 3, sorted(mutations)


def test_the_devices_option_is_checked_before_the_cache(
    warm: tuple[dict[str, RunProgram], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bug the issue names: `--devices ''` ran on cpu:0 when the program was in the
    cache (its key was the plain run's), and was an error when it was not."""
    programs, warm_cache = warm
    monkeypatch.setenv("DFLOW_CACHE_DIR", str(warm_cache))
    path = str(programs["dense"].path)
    assert run_in_process(["run", path]).status == 0
    outcome = run_in_process(["run", path, "--devices", ""])
    assert outcome.status == 1
    assert outcome.stderr == (
        f"{path}: error: --devices is empty: name at least one device, e.g. --devices cpu:0\n"
    )
