"""Timing launches without the host in the measurement: ``timed``.

A launch through Numba's dispatcher costs the host 20-30 us and a library GEMM through
CuPy more. A kernel shorter than that, launched again and again between two events, keeps
the GPU waiting for the host at every launch, and the events then time the host (a 10 us
RMSNorm measured 50-60 us). So ``timed`` first queues a kernel that holds the stream (one
thread sleeping in a loop), then the start event, the launches and the end event: the GPU
reaches the start only once the host has queued everything, and runs the launches back to
back. Where the hold was over before the host had queued the end (its event has passed by
then), the next holds are twice as long.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from runtime.cuda.device import cuda_module

#: nanoseconds a sleep of the hold (``nanosleep`` sleeps at most about 1 ms at once)
_NAP_NS = 1000
_naps = [2000]  # the hold's length in naps: about 2 ms, doubled where it ran out
_MAX_NAPS = 64000


@functools.cache
def _hold_kernel():
    """The hold, compiled on first use."""
    cuda = cuda_module()

    @cuda.jit
    def hold(naps):
        for _ in range(naps):
            cuda.nanosleep(_NAP_NS)

    return hold


def timed(launch: Callable[[], object], repeats: int) -> float:
    """Seconds one of ``repeats`` calls of ``launch`` (which queues work on the default
    stream) takes on the GPU, the host's time to queue them left out."""
    cuda = cuda_module()
    _hold_kernel()[1, 1](_naps[0])  # on the default stream, as ``launch``'s work
    held, begin, end = cuda.event(), cuda.event(), cuda.event()
    held.record()
    begin.record()
    for _ in range(repeats):
        launch()
    end.record()
    if held.query():  # the hold was over before the launches were queued
        _naps[0] = min(2 * _naps[0], _MAX_NAPS)
    end.synchronize()
    return begin.elapsed_time(end) * 1e-3 / repeats
