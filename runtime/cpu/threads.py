"""The CPU's threads: which threading layer Numba uses, and when a kernel is worth them.

Every CPU kernel with a ``prange`` loop is compiled twice from the same source: with
``parallel=True``, its ``prange`` spread over Numba's thread pool, and without, its
``prange`` a plain loop. The pool's threads sleep as soon as they are idle
(``GOMP_SPINCOUNT=0``, as ``import fusec`` sets it: a spinning thread took a core from the
library GEMM that ran next, docs/reference.md, "Idle threads"), so every parallel launch
first wakes them: on eight floats, that is the whole call. So the executor runs the serial
variant below a threshold of work (``runtime.cpu.loop_work`` counts a kernel's ops on the
call's shapes) and the parallel one above it.

The threshold is where the parallel variant starts to win. On work that takes ``s`` on one
thread, ``T`` threads woken in ``w`` take ``s / T + w``: less than ``s`` from
``s = w * T / (T - 1)``. Measured (``benchmarks/cpu.py``, the latency table): ``w`` 33-60 us
on two threads (the CI kind of VM, two cores of the GPU machine's Xeon), 60-100 us on
sixteen; fusec counts ``WAKE_US``, the two-thread bound, so a kernel runs parallel from
120 us of serial work on two threads and 64 us on sixteen (``parallel_min_us``).
``FUSEC_PARALLEL_MIN_WORK`` (ops, ``runtime.knobs``) sets the threshold instead.

The layer: GNU OpenMP (``omp``) first. It may be entered from several Python threads
at once. TBB next; then ``workqueue``, which Numba documents as aborting when two threads
launch at once: there the executor takes a lock around parallel launches. ``NUMBA_THREADING_LAYER`` or
``NUMBA_THREADING_LAYER_PRIORITY`` in the environment are respected.

fusec's layer priority is set by ``configure_pool`` just before the pool starts, not at
import: Numba reads it when it starts the pool, so a process that imports fusec but never
runs a parallel CPU kernel keeps Numba's own. Every path of fusec that may start the pool
calls ``configure_pool`` first: ``threads()`` (before any parallel kernel is loaded) and
``compiler.chunked.share_cores``. OpenMP's spin (``GOMP_SPINCOUNT``) cannot wait for
that: GNU OpenMP reads it when the first OpenMP pool of the process starts, which need
not be fusec's, so ``import fusec`` sets it (``compiler/__init__.py`` says why).
"""

from __future__ import annotations

import functools
import threading

from runtime import knobs

#: Numba's layers in the order fusec tries them (see the module docstring)
LAYER_PRIORITY = ["omp", "tbb", "workqueue"]

#: microseconds a parallel launch takes to wake the pool's sleeping threads (see the
#: module docstring)
WAKE_US = 60.0
#: a vectorised kernel's time per op (``runtime.cpu.loop_work``) on one thread, measured on
#: the CI kind of machine: softmax and gelu rows, 16 and 18 ops an element, 0.07 ns an op
NS_PER_OP = 0.07

_workqueue_lock = threading.Lock()


@functools.cache
def configure_pool() -> None:
    """Sets fusec's layer priority of Numba's thread pool where the environment sets
    none (see the module docstring); call it before anything that may start the pool.
    Once the pool runs it changes nothing."""
    import numba

    if not knobs.NUMBA_THREADING_LAYER_PRIORITY.is_set():
        numba.config.THREADING_LAYER_PRIORITY = LAYER_PRIORITY  # type: ignore[attr-defined]  # numba sets its config through globals()


def parallel_min_work(threads: int) -> float:
    """The ops (``runtime.cpu.loop_work``) from which a kernel runs on ``threads`` threads."""
    work = knobs.PARALLEL_MIN_WORK.value()
    if work is not None:
        return work
    if threads <= 1:
        return float("inf")
    return parallel_min_us(threads) * 1e3 / NS_PER_OP


def parallel_min_us(threads: int) -> float:
    """The serial microseconds of work from which ``threads`` (two or more) woken
    threads finish first: ``s / T + WAKE_US < s``."""
    return WAKE_US * threads / (threads - 1)


def threads() -> int:
    """The threads a parallel kernel launched from this thread would use; starts the
    pool, after ``configure_pool``."""
    import numba

    configure_pool()
    return numba.get_num_threads()


def pool_threads() -> int:
    """The threads of Numba's pool once it starts (``NUMBA_NUM_THREADS``, by default every
    core this process may run on), read without starting it or importing Numba."""
    return knobs.NUMBA_NUM_THREADS.value() or knobs.usable_cores()


def parallel_launch_lock() -> threading.Lock | None:
    """The lock a parallel launch must hold: one on the ``workqueue`` layer (not safe
    from two threads at once), none on the others. Asks Numba which layer runs, so
    call it once the pool has started (``threads()`` starts it)."""
    import numba

    return _workqueue_lock if numba.threading_layer() == "workqueue" else None
