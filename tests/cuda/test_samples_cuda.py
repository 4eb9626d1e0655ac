"""Every sample on `--target cuda`, fused and unfused, against its independent NumPy
reference and its kernel count (under the simulator in CI; `FUSEC_TEST_GPU=1` on a GPU).

Under the simulator every GPU thread is a Python thread, and the matmul-bearing samples
(model width 256, FFN 1024) take minutes unfused: there they run fused on one short
sequence, and unfused only on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from runtime.device import simulated
from tests.samples.reference import SAMPLES

#: samples too slow for the simulator at their usual sizes: smaller inputs, fused only
HEAVY = {"attention": {"b": 1, "s": 3}, "transformer_block": {"b": 1, "s": 2}}


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_on_cuda(name: str, fuse: bool):
    case = SAMPLES[name]
    sizes = HEAVY.get(name, {}) if simulated() else {}
    if sizes and not fuse:
        pytest.skip("minutes under the CUDA simulator: run with FUSEC_TEST_GPU=1 on a GPU")
    program = fusec.compile(case.path, target="cuda", fuse=fuse)
    executable = program.executable("main")
    if fuse and case.kernels is not None:
        assert len(executable.kernel_ops) == case.kernels
    inputs = case.make_inputs(np.random.default_rng(0), **sizes)
    got = program.run("main", [inputs[p.name] for p in program.params("main")])
    expected = case.reference(**inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert isinstance(g, np.ndarray) and g.dtype == np.dtype(case.out_dtype)
        np.testing.assert_allclose(g, e, rtol=max(case.rtol, 1e-5), atol=max(case.atol, 1e-6))
