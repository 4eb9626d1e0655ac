"""Real models through `backend="fusec"` where their libraries are installed: Hugging Face's
`LlamaModel` and `GPT2Model` (two layers, random weights from a config, nothing
downloaded) and torchvision's `resnet18`, against eager; the decoder layers (attention,
norms, RoPE, MLP) all in fusec, what stays in eager being the mask's construction. On
the CPU target here, on CUDA tensors too with FUSEC_TEST_GPU=1 on the GPU machine."""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")

from compiler.pytorch.backend import Report, backend
from runtime.cuda.device import cuda_usable

DEVICES = ["cpu", "cuda"] if cuda_usable() and torch.cuda.is_available() else ["cpu"]

#: the aten ops of a decoder layer: none may stay in eager
DECODER_OPS = ("attention", "layer_norm", "mm", "rsqrt", "mean", "gelu", "silu", "tanh", "cos", "sin", "embedding")


def _through_fusec(model, x):
    report = Report()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=functools.partial(backend, report=report))
    with torch.no_grad():
        got, expected = compiled(x), model(x)
    torch._dynamo.reset()
    return got, expected, report


def _decoder(name: str):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    if name == "llama":
        config = transformers.LlamaConfig(
            hidden_size=128, intermediate_size=344, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=4, vocab_size=512, max_position_embeddings=256, attn_implementation="sdpa",
        )  # fmt: skip
        model = transformers.LlamaModel(config)
    else:
        config = transformers.GPT2Config(
            n_embd=128, n_layer=2, n_head=4, n_positions=256, vocab_size=512, attn_implementation="sdpa",
            bos_token_id=0, eos_token_id=0,
        )  # fmt: skip
        model = transformers.GPT2Model(config)
    model.config.use_cache = False
    return model.eval()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_a_hugging_face_decoder_matches_eager_with_its_layers_in_fusec(name, device):
    model = _decoder(name).to(device)
    x = torch.randint(0, 512, (2, 32), device=device)
    got, expected, report = _through_fusec(model, x)
    torch.testing.assert_close(got.last_hidden_state, expected.last_hidden_state, rtol=1e-4, atol=1e-4)
    assert report.parts, str(report)
    in_eager = [op for op, _ in report.fallbacks if any(word in op for word in DECODER_OPS)]
    assert in_eager == [], str(report)


@pytest.mark.parametrize("device", DEVICES)
def test_resnet18_matches_eager(device):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval().to(device)
    x = torch.randn(2, 3, 64, 64, device=device)
    got, expected, report = _through_fusec(model, x)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    assert report.parts and not [op for op, _ in report.fallbacks if "convolution" in op], str(report)
