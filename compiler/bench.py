"""`fusec --bench`: the fused program against the unfused one and the NumPy reference,
timed in one process on the same inputs (medians after warm-up)."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

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
    fused_ms, runs = median_ms(device_runner(program, entry, arrays))
    unfused_ms, unfused_runs = median_ms(device_runner(unfused, entry, arrays))
    numpy_ms, numpy_runs = median_ms(lambda: evaluate(program.graph, entry, arrays))
    return {
        "fused_ms": fused_ms,
        "unfused_ms": unfused_ms,
        "numpy_ms": numpy_ms,
        "runs": min(runs, unfused_runs, numpy_runs),
    }


def device_runner(program, entry: str, arrays: Sequence[np.ndarray]) -> Callable[[], object]:
    """One call of `entry`; on a device with the inputs already there (copies to and
    from the host are not the program's time) and waiting for the kernels."""
    target = program.backend
    program.executable(entry)  # TargetError where the target cannot run here, before any device call
    device = target.to_device(arrays)

    def run():
        program.run(entry, device)
        target.synchronize()

    return run


#: per-kernel timing: rounds, each of up to this many profiled calls and as many whole
#: calls, fewer (down to one) where they would take longer than the budget together
ROUNDS, CALLS_PER_ROUND, ROUNDS_BUDGET_S = 3, 3, 2.0


@dataclass(frozen=True)
class KernelTimes:
    """A program's entry timed in steady state (microseconds): per launch name, the
    median of each round's profiled calls (``kernels``), and the median of each
    round's whole calls, unprofiled (``program``). Rounds let calibration see whether
    the repeats agree (``compiler/calibrate.py``, ``screen``)."""

    kernels: dict[str, list[float]]
    program: list[float]

    def medians(self) -> dict[str, float]:
        """Each launch's median over the rounds (the report's ``measured_us``)."""
        return {name: statistics.median(rounds) for name, rounds in self.kernels.items()}

    def round(self, index: int) -> dict[str, float]:
        return {name: rounds[index] for name, rounds in self.kernels.items() if index < len(rounds)}


def measure_kernels(program, entry: str, arrays: Sequence[np.ndarray]) -> KernelTimes:
    """Times each kernel of a program's entry in steady state, its inputs put where the
    kernels read them first: never a first call (the calls before the rounds compile,
    fault the pages in and start the thread pool; the target may ask for more, as a
    GPU's clocks come up from idle), then ``ROUNDS`` rounds of profiled calls and of
    whole calls, interleaved so that a change of load shows in both (``ROUNDS_BUDGET_S``
    bounds how many calls a round makes, not how many rounds)."""
    target, executable = program.backend, program.executable(entry)
    device = target.to_device(arrays)
    whole = device_runner(program, entry, arrays)
    once = 0.0
    for _ in range(target.timing_warmup_calls + 1):
        executable.run(entry, device)
        start = time.perf_counter()
        whole()
        once = time.perf_counter() - start
    affordable = int(ROUNDS_BUDGET_S / (2 * ROUNDS * max(once, 1e-9)))
    calls = max(1, min(CALLS_PER_ROUND, affordable), -(-target.timing_min_calls // ROUNDS))
    kernels: dict[str, list[float]] = {}
    rounds: list[float] = []
    for _ in range(ROUNDS):
        profile: dict[str, list[float]] = {}
        for _ in range(calls):
            executable.run(entry, device, profile=profile)
        for name, times in profile.items():
            kernels.setdefault(name, []).append(statistics.median(times) * 1e6)
        whole_times = []
        for _ in range(calls):
            start = time.perf_counter()
            whole()
            whole_times.append(time.perf_counter() - start)
        rounds.append(statistics.median(whole_times) * 1e6)
    return KernelTimes(kernels, rounds)


#: the launches a group split into library calls and kernels are named after it
_PART = re.compile(rf"_({'|'.join(PART_WORDS.values())})\d+")


def group_measured_us(measured: Mapping[str, float], kernel: str) -> float | None:
    """A fusion group's measured microseconds: its kernel's, or the sum over the
    library calls and kernels it was split into (``<kernel>_gemm0``, ...)."""
    if kernel in measured:
        return measured[kernel]
    parts = [us for name, us in measured.items() if name.startswith(kernel) and _PART.fullmatch(name[len(kernel):])]
    return sum(parts) if parts else None
