"""Real PyTorch models through `torch.compile(model, backend="fusec")` against eager and
Inductor, in one process on one GPU (docs/pytorch.md).

    python benchmarks/torch_models.py [--models llama,gpt2,resnet18] [--dtypes float32,bfloat16]

Hugging Face's `LlamaModel` (D=1024, 16 heads, F=2816) and `GPT2Model` (D=768, 12 heads),
two layers each, random weights from a config, B=4 S=512 token ids; torchvision's
`resnet18` in eval mode on [16, 3, 224, 224]. For each: the first call's seconds through
fusec (its compile), the largest difference from eager against the largest output, the
parts fusec ran and the aten ops left to eager (each with its reason, on standard error),
and the milliseconds a call of eager, Inductor and fusec take (`triton.testing.do_bench`, median, after warm-up). TF32 is off,
so f32 is f32 everywhere. Needs a CUDA GPU, PyTorch, Triton, transformers and torchvision.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time

from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compiler.pytorch.backend import Report, backend  # noqa: E402
from tests.samples.torch_reference import hugging_face_decoder  # noqa: E402


def bench_ms(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median")


def kernels_ms(fn, calls: int = 20) -> float:
    """The device time of the kernels one call of `fn` launches (PyTorch's profiler, which
    records every kernel of the process: fusec's, cuBLAS's, eager's), in ms: the call's
    time less this is its host's share, where the GPU waited for the host."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as profiler:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    device = torch.autograd.DeviceType.CUDA
    return sum(event.device_time for event in profiler.events() if event.device_type == device) / calls / 1e3


def build(name: str, dtype: torch.dtype):
    """(model, input, the tensor of its output compared) on the GPU."""
    torch.manual_seed(0)
    if name in ("llama", "gpt2"):
        sizes = {"llama": (1024, 16, 32000, 2048), "gpt2": (768, 12, 50257, 1024)}[name]
        model = hugging_face_decoder(name, *sizes, ffn=2816)
        x = torch.randint(0, model.config.vocab_size, (4, 512), device="cuda")
        return model.to("cuda", dtype), x, lambda r: r.last_hidden_state
    import torchvision

    model = torchvision.models.resnet18().eval().to("cuda", dtype)
    return model, torch.randn(16, 3, 224, 224, device="cuda", dtype=dtype), lambda r: r


def row(name: str, dtype: torch.dtype) -> str:
    model, x, output = build(name, dtype)
    report = Report()
    with torch.no_grad():
        expected = output(model(x))
        torch._dynamo.reset()
        fusec_model = torch.compile(model, backend=functools.partial(backend, report=report))
        start = time.perf_counter()
        got = output(fusec_model(x))
        torch.cuda.synchronize()
        first = time.perf_counter() - start
        error = (got.float() - expected.float()).abs().max().item()
        scale = expected.float().abs().max().item()
        fusec_ms = bench_ms(lambda: fusec_model(x))
        fusec_kernels_ms = kernels_ms(lambda: fusec_model(x))
        eager_ms = bench_ms(lambda: model(x))
        torch._dynamo.reset()
        inductor = torch.compile(model)
        inductor(x)
        inductor_ms = bench_ms(lambda: inductor(x))
    torch._dynamo.reset()
    eager_ops = sum(report.fallbacks.values())
    label = f"{name} {str(dtype).removeprefix('torch.')}"
    for (op, reason), count in sorted(report.fallbacks.items()):
        print(f"  {label}: {op} x{count} in eager: {reason}", file=sys.stderr)
    for part in report.parts:
        if (why := part.program.executable("main").ungraphed("main")) is not None:
            print(f"  {label}: a part launched its steps one by one: {why}", file=sys.stderr)
    host = max(0.0, fusec_ms - fusec_kernels_ms) / fusec_ms
    return (
        f"| {label} | {eager_ms:.3f} | {inductor_ms:.3f} | {fusec_ms:.3f} | {inductor_ms / fusec_ms:.2f} | "
        f"{eager_ms / fusec_ms:.2f} | {fusec_kernels_ms:.3f} | {host:.0%} | {first:.1f} | {error:.2g} / {scale:.2g} | "
        f"{len(report.parts)} | {eager_ops} |"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="llama,gpt2,resnet18")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    args = parser.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}")
    print("| model | eager ms | Inductor ms | fusec ms | Inductor / fusec | eager / fusec | fusec kernels ms "
          "| fusec host share | first call s | max diff / max | fusec parts | aten ops in eager |")  # fmt: skip
    print("|" + " --- |" * 12)
    for name in args.models.split(","):
        for dtype in args.dtypes.split(","):
            print(row(name, getattr(torch, dtype)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
