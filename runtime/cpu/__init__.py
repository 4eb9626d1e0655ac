"""The ``cpu`` target: kernels as Numba ``njit(parallel=True)`` functions on the host's
cores, and the executor that runs a compiled module's host functions."""
