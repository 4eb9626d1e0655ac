"""Real models through `backend="fusec"` where their libraries are installed: Hugging Face's
`LlamaModel` and `GPT2Model` (two layers, random weights from a config, nothing
downloaded) and torchvision's `resnet18`, against eager; the decoder layers (attention,
norms, RoPE, MLP) all in fusec, what stays in eager being the mask's construction. On
the CPU target here, on CUDA tensors too with FUSEC_TEST_GPU=1 on the GPU machine."""

from __future__ import annotations

import functools
import re

import pytest

torch = pytest.importorskip("torch")

from compiler.pytorch.backend import Report, backend
from runtime.cuda.device import cuda_usable
from tests.samples.torch_reference import hugging_face_decoder

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
    pytest.importorskip("transformers")
    torch.manual_seed(0)
    return hugging_face_decoder(name, hidden=128, heads=4, vocab=512, positions=256, ffn=344)


def _gpu_schedules(report: Report) -> dict[str, str]:
    """Each kernel's GPU schedule, per kernel name, of the parts compiled for the GPU
    target (its IR only: no GPU needed)."""
    import fusec

    schedules = {}
    for part in report.parts:
        tiled = fusec.compile(part.source, target="cuda").ir("tiled")
        schedules.update(re.findall(r'loop\.kernel @(\w+) .*?gpu\.schedule = "(\w+)"', tiled))
    return schedules


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


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_a_hugging_face_decoder_gets_the_gpu_schedules_made_for_its_kernels(name, dtype):
    """Each attention a flash kernel and no kernel one thread block: the mask Hugging Face
    builds by gathers, shared by the layers, and a projection's reshaped input made
    kernels of one block (hung for minutes on the GPU) and a mask of a row per batch."""
    model = _decoder(name).to(dtype=getattr(torch, dtype))
    _, _, report = _through_fusec(model, torch.randint(0, 512, (2, 32)))
    schedules = _gpu_schedules(report)
    assert [s for k, s in schedules.items() if "attention" in k] == ["flash", "flash"], schedules
    assert "block" not in schedules.values(), schedules


def test_resnet18_gets_the_gpu_schedules_made_for_its_kernels():
    """Every convolution a GEMM kernel: a block's NCHW result and its NHWC copy in one
    kernel were two loop nests, scheduled one block per image."""
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet18(num_classes=10).eval()
    _, _, report = _through_fusec(model, torch.randn(8, 3, 112, 112))
    schedules = _gpu_schedules(report)
    assert {s for k, s in schedules.items() if "conv2d" in k} == {"gemm"}, schedules
    assert "block" not in schedules.values(), schedules


@pytest.mark.parametrize("device", DEVICES)
def test_resnet18_matches_eager(device, monkeypatch):
    torchvision = pytest.importorskip("torchvision")
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)  # eager's convolutions exact in f32
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval().to(device)
    x = torch.randn(2, 3, 64, 64, device=device)
    got, expected, report = _through_fusec(model, x)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    assert report.parts and not [op for op, _ in report.fallbacks if "convolution" in op], str(report)
