"""Every sample as shipped: at its own `# dims:` sizes, its inputs drawn as its `# draw:`
lines say, as `fusec samples/X.tdsl` runs it (docs/reference.md, "Drawn inputs").

On the CPU against the NumPy reference interpreter (`--target numpy`) and the sample's
hand-written reference; every result finite (a batch norm's drawn variance is positive);
the memory the run would hold under `--check`, as the up-front check counts it, well
under the 2 GB a sample may take on a small machine. (The GPU runs the samples at small
sizes: tests/cuda/test_samples_cuda.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from compiler.tolerance import first_mismatch
from compiler.memory_check import estimate
from runtime.inputs import input_sizes
from runtime.reference.interpreter import evaluate
from tests.samples.reference import SAMPLES

#: what the interpreter and the libraries take before a run draws anything (measured:
#: 230 to 320 MB of `fusec samples/X.tdsl`'s peak resident memory is not the run's arrays)
PROCESS_BYTES = 400 * 2**20


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def shipped(request):
    case = SAMPLES[request.param]
    program = fusec.compile(case.path, target="cpu")
    program.plan_for_inputs()
    assert program.input_defaults.dims, f"{request.param}: no `# dims:` line"
    arrays = program.draw_inputs("main")
    return request.param, case, program, arrays, evaluate(program.graph, "main", arrays)


def test_it_runs_on_the_cpu_as_numpy_does(shipped):
    name, _, program, arrays, want = shipped
    got = program.run("main", arrays)
    assert len(got) == len(want)
    for w in want:
        assert np.isfinite(w).all(), f"{name}: the reference's result is not finite at the shipped sizes"
    differing = first_mismatch(program.graph, "main", got, want)
    assert differing is None, f"{name}: the CPU's result {differing} differs from the reference's"


def test_it_agrees_with_its_hand_written_reference(shipped):
    name, case, program, arrays, results = shipped
    inputs = {p.name: a for p, a in zip(program.params("main"), arrays)}
    for got, want in zip(results, case.reference(**inputs)):
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=max(case.atol, 1e-4), err_msg=name)


def test_it_fits_the_memory_of_a_small_machine(shipped):
    name, _, program, _, _ = shipped
    params = program.params("main")
    sizes = input_sizes(params, {}, {}, "main", program.input_defaults)
    need = estimate(program, "main", reference=True, unfused=True, drawn=[p.name for p in params])(sizes)
    assert need.total + PROCESS_BYTES < 2 * 10**9, f"{name}: {need.describe()}"
