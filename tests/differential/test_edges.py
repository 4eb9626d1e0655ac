"""Edge programs (`edges.py`: scalars, empty axes, integers at and past 2^63) on every
target, fused or not: the same values on each, or a FusecError on each, never another
exception. A share runs here; `FUSEC_CAMPAIGN=1` (or `FUSEC_EDGE_COUNT`) runs more, and
`NUMBA_ENABLE_CUDASIM=1 python -m tests.differential.edges --count 900` is the campaign."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.campaign import cases

from .edges import KINDS, EdgeProgram, generate, run_everywhere, typed, verdict

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


#: empty axes where the language's layout and contraction ops meet them, found by the
#: campaign's neighbourhood: (program, argument shapes, whether NumPy gives values)
EMPTY_LAYOUTS = [
    ("fn main(x: f32[N], y: f32[N]) -> f32 { return x @ y }", [(0,), (0,)], True),
    ("fn main(x: f32[M, K], y: f32[K, N]) -> f32[M, N] { return relu(x @ y) + 1.0 }", [(2, 0), (0, 2)], True),
    ("fn main(x: f32[B, M, K], y: f32[B, K, N]) -> f32[B, M, N] { return x @ y }", [(0, 2, 3), (0, 3, 2)], True),
    ("fn main(q: f32[S, D], k: f32[T, D]) -> f32[S, T] { return softmax(q @ transpose(k)) }", [(2, 4), (0, 4)], False),
    ("fn main(q: f32[S, D], k: f32[T, D]) -> f32[S, T] { return softmax(q @ transpose(k)) }", [(0, 4), (3, 4)], True),
    ("fn main(x: f32[N, H, W, C]) -> f32[N, C] { return global_avg_pool(x) }", [(2, 0, 0, 3)], True),
    ("fn main(x: f32[N, D]) -> f32[N, D] { return flip(x) * 2.0 }", [(0, 0)], True),
    ("fn main(x: f32[N, D]) -> f32[N, D/2] { return x[:, D/2:] }", [(3, 0)], True),
    ("fn main(x: f32[N, D]) -> f32[D] { return x[N-1] }", [(0, 3)], False),
    ("fn main(x: f32[N, D]) -> f32[N] { return x[:, 0] }", [(2, 0)], False),
]


@pytest.mark.parametrize("case", range(len(EMPTY_LAYOUTS)))
def test_empty_axes_in_layouts_and_contractions(case):
    source, shapes, values = EMPTY_LAYOUTS[case]
    program = EdgeProgram(case, "empty", source, [np.ones(s, np.float32) for s in shapes])
    outcomes = run_everywhere(program)
    assert verdict(outcomes) is None, (source, outcomes)
    assert all(isinstance(v, tuple) == values for v in outcomes.values()), (source, outcomes)
