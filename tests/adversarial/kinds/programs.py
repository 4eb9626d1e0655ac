"""`programs`: random programs (`gen.py`) against their own NumPy evaluation, on the
reference (`target="numpy"`), the CPU fused and the CPU with one kernel per op
(`fuse=False`), each compiled once and called twice: with the first sizes, and with
other sizes (a size may be 0 there). Every result must agree with the generator's
evaluation (`compare.py`); where NumPy raises (a max over an empty axis, an integer
to a negative power), every target must raise a `fusec.FusecError`.

A failing result is shrunk: the smallest value of its expression that still fails on
that target becomes the reproducer (`repro.py`: the program, its inputs and the
expected results, bit for bit; `program.tdsl` and `inputs.npz` for the `fusec`
command), and names the failure's group (target, dtype, op, how it differs).
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass

import numpy as np

from .. import reproducer
from ..compare import mismatch
from ..gen import OracleError, Program, V, generate
from ..outcome import TRACEBACK, WRONG, Case, Failure, stable, where

COUNT = 3472
TIMEOUT_S = 900.0
ENVIRONMENT: dict[str, str] = {}
#: (target, fuse) pairs each program runs on
TARGETS = (("numpy", True), ("cpu", True), ("cpu", False))
#: sub-programs a failing case may compile while it is shrunk
SHRINK_BUDGET = 24


def unavailable() -> str | None:
    return None


def program_of(case: Case) -> Program:
    return generate(case.rng_seed())


def run(case: Case) -> list[Failure]:
    # an odd case's CPU kernels run their parallel variants (runtime/cpu/threads.py)
    os.environ["FUSEC_PARALLEL_MIN_WORK"] = "0" if case.index % 2 else ""
    return check(program_of(case), TARGETS)


def describe(case: Case) -> dict[str, str | bytes]:
    """The reproducer of a case that crashed or hung: its program, for each target."""
    program = program_of(case)
    return {"program.tdsl": program.source(), **{f"repro_{label(t, f)}.py": repro(program, program.results, t, f, 0)
                                                  for t, f in TARGETS}}  # fmt: skip


def label(target: str, fuse: bool) -> str:
    return target if fuse or target == "numpy" else f"{target}-unfused"


# ---- one program on one target ----------------------------------------------------------


@dataclass
class Verdict:
    """What went wrong with one call of a program on one target (None: nothing)."""

    cls: str
    how: str  # short: the group key's tail
    detail: str
    result: int | None = None  # which result differs, if one does


def expected(program: Program, call: int, results: list[V]) -> list[np.ndarray] | OracleError:
    try:
        return program.expected(call, results)
    except OracleError as error:
        return error


def call_target(program: Program, results: list[V], target: str, fuse: bool, call: int, compiled: dict) -> Verdict | None:
    """Runs call `call` of the program returning `results` on (target, fuse), against the
    oracle. `compiled` keeps the compiled program between calls."""
    import fusec

    want = expected(program, call, results)
    inputs = program.inputs(call)
    args = [inputs[p.name] for p in program.params_of(results)]
    try:
        if "program" not in compiled:
            compiled["program"] = fusec.compile(program.source(results), target=target, fuse=fuse)
        got = compiled["program"].run(program.entry, args)
    except fusec.FusecError as error:
        if isinstance(want, OracleError):
            return None
        message = str(error).splitlines()[0] if str(error) else ""
        return Verdict(WRONG, f"raises {type(error).__name__}: {stable(message)}",
                       f"raises {type(error).__name__} where NumPy gives results:\n{error}")  # fmt: skip
    except Exception as error:  # noqa: BLE001 - a traceback is the finding
        return Verdict(TRACEBACK, where(error), traceback.format_exc())
    if isinstance(want, OracleError):
        return Verdict(WRONG, "no error where NumPy raises", f"gives results where NumPy raises: {want}")
    if len(got) != len(want):
        return Verdict(WRONG, "result count", f"{len(got)} results, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        problem = mismatch(g, w)
        if problem:
            kind = "NaN positions" if problem.startswith("NaN") else "type" if problem.startswith("type") else "values"
            return Verdict(WRONG, kind, f"result {i}: {problem}", i)
    return None


def run_target(program: Program, results: list[V], target: str, fuse: bool) -> tuple[int, Verdict] | None:
    """The first failing call of the program on (target, fuse), if any."""
    compiled: dict = {}
    for call in range(len(program.calls)):
        verdict = call_target(program, results, target, fuse, call, compiled)
        if verdict is not None:
            return call, verdict
    return None


# ---- shrinking ----------------------------------------------------------------------------


def shrink(program: Program, result: V, target: str, fuse: bool, call: int) -> tuple[V, Verdict]:
    """The smallest value of `result`'s expression that still fails on (target, fuse)
    in call `call`: descend into an operand while one fails alone."""
    budget = [SHRINK_BUDGET]

    def fails(v: V) -> Verdict | None:
        budget[0] -= 1
        return call_target(program, [v], target, fuse, call, {})

    current, verdict = result, fails(result)
    if verdict is None:
        return result, Verdict(WRONG, "only with the other results", "")
    descended = True
    while descended and budget[0] > 0:
        descended = False
        for child in operands(current):
            if budget[0] <= 0:
                break
            found = fails(child)
            if found is not None:
                current, verdict, descended = child, found, True
                break
    return current, verdict


def operands(v: V) -> list[V]:
    """v's operands worth trying alone: computed values, through statements."""
    out = []
    for child in v.children:
        while child.op == "ref":
            child = child.children[0]
        if child.op not in ("param", "index", "literal"):
            out.append(child)
    return out


