"""User-facing errors: one line, a source location where there is one."""

from __future__ import annotations


class DflowError(Exception):
    """Bad input to dflow; the command line prints it as one line and exits 1."""

    def __init__(self, message: str, location: str | None = None):
        super().__init__(message)
        self.message = " ".join(message.split())
        self.location = location

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}error: {self.message}"


def first_line(error: BaseException) -> str:
    """The first line of an exception's message that says something (xDSL's
    diagnostics follow it with the IR around the failing op)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


class QuietFailureError(DflowError):
    """A failure reported already, or by another process: the command exits 1 without
    a line (an MPI rank other than 0 when the run failed, rank 0 printing why; `dflow
    bisect` when a stage differs, its report on standard output)."""


class LeftToRankZeroError(QuietFailureError):
    """An option refused before MPI starts, on a rank other than 0: it exits 0 without
    a line, leaving the failure to rank 0 (which exits 1 with the line). Exiting 1
    here would let `mpirun` stop rank 0 before it has printed why."""
