"""The `df-llvm` target: the kernels of each CPU device as one LLVM module (issue 33's
first step; the host functions, library calls and running stay the numba target's)."""
