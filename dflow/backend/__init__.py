"""Targets: from the lowered module (kernels in `scf`/`memref`/`arith`/`math`, host
functions in `dfrt`) to code that runs. `numba` prints Python modules of
`@numba.njit` and `@cuda.jit` kernels for `dflow.runtime`."""
