"""`sources`: mutants of real programs (`tests/frontend/fuzz.py`'s mutations, on a seed of
the campaign's own) through the API down to the loop dialect, every `CLI_EVERY`-th also
through the `fusec` command; and, where a mutant compiles, one call of it on drawn
inputs (sizes 3) on the reference and on the CPU. The contract (docs/reference.md):
a program compiles and runs, or it is a `fusec.FusecError` whose diagnostics point
into the file, or exit 1 with a one-line error, never a traceback."""

from __future__ import annotations

import functools
import math
import signal
import tempfile
import traceback
from pathlib import Path

from ..outcome import HANG, TRACEBACK, Case, Failure, where

COUNT = 7200
TIMEOUT_S = 300.0
ENVIRONMENT: dict[str, str] = {}
#: every K-th mutant also goes through the `fusec` command (a process of its own each)
CLI_EVERY = 20
#: one in RUN_EVERY of the mutants that compile is also run on drawn inputs
RUN_EVERY = 3
#: seconds a mutant may take in each step (the pool's limit is the case's)
STEP_S = 120.0
#: the largest input a mutant is run on (elements)
MOST_ELEMENTS = 1 << 18


def unavailable() -> str | None:
    return None


@functools.lru_cache(maxsize=1)
def _corpus():
    from tests.frontend import fuzz

    programs = fuzz.corpus()
    return programs, fuzz.vocabulary(programs)


def fuzz_seed(case: Case) -> int:
    """The fuzzer's family of mutants for this campaign (tests/frontend/fuzz.py's own
    runs use seed 0)."""
    return 1_000_003 * (case.seed + 1) + 46


def mutant(case: Case) -> tuple[bytes, list[str]]:
    from tests.frontend import fuzz

    programs, words = _corpus()
    return fuzz.mutant(fuzz_seed(case), case.index, programs, words)


def run(case: Case) -> list[Failure]:
    from tests.frontend import fuzz

    data, applied = mutant(case)
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "mutant.tdsl"
        path.write_bytes(data)
        previous = signal.signal(signal.SIGALRM, fuzz._alarm)
        try:
            runs = [("api", fuzz.compile_in_process)]
            if case.index % CLI_EVERY == 0:
                runs.append(("fusec", fuzz.compile_by_command))
            for how, step in runs:
                outcome = step(path, STEP_S)
                if outcome.kind in ("failed", "timeout"):
                    cls = HANG if outcome.kind == "timeout" else TRACEBACK
                    failures.append(Failure(cls, f"{how}: {outcome.detail}", f"mutations {applied}\n{outcome.trace}",
                                            {"mutant.tdsl": data, "command.sh": "fusec mutant.tdsl --emit loops --target cpu\n"}))  # fmt: skip
                elif how == "api" and outcome.kind == "compiled" and case.index % RUN_EVERY == 0:
                    failures += run_drawn(path, data, applied)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return failures


def run_drawn(path: Path, data: bytes, applied: list[str]) -> list[Failure]:
    """One call of the compiled mutant on inputs drawn at sizes 3, on the reference and the CPU."""
    import fusec
    from tests.frontend import fuzz

    failures = []
    for target in ("numpy", "cpu"):
        signal.setitimer(signal.ITIMER_REAL, STEP_S)
        try:
            program = fusec.compile(path, target=target)
            entry = program.default_entry()
            signature = program.signature(entry)
            names = {d for _, _, shape in signature for d in shape if isinstance(d, str) and d.isidentifier()}
            dims = {n: 3 for n in names}
            if sum(math.prod(d if isinstance(d, int) else 3 for d in shape) for _, _, shape in signature) > MOST_ELEMENTS:
                return failures
            program.run(entry, program.draw_inputs(entry, dims=dims))
        except fuzz.MutantTimeout:
            failures.append(Failure(HANG, f"run on {target}: over {STEP_S:g} s", f"mutations {applied}", {"mutant.tdsl": data}))
        except fusec.FusecError:
            pass
        except Exception as error:  # noqa: BLE001 - a traceback is the finding
            failures.append(Failure(TRACEBACK, f"run on {target}: {where(error)}", f"mutations {applied}\n{traceback.format_exc()}",
                                    {"mutant.tdsl": data,
                                     "command.sh": f"fusec mutant.tdsl --target {target} --dims {','.join(f'{n}=3' for n in sorted(names))}\n"}))  # fmt: skip
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return failures


def describe(case: Case) -> dict[str, str | bytes]:
    data, applied = mutant(case)
    return {"mutant.tdsl": data, "mutations.txt": ", ".join(applied) + "\n"}
