"""Edge programs (`edges.py`: scalars, empty axes, integers at and past 2^63) on every
target, fused or not: the same values on each, or a FusecError on each, never another
exception. A share runs here; `FUSEC_CAMPAIGN=1` (or `FUSEC_EDGE_COUNT`) runs more, and
`NUMBA_ENABLE_CUDASIM=1 python -m tests.differential.edges --count 900` is the campaign."""

from __future__ import annotations

import os

import pytest

from tests.campaign import cases

from .edges import KINDS, generate, run_everywhere, typed, verdict

FIRST = int(os.environ.get("FUSEC_EDGE_SEED", "0"))
SEEDS = range(FIRST, FIRST + cases(2 * len(KINDS), 300, "FUSEC_EDGE_COUNT"))

# the simulator computes kernels with NumPy scalars, which warn of 0 / 0 (a GPU does not)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("seed", SEEDS)
def test_edge_program_agrees_on_every_target(seed):
    program = generate(seed)
    why = verdict(run_everywhere(program))
    assert why is None, f"seed {seed} ({program.kind}): {why}\n{typed(program)}"


def test_each_kind_is_drawn():
    assert {generate(seed).kind for seed in range(len(KINDS))} == set(KINDS)
