"""One compiled CPU program called from several Python threads at once, and called
again while an earlier result is kept: the executor reuses intermediate buffers per
thread across calls, so neither may see another call's data."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import fusec
from runtime.inputs import draw_inputs
from tests.samples.reference import SAMPLES_DIR

DIMS = {"T": 16, "D": 256, "F": 1024}


def _program_and_inputs(n: int):
    program = fusec.compile(SAMPLES_DIR / "mlp.tdsl", target="cpu")  # library calls and kernels between them
    return program, [draw_inputs(program.params("main"), {}, DIMS, seed, "main") for seed in range(n)]


def test_threads_calling_one_program_agree_with_one_thread():
    program, inputs = _program_and_inputs(4)
    expected = [program.main(*arrays).copy() for arrays in inputs]

    def calls(k: int) -> bool:
        return all(np.array_equal(program.main(*inputs[k]), expected[k]) for _ in range(20))

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(calls, range(4)))


def test_a_kept_result_is_not_overwritten_by_the_next_call():
    program, inputs = _program_and_inputs(2)
    first = program.main(*inputs[0])
    kept = first.copy()
    program.main(*inputs[1])
    assert np.array_equal(first, kept)
