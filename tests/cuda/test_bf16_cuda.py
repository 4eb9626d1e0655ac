"""bf16 on `--target cuda` (the simulator in CI; `FUSEC_TEST_GPU=1` on a GPU), as
tests/runtime/test_bf16.py on the CPU: casts that round where the value stays in a
register, the bf16 samples against their references, bf16 arrays in and out. The GPU
holds a bf16 buffer's bits as uint16 and converts with runtime/half_floats.py's bit
operations, which the simulator runs as plain NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from runtime.cuda.device import simulated
from tests.runtime.test_bf16 import CASTS, SCALE, _cast_inputs, _cast_reference, _same, check_wider_sources
from tests.samples.bf16_cases import BF16, CASES, check

#: (batch, sequence) of each bf16 sample: small under the simulator (a Python thread per
#: GPU thread), where the unfused programs take minutes and run only on a GPU
SIZES = {"transformer_block": (1, 2), "causal_rope_attention": (1, 3)}


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_casts_round_to_nearest_even_on_cuda(fuse):
    program = fusec.compile(CASTS, target="cuda", fuse=fuse)
    got = program.main(*_cast_inputs())
    for g, w in zip(got, _cast_reference(*_cast_inputs())):
        assert g.dtype == w.dtype
        assert _same(g.astype(np.float32), w.astype(np.float32))


def test_wider_sources_reach_bf16_in_one_rounding_on_cuda():
    check_wider_sources("cuda")


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_bf16_samples_on_cuda(name, fuse):
    if simulated() and not fuse:
        pytest.skip("minutes under the CUDA simulator: run with FUSEC_TEST_GPU=1 on a GPU")
    case = CASES[name]
    inputs = case.inputs(*SIZES[name]) if simulated() else case.inputs(2, 64)
    program = fusec.compile(case.source, target="cuda", fuse=fuse)
    args = [inputs[p.name] for p in program.params("main")]
    check(case, inputs, program.main(*args), fusec.compile(case.source, target="numpy").main(*args))


def test_bf16_arrays_in_and_out_on_cuda():
    """ml_dtypes arrays in and out; on the device a bf16 array is its bits, uint16."""
    from numba import cuda

    x = np.linspace(-3, 3, 37).astype(BF16)
    y = x[::-1].copy()
    program = fusec.compile(SCALE, target="cuda")
    z, wide = program.main(x, y)
    assert z.dtype == BF16 and wide.dtype == np.float32
    assert np.array_equal(z.astype(np.float32), wide)  # cast(z, f32) is z
    assert np.array_equal(z, (x.astype(np.float32) * y.astype(np.float32) + 1).astype(BF16))
    on_device = program.executable("main").run("main", [cuda.to_device(x.view(np.uint16)), cuda.to_device(y.view(np.uint16))])
    assert on_device[0].dtype == np.uint16
    assert np.array_equal(on_device[0].copy_to_host().view(BF16), z)


def test_bf16_kernels_are_timed_on_cuda():
    """`--bench`'s per-kernel timing copies its inputs to the device first: a bf16
    array as its bits (the buffer protocol cannot carry ml_dtypes' bfloat16)."""
    from compiler.bench import measure_kernels

    x = np.linspace(-3, 3, 37).astype(BF16)
    program = fusec.compile(SCALE, target="cuda")
    times = measure_kernels(program, "main", [x, x[::-1].copy()])
    assert set(times.medians()) == set(program.executable("main").kernel_ops)