def op_name(v: V) -> str:
    while v.op == "ref":
        v = v.children[0]
    return v.op


# ---- checking a program ---------------------------------------------------------------------


def check(program: Program, targets, shrinking: bool = True) -> list[Failure]:
    failures = []
    for target, fuse in targets:
        found = run_target(program, program.results, target, fuse)
        if found is None:
            continue
        call, verdict = found
        name = label(target, fuse)
        results = program.results
        if shrinking:
            start = program.results[verdict.result] if verdict.result is not None else None
            candidates = [start] if start is not None else list(program.results)
            for candidate in candidates:
                smallest, small_verdict = shrink(program, candidate, target, fuse, call)
                if small_verdict.detail:
                    results, verdict = [smallest], small_verdict
                    break
        dtypes = "/".join(sorted({r.dtype for r in results}))
        ops = "/".join(sorted({op_name(r) for r in results}))
        key = f"{name}: {dtypes} {ops}: {verdict.how}" if verdict.cls == WRONG else f"{name}: {verdict.how}"
        detail = (f"target {target}, fuse={fuse}, call {call} (sizes {program.calls[call]}): {verdict.detail}\n\n"
                  f"program:\n{program.source(results)}\nthe whole program:\n{program.source()}")  # fmt: skip
        files: dict[str, str | bytes] = {
            "program.tdsl": program.source(results),
            "repro.py": repro(program, results, target, fuse, call),
            "inputs.npz": npz(program, results, call),
            "command.sh": f"fusec program.tdsl --inputs inputs.npz --target {target}{'' if fuse else ' --no-fuse'} --check\n",
        }
        failures.append(Failure(verdict.cls, key, detail, files))
    return failures


def npz(program: Program, results: list[V], call: int) -> bytes:
    """The call's inputs as `fusec --inputs` reads them."""
    inputs = program.inputs(call)
    return reproducer.npz({p.name: inputs[p.name] for p in program.params_of(results)})


def repro(program: Program, results: list[V], target: str, fuse: bool, call: int) -> str:
    """A script that runs the program on the target and compares with the expected values."""
    inputs = program.inputs(call)
    want = expected(program, call, results)
    return reproducer.script(
        f"{label(target, fuse)}, sizes {program.calls[call]}", program.source(results), program.entry,
        [inputs[p.name] for p in program.params_of(results)], str(want) if isinstance(want, OracleError) else want,
        target, fuse,
    )  # fmt: skip
