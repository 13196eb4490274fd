"""The numba target (level 6): one Python module per device, of `@numba.njit` CPU
kernels or `@cuda.jit` GPU kernels and a host function of runtime calls."""
