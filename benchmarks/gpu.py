"""GPU benchmark: the workloads of docs/gpu.md's tables ("Measured") at their sizes, side by side.

    python benchmarks/gpu.py [--quick] [--only softmax,layernorm,attention] [--no-generated]
    python benchmarks/gpu.py --half [--dtypes f16,bf16] [--quick] [--only llama,gpt-2]

Needs a CUDA GPU, PyTorch and Triton (for ``triton.testing.do_bench``: device events,
median, after warm-up). For each workload, in this one process on the same device
tensors: the floor (the bytes the workload must move, inputs read once and outputs
written once, over the measured device-to-device copy bandwidth), torch eager,
torch.compile, fusec fused and fusec ``--no-fuse`` (each given the torch tensors
directly, results written into preallocated tensors with ``out=``), and the fraction
of the floor each reaches. A second table does the same for the matmul-bearing
workloads (fp32, TF32 off; their floor is FLOPs over cuBLAS's measured rate), with
fusec's generated GEMMs beside its default pick. A third does the same for the
convolution samples (the ResNet basic block, the seeds' conv-bn-relu-maxpool chain),
NHWC against PyTorch's channels_last cuDNN. Another times attention in half precision
(fusec's flash kernel on tensor cores), plain and causal, against torch written out,
torch.compile and SDPA's flash backend, with the causal mask also given as an additive
``-inf`` input (the same kernel, no tile skipped). The last two tables time softmax
through ``program.main`` (torch in, torch out) against the ``out=`` path and torch, and
measure the host cost of a call on a tiny input: ``program.main`` and the ``out=`` path of a
one-kernel and a twelve-kernel program, against numba-cuda's dispatcher and a torch eager op.

``--half`` runs the half-precision table alone, one row per workload and dtype (``f16``,
and ``bf16`` where fusec's language has it): relu(a @ w + b) 4096³, attention B8 H16 S2048
Dh64 plain and causal, the transformer block, the Llama layer and the GPT-2 block
(samples/llama_layer.tdsl, samples/gpt2_block.tdsl at B4 S1024, against the PyTorch
transcriptions of tests/samples/torch_reference.py), softmax, layernorm and gelu(x+b)+r
rows; torch eager, torch.compile, the library alone (SDPA, cuBLAS), fusec as the cost model
picks and with each matmul strategy forced; each fusec row's TFLOP/s or fraction of the
copy floor; and each kernel of the models' fusec programs, timed alone.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import triton.testing  # noqa: E402

import fusec  # noqa: E402

SAMPLES = ROOT / "samples"

SOFTMAX_F16 = """
fn main(x: f16[B, N]) -> f16[B, N] {
    m = max(x, axis=-1, keepdims=true)
    e = exp(x - m)
    return e / sum(e, axis=-1, keepdims=true)
}
"""

LAYERNORM_F16 = """
fn main(x: f16[N, D], gamma: f16[D], beta: f16[D]) -> f16[N, D] {
    mu = mean(x, axis=-1, keepdims=true)
    xc = x - mu
    var = mean(xc ** 2, axis=-1, keepdims=true)
    y = xc * rsqrt(var + 1e-5)
    return y * gamma + beta
}
"""


SUM_OF_SQUARES = """
fn main(x: f32[N, D]) -> f32 {
    return sum(x * x)
}
"""


MATMUL_RELU = """
fn main(a: f32[M, K], w: f32[K, N], b: f32[N]) -> f32[M, N] {
    return relu(a @ w + b)
}
"""

ATTENTION = """
fn main(q: f32[B, 16, S, 64], k: f32[B, 16, S, 64], v: f32[B, 16, S, 64]) -> f32[B, 16, S, 64] {
    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125, axis=-1) @ v
}
"""

ATTENTION_HALF = """
fn main(q: f16[B, 16, S, 64], k: f16[B, 16, S, 64], v: f16[B, 16, S, 64]) -> f16[B, 16, S, 64] {
    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125, axis=-1) @ v
}
"""

# the causal mask from the row and key indices: the flash kernel skips the key tiles past
# a block's last row (docs/gpu.md, "Attention")
CAUSAL_HALF = """
fn main(q: f16[B, 16, S, 64], k: f16[B, 16, S, 64], v: f16[B, 16, S, 64]) -> f16[B, 16, S, 64] {
    s = q @ transpose(k, (0, 1, 3, 2)) * 0.125
    return softmax(where(iota((S, S), 0) >= iota((S, S), 1), s, -inf), axis=-1) @ v
}
"""

# the same mask as an input: applied per score, every tile visited
CAUSAL_BIAS_HALF = """
fn main(q: f16[B, 16, S, 64], k: f16[B, 16, S, 64], v: f16[B, 16, S, 64], bias: f16[S, S]) -> f16[B, 16, S, 64] {
    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125 + bias, axis=-1) @ v
}
"""

# The pre-norm transformer block of docs/gpu.md ("Measured"): D=1024, 16 heads of 64, FFN 4D.
BLOCK = """
fn heads(t: f32[B, S, 1024]) -> f32[B, 16, S, 64] {
    return transpose(reshape(t, (B, S, 16, 64)), (0, 2, 1, 3))
}

