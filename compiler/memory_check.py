"""`fusec`'s up-front memory check: before it draws a run's inputs, the bytes the run
will hold at its peak, against this machine's memory (docs/reference.md, "Drawn inputs").

A run holds its inputs (drawing one takes a 64-bit array of its size first); the buffers its plan allocates at their peak, results included
(`plan-memory`'s, an im2col buffer of the CPU's library strategy among them:
`runtime.host_plan.peak_buffer_bytes`; on a GPU they are in the GPU's memory, not
counted here); under `--check`, `--bench` or `--target numpy`, the values the NumPy
reference holds (`runtime.reference.memory`); under `--bench`, the unfused plan's
buffers. They are added up, not the largest taken: the memory one part frees is not
always given back to the system before the next runs (measured: resnet_block with
`--check` grows the process by the plan's peak plus the reference's). A run that needs
more is refused with sizes that would fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dialects.sizes import MAX_SIZE, is_derived
from dialects.tensor_types import NUMPY_DTYPES
from runtime.errors import FusecError, InputError
from runtime.host_plan import evaluate_dim, host_function, peak_buffer_bytes, read_program
from runtime.inputs import Param, format_bytes, physical_memory
from runtime.reference.memory import held_bytes

#: the factor each step of the search for sizes that fit scales the sizes by
_SCALE_STEP = 0.9


@dataclass(frozen=True)
class RunMemory:
    """The bytes of a run, by what holds them."""

    parts: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(n for _, n in self.parts)

    def describe(self) -> str:
        return ", ".join(f"{what} {format_bytes(n)}" for what, n in self.parts if n)


def estimate(
    program, entry: str, reference: bool, unfused: bool, drawn: Sequence[str] = ()
) -> Callable[[dict[str, int]], RunMemory]:
    """The bytes of a run of `entry` as a function of its sizes, the program compiled
    once (`reference`: the NumPy reference runs too; `unfused`: the unfused plan too;
    `drawn`: the parameters drawn at random, each through a 64-bit array the size of it
    that NumPy's generator returns)."""
    params = program.params(entry)
    randoms = [p for p in params if p.name in drawn]
    holders = [_plan_bytes(program, entry, "the plan's buffers")]
    if unfused:
        holders.append(_plan_bytes(program.unfused(), entry, "the unfused plan's buffers"))
    if reference and program.backend.stage != "graph":  # else the plan is the reference's
        holders.append(("the NumPy reference's values", lambda sizes: held_bytes(program.graph, entry, sizes)))

    def bytes_at(sizes: dict[str, int]) -> RunMemory:
        inputs = sum(_param_bytes(p, sizes) for p in params)
        drawing = max((_param_bytes(p, sizes) // NUMPY_DTYPES[p.dtype].itemsize * 8 for p in randoms), default=0)
        parts = (("inputs", inputs), ("drawing them", drawing), *((what, holder(sizes)) for what, holder in holders))
        return RunMemory(parts)

    return bytes_at


def _plan_bytes(program, entry: str, what: str) -> tuple[str, Callable[[dict[str, int]], int]]:
    """What holds the buffers of a run of `program`, and their bytes at its peak."""
    backend = program.backend
    if backend.takes_device_arrays:  # its buffers are in the device's memory
        return what, lambda sizes: 0
    module = program.compilation(entry).module(backend.stage)
    if backend.stage == "graph":
        return "the NumPy reference's values", lambda sizes: held_bytes(module, entry, sizes)
    _, functions = read_program(module)
    plan = host_function(functions, entry)
    return what, lambda sizes: peak_buffer_bytes(plan, sizes)


def _param_bytes(param: Param, sizes: Mapping[str, int]) -> int:
    return math.prod(evaluate_dim(d, dict(sizes)) for d in param.shape) * NUMPY_DTYPES[param.dtype].itemsize


def check_memory(
    bytes_at: Callable[[dict[str, int]], RunMemory], sizes: dict[str, int], fixed: Sequence[str], option: str = "--dims"
) -> None:
    """Refuses a run whose bytes under `sizes` exceed this machine's memory, saying how
    much it needs and has, and suggesting smaller values for the sizes not `fixed` by
    given inputs."""
    need = bytes_at(sizes)
    memory = physical_memory()
    if need.total > MAX_SIZE:
        limit = "more than a 64-bit size can count"
    elif memory is not None and need.total > memory:
        limit = f"more than this machine's memory ({format_bytes(memory)})"
    else:
        return
    advice = _smaller_sizes(bytes_at, sizes, fixed, min(memory or MAX_SIZE, MAX_SIZE))
    hint = f"give smaller sizes, such as {option} {advice}" if advice else "give smaller inputs"
    raise InputError(f"the run needs {format_bytes(need.total)} ({need.describe()}), {limit}: {hint}")


def _smaller_sizes(
    bytes_at: Callable[[dict[str, int]], RunMemory], sizes: dict[str, int], fixed: Sequence[str], budget: int
) -> str | None:
    """`NAME=SIZE,...`: the sizes not fixed, all scaled by one factor, the largest such
    that the run fits in half the `budget` (the rest is the process's own and others'),
    each a whole number that keeps the derived sizes whole; None where none does."""
    free = [n for n in sizes if not is_derived(n) and n not in fixed]
    scale = 1.0
    while free and scale > 1e-12:
        scale *= _SCALE_STEP
        scaled = {**sizes, **{n: max(1, int(sizes[n] * scale)) for n in free}}
        try:
            fits = bytes_at(scaled).total <= budget // 2
        except FusecError:  # a derived size that is not whole at these sizes
            continue
        if fits:
            return ",".join(f"{n}={scaled[n]}" for n in free)
        if all(scaled[n] == 1 for n in free):
            return None
    return None
