"""dflow's transfers between MPI ranks against raw mpi4py, and the towers program on 2
ranks against 1 process.

    python bench/mpi.py            # starts `mpirun -n 2` itself (each rank on its core)

1. Transfers: for arrays of 64 KB to 64 MB, rank 0 sends one to rank 1, timed on
   rank 1 from a barrier to the end of its receive: raw `comm.Send`/`comm.Recv` of
   the buffer, against dflow's path (`MpiChannels.send` of an arena view, the
   device's `finish`, `MpiChannels.receive` into the receiver's buffer: what the
   emitted host functions call), interleaved round by round, best of `ROUNDS`.
   The ratio is dflow's bandwidth over raw MPI's (goal >= 0.9).
2. The towers example (`examples/towers.mlir`, batch 64 and 1024): one call, best of
   `ROUNDS`, on 2 ranks (`dflow.compile(..., mpi=True)`), against one process with
   the two devices as threads, and one device.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES = [1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26]
ROUNDS = 25
REPEATS = 5
"""Transfers per timed round (their mean is the round's time)."""


def launch() -> int:
    """Run this script on 2 ranks, each bound to its own core."""
    launcher = shutil.which("mpirun", path=str(Path(sys.executable).parent)) or "mpirun"
    command = [launcher, "-n", "2", "--bind-to", "core", "--oversubscribe"]
    if os.geteuid() == 0:
        command.insert(1, "--allow-run-as-root")
    command += [sys.executable, __file__, "--rank"]
    return subprocess.run(command, check=False, cwd=ROOT).returncode


def raw_transfer(world: Any, array: np.ndarray, into: np.ndarray) -> float:
    world.data.Barrier()
    start = time.perf_counter()
    for _ in range(REPEATS):
        if world.rank == 0:
            world.data.Send(array, dest=1, tag=1)
        else:
            world.data.Recv(into, source=0, tag=1)
    world.data.Barrier()
    return (time.perf_counter() - start) / REPEATS


def dflow_transfer(world: Any, channels: Any, array: np.ndarray, into: np.ndarray) -> float:
    world.data.Barrier()
    start = time.perf_counter()
    for _ in range(REPEATS):
        if world.rank == 0:
            channels.send("main.k0", "cpu:0@0", "cpu:0@1", array)
            channels.finish("cpu:0@0")
        else:
            channels.receive("main.k0", "cpu:0@0", "cpu:0@1", into)
    world.data.Barrier()
    return (time.perf_counter() - start) / REPEATS


def transfers(world: Any) -> None:
    from dflow.runtime.mpi import MpiChannels  # noqa: PLC0415

    ranks = {"cpu:0@0": 0, "cpu:0@1": 1}
    channels = MpiChannels(world, ranks, [("main.k0", "cpu:0@0", "cpu:0@1")], 60.0)
    if world.rank == 0:
        print("transfer rank 0 -> rank 1, best of", ROUNDS, "rounds of", REPEATS)
        print(
            f"{'bytes':>10} {'raw ms':>9} {'dflow ms':>9} {'raw GB/s':>9} {'dflow GB/s':>10} ratio"
        )
    for size in SIZES:
        array = np.random.default_rng(0).standard_normal(size // 4).astype(np.float32)
        into = np.empty_like(array)
        raw, ours = [], []
        for _ in range(ROUNDS):
            raw.append(raw_transfer(world, array, into))
            ours.append(dflow_transfer(world, channels, array, into))
        assert world.rank == 0 or np.array_equal(into, array)
        best_raw, best_ours = min(raw), min(ours)
        if world.rank == 0:
            print(
                f"{size:>10} {best_raw * 1e3:>10.3f} {best_ours * 1e3:>10.3f} "
                f"{size / best_raw / 1e9:>10.2f} {size / best_ours / 1e9:>10.2f} "
                f"{best_raw / best_ours:.2f}"
            )


def towers_text(batch: int) -> str:
    return (ROOT / "examples" / "towers.mlir").read_text().replace("64x256", f"{batch}x256")


def towers(world: Any) -> None:
    import dflow  # noqa: PLC0415

    for batch in (64, 1024):
        text = towers_text(batch).replace("64x64", f"{batch}x64")
        across = dflow.compile(text, devices="cpu:0,cpu:1", mpi=True)
        signature = across.signature()
        rng = np.random.default_rng(1)
        feeds = [rng.standard_normal(a.shape).astype(a.dtype) for a in signature.arguments]
        alone = threads = None
        if world.rank == 0:
            threads = dflow.compile(text, devices="cpu:0,cpu:1")
            alone = dflow.compile(text)
        times: dict[str, list[float]] = {"2 ranks": [], "1 process, 2 threads": [], "1 device": []}
        for _ in range(ROUNDS):
            world.data.Barrier()
            start = time.perf_counter()
            got = across(*feeds)
            times["2 ranks"].append(time.perf_counter() - start)
            if world.rank == 0:
                for name, program in (("1 process, 2 threads", threads), ("1 device", alone)):
                    assert program is not None
                    start = time.perf_counter()
                    want = program(*feeds)
                    times[name].append(time.perf_counter() - start)
                    assert np.array_equal(got, want)  # pyright: ignore[reportArgumentType]
            world.data.Barrier()
        if world.rank == 0:
            best = {name: min(t) * 1e3 for name, t in times.items()}
            base = best["1 process, 2 threads"]
            line = ", ".join(f"{n} {t:.3f} ms" for n, t in best.items())
            print(f"towers batch {batch}: {line}; 2 ranks / threads {best['2 ranks'] / base:.2f}")


def rank_main() -> None:
    from dflow.runtime.mpi import World  # noqa: PLC0415

    world = World.start()
    transfers(world)
    towers(world)


if __name__ == "__main__":
    if "--rank" in sys.argv:
        rank_main()
    else:
        sys.exit(launch())