fn main(x: f32[B, S, 1024], g1: f32[1024], c1: f32[1024], wq: f32[1024, 1024], wk: f32[1024, 1024],
        wv: f32[1024, 1024], wo: f32[1024, 1024], g2: f32[1024], c2: f32[1024],
        w1: f32[1024, 4096], b1: f32[4096], w2: f32[4096, 1024], b2: f32[1024]) -> f32[B, S, 1024] {
    z = layernorm(x, g1, c1)
    p = softmax(heads(z @ wq) @ transpose(heads(z @ wk), (0, 1, 3, 2)) * 0.125, axis=-1)
    h = x + reshape(transpose(p @ heads(z @ wv), (0, 2, 1, 3)), (B, S, 1024)) @ wo
    return h + gelu(layernorm(h, g2, c2) @ w1 + b1) @ w2 + b2
}
"""


def t_matmul_relu(a, w, b):
    return torch.relu(a @ w + b)


def t_attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1) @ v


def t_sdpa(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.125)


def t_block(x, g1, c1, wq, wk, wv, wo, g2, c2, w1, b1, w2, b2):
    import torch.nn.functional as F

    b, s, d = x.shape

    def heads(t):
        return t.reshape(b, s, 16, 64).transpose(1, 2)

    z = F.layer_norm(x, (d,), g1, c1, eps=1e-5)
    o = t_attention(heads(z @ wq), heads(z @ wk), heads(z @ wv))
    h = x + o.transpose(1, 2).reshape(b, s, d) @ wo
    return h + F.gelu(F.layer_norm(h, (d,), g2, c2, eps=1e-5) @ w1 + b1, approximate="tanh") @ w2 + b2


def t_causal(q, k, v):
    s = q @ k.transpose(-1, -2) * 0.125
    mask = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
    return torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1) @ v


def t_causal_bias(q, k, v, bias):
    return torch.softmax(q @ k.transpose(-1, -2) * 0.125 + bias, dim=-1) @ v


def t_sdpa_causal(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.125, is_causal=True)


def half_attention_table(args) -> str:
    """Attention in f16 (B8 H16 S2048 Dh64; --quick: B2 S512): torch written out, torch.compile
    of it, SDPA's flash backend alone, fusec (its flash kernel on tensor cores, given the
    torch tensors) and fusec's TFLOP/s (causal: half the FLOPs, the masked half not
    counted, as FlashAttention counts them)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    bb, ss = (2, 512) if args.quick else (8, 2048)
    shape = (bb, 16, ss, 64)
    flops = 4.0 * bb * 16 * ss * ss * 64
    lines = [
        (f"| attention f16 B{bb} H16 S{ss} Dh64 | torch eager | torch.compile | SDPA flash | fusec "
         "| fusec TFLOP/s | SDPA / fusec |"),
        "|" + " --- |" * 7,
    ]
    mask = torch.ones(ss, ss, dtype=torch.bool, device="cuda").tril()
    bias = torch.zeros(ss, ss, dtype=torch.float16, device="cuda").masked_fill(~mask, float("-inf"))
    rows = [
        ("plain", ATTENTION_HALF, t_attention, [], t_sdpa, flops),
        ("causal (iota mask: tiles skipped)", CAUSAL_HALF, t_causal, [], t_sdpa_causal, flops / 2),
        ("causal (-inf bias input: every tile)", CAUSAL_BIAS_HALF, t_causal_bias, [bias], None, flops / 2),
    ]
    for label, source, reference, extra, sdpa, work in rows:
        q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.float16) for _ in range(3))
        inputs = [q, k, v, *extra]
        expected = reference(*inputs)
        eager, compiled_ms = torch_ms(reference, inputs, not args.no_compile)
        sdpa_ms = float("nan")
        if sdpa is not None:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                sdpa_ms = bench_ms(lambda f=sdpa, qkv=(q, k, v): f(*qkv))
        program = fusec.compile(source, target="cuda")
        out = torch.empty_like(expected)
        run = fusec_runner(program, "main", inputs, [out])
        run()
        torch.cuda.synchronize()
        if not torch.allclose(out.float(), expected.float(), rtol=2e-2, atol=2e-2):
            print(f"  attention f16 {label}: MISMATCH, max abs diff {(out.float() - expected.float()).abs().max().item():.3g}")
        ms = bench_ms(run)
        cells = [label, f"{eager:.3f}", f"{compiled_ms:.3f}", f"{sdpa_ms:.3f}", f"{ms:.3f}",
                 f"{work / (ms * 1e-3) / 1e12:.0f}", f"{sdpa_ms / ms:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def block_shapes(b: int, s: int) -> list[tuple[int, ...]]:
    d, f = 1024, 4096
    return [(b, s, d), (d,), (d,), (d, d), (d, d), (d, d), (d, d), (d,), (d,), (d, f), (f,), (f, d), (d,)]


def block_flops(b: int, s: int) -> float:
    d, f, h = 1024, 4096, 16
    return 2.0 * b * s * d * (4 * d + 2 * f) + 4.0 * b * h * s * s * (d // h)


def matmul_workloads(quick: bool):
    """(name, program, torch reference, shapes, FLOPs, other torch baselines): the floor
    of these is FLOPs over the measured fp32 matmul rate."""
    n = 1024 if quick else 4096
    bb, hh, ss = (2, 16, 512) if quick else (8, 16, 2048)
    b, s = (2, 256) if quick else (8, 1024)
    return [
        (f"relu(a @ w + b) {n}³", MATMUL_RELU, t_matmul_relu, [(n, n), (n, n), (n,)], 2.0 * n**3,
         {"cuBLAS matmul alone": lambda a, w, b: a @ w}),
        (f"attention B{bb} H{hh} S{ss} Dh64", ATTENTION, t_attention, [(bb, hh, ss, 64)] * 3,
         4.0 * bb * hh * ss * ss * 64, {"torch SDPA": t_sdpa}),
        (f"transformer block B{b} S{s} D1024 H16", BLOCK, t_block, block_shapes(b, s), block_flops(b, s), {}),
    ]


def matmul_rate() -> float:
    """FLOP/s of cuBLAS's fp32 matmul (TF32 off) at 8192³: the matmul floor's rate."""
    a = torch.randn(8192, 8192, device="cuda")
    return 2 * 8192**3 / (bench_ms(lambda: a @ a) * 1e-3)


def t_sum_of_squares(x):
    return (x * x).sum()


def t_sincos(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


def t_gelu(x):
    return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def t_softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def t_layernorm(x, gamma, beta):
    xf = x.float()
    mu = xf.mean(dim=-1, keepdim=True)
    xc = xf - mu
    var = (xc * xc).mean(dim=-1, keepdim=True)
    return (xc * torch.rsqrt(var + 1e-5) * gamma.float() + beta.float()).to(x.dtype)


def t_softmax_any(x):
    return t_softmax(x.float()).to(x.dtype)


def t_bias_gelu_residual(x, b, r):
    y = x + b
    return 0.5 * y * (1 + torch.tanh(0.7978845608 * (y + 0.044715 * y**3))) + r


RELU_LINEAR = """
fn main(a: f32[M, K], w: f32[K, N], b: f32[N]) -> f32[M, N] {
    return relu(a @ w + b)
}
"""


def workloads(quick: bool):
    big, rows, cols = (2048, 2048, 1024) if quick else (8192, 16384, 4096)
    f32, f16 = torch.float32, torch.float16
    return [
        ("sin²+cos²", SAMPLES / "sincos.tdsl", t_sincos, [(big, big)], f32),
        ("gelu tanh chain", SAMPLES / "gelu_chain.tdsl", t_gelu, [(big, big)], f32),
        ("softmax rows", SAMPLES / "softmax.tdsl", t_softmax, [(rows, cols)], f32),
        ("layernorm rows", SAMPLES / "layernorm.tdsl", t_layernorm, [(rows, cols), (cols,), (cols,)], f32),
        ("gelu(x+b)+r", SAMPLES / "bias_gelu_residual.tdsl", t_bias_gelu_residual, [(rows, cols), (cols,), (rows, cols)], f32),
        ("sum of squares (whole tensor)", SUM_OF_SQUARES, t_sum_of_squares, [(rows, cols)], f32),
        ("softmax rows f16", SOFTMAX_F16, t_softmax_any, [(rows, cols)], f16),
        ("layernorm rows f16", LAYERNORM_F16, t_layernorm, [(rows, cols), (cols,), (cols,)], f16),
    ]


def bench_ms(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def copy_bandwidth() -> float:
    """Bytes read + written per second by a device-to-device copy of 1 GiB."""
    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    ms = bench_ms(lambda: y.copy_(x))
    return 2 * x.numel() * 4 / (ms * 1e-3)


def torch_ms(reference, inputs, compile_too: bool) -> tuple[float, float]:
    """Median ms of ``reference`` on ``inputs`` in torch eager and under torch.compile
    (NaN when ``compile_too`` is off)."""
    eager = bench_ms(lambda: reference(*inputs))
    if not compile_too:
        return eager, float("nan")
    compiled = torch.compile(reference)
    compiled(*inputs)
    return eager, bench_ms(lambda: compiled(*inputs))


def fusec_runner(program, entry: str, inputs, outputs):
    exe = program.executable(entry)
    return lambda: exe.run(entry, inputs, out=outputs)


def _host_us(fn, calls: int = 2000) -> float:
    """Host microseconds per call of ``fn`` in a loop, synchronised once per loop."""
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def host_costs() -> list[tuple[str, float]]:
    """Host cost of a call on a tiny input, where the GPU waits for the host: a
    one-kernel program replayed as a graph and launched plainly, a program of many
    kernels (gelu(x+b)+r unfused) as one graph, numba-cuda's own dispatcher, torch."""
    x = torch.randn(4, 32, device="cuda")
    b = torch.randn(32, device="cuda")
    y = torch.empty_like(x)
    one = fusec.compile(SAMPLES / "sincos.tdsl", target="cuda").executable("main")
    plain = fusec.compile(SAMPLES / "sincos.tdsl", target="cuda").executable("main")
    plain.graphs = False
    many_program = fusec.compile(SAMPLES / "bias_gelu_residual.tdsl", target="cuda", fuse=False)
    many = many_program.executable("main")
    many.run("main", [x, b, x], out=[y])
    kernels = len(many.kernel_ops)
    plain.run("main", [x], out=[y])
    (prepared,) = plain._prepared.values()
    step = prepared.launches[0]
    dispatcher = plain.kernel(step.kernel, step.tuning).dispatcher(step.variant, step.block)
    from numba import cuda

    dx, dy = cuda.as_cuda_array(x), cuda.as_cuda_array(y)
    configured = dispatcher[step.grid, step.block]
    one_program = fusec.compile(SAMPLES / "sincos.tdsl", target="cuda")
    kept: collections.deque = collections.deque(maxlen=3)  # results alive: a new address each call
    return [
        ("fusec program.main, 1 kernel, torch in and out", _host_us(lambda: one_program.main(x))),
        ("fusec program.main, 1 kernel, the last 3 results kept", _host_us(lambda: kept.append(one_program.main(x)))),
        (f"fusec program.main, {kernels} kernels (gelu(x+b)+r --no-fuse)", _host_us(lambda: many_program.main(x, b, x))),
        (f"fusec program.main, {kernels} kernels, the last 3 results kept",
         _host_us(lambda: kept.append(many_program.main(x, b, x)))),
        ("fusec call, 1 kernel, graph replay", _host_us(lambda: one.run("main", [x], out=[y]))),
        ("fusec call, 1 kernel, packed launch (--no-graphs)", _host_us(lambda: plain.run("main", [x], out=[y]))),
        (f"fusec call, {kernels} kernels (gelu(x+b)+r --no-fuse), graph replay",
         _host_us(lambda: many.run("main", [x, b, x], out=[y]))),
        ("numba-cuda dispatcher, 1 launch, device arrays", _host_us(lambda: configured(dx, dy))),
        ("torch eager op (torch.sin)", _host_us(lambda: torch.sin(x, out=y))),
    ]


def call_table() -> str:
    """Device time of softmax through the documented call, ``program.main`` (torch in,
    torch out), against the ``out=`` path and torch, at a large and a tiny size; the
    call is timed back to back too, host cost included."""
    program = fusec.compile(SAMPLES / "softmax.tdsl", target="cuda")
    executable = program.executable("main")
    lines = ["| softmax | program.main ms | back to back ms | out= ms | torch.softmax ms |", "| --- | --- | --- | --- | --- |"]
    for shape in ((16384, 4096), (64, 1024)):
        x = torch.randn(*shape, device="cuda")
        y = torch.empty_like(x)
        got = program.main(x)
        torch.cuda.synchronize()
        if not isinstance(got, torch.Tensor) or not torch.allclose(got, torch.softmax(x, -1), atol=1e-6):
            print(f"  softmax {shape}: MISMATCH through program.main ({type(got).__name__})")
        main_ms = bench_ms(lambda: program.main(x))
        loop_ms = _host_us(lambda: program.main(x), calls=200) / 1e3
        out_ms = bench_ms(lambda: executable.run("main", [x], out=[y]))
        torch_ms = bench_ms(lambda: torch.softmax(x, -1))
        lines.append(f"| {list(shape)} | {main_ms:.4f} | {loop_ms:.4f} | {out_ms:.4f} | {torch_ms:.4f} |")
    return "\n".join(lines)


def matmul_table(args, bandwidth: float) -> str:
    """The matmul-bearing workloads, fp32 with TF32 off: fusec as the cost model picks
    (cuBLAS through CuPy with the epilogue in the next kernel, or generated), fusec
    with every matmul generated, --no-fuse, and the torch baselines; the floor is the
    larger of FLOPs over the measured matmul rate and bytes over the copy bandwidth."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rate = matmul_rate()
    lines = [
        f"fp32 matmul (cuBLAS, TF32 off, 8192³): {rate / 1e12:.1f} TFLOP/s",
        "",
        "| workload | floor | torch eager | torch.compile | other torch | fusec fused | fusec generated "
        "| fusec --no-fuse | fused / floor | fused / compile |",
        "|" + " --- |" * 10,
    ]
    for name, source, reference, shapes, flops, others in matmul_workloads(args.quick):
        if args.only and not any(part in name for part in args.only.split(",")):
            continue
        inputs = [torch.randn(*shape, device="cuda") * (shape[0] ** -0.5 if len(shape) == 2 else 1.0) for shape in shapes]
        expected = reference(*inputs)
        nbytes = sum(t.numel() * 4 for t in inputs) + expected.numel() * 4
        floor = max(flops / rate, nbytes / bandwidth) * 1e3
        eager, compiled_ms = torch_ms(reference, inputs, not args.no_compile)
        other = "; ".join(f"{label} {bench_ms(lambda f=f: f(*inputs)):.3f}" for label, f in others.items()) or "-"
        variants = [("fused", {}), ("generated", {"matmul": "generated"}), ("unfused", {"fuse": False})]
        row = {"generated": float("nan")}
        for label, options in [v for v in variants if not (args.no_generated and v[0] == "generated")]:
            program = fusec.compile(source, target="cuda", **options)
            out = torch.empty_like(expected)
            run = fusec_runner(program, "main", inputs, [out])
            run()
            torch.cuda.synchronize()
            scale = max(1.0, expected.abs().max().item())
            if not torch.allclose(out, expected, rtol=1e-3, atol=1e-3 * scale):
                print(f"  {name} ({label}): MISMATCH, max abs diff {(out - expected).abs().max().item():.3g}")
            row[label] = bench_ms(run)
        cells = [name, f"{floor:.3f}", f"{eager:.3f}", f"{compiled_ms:.3f}", other, f"{row['fused']:.3f}",
                 f"{row['generated']:.3f}", f"{row['unfused']:.3f}", f"{floor / row['fused']:.2f}",
                 f"{row['fused'] / compiled_ms:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def t_resnet_block(x, w1, m1, v1, g1, b1, w2, m2, v2, g2, b2):
    import torch.nn.functional as F

    y = F.relu(F.batch_norm(F.conv2d(x, w1, padding=1), m1, v1, g1, b1, False, 0.0, 1e-5))
    return F.relu(F.batch_norm(F.conv2d(y, w2, padding=1), m2, v2, g2, b2, False, 0.0, 1e-5) + x)


def t_conv_bn_relu_pool(x, w, mean, var, gamma, beta):
    import torch.nn.functional as F

    y = F.relu(F.batch_norm(F.conv2d(x, w, padding=1), mean, var, gamma, beta, False, 0.0, 1e-5))
    return F.max_pool2d(y, 2)


def conv_workloads(quick: bool):
    """(name, sample, torch reference, NHWC/HWIO shapes by parameter, FLOPs)."""
    n = 4 if quick else 32

    def stats(c: int, k: str = "") -> dict[str, tuple[int, ...]]:
        return {f"{p}{k}": (c,) for p in ("mean", "var", "gamma", "beta")}

    block = {"x": (n, 56, 56, 64), "w1": (3, 3, 64, 64), **stats(64, "1"), "w2": (3, 3, 64, 64), **stats(64, "2")}
    chain = {"x": (n, 112, 112, 3), "w": (3, 3, 3, 32), **stats(32)}
    return [
        (f"ResNet basic block N{n} 56x56x64", "resnet_block.tdsl", t_resnet_block, block,
         2 * 2.0 * n * 56 * 56 * 64 * 64 * 9),
        (f"conv-bn-relu-maxpool N{n} 112x112 3->32", "conv_bn_relu_pool.tdsl", t_conv_bn_relu_pool, chain,
         2.0 * n * 112 * 112 * 32 * 3 * 9),
    ]


def conv_inputs(shapes: dict[str, tuple[int, ...]]):
    """fusec's arrays (NHWC images, HWIO weights) and the same for PyTorch: the image as
    an NCHW view of its NHWC memory (channels_last), the weights made OIHW channels_last
    once, as a model holds them."""
    ours, theirs = [], []
    for name, shape in shapes.items():
        if name.startswith("var"):
            t = torch.rand(*shape, device="cuda") + 0.5
        elif len(shape) == 4 and name.startswith("w"):
            t = torch.randn(*shape, device="cuda") / (shape[0] * shape[1] * shape[2]) ** 0.5
        else:
            t = torch.randn(*shape, device="cuda")
        ours.append(t)
        if name == "x":
            theirs.append(t.permute(0, 3, 1, 2))
        elif len(shape) == 4:
            theirs.append(t.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last))
        else:
            theirs.append(t)
    return ours, theirs


def conv_table(args, bandwidth: float) -> str:
    """The convolution samples in fp32 (TF32 off), NHWC: fusec as the cost model picks,
    with the library (im2col kernel + cuBLAS), --no-fuse; torch eager and torch.compile
    on channels_last tensors (cuDNN); the floor is FLOPs over the measured fp32 matmul
    rate or bytes over the copy bandwidth, the larger."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rate = matmul_rate()
    lines = [
        "| workload | floor | torch eager | torch.compile | fusec fused | fusec library | fusec --no-fuse "
        "| kernels | fused / floor | fused / compile |",
        "|" + " --- |" * 10,
    ]
    for name, sample, reference, shapes, flops in conv_workloads(args.quick):
        if args.only and not any(part in name for part in args.only.split(",")):
            continue
        ours, theirs = conv_inputs(shapes)
        expected = reference(*theirs).permute(0, 2, 3, 1)
        nbytes = sum(t.numel() * 4 for t in ours) + expected.numel() * 4
        floor = max(flops / rate, nbytes / bandwidth) * 1e3
        eager, compiled_ms = torch_ms(reference, theirs, not args.no_compile)
        row, kernels = {}, 0
        for label, options in (("fused", {}), ("library", {"matmul": "library"}), ("unfused", {"fuse": False})):
            program = fusec.compile(SAMPLES / sample, target="cuda", **options)
            out = torch.empty(expected.shape, device="cuda")
            run = fusec_runner(program, "main", ours, [out])
            run()
            torch.cuda.synchronize()
            if not torch.allclose(out, expected, rtol=1e-3, atol=1e-3 * max(1.0, expected.abs().max().item())):
                print(f"  {name} ({label}): MISMATCH, max abs diff {(out - expected).abs().max().item():.3g}")
            row[label] = bench_ms(run)
            kernels = kernels or program.compilation("main").text("fused").count("graph.fusion_group")
        cells = [name, f"{floor:.3f}", f"{eager:.3f}", f"{compiled_ms:.3f}", f"{row['fused']:.3f}",
                 f"{row['library']:.3f}", f"{row['unfused']:.3f}", str(kernels), f"{floor / row['fused']:.2f}",
                 f"{row['fused'] / compiled_ms:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- half precision

#: fusec's half types and PyTorch's; a row appears for each one fusec's language has
HALF_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
#: where the half table's inputs are made (the workload builders also run on "cpu")
DEVICE = "cuda"

# The programs of the half table are written in f32 and made half by replacing the type.
CAUSAL_ATTENTION = """
fn main(q: f32[B, 16, S, 64], k: f32[B, 16, S, 64], v: f32[B, 16, S, 64]) -> f32[B, 16, S, 64] {
    causal = iota((S, S), 0) >= iota((S, S), 1)
    return softmax(where(causal, q @ transpose(k, (0, 1, 3, 2)) * 0.125, -inf), axis=-1) @ v
}
"""

SOFTMAX = SOFTMAX_F16.replace("f16", "f32")
LAYERNORM = LAYERNORM_F16.replace("f16", "f32")


def t_causal_attention(q, k, v):
    s = q.shape[-2]
    above = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    return torch.softmax((q @ k.transpose(-1, -2) * 0.125).masked_fill(above, float("-inf")), dim=-1) @ v


def t_sdpa_causal(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.125)


def language_has(dtype: str) -> bool:
    """Whether fusec's language has the type ``dtype``."""
    try:
        fusec.compile(f"fn main(x: {dtype}[N]) -> {dtype}[N] {{ return x }}", target="numpy")
    except fusec.FusecError:
        return False
    return True


def _normal(shape, dtype, generator, scale=1.0, loc=0.0):
    return (loc + scale * torch.randn(*shape, generator=generator, device=DEVICE)).to(dtype)


def _weights_and_biases(shapes, dtype, generator):
    """Activations standard normal, matrices of variance 1/fan-in, vectors 0.1."""
    return [_normal(shape, dtype, generator, scale=shape[0] ** -0.5 if len(shape) == 2 else
                    0.1 if len(shape) == 1 else 1.0) for shape in shapes]


def _block_inputs(b, s, dtype, generator):
    tensors = _weights_and_biases(block_shapes(b, s), dtype, generator)
    for i in (1, 7):  # the layernorms' scales near 1
        tensors[i] = tensors[i] + 1.0
    return tensors


def half_workloads(quick: bool):
    """(name, fusec program, torch reference, inputs(dtype, generator), FLOPs or None for a
    memory-bound row, {label: the library alone}, whether to time each kernel)."""
    n = 1024 if quick else 4096
    bb, hh, ss = (2, 16, 512) if quick else (8, 16, 2048)
    tb, ts = (2, 256) if quick else (8, 1024)
    mb, ms = (1, 256) if quick else (4, 1024)
    rows, cols = (2048, 1024) if quick else (16384, 4096)
    from tests.samples import torch_reference

    llama, gpt2 = torch_reference.MODELS["llama_layer"], torch_reference.MODELS["gpt2_block"]

    def model(name, b, s):
        return lambda dtype, g: list(torch_reference.model_inputs(name, b, s, dtype, DEVICE, g).values())

    qkv = [(bb, hh, ss, 64)] * 3
    return [
        (f"relu(a @ w + b) {n}³", MATMUL_RELU, t_matmul_relu,
         lambda dtype, g: [_normal((n, n), dtype, g), _normal((n, n), dtype, g, n**-0.5), _normal((n,), dtype, g, 0.1)],
         2.0 * n**3, {"cuBLAS matmul alone": lambda a, w, b: a @ w}, False),
        (f"attention B{bb} H{hh} S{ss} Dh64", ATTENTION, t_attention,
         lambda dtype, g: [_normal(shape, dtype, g) for shape in qkv],
         4.0 * bb * hh * ss * ss * 64, {"SDPA": t_sdpa}, False),
        (f"causal attention B{bb} H{hh} S{ss} Dh64", CAUSAL_ATTENTION, t_causal_attention,
         lambda dtype, g: [_normal(shape, dtype, g) for shape in qkv],
         2.0 * bb * hh * ss * ss * 64, {"SDPA causal": t_sdpa_causal}, False),
        (f"transformer block B{tb} S{ts} D1024 H16", BLOCK, t_block,
         lambda dtype, g: _block_inputs(tb, ts, dtype, g), block_flops(tb, ts), {}, True),
        (f"Llama layer B{mb} S{ms} D1024 H16 F2816", (SAMPLES / "llama_layer.tdsl").read_text(), llama.torch_fn,
         model("llama_layer", mb, ms), llama.flops(mb, ms), {}, True),
        (f"GPT-2 block B{mb} S{ms} D768 H12", (SAMPLES / "gpt2_block.tdsl").read_text(), gpt2.torch_fn,
         model("gpt2_block", mb, ms), gpt2.flops(mb, ms), {}, True),
        (f"softmax rows [{rows}, {cols}]", SOFTMAX, t_softmax_any,
         lambda dtype, g: [_normal((rows, cols), dtype, g)], None, {}, False),
        (f"layernorm rows [{rows}, {cols}]", LAYERNORM, t_layernorm,
         lambda dtype, g: [_normal((rows, cols), dtype, g), _normal((cols,), dtype, g, 0.1, 1.0),
                           _normal((cols,), dtype, g, 0.1)], None, {}, False),
        (f"gelu(x+b)+r [{rows}, {cols}]", (SAMPLES / "bias_gelu_residual.tdsl").read_text(), t_bias_gelu_residual,
         lambda dtype, g: [_normal((rows, cols), dtype, g), _normal((cols,), dtype, g, 0.1),
                           _normal((rows, cols), dtype, g)], None, {}, False),
    ]


def half_matmul_rate(dtype: torch.dtype) -> float:
    """FLOP/s of cuBLAS's matmul in ``dtype`` (tensor cores, float32 accumulation) at 8192³."""
    a = torch.randn(8192, 8192, device="cuda").to(dtype)
    return 2 * 8192**3 / (bench_ms(lambda: a @ a) * 1e-3)


def _fusec_ms(source: str, inputs, expected, options) -> tuple[float, object]:
    """Median ms of the program compiled with ``options`` on the torch tensors, results
    written into a preallocated tensor (a mismatch with PyTorch's is printed), and the
    program; NaN where the options do not compile here (a strategy without its library)."""
    try:
        program = fusec.compile(source, target="cuda", **options)
        out = torch.empty_like(expected)
        run = fusec_runner(program, "main", inputs, [out])
        run()
    except fusec.FusecError as error:
        print(f"  ({options}: {error})")
        return float("nan"), None
    torch.cuda.synchronize()
    scale = max(1.0, expected.float().abs().max().item())
    difference = (out.float() - expected.float()).abs().max().item()
    if not difference <= 3e-2 * scale:  # half results: a few units of bf16's last place
        print(f"  {options or 'default'}: MISMATCH with torch, max abs diff {difference:.3g} (largest {scale:.3g})")
    return bench_ms(run), program


def kernel_breakdown(name: str, program, arrays, bandwidth: float) -> list[str]:
    """Each kernel of the program alone (profiled launches, microseconds) on ``arrays``
    (as its target takes them: device arrays on the GPU), with its FLOPs and bytes from
    the fusion report at their sizes: TFLOP/s and fraction of the copy floor."""
    from compiler.bench import group_measured_us, measure_kernels
    from compiler.report import device_model
    from passes.fusion.report import fusion_report

    times = measure_kernels(program, "main", arrays).medians()
    params = program.params("main")
    dims = {d: size for p, a in zip(params, arrays) for d, size in zip(p.shape, a.shape) if isinstance(d, str)}
    report = fusion_report(program.compilation("main").module("fused"), device=device_model(program.backend),
                           dims=dims, entry="main")
    lines = [f"{name}: each kernel alone", "",
             "| kernel | kind | strategy | µs | TFLOP/s | of copy floor |", "|" + " --- |" * 6]
    for group in report["groups"]:
        us = group_measured_us(times, group["kernel"])
        if us is None:
            continue
        lines.append(f"| {group['kernel']} | {group['kind']} | {group.get('strategy', '-')} | {us:.1f} | "
                     f"{group['flops'] / (us * 1e6):.1f} | {group['bytes'] / bandwidth / (us * 1e-6):.2f} |")
    return lines


def half_table(args, bandwidth: float) -> None:
    """Prints the half-precision table, row by row as measured, then each kernel of the
    models' programs: each workload in each half dtype fusec has, on the same card in
    this one process. The floor is FLOPs over cuBLAS's measured rate in that dtype
    or bytes over the copy bandwidth, the larger; a memory-bound row's is the bytes alone."""
    dtypes = [d for d in args.dtypes.split(",") if d in HALF_DTYPES and language_has(d)]
    skipped = [d for d in args.dtypes.split(",") if d not in dtypes]
    rates = {d: half_matmul_rate(HALF_DTYPES[d]) for d in dtypes}
    lines = [f"{d} matmul (cuBLAS, 8192³): {rates[d] / 1e12:.0f} TFLOP/s" for d in dtypes]
    if skipped:
        lines.append(f"not fusec types here: {', '.join(skipped)}")
    header = ("| workload | dtype | floor | torch eager | torch.compile | library alone | fusec | fusec generated "
              "| fusec library | fusec TFLOP/s | fusec / floor | compile / fusec |")
    print("\n".join([*lines, "", header, "|" + " --- |" * 12]), flush=True)
    breakdowns: list[str] = []
    generator = torch.Generator(device=DEVICE)
    for name, program, reference, make_inputs, flops, library, per_kernel in half_workloads(args.quick):
        if args.only and not any(part.lower() in name.lower() for part in args.only.split(",")):
            continue
        for half in dtypes:
            dtype = HALF_DTYPES[half]
            generator.manual_seed(0)
            inputs = make_inputs(dtype, generator)
            expected = reference(*inputs)
            nbytes = sum(t.numel() * t.element_size() for t in inputs) + expected.numel() * expected.element_size()
            floor = max(nbytes / bandwidth, flops / rates[half] if flops else 0.0) * 1e3
            eager, compiled_ms = torch_ms(reference, inputs, not args.no_compile)
            alone = "; ".join(f"{label} {bench_ms(lambda f=f, a=inputs: f(*a)):.3f}" for label, f in library.items())
            source = program.replace("f32", half)
            fused, fused_program = _fusec_ms(source, inputs, expected, {})
            forced = {"generated": float("nan"), "library": float("nan")}
            if flops and not args.no_generated:
                for strategy in forced:
                    forced[strategy] = _fusec_ms(source, inputs, expected, {"matmul": strategy})[0]
            rate = f"{flops / (fused * 1e-3) / 1e12:.0f}" if flops else "-"
            cells = [name, half, f"{floor:.3f}", f"{eager:.3f}", f"{compiled_ms:.3f}", alone or "-", f"{fused:.3f}",
                     f"{forced['generated']:.3f}", f"{forced['library']:.3f}", rate, f"{floor / fused:.2f}",
                     f"{compiled_ms / fused:.2f}"]
            print("| " + " | ".join(cells) + " |", flush=True)
            if per_kernel and fused_program is not None:
                from numba import cuda

                arrays = [cuda.as_cuda_array(t) for t in inputs]
                breakdowns += ["", *kernel_breakdown(f"{name} {half}", fused_program, arrays, bandwidth)]
    print("\n".join(breakdowns))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--only", help="comma-separated workload names (substrings)")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--no-generated", action="store_true", help="skip fusec with every matmul generated")
    parser.add_argument("--half", action="store_true", help="the half-precision table alone")
    parser.add_argument("--dtypes", default=",".join(HALF_DTYPES),
                        help="the half table's dtypes, comma-separated (default: %(default)s; "
                        "those fusec's language lacks are left out)")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    bandwidth = copy_bandwidth()
    print(f"device: {torch.cuda.get_device_name()}; copy bandwidth {bandwidth / 1e12:.2f} TB/s (read + write)")
    if args.half:
        half_table(args, bandwidth)
        return 0
    header = ["workload", "floor", "torch eager", "torch.compile", "fusec fused", "fusec --no-fuse",
              "fused / floor", "compile / fused"]
    chosen = [
        w for w in workloads(args.quick) if not args.only or any(part in w[0] for part in args.only.split(","))
    ]
    if chosen:
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
    for name, program_source, reference, shapes, dtype in chosen:
        inputs = [torch.randn(*s, device="cuda", dtype=dtype) for s in shapes]
        expected = reference(*inputs)
        nbytes = sum(t.numel() * t.element_size() for t in inputs) + expected.numel() * expected.element_size()
        floor = nbytes / bandwidth * 1e3
        eager, compiled_ms = torch_ms(reference, inputs, not args.no_compile)
        row = {}
        for label, fuse in (("fused", True), ("unfused", False)):
            program = fusec.compile(program_source, target="cuda", fuse=fuse)
            out = torch.empty_like(expected)
            run = fusec_runner(program, "main", inputs, [out])
            run()
            torch.cuda.synchronize()
            tol = 2e-2 if dtype == torch.float16 else 1e-3
            if not torch.allclose(out.float(), expected.float(), rtol=tol, atol=tol * max(1.0, expected.abs().max().item())):
                print(f"  {name} ({label}): MISMATCH, max abs diff {(out.float() - expected.float()).abs().max().item():.3g}")
            row[label] = bench_ms(run)
        cells = [name, f"{floor:.3f}", f"{eager:.3f}", f"{compiled_ms:.3f}", f"{row['fused']:.3f}",
                 f"{row['unfused']:.3f}", f"{floor / row['fused']:.2f}", f"{compiled_ms / row['fused']:.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    print()
    print(matmul_table(args, bandwidth))
    if not args.only or "attention" in args.only:
        print()
        print(half_attention_table(args))
    print()
    print(conv_table(args, bandwidth))
    if args.only and "host" not in args.only:
        return 0
    print()
    print(call_table())
    print()
    print("| host cost per call (tiny input) | µs |")
    print("| --- | --- |")
    for label, us in host_costs():
        print(f"| {label} | {us:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
