"""`fusec --bench`: the fused program against the unfused one and the NumPy reference,
timed in one process on the same inputs (medians after warm-up)."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from passes.split_library_groups import PART_WORDS
from runtime.reference.interpreter import evaluate

#: timing stops after this many runs, or once a variant has taken this long
MAX_RUNS, BUDGET_S = 50, 2.0


def median_ms(fn: Callable[[], object], runs: int = MAX_RUNS, budget_s: float = BUDGET_S) -> tuple[float, int]:
    """(median milliseconds, runs) of `fn` after one warm-up call."""
    fn()
    times: list[float] = []
    spent = 0.0
    while len(times) < runs and (spent < budget_s or len(times) < 3):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        spent += times[-1]
    return statistics.median(times) * 1e3, len(times)


def bench(program, entry: str, arrays: Sequence[np.ndarray]) -> dict[str, float | int]:
    unfused = program.unfused()
    fused_ms, runs = median_ms(_runner(program, entry, arrays))
    unfused_ms, unfused_runs = median_ms(_runner(unfused, entry, arrays))
    numpy_ms, numpy_runs = median_ms(lambda: evaluate(program.graph, entry, arrays))
    return {
        "fused_ms": fused_ms,
        "unfused_ms": unfused_ms,
        "numpy_ms": numpy_ms,
        "runs": min(runs, unfused_runs, numpy_runs),
    }


def _runner(program, entry: str, arrays: Sequence[np.ndarray]) -> Callable[[], object]:
    """One call of `entry`; on a device with the inputs already there (copies to and
    from the host are not the program's time) and waiting for the kernels."""
    target = program.backend
    program.executable(entry)  # TargetError where the target cannot run here, before any device call
    device = target.to_device(arrays)

    def run():
        program.run(entry, device)
        target.synchronize()

    return run


def measure_kernels(program, entry: str, arrays: Sequence[np.ndarray], runs: int = 5) -> dict[str, float]:
    """Median microseconds of each kernel of a program's entry (for the report's
    `measured_us`), its inputs put where the kernels read them first. The target may
    ask for a few calls before and more timed ones (a GPU's clocks come up from idle)."""
    target, executable = program.backend, program.executable(entry)
    arrays = target.to_device(arrays)
    runs = max(runs, target.timing_min_calls)
    for _ in range(target.timing_warmup_calls):
        executable.run(entry, arrays)
    executable.run(entry, arrays)
    profile: dict[str, list[float]] = {}
    for _ in range(runs):
        executable.run(entry, arrays, profile=profile)
    return {name: statistics.median(times) * 1e6 for name, times in profile.items()}


#: the launches a group split into library calls and kernels are named after it
_PART = re.compile(rf"_({'|'.join(PART_WORDS.values())})\d+")


def group_measured_us(measured: Mapping[str, float], kernel: str) -> float | None:
    """A fusion group's measured microseconds: its kernel's, or the sum over the
    library calls and kernels it was split into (``<kernel>_gemm0``, ...)."""
    if kernel in measured:
        return measured[kernel]
    parts = [us for name, us in measured.items() if name.startswith(kernel) and _PART.fullmatch(name[len(kernel):])]
    return sum(parts) if parts else None
