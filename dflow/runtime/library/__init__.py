"""Library routines that emitted kernels call (`cpu`: njit; `gpu`: CUDA launchers)."""
