"""Where a compile's time goes: `fusec --time-passes` (docs/reference.md, "Where the time
goes"), as MLIR's ``-mlir-timing`` shows it.

Each piece of work says what it is with ``timed(phase, name)``: the front end, each pass,
the kernels' code generation, each kernel's compile (in this process or in a helper
process, ``runtime.kernel_compiler``) and the first call. Nothing is kept until a caller
asks with ``recording()``; outside it, ``timed`` costs one check. A compile's progress
(kernels done of those under way) goes to the ``PROGRESS`` logger.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum

#: where the compile pool says how far it is (``runtime.kernel_compiler.CompileProgress``;
#: `fusec` draws it as a live line, ``compiler.progress``): INFO records with ``done``,
#: ``total`` and ``elapsed`` (seconds) attributes
PROGRESS = logging.getLogger("fusec.compile")


class Phase(Enum):
    """What a timed piece of work is, in the order a compile meets them."""

    FRONT_END = "front end"  # parsing and building the graph
    PASS = "pass"  # one pass over the IR (fusion and lowering are passes)
    CODEGEN = "codegen"  # a target's kernel sources and launch plans
    COMPILE = "compile"  # one kernel through Numba (and NVVM), or loaded from the cache
    FIRST_CALL = "first call"  # the first run: its compiles not yet done ahead, loads, launches


@dataclass(frozen=True)
class Step:
    phase: Phase
    name: str
    seconds: float
    #: where it ran, when not here: ``helper`` (a compile helper process)
    where: str = ""


_LOCK = threading.Lock()
_RECORDING: list[list[Step]] = []  # the open ``recording()`` blocks, innermost last


@contextmanager
def recording() -> Iterator[list[Step]]:
    """Keeps, while open, every step timed in this process (from any thread), into
    the list it yields."""
    steps: list[Step] = []
    with _LOCK:
        _RECORDING.append(steps)
    try:
        yield steps
    finally:
        with _LOCK:
            _RECORDING.remove(steps)


def record(phase: Phase, name: str, seconds: float, where: str = "") -> None:
    """Records a step (when a ``recording()`` is open)."""
    if not _RECORDING:
        return
    with _LOCK:
        for steps in _RECORDING:
            steps.append(Step(phase, name, seconds, where))


@contextmanager
def timed(phase: Phase, name: str, where: str = "") -> Iterator[None]:
    """Times the block as one step (when a ``recording()`` is open); ``where``: see
    ``Step``."""
    if not _RECORDING:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        record(phase, name, time.perf_counter() - start, where)


def table(steps: list[Step], wall: float) -> str:
    """The steps as `--time-passes` prints them: one row each, in the order they ended,
    then each phase's sum. A helper's compiles overlap each other and the wall time,
    so their sum may exceed it."""
    rows = [(step.phase.value, step.name + (f" ({step.where})" if step.where else ""), step.seconds) for step in steps]
    totals = [
        (phase.value, "total", sum(s.seconds for s in steps if s.phase is phase))
        for phase in Phase
        if any(s.phase is phase for s in steps)
    ]
    width = max([len(name) for _, name, _ in rows + totals] + [4])
    lines = [
        f"fusec: time passes (wall {wall:.3f} s)",
        f"  {'phase':<10}  {'step':<{width}}  {'seconds':>8}  {'wall':>5}",
    ]
    for phase, name, seconds in [*rows, *totals]:
        share = f"{100 * seconds / wall:4.0f}%" if wall > 0 else "    -"
        lines.append(f"  {phase:<10}  {name:<{width}}  {seconds:8.3f}  {share}")
    return "\n".join(lines)


def as_json(steps: list[Step], wall: float) -> dict:
    """The steps as the report's ``time_passes`` holds them."""
    return {
        "wall_s": wall,
        "steps": [
            {"phase": s.phase.value, "name": s.name, "seconds": s.seconds, "where": s.where or "here"} for s in steps
        ],
    }
