"""``fusec --autotune``: time each GPU kernel of a program under a few launch
parameters and keep the fastest, per GPU, kernel and shapes (``runtime.cuda.autotune_cache``).

The candidates are the schedule's knobs (``dialects.gpu.mapping``): threads per block
and elements per thread for elementwise kernels, elements per thread (so threads per
row) for rows, threads per block for one-thread-per-iteration kernels, and a register
cap for rows and elementwise kernels. Each kernel is tuned in turn, the others at their
current best, each candidate timed with device events (median of ``runs`` launches)
in the program as it runs; the search stops at ``budget_s`` seconds, keeping the best
found so far. Changing the threads of a reduction changes its summation order, so a
tuned kernel's results may differ from the untuned one in the last bits (and stay the
same on every later run with the same tuning file).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from dialects.gpu.mapping import Schedule
from runtime.cuda.autotune_cache import Tuning
from runtime.cuda.executor import CudaProgram

CANDIDATES: dict[Schedule, list[Tuning]] = {
    Schedule.ELEMENTWISE: [
        Tuning(threads=256, per_thread=8),
        Tuning(threads=128, per_thread=8),
        Tuning(threads=256, per_thread=4),
        Tuning(threads=512, per_thread=4),
        Tuning(threads=256, per_thread=16),
        Tuning(threads=256, per_thread=8, max_registers=32),
    ],
    Schedule.ROWS: [
        Tuning(per_thread=16),
        Tuning(per_thread=8),
        Tuning(per_thread=32),
        Tuning(per_thread=4),
        Tuning(per_thread=16, max_registers=64),
        Tuning(per_thread=32, max_registers=128),
    ],
    Schedule.THREADS: [Tuning(threads=256), Tuning(threads=128), Tuning(threads=512), Tuning(threads=64)],
    Schedule.BLOCK: [Tuning(threads=1024), Tuning(threads=512), Tuning(per_thread=8), Tuning(per_thread=32)],
    Schedule.FLASH: [],  # its tiles are map-gpu's (shared memory bounds them)
    Schedule.SPLIT: [Tuning(threads=256), Tuning(threads=512), Tuning(threads=128), Tuning(threads=1024)],
    # the tile sizes are the kernel's; a register cap only trades accumulators for occupancy
    Schedule.GEMM: [Tuning(), Tuning(max_registers=128)],
}


def _time_kernel(program: CudaProgram, entry: str, arrays: Sequence[Any], name: str, runs: int) -> float:
    """Median seconds of kernel ``name`` over ``runs`` calls (events around it)."""
    program.run(entry, arrays)  # compiles, and plans this candidate's launches
    profile: dict[str, list[float]] = {}
    for _ in range(runs):
        program.run(entry, arrays, profile=profile)
    return statistics.median(profile[name])


def autotune(
    program: CudaProgram, entry: str, arrays: Sequence[Any], *, budget_s: float = 30.0, runs: int = 9
) -> dict[str, tuple[Tuning, float]]:
    """Tunes every kernel of ``entry`` for the shapes of ``arrays``; returns, per kernel,
    the tuning kept and its time in seconds, and files them in the tuning cache."""
    start = time.perf_counter()
    program.run(entry, arrays)
    launches = program.last_launches(entry)
    chosen: dict[str, tuple[Tuning, float]] = {}
    for launch in launches:
        name = launch.kernel
        if name in chosen:
            continue
        schedule = program.kernel(name).schedule
        best: tuple[Tuning, float] | None = None
        for candidate in CANDIDATES[schedule]:
            if best is not None and time.perf_counter() - start > budget_s:
                break
            program.tuning[name] = candidate
            program.forget_shapes()
            try:
                seconds = _time_kernel(program, entry, arrays, name, runs)
            except Exception:  # a candidate the GPU refuses (too many registers, ...)
                continue
            if best is None or seconds < best[1]:
                best = (candidate, seconds)
        if best is None:
            program.tuning.pop(name, None)
            continue
        chosen[name] = best
        program.tuned.store(program.kernel_key(name), launch.shapes, best[0])
        program.tuning.pop(name)  # from now on read back from the tuning cache
    program.forget_shapes()
    return chosen
