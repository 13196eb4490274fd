"""`dflow run --trace FILE` and `--profile`: a run's trace, and where its time goes.

Both run the program once untraced first (numba loads or compiles its kernels on
a first call: that is compile time, not the program's), then traced
(`LoadedProgram.trace`, `runtime/trace.py`). `--trace` writes that run's Chrome trace;
`--profile` traces more runs (at least `PROFILE_RUNS`, for `PROFILE_SECONDS` at
least) and prints, to standard error, a table of the kernels, library calls and
transfers by the time they took: per call, their share of the wall time, the
flop/s and byte/s the cost model's counts give (`df.work`), and how near the
machine's measured roofline that is (`runtime/roofline.py`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dflow.driver.errors import DflowError
from dflow.driver.loading.run_options import RunOptions
from dflow.runtime.program import LoadedProgram
from dflow.runtime.roofline import Roofline, machine_roofline
from dflow.runtime.trace import Slice, Trace

PROFILE_RUNS = 3
"""Traced runs a profile makes at least."""
MPI_PROFILE_RUNS = 20
"""Traced runs a profile under MPI makes (every rank must make each: no clock decides)."""
PROFILE_SECONDS = 1.0
"""Time a profile traces runs for at least (stopping at `MAX_PROFILE_RUNS`)."""
MAX_PROFILE_RUNS = 1000

_TRANSFERS = {
    "send": "sends",
    "recv": "recv-waits",
    "copy": "copies",
    "wait": "send-waits",
}
"""The profile's row of each kind of transfer slice, per device (one word each, so
that a row splits on white space)."""


def run_program(program: LoadedProgram, args: RunOptions, inputs: list[Any]) -> list[Any]:
    """`dflow run`'s run of a compiled program: plain, or traced and profiled as
    `--trace` and `--profile` ask."""
    if not args.traced():
        return program.run(args.entry, inputs, args.timeout)
    program.run(args.entry, inputs, args.timeout)  # loads (or compiles) the kernels
    trace = program.trace(args.entry, inputs, args.timeout)
    more = more_traces(program, args.entry, inputs, args.timeout) if args.profile else []
    show(args, [trace, *more])
    return trace.results


def show(args: RunOptions, traces: Sequence[Trace]) -> None:
    """The first trace written (`--trace`), the profile of all printed (`--profile`)."""
    if args.trace:
        write_trace(traces[0], Path(args.trace))
    if args.profile:
        print(profile_table(traces, machine_roofline(), args.entry), file=sys.stderr)


def write_trace(trace: Trace, path: Path) -> None:
    try:
        trace.write(path)
    except OSError as error:
        raise DflowError(f"cannot write {path}: {error.strerror}") from None
    print(f"dflow: wrote the trace of a run to {path} (ui.perfetto.dev opens it)", file=sys.stderr)


def more_traces(
    program: LoadedProgram, entry: str, inputs: list[Any], timeout: float
) -> list[Trace]:
    """Traced runs until `PROFILE_RUNS` in all and `PROFILE_SECONDS` have passed."""
    traces: list[Trace] = []
    start = time.perf_counter()
    while len(traces) + 1 < MAX_PROFILE_RUNS and (
        len(traces) + 1 < PROFILE_RUNS or time.perf_counter() - start < PROFILE_SECONDS
    ):
        traces.append(program.trace(entry, inputs, timeout))
    return traces


@dataclass
class Row:
    """One line of the profile: a kernel, library routine or kind of transfer on a
    device, over all the runs."""

    device: str
    name: str
    category: str
    """A slice's category: `kernel`, `library`, or a transfer's (`send`, ...)."""
    what: str
    calls: int = 0
    ns: int = 0
    flops: int = 0
    bytes: int = 0


def rows(traces: Sequence[Trace]) -> list[Row]:
    """The slices of `traces` summed by device and kernel (or routine, or kind of
    transfer), the longest first; host functions left out (they hold the rest)."""
    found: dict[tuple[str, str], Row] = {}
    for piece in (s for t in traces for s in t.slices if s.category != "host"):
        key, row = _row_of(piece)
        row = found.setdefault(key, row)
        row.calls += 1
        row.ns += piece.duration_ns
        row.flops += int(piece.args.get("flops", 0))
        row.bytes += int(piece.args.get("bytes", 0))
    return sorted(found.values(), key=lambda r: -r.ns)


def _row_of(piece: Slice) -> tuple[tuple[str, str], Row]:
    if piece.category == "kernel":
        what = ", ".join(piece.args.get("ops", ())) or "?"
        return (piece.device, piece.name), Row(piece.device, piece.name, "kernel", what)
    if piece.category == "library":
        row = Row(piece.device, piece.name, "library", "(inside its kernel)")
        return (piece.device, piece.name), row
    name = _TRANSFERS[piece.category]
    return (piece.device, name), Row(piece.device, name, piece.category, "")


def profile_table(traces: Sequence[Trace], roofline: Roofline, entry: str) -> str:
    """The profile of `traces` as a table, with the roofline it is measured against."""
    wall = sum(t.wall_ns for t in traces)
    header = ["device", "kernel", "calls", "us/call", "share", "GFLOP/s", "GB/s", "roofline", "ops"]
    table = [header] + [_cells(row, wall, roofline) for row in rows(traces)]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [_joined(line, widths) for line in table]
    return "\n".join(
        [
            f"profile of @{entry}: {len(traces)} traced runs, {wall / len(traces) / 1000:.1f} us "
            "each (wall); share: of the wall time (a device's library calls are inside its "
            "kernels, devices run at once)",
            *lines,
            f"roofline: {roofline.flops_per_s / 1e9:.1f} GFLOP/s, "
            f"{roofline.bytes_per_s / 1e9:.1f} GB/s ({roofline.how})",
        ]
    )


def _joined(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()


def _cells(row: Row, wall_ns: int, roofline: Roofline) -> list[str]:
    seconds = row.ns / 1e9
    flops = f"{row.flops / seconds / 1e9:.2f}" if row.flops and seconds else "-"
    moved = f"{row.bytes / seconds / 1e9:.2f}" if row.bytes and seconds else "-"
    fraction = None
    if row.category == "kernel":
        fraction = roofline.fraction(row.flops, row.bytes, seconds)
    return [
        row.device,
        row.name,
        str(row.calls),
        f"{row.ns / row.calls / 1000:.1f}",
        f"{100 * row.ns / wall_ns:.1f}%" if wall_ns else "-",
        flops,
        moved,
        "-" if fraction is None else f"{100 * fraction:.1f}%",
        row.what,
    ]
