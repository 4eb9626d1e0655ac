"""`cuda_sim`: programs of the `programs` kind's generator (other seeds) on
`target="cuda"`, fused and not, under Numba's CUDA simulator (set before Numba is
imported: the worker's environment). Its sizes are at most 7, so the simulator, a
Python thread per GPU thread, runs each in seconds."""

from __future__ import annotations

import importlib.util

from ..outcome import Case, Failure
from . import programs

COUNT = 438
TIMEOUT_S = 900.0
ENVIRONMENT = {"NUMBA_ENABLE_CUDASIM": "1"}
TARGETS = (("cuda", True), ("cuda", False))


def unavailable() -> str | None:
    return None if importlib.util.find_spec("numba.cuda") else "numba.cuda is not installed"


def run(case: Case) -> list[Failure]:
    import sys

    sys.setswitchinterval(5e-4)  # the simulator's barriers run 2-5x faster (docs/gpu.md)
    return programs.check(programs.program_of(case), TARGETS)


def describe(case: Case) -> dict[str, str | bytes]:
    program = programs.program_of(case)
    return {"program.tdsl": program.source(),
            **{f"repro_{t}-{'fused' if f else 'unfused'}.py": programs.repro(program, program.results, t, f, 0)
               for t, f in TARGETS}}  # fmt: skip
