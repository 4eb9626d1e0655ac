"""fusec's front end, driver and commands.

Importing it (``import fusec``, the ``fusec`` commands) first sets how long idle worker
threads spin, unless the environment sets it: NumPy's BLAS threads
(``OPENBLAS_THREAD_TIMEOUT=4``: 2**4 cycles rather than OpenBLAS's 2**28, about 0.1 s)
and GNU OpenMP's, on which Numba runs fusec's CPU kernels (``GOMP_SPINCOUNT=0``: they
sleep at once rather than after 300,000 spins). fusec's kernels run on the one pool and
its library GEMMs on the other, and on a machine with few cores whichever pool ran last,
spinning for a new task, takes a core from the other. Measured on two cores of a Xeon
(transformer block sample, B=8 S=512): 236 ms with the libraries' defaults, 142 ms with
shortened spins, NumPy by hand 184 ms; even 10,000 OpenMP spins made the small fused
samples slower than ``--no-fuse`` (docs/reference.md, "Idle threads").

They are the process-wide settings fusec makes at import, because they cannot wait: each
library reads its variable once, as it loads (OpenBLAS when NumPy is first imported, GNU
OpenMP when the first OpenMP pool in the process starts, which may be the user's own
Numba code or PyTorch's before fusec runs a kernel: the transformer block sample then ran
28 ms fused against 12 ms unfused on the CI kind of machine). So import fusec first, or
set the variables yourself, to the libraries' own 28 and 300000 to keep their defaults
(docs/reference.md, "Environment").
"""

from runtime import knobs

knobs.OPENBLAS_THREAD_TIMEOUT.set_default()
knobs.GOMP_SPINCOUNT.set_default()
