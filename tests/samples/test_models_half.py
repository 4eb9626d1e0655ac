"""The model samples in half precision against their NumPy references.

samples/llama_layer.tdsl and samples/gpt2_block.tdsl with every ``f32`` of the program made
``f16`` (``bf16`` too, once the language has it), on the reference interpreter, the CPU and
the GPU (the CUDA simulator in CI: there at one short sequence, and only the smaller GPT-2
block in f16), against the sample's float64 NumPy reference of the same inputs, rounded to the
half type. Half values are stored in their type and computed in float32
(docs/reference.md, "Types and sizes"), so a result carries the rounding of each value
stored on the way, about half a unit in the last place of the type (2^-11 for ``f16``,
2^-8 for ``bf16``) relative, through a dozen roundings and two normalisations.

Tolerance: the largest difference from the reference, over the largest result (of order
1: both models end in a normalisation), at most ``TOLERANCE_ULPS`` units in the last place
of the type (the type's epsilon, 2^-10 for ``f16``). Measured for ``f16`` at B=2, S=8, three
seeds: 0.9 to 1.6 of them on the reference interpreter (which rounds every op's result, as
NumPy does), 0.3 to 0.5 on the CPU (which rounds only what its kernels store); ``bf16``'s
bound is the same count of its own epsilon, 2^-7.
"""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from runtime.cuda.device import simulated
from tests.samples.reference import SAMPLES

MODELS = ("llama_layer", "gpt2_block")
#: at most this many of the type's epsilon, relative to the largest result (see above)
TOLERANCE_ULPS = 4
#: each half type's epsilon, the distance from 1 to the next value
EPSILON = {"f16": 2.0**-10, "bf16": 2.0**-7}


def half_dtype(name: str):
    """The NumPy dtype of the half type ``name``, or a skip where the language lacks it."""
    try:
        fusec.compile(f"fn main(x: {name}[N]) -> {name}[N] {{ return x }}", target="numpy")
    except fusec.FusecError:
        pytest.skip(f"the language has no {name} yet")
    if name == "f16":
        return np.dtype(np.float16)
    return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)


def half_program(name: str, half: str, target: str):
    """The sample with every float32 type made ``half``."""
    return fusec.compile(SAMPLES[name].path.read_text().replace("f32", half), target=target)


@pytest.mark.parametrize("half", ["f16", "bf16"])
@pytest.mark.parametrize("target", ["numpy", "cpu", "cuda"])
@pytest.mark.parametrize("name", MODELS)
def test_model_in_half_precision(name: str, target: str, half: str):
    dtype = half_dtype(half)
    sizes = {"b": 2, "s": 8}
    if target == "cuda" and simulated():
        # minutes under the CUDA simulator (bf16's bit conversions most of all, 4 min for
        # GPT-2; tests/cuda/test_bf16_cuda.py runs bf16 samples there): on a GPU only
        if name == "llama_layer" or half == "bf16":
            pytest.skip("minutes under the CUDA simulator: run with FUSEC_TEST_GPU=1 on a GPU")
        sizes = {"b": 1, "s": 2}
    program = half_program(name, half, target)
    inputs = {p: a.astype(dtype) for p, a in SAMPLES[name].make_inputs(np.random.default_rng(0), **sizes).items()}
    (got,) = program.run("main", [inputs[p.name] for p in program.params("main")])
    (want,) = SAMPLES[name].reference(**inputs)
    got = np.asarray(got)
    assert got.dtype == dtype and got.shape == want.shape
    scale = np.abs(want).max()
    error = np.abs(got.astype(np.float64) - want).max() / scale
    assert error <= TOLERANCE_ULPS * EPSILON[half], f"{error:.3g} of the largest result {scale:.3g}"
