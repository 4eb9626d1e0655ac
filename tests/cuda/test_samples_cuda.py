"""Every sample on `--target cuda`, fused and unfused, against its independent NumPy
reference and its kernel count (under the simulator in CI; `FUSEC_TEST_GPU=1` on a GPU).

Under the simulator every GPU thread is a Python thread, and the matmul-bearing samples
(model width 256, FFN 1024) take minutes unfused: there they run fused on one short
sequence, and unfused only on a GPU; the Llama layer only on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from dialects import graph
from runtime.cuda.device import simulated
from runtime.cuda.gemm import cuda_library_available
from tests.samples.reference import SAMPLES

#: samples too slow for the simulator at their usual sizes: smaller inputs, fused only
HEAVY = {
    "attention": {"b": 1, "s": 3}, "causal_attention": {"b": 1, "s": 3}, "rope_attention": {"b": 1, "s": 3},
    "transformer_block": {"b": 1, "s": 2}, "gpt2_block": {"b": 1, "s": 2},
    "conv_bn_relu_pool": {"n": 1, "h": 4, "w": 2}, "resnet_block": {"n": 1, "h": 2, "w": 2},
}  # fmt: skip
#: samples that take many minutes under the simulator even at one short sequence (the Llama
#: layer's seven projections of width 1024 and 2816): on a GPU only
GPU_ONLY = {"llama_layer"}


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_on_cuda(name: str, fuse: bool):
    case = SAMPLES[name]
    if name in GPU_ONLY and simulated():
        pytest.skip("many minutes under the CUDA simulator: run with FUSEC_TEST_GPU=1 on a GPU")
    sizes = HEAVY.get(name, {}) if simulated() else {}
    if sizes and not fuse:
        pytest.skip("minutes under the CUDA simulator: run with FUSEC_TEST_GPU=1 on a GPU")
    program = fusec.compile(case.path, target="cuda", fuse=fuse)
    program.plan_for_inputs()  # the plan of the sample's `# dims:` sizes, whose kernels it counts
    kernels = case.kernels_on_gpu(cuda_library_available())
    if fuse and kernels is not None:  # planned for the sample's `# dims:` sizes
        fused = program.compilation().stage("fused")
        assert sum(isinstance(op, graph.FusionGroupOp) for op in fused.walk()) == kernels
    inputs = case.make_inputs(np.random.default_rng(0), **sizes)
    got = program.run("main", [inputs[p.name] for p in program.params("main")])
    expected = case.reference(**inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert isinstance(g, np.ndarray) and g.dtype == np.dtype(case.out_dtype)
        np.testing.assert_allclose(g, e, rtol=max(case.rtol, 1e-5), atol=max(case.atol, 1e-6))


MATMUL_SAMPLES = ["mlp", "attention", "transformer_block"]


@pytest.mark.skipif(not cuda_library_available(), reason="cuBLAS through CuPy needs a GPU and CuPy")
@pytest.mark.parametrize("matmul", ["library", "generated"])
@pytest.mark.parametrize("name", MATMUL_SAMPLES)
def test_matmul_strategies_on_a_gpu(name: str, matmul: str):
    """Each strategy forced on the GPU: cuBLAS calls with the epilogues in the kernels
    after them, or every matmul generated, against the reference."""
    case = SAMPLES[name]
    program = fusec.compile(case.path, target="cuda", matmul=matmul)
    assert ("loop.gemm" in program.ir("tiled")) == (matmul == "library")
    inputs = case.make_inputs(np.random.default_rng(0))
    (got,) = program.run("main", [inputs[p.name] for p in program.params("main")])
    (expected,) = case.reference(**inputs)
    np.testing.assert_allclose(got, expected, rtol=max(case.rtol, 1e-5), atol=max(case.atol, 1e-6))
