"""The rank `mpirun` gave this process, read from its environment before MPI starts.

`dflow run --mpi` checks its options on every rank before any MPI call (a bad
`--devices` needs no communicator to be found); so that one line, not one per rank,
reports it, the ranks other than 0 stay quiet. The launchers say the rank in their
environment: Open MPI (`OMPI_COMM_WORLD_RANK`), PMIx (`PMIX_RANK`), MPICH and Intel MPI
(`PMI_RANK`). No MPI library is loaded here.
"""

from __future__ import annotations

import os

RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")
"""Where the common launchers put this process's rank."""


def launched_rank() -> int | None:
    """This process's rank as its launcher says it; None when no launcher says one (a
    process started without `mpirun`, a singleton)."""
    for variable in RANK_VARIABLES:
        value = os.environ.get(variable, "")
        if value.isdigit():
            return int(value)
    return None
