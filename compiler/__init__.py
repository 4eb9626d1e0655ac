"""fusec's front end, driver and commands.

Importing it (``import fusec``, the ``fusec`` commands) first sets how long NumPy's
BLAS threads spin when idle, ``OPENBLAS_THREAD_TIMEOUT=4`` (2**4 cycles rather than
OpenBLAS's 2**28, about 0.1 s), unless the environment sets it: fusec's kernels run on
Numba's OpenMP threads and its library GEMMs on OpenBLAS's, and on a machine with few
cores whichever pool ran last, spinning for a new task, takes a core from the other.
Measured on two cores of a Xeon (transformer block sample, B=8 S=512), with OpenMP's
spin shortened too (``runtime.cpu.threads.configure_pool``): 236 ms with the
libraries' defaults, 142 ms with these, NumPy by hand 184 ms.

It is the one process-wide setting fusec makes at import, because it cannot wait:
OpenBLAS reads it once, when NumPy is first imported. So import fusec before NumPy, or
set the variable yourself, to OpenBLAS's own 28 to keep its default (docs/reference.md,
"Environment").
"""

from runtime import knobs

knobs.OPENBLAS_THREAD_TIMEOUT.set_default()
