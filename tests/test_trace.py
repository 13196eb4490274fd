"""`dflow run --trace` and `--profile`, and `Program.trace`: the Chrome trace loads,
has the documented events on one track per device, every kernel the compiled
modules list appears with what it computes, durations fit in the wall time; the
profile's arithmetic against a roofline given by hand; the GPU's copies under the
simulator; bad use is one line."""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import ROOT, run_dflow

import dflow
from dflow.driver.tools.profiling import profile_table
from dflow.runtime import roofline as roofline_module
from dflow.runtime.roofline import Roofline, machine_roofline
from dflow.runtime.trace import CATEGORIES, Slice, Trace

MLP = ROOT / "examples" / "mlp.mlir"
TOWERS = ROOT / "examples" / "towers.mlir"
FIELDS = {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}


@pytest.fixture(autouse=True)
def numba_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests check a trace's slices per numba kernel and library call: on the
    numba target, whatever `$DFLOW_TARGET` the suite runs under."""
    monkeypatch.setenv("DFLOW_TARGET", "numba")


def compiled_kernels(program: Path, devices: str, folder: Path) -> dict[str, dict[str, Any]]:
    """`KERNELS` of each device module `dflow compile` writes, by device (read from
    the source, not through the runtime)."""
    done = run_dflow("compile", program, "--devices", devices, "-o", folder)
    assert done.returncode == 0, done.stderr
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.py")):
        text = path.read_text()
        device = re.search(r'^DEVICE = "(.*)"$', text, re.MULTILINE)
        kernels = re.search(r"^KERNELS = (.*)$", text, re.MULTILINE)
        assert device and kernels
        found[device.group(1)] = ast.literal_eval(kernels.group(1))
    return found


def traced(program: Path, devices: str, path: Path, env: dict[str, str] | None = None) -> Any:
    """`dflow run --trace` of `program`: its JSON, after checking its results are
    those of the plain run."""
    plain = run_dflow("run", program, "--devices", devices, env=env)
    done = run_dflow("run", program, "--devices", devices, "--trace", path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout
    assert done.stderr == f"dflow: wrote the trace of a run to {path} (ui.perfetto.dev opens it)\n"
    return json.loads(path.read_text())


def slices(trace: Any) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def tracks(trace: Any) -> dict[int, str]:
    """Device by track (`tid`), from the metadata events."""
    return {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}


def check_times(trace: Any) -> None:
    """Every slice lies inside the run; on each track, the kernels and the top-level
    slices under the host function take no more than the wall time."""
    wall = trace["otherData"]["wall_us"]
    for event in slices(trace):
        assert set(event) == FIELDS and event["cat"] in CATEGORIES
        assert event["ts"] >= 0 and event["ts"] + event["dur"] <= wall + 1e-3
    for tid in tracks(trace):
        on_track = [e for e in slices(trace) if e["tid"] == tid]
        assert sum(e["dur"] for e in on_track if e["cat"] == "kernel") <= wall
        assert sum(e["dur"] for e in on_track if e["cat"] == "host") <= wall


def test_one_device(tmp_path: Path) -> None:
    trace = traced(MLP, "cpu:0", tmp_path / "trace.json")
    kernels = compiled_kernels(MLP, "cpu:0", tmp_path / "out")["cpu:0"]
    assert tracks(trace) == {0: "cpu:0"}
    assert {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "rank 0"}} in trace[
        "traceEvents"
    ]
    ran = [e for e in slices(trace) if e["cat"] == "kernel"]
    assert sorted(e["name"] for e in ran) == sorted(kernels)  # each kernel, once
    for event in ran:
        assert event["args"] == kernels[event["name"]]
    assert kernels["fused_matmul_0"]["ops"] == ["df.matmul", "df.add", "df.relu"]
    hosts = [e for e in slices(trace) if e["cat"] == "host"]
    assert [e["name"] for e in hosts] == ["main"]
    library = [e for e in slices(trace) if e["cat"] == "library"]
    assert [e["name"] for e in library] == ["lib.matmul_f32"] * 2
    first = next(e for e in ran if e["name"] == "fused_matmul_0")
    call = library[0]  # inside the kernel that makes it
    assert first["ts"] <= call["ts"] and call["ts"] + call["dur"] <= first["ts"] + first["dur"]
    assert call["args"] == {"bytes": (8 * 16 + 16 * 32 + 8 * 32) * 4}  # x, w1 and a
    check_times(trace)


def test_two_devices(tmp_path: Path) -> None:
    trace = traced(TOWERS, "cpu:0,cpu:1", tmp_path / "trace.json")
    kernels = compiled_kernels(TOWERS, "cpu:0,cpu:1", tmp_path / "out")
    assert sorted(tracks(trace).values()) == ["cpu:0", "cpu:1"]
    device = tracks(trace)
    for name, listed in kernels.items():
        ran = [
            e["name"] for e in slices(trace) if e["cat"] == "kernel" and device[e["tid"]] == name
        ]
        assert sorted(ran) == sorted(listed)
    sends = [e for e in slices(trace) if e["cat"] == "send"]
    receives = [e for e in slices(trace) if e["cat"] == "recv"]
    assert sends and len(sends) == len(receives)
    for send in sends:
        key = send["name"].removeprefix("send ")
        receive = next(e for e in receives if e["name"] == f"recv {key}")
        assert send["args"]["to"] == device[receive["tid"]]
        assert receive["args"]["from"] == device[send["tid"]]
        assert send["args"]["bytes"] == receive["args"]["bytes"] == 64 * 64 * 4
        assert receive["ts"] + receive["dur"] >= send["ts"]  # it ends after the send began
    check_times(trace)


def test_the_python_api(tmp_path: Path) -> None:
    program = dflow.compile(MLP)
    rng = np.random.default_rng(0)
    feeds = {s.name: rng.random(s.shape).astype(s.dtype) for s in program.signature().arguments}
    want = program(**feeds)
    trace = program.trace(**feeds)
    assert trace is not None
    for got, expected in zip(trace.results, want, strict=True):
        assert np.array_equal(got, expected)
    assert {s.category for s in trace.slices} <= set(CATEGORIES)
    assert {s.device for s in trace.slices} == {"cpu:0"}
    path = tmp_path / "api.json"
    trace.write(path)
    check_times(json.loads(path.read_text()))


def test_the_profile_arithmetic() -> None:
    """Against a roofline of 10 GFLOP/s and 1 GB/s: a kernel of 2 GFLOP over 1 GB
    in 1 s reaches its roof (min(10, 2 x 1) GFLOP/s); a copy of 0.5 GB in 1 s uses
    half the bandwidth; a library call inside the first has no roofline of its own."""
    second = 1_000_000_000
    pieces = [
        Slice(
            "k",
            "kernel",
            "cpu:0",
            0,
            second,
            {"ops": ["df.matmul"], "flops": 2 * second, "bytes": second},
        ),
        Slice("lib.f", "library", "cpu:0", 0, second // 2, {"bytes": 10}),
        Slice(
            "t",
            "kernel",
            "cpu:0",
            second,
            2 * second,
            {"ops": ["df.transpose"], "flops": 0, "bytes": second // 2},
        ),
        Slice(
            "recv main.k0", "recv", "cpu:0", 2 * second, 3 * second, {"from": "cpu:1", "bytes": 4}
        ),
    ]
    table = profile_table([Trace(pieces, 0, 4 * second)], Roofline(10e9, 1e9, "by hand"), "main")
    lines = table.splitlines()
    assert lines[0].startswith("profile of @main: 1 traced runs, 4000000.0 us each (wall)")
    assert lines[1].split() == [
        "device",
        "kernel",
        "calls",
        "us/call",
        "share",
        "GFLOP/s",
        "GB/s",
        "roofline",
        "ops",
    ]
    rows = {line.split()[1]: line.split() for line in lines[2:-1]}
    assert rows["k"][2:8] == ["1", "1000000.0", "25.0%", "2.00", "1.00", "100.0%"]
    assert rows["t"][2:8] == ["1", "1000000.0", "25.0%", "-", "0.50", "50.0%"]
    assert rows["lib.f"][7] == "-"
    assert rows["recv-waits"][2:] == ["1", "1000000.0", "25.0%", "-", "0.00", "-"]
    assert lines[-1] == "roofline: 10.0 GFLOP/s, 1.0 GB/s (by hand)"
    copied = [Slice("fetch", "copy", "cpu:0", 0, second, {"bytes": second})]
    fetched = profile_table([Trace(copied, 0, second)], Roofline(10e9, 1e9, "by hand"), "main")
    assert fetched.splitlines()[2].split() == [
        "cpu:0",
        "copies",
        "1",
        "1000000.0",
        "100.0%",
        "-",
        "1.00",
        "-",
    ]


def test_the_profile_of_a_run(tmp_path: Path) -> None:
    kernels = compiled_kernels(MLP, "cpu:0", tmp_path / "out")["cpu:0"]
    plain = run_dflow("run", MLP)
    done = run_dflow("run", MLP, "--profile")
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout  # the table goes to standard error
    lines = done.stderr.splitlines()
    runs = re.match(r"profile of @main: (\d+) traced runs", lines[0])
    assert runs and int(runs.group(1)) >= 3
    rows = [line.split() for line in lines[2:-1]]
    assert {row[1] for row in rows if row[1] in kernels} == set(kernels)
    for row in rows:
        assert row[0] == "cpu:0" and int(row[2]) % int(runs.group(1)) == 0
        assert 0 <= float(row[4].rstrip("%")) <= 100
    assert re.fullmatch(r"roofline: [\d.]+ GFLOP/s, [\d.]+ GB/s \(.*\)", lines[-1])


def test_the_roofline_is_measured_once_per_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[Roofline] = []

    def measure() -> Roofline:
        measured.append(Roofline(1e9, 2e9, "fake"))
        return measured[-1]

    monkeypatch.setattr(roofline_module, "measure", measure)
    assert machine_roofline(tmp_path) == machine_roofline(tmp_path) == Roofline(1e9, 2e9, "fake")
    assert len(measured) == 1
    (tmp_path / roofline_module.FILE).write_text("{not json")
    assert machine_roofline(tmp_path) == Roofline(1e9, 2e9, "fake")
    assert len(measured) == 2


def test_a_real_roofline() -> None:
    measured = roofline_module.measure()
    assert 1e8 < measured.flops_per_s < 1e14 and 1e8 < measured.bytes_per_s < 1e13
    assert measured.attainable(1, 1) == min(measured.flops_per_s, measured.bytes_per_s)


def test_a_gpu_under_the_simulator(tmp_path: Path) -> None:
    """gpu:0 beside cpu:0 (numba's CUDA simulator): its track, its kernels, and the
    copies between host and GPU."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    program = tmp_path / "small.mlir"
    program.write_text(
        "func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {\n"
        '  %m = df.matmul %x, %w {df.device = "gpu:0"}'
        " : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>\n"
        '  %r = df.tanh %m {df.device = "cpu:0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n'
        "  func.return %r : tensor<4x8xf32>\n}\n"
    )
    trace = traced(program, "cpu:0,gpu:0", tmp_path / "trace.json", env=env)
    assert sorted(tracks(trace).values()) == ["cpu:0", "gpu:0"]
    device = tracks(trace)
    on_gpu = [e for e in slices(trace) if device[e["tid"]] == "gpu:0"]
    assert {e["cat"] for e in on_gpu} >= {"host", "kernel", "copy", "send"}
    copies = [e for e in on_gpu if e["cat"] == "copy"]
    assert sorted(e["name"] for e in copies) == ["to_device", "to_device"]  # x and w
    assert sorted(e["args"]["bytes"] for e in copies) == [4 * 8 * 4, 8 * 8 * 4]
    check_times(trace)


def test_tracing_the_interpreter_is_one_line() -> None:
    done = run_dflow("run", MLP, "--interpret", "--trace", "t.json")
    assert done.returncode == 1
    assert done.stderr == (
        f"{MLP}: error: --trace and --profile time the compiled program: leave out --interpret\n"
    )


def test_an_unwritable_trace_is_one_line() -> None:
    done = run_dflow("run", MLP, "--trace", "/nonexistent/t.json")
    assert done.returncode == 1
    assert done.stderr == (
        f"{MLP}: error: cannot write /nonexistent/t.json: No such file or directory\n"
    )
