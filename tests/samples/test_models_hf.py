"""The model samples against Hugging Face transformers' own modules, in float32.

samples/llama_layer.tdsl is ``LlamaModel`` of one layer (``LlamaDecoderLayer`` and the final
norm) and samples/gpt2_block.tdsl ``GPT2Model`` of one layer (the learned positions,
``GPT2Block`` and ``ln_f``), each given the sample's random weights and its input as the
token embeddings (torch_reference.py builds them). Against each model's result: the
sample on the CPU and on the reference interpreter, its NumPy reference
(tests/samples/reference.py) and the PyTorch transcription benchmarks/gpu.py times.

Skipped without PyTorch and transformers (CI installs neither).
"""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from tests.samples.reference import SAMPLES, rope_tables

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
models = pytest.importorskip("tests.samples.torch_reference")

B, S = 2, 16
#: float32 against float32: measured at most 6e-7 of the largest output (about 4, the
#: outputs being normalised), fusec's and the references' alike
RTOL, ATOL = 1e-4, 1e-4


@pytest.fixture(scope="module", params=["llama_layer", "gpt2_block"])
def model(request):
    name = request.param
    inputs = SAMPLES[name].make_inputs(np.random.default_rng(0), b=B, s=S)
    if name == "llama_layer":  # the tables the Hugging Face model makes for positions 0..S-1
        cos, sin = models.rope_tables(S)
        inputs["cos"], inputs["sin"] = cos.numpy(), sin.numpy()
    return name, inputs, models.hugging_face(name, inputs)().numpy()


def test_rope_tables_are_the_references():
    """The tables given to every implementation are reference.py's (in float32)."""
    for got, want in zip(models.rope_tables(S), rope_tables(S)):
        np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-5)


@pytest.mark.parametrize("target", ["cpu", "numpy"])
def test_sample_matches_hugging_face(model, target):
    name, inputs, want = model
    program = fusec.compile(SAMPLES[name].path, target=target)
    (got,) = program.run("main", [inputs[p.name] for p in program.params("main")])
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_reference_matches_hugging_face(model):
    name, inputs, want = model
    (got,) = SAMPLES[name].reference(**inputs)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_torch_transcription_matches_hugging_face(model):
    name, inputs, want = model
    with torch.no_grad():
        got = models.MODELS[name].torch_fn(*(torch.as_tensor(a) for a in inputs.values()))
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)
