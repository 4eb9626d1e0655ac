"""One compiled CPU program called from several Python threads at once, and called
again while an earlier result is kept: the executor reuses intermediate buffers per
thread across calls, so neither may see another call's data. Kernels' serial and
parallel variants both (``runtime/cpu/threads.py``), and on Numba's ``workqueue``
layer too, which aborts the process when two threads launch at once unless fusec
keeps them apart."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import fusec
from runtime.inputs import draw_inputs
from tests.samples.reference import SAMPLES_DIR

#: the MLP sample: library calls and kernels between them
MLP, MLP_DIMS = "mlp.tdsl", {"T": 16, "D": 256, "F": 1024}
#: a kernel long enough (milliseconds) that launches from several threads overlap
SOFTMAX, SOFTMAX_DIMS = "softmax.tdsl", {"B": 512, "N": 2048}


def _program_and_inputs(sample: str, dims: dict[str, int], n: int):
    program = fusec.compile(SAMPLES_DIR / sample, target="cpu")
    return program, [draw_inputs(program.params("main"), {}, dims, seed, "main") for seed in range(n)]


def threads_agree_with_one_thread(sample: str = MLP, dims: dict[str, int] = MLP_DIMS) -> bool:
    """Four threads calling one program at once get what one thread got alone."""
    program, inputs = _program_and_inputs(sample, dims, 4)
    expected = [program.main(*arrays).copy() for arrays in inputs]

    def calls(k: int) -> bool:
        return all(np.array_equal(program.main(*inputs[k]), expected[k]) for _ in range(20))

    with ThreadPoolExecutor(max_workers=4) as pool:
        return all(pool.map(calls, range(4)))


@pytest.mark.parametrize("variant", ["serial", "parallel"])
def test_threads_calling_one_program_agree_with_one_thread(variant, monkeypatch):
    if variant == "parallel":
        monkeypatch.setenv("FUSEC_PARALLEL_MIN_WORK", "0")
    assert threads_agree_with_one_thread()


def test_a_kept_result_is_not_overwritten_by_the_next_call():
    program, inputs = _program_and_inputs(MLP, MLP_DIMS, 2)
    first = program.main(*inputs[0])
    kept = first.copy()
    program.main(*inputs[1])
    assert np.array_equal(first, kept)


WORKQUEUE_SCRIPT = textwrap.dedent(
    """\
    import numba
    from tests.runtime.test_concurrent_calls import SOFTMAX, SOFTMAX_DIMS, threads_agree_with_one_thread
    assert threads_agree_with_one_thread(SOFTMAX, SOFTMAX_DIMS)
    print(numba.threading_layer())
    """
)


def test_workqueue_layer_serves_threads_one_launch_at_a_time():
    env = {
        **os.environ,
        "NUMBA_THREADING_LAYER": "workqueue",
        "FUSEC_PARALLEL_MIN_WORK": "0",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    script = [sys.executable, "-c", WORKQUEUE_SCRIPT]
    done = subprocess.run(script, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "workqueue"
