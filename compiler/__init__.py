"""fusec's front end, driver and commands.

Importing it (``import fusec``, the ``fusec`` commands) first sets how long idle
worker threads spin, unless the environment already says: fusec's kernels run on
Numba's OpenMP threads and its library GEMMs on OpenBLAS's (NumPy's), and on a machine
with few cores whichever pool ran last, spinning for a new task, takes a core from the
other. Measured on two cores of a Xeon (transformer block sample, B=8 S=512): 236 ms
with the libraries' defaults, 142 ms with these, NumPy by hand 184 ms. OpenBLAS reads its
setting when NumPy is first imported: import fusec before NumPy, or set it yourself.
"""

from runtime import knobs

# OpenBLAS's workers spin 2**4 cycles before sleeping (default 2**28: about 0.1 s);
# OpenMP's (Numba's kernels) 10,000 iterations, a few microseconds: kernels launched
# back to back still find them awake
knobs.OPENBLAS_THREAD_TIMEOUT.set_default()
knobs.GOMP_SPINCOUNT.set_default()
