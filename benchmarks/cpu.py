"""CPU benchmark: four memory-bound workloads on [4096, 4096] f32, the same on tiny
inputs, call latency against size, the matmul-bearing samples (MLP, attention,
transformer block), the generated GEMM against NumPy's BLAS, and the convolution samples (ResNet basic block, conv-bn-relu-maxpool),
side by side, and the models (Llama layer, GPT-2 block at S=512, the ResNet block) at
batch 1 and 8 against PyTorch eager and torch.compile.

    python benchmarks/cpu.py [--size 4096] [--runs 15] [--tables large,small,latency,matmul,gemm,conv,models,warm]

For each workload it times, in this one process on the same input: NumPy written by
hand, fusec's fused CPU kernels, fusec `--no-fuse` (one kernel per op), and
torch.compile's C++ kernels when torch is installed; then the ratios. The matmul
table times the samples against NumPy written by hand (BLAS matmuls). A last table
times the transformer block sample's warm start (kernels from the disk cache) in a
fresh process. Medians after a warm-up; timings on a shared 2-core VM are noisy, so
read the ratios.

The small table times the workloads on [4, 8] to [64, 64], where a call is
microseconds and fusec's own work per call (binding arguments, allocating results)
shows: its "overhead" column is the fused call less the time its kernels took inside
it (the executor's profile). The latency table times softmax from 32 elements to 16M,
with the fused kernel's two variants alone (``runtime/cpu/threads.py``): serial,
parallel back to back, and parallel after a millisecond idle, when the pool's threads
sleep; where the serial variant stops winning is the threshold between them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# fusec first: it sets how long idle BLAS workers spin, which OpenBLAS reads when NumPy
# loads (docs/reference.md, Environment); the NumPy baseline runs with it too. (NumPy
# imported first, as this file did until the tables of docs/pipeline.md's "The models",
# left OpenBLAS's 0.1 s spin: its threads took the cores from fusec's kernels after each
# library call, 1024^3 generated 19.9 ms against 11.5.)
import fusec  # noqa: E402  isort: skip

import numpy as np  # noqa: E402


def np_sincos(x):
    return np.sin(x) ** 2 + np.cos(x) ** 2


def np_gelu(x):
    # x*x*x, not x**3: NumPy's float32 power is a slow pow call (about 1 s at this size),
    # so the baseline is the NumPy a careful user writes, not the sample's spelling
    return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * (x * x * x))))


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layernorm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc**2).mean(axis=-1, keepdims=True)
    return xc / np.sqrt(var + np.float32(1e-5)) * gamma + beta


WORKLOADS = [
    ("sin²+cos²", "sincos.tdsl", np_sincos, 1),
    ("gelu tanh chain", "gelu_chain.tdsl", np_gelu, 1),
    ("softmax rows", "softmax.tdsl", np_softmax, 1),
    ("layernorm rows", "layernorm.tdsl", np_layernorm, 3),
]


def median_ms(fn, runs: int, idle_s: float = 0.0) -> float:
    """Median milliseconds of ``fn`` after a warm-up call, each run after ``idle_s``
    seconds asleep."""
    fn()
    times = []
    for _ in range(runs):
        if idle_s:
            time.sleep(idle_s)
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def runs_for(elements: int) -> int:
    """Enough runs for a stable median, fewer as a call grows (about 0.3 s each cell)."""
    return int(min(2000, max(5, 3e7 / max(elements, 1) ** 1.1)))


def torch_compiled(fn):
    try:
        import torch
    except ImportError:
        return None
    torch_fns = {
        np_sincos: lambda x: torch.sin(x) ** 2 + torch.cos(x) ** 2,
        np_gelu: lambda x: 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x**3))),
        np_softmax: lambda x: (lambda e: e / e.sum(-1, keepdim=True))(torch.exp(x - x.amax(-1, keepdim=True))),
        np_layernorm: lambda x, g, b: (lambda xc: xc / torch.sqrt((xc**2).mean(-1, keepdim=True) + 1e-5) * g + b)(
            x - x.mean(-1, keepdim=True)
        ),
    }
    try:
        compiled = torch.compile(torch_fns[fn])
    except Exception:
        return None
    return lambda *arrays: compiled(*(torch.from_numpy(a) for a in arrays))


def inputs(n_inputs: int, size: int, rng) -> list[np.ndarray]:
    x = rng.standard_normal((size, size)).astype(np.float32)
    if n_inputs == 1:
        return [x]
    return [x, rng.standard_normal(size).astype(np.float32), rng.standard_normal(size).astype(np.float32)]


def workload_table(size: int, runs: int) -> str:
    rng = np.random.default_rng(0)
    rows = []
    for label, sample, np_fn, n_inputs in WORKLOADS:
        arrays = inputs(n_inputs, size, rng)
        fused = fusec.compile(ROOT / "samples" / sample, target="cpu")
        unfused = fused.unfused()
        expected = np_fn(*arrays)
        np.testing.assert_allclose(fused.main(*arrays), expected, rtol=1e-3, atol=1e-4)
        t_numpy = median_ms(lambda: np_fn(*arrays), runs)
        t_fused = median_ms(lambda: fused.main(*arrays), runs)
        t_unfused = median_ms(lambda: unfused.main(*arrays), runs)
        compiled = torch_compiled(np_fn)
        t_torch = median_ms(lambda: compiled(*arrays), runs) if compiled else None
        rows.append((label, t_numpy, t_fused, t_unfused, t_torch))

    lines = [
        f"[{size}, {size}] f32, median ms of {runs} runs, {len(os.sched_getaffinity(0))} cores",
        "",
        "| workload | NumPy | fusec fused | fusec --no-fuse | torch.compile | NumPy / fused | torch.compile / fused |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, t_numpy, t_fused, t_unfused, t_torch in rows:
        torch_cell = f"{t_torch:.1f}" if t_torch else "n/a"
        vs_torch = f"{t_torch / t_fused:.2f}x" if t_torch else "n/a"
        lines.append(
            f"| {label} | {t_numpy:.1f} | {t_fused:.1f} | {t_unfused:.1f} | {torch_cell} | "
            f"{t_numpy / t_fused:.2f}x | {vs_torch} |"
        )
    return "\n".join(lines)


SMALL_SHAPES = [(4, 8), (16, 16), (64, 64)]


def kernels_us(program, arrays, runs: int) -> float:
    """Median microseconds a call's kernels take inside it (the executor's profile)."""
    executable = program.executable("main")
    totals = []
    for _ in range(runs):
        profile: dict[str, list[float]] = {}
        executable.run("main", arrays, profile=profile)
        totals.append(sum(sum(times) for times in profile.values()))
    return statistics.median(totals) * 1e6


def small_table() -> str:
    """The workloads on tiny inputs: fused against the faster of NumPy and --no-fuse."""
    rng = np.random.default_rng(0)
    lines = [
        f"tiny inputs, f32, median us, {len(os.sched_getaffinity(0))} cores",
        "",
        "| workload | shape | NumPy | fusec fused | fusec --no-fuse | fused / best of the two | fusec overhead |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, sample, np_fn, n_inputs in WORKLOADS:
        fused = fusec.compile(ROOT / "samples" / sample, target="cpu")
        unfused = fused.unfused()
        for shape in SMALL_SHAPES:
            x = rng.standard_normal(shape).astype(np.float32)
            arrays = [x] + [rng.standard_normal(shape[1]).astype(np.float32) for _ in range(n_inputs - 1)]
            np.testing.assert_allclose(fused.main(*arrays), np_fn(*arrays), rtol=1e-3, atol=1e-4)
            runs = runs_for(x.size)
            t_numpy = median_ms(lambda: np_fn(*arrays), runs) * 1e3
            t_fused = median_ms(lambda: fused.main(*arrays), runs) * 1e3
            t_unfused = median_ms(lambda: unfused.main(*arrays), runs) * 1e3
            overhead = t_fused - kernels_us(fused, arrays, runs)
            lines.append(
                f"| {label} | {list(shape)} | {t_numpy:.1f} | {t_fused:.1f} | {t_unfused:.1f} | "
                f"{t_fused / min(t_numpy, t_unfused):.2f}x | {overhead:.1f} |"
            )
    return "\n".join(lines)


LATENCY_SHAPES = [(4, 8), (8, 16), (16, 32), (32, 64), (64, 128), (128, 256), (256, 512), (512, 1024),
                  (1024, 2048), (2048, 4096), (4096, 4096)]  # fmt: skip


def latency_table() -> str:
    """Softmax rows from 32 elements to 16M: NumPy, fused, unfused, and the fused
    kernel's variants alone."""
    from runtime.cpu.loop_work import work_counter

    rng = np.random.default_rng(0)
    fused = fusec.compile(ROOT / "samples" / "softmax.tdsl", target="cpu")
    unfused = fused.unfused()
    executable = fused.executable("main")
    (name,) = executable.kernels
    serial, parallel = executable.dispatcher(name, parallel=False), executable.dispatcher(name, parallel=True)
    count = work_counter(executable.kernels[name])
    lines = [
        f"softmax rows, f32, call latency in us (median), {len(os.sched_getaffinity(0))} cores",
        "",
        "| elements | NumPy | fusec fused | fusec --no-fuse | kernel serial | kernel parallel | "
        "parallel after 1 ms idle | variant run | work (ops) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for shape in LATENCY_SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        y = np.empty_like(x)
        runs = runs_for(x.size)
        cells = [
            median_ms(lambda: np_softmax(x), runs),
            median_ms(lambda: fused.main(x), runs),
            median_ms(lambda: unfused.main(x), runs),
            median_ms(lambda: serial(x, y), runs),
            median_ms(lambda: parallel(x, y), runs),
            median_ms(lambda: parallel(x, y), min(runs, 200), idle_s=1e-3),
        ]
        ran = executable.launched_kernels("main", [x])[name]
        variant = "parallel" if ran is parallel else "serial"
        lines.append(
            f"| {x.size} | " + " | ".join(f"{t * 1e3:.1f}" for t in cells) + f" | {variant} | {count([shape, shape])} |"
        )
    return "\n".join(lines)


# The matmul-bearing samples, written in NumPy as a careful user would (its matmul is
# BLAS); sizes where NumPy takes 0.1-1 s on two cores.
def np_mlp(x, w1, b1, w2, b2):
    return x + np_gelu(x @ w1 + b1) @ w2 + b2


def np_heads(t, b, s):
    return t.reshape(b, s, 4, 64).transpose(0, 2, 1, 3)


def np_attention(x, wq, wk, wv, wo):
    b, s, d = x.shape
    q, k, v = (np_heads(x @ w, b, s) for w in (wq, wk, wv))
    p = np_softmax(q @ k.transpose(0, 1, 3, 2) * np.float32(0.125))
    return (p @ v).transpose(0, 2, 1, 3).reshape(b, s, d) @ wo


def np_block(x, g1, c1, wq, wk, wv, wo, g2, c2, w1, b1, w2, b2):
    h = x + np_attention(np_layernorm(x, g1, c1), wq, wk, wv, wo)
    return h + np_mlp_inner(np_layernorm(h, g2, c2), w1, b1, w2, b2)


def np_mlp_inner(z, w1, b1, w2, b2):
    return np_gelu(z @ w1 + b1) @ w2 + b2


MATMUL_WORKLOADS = [
    ("MLP T=2048 D=1024 F=4096", "mlp.tdsl", np_mlp, {"T": 2048, "D": 1024, "F": 4096}),
    ("attention B=4 S=1024", "attention.tdsl", np_attention, {"B": 4, "S": 1024}),
    ("transformer block B=8 S=512", "transformer_block.tdsl", np_block, {"B": 8, "S": 512}),
]


def matmul_table(runs: int) -> str:
    from runtime.inputs import draw_inputs

    lines = [
        f"matmul-bearing samples, f32, median ms of {runs} runs, {len(os.sched_getaffinity(0))} cores",
        "",
        "| workload | NumPy | fusec fused | fusec --no-fuse | NumPy / fused | --no-fuse / fused |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for label, sample, np_fn, dims in MATMUL_WORKLOADS:
        fused = fusec.compile(ROOT / "samples" / sample, target="cpu")
        arrays = draw_inputs(fused.params("main"), {}, dims, 0, "main")
        unfused = fused.unfused()
        expected = np_fn(*arrays)
        np.testing.assert_allclose(fused.main(*arrays), expected, rtol=1e-3, atol=1e-4 * np.abs(expected).max())
        t_numpy = median_ms(lambda: np_fn(*arrays), runs)
        t_fused = median_ms(lambda: fused.main(*arrays), runs)
        t_unfused = median_ms(lambda: unfused.main(*arrays), runs)
        lines.append(
            f"| {label} | {t_numpy:.1f} | {t_fused:.1f} | {t_unfused:.1f} | "
            f"{t_numpy / t_fused:.2f}x | {t_unfused / t_fused:.2f}x |"
        )
    return "\n".join(lines)


# The generated GEMM (the CPU's gemm schedule: a cache-blocked product with a register
# tile) against NumPy's BLAS on the product alone and fusec's library strategy.
GEMM_SOURCE = """
fn main(x: f32[N, K], w: f32[K, M], b: f32[M]) -> f32[N, M] {
    return relu(x @ w + b)
}
"""
GEMM_SIZES = [(1024, 1024, 1024), (2048, 1024, 1024), (512, 1024, 2816), (25088, 576, 64)]


def gemm_table(runs: int) -> str:
    lines = [
        f"relu(x @ w + b), f32, median ms of {runs} runs, {len(os.sched_getaffinity(0))} cores",
        "",
        "| N x K x M | NumPy x @ w | fusec generated | fusec library | generated GFLOP/s | BLAS / generated |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    programs = {m: fusec.compile(GEMM_SOURCE, target="cpu", matmul=m) for m in ("generated", "library")}
    for n, k, m in GEMM_SIZES:
        rng = np.random.default_rng(0)
        x, w, b = (rng.standard_normal(shape, dtype=np.float32) for shape in ((n, k), (k, m), (m,)))
        expected = np.maximum(x @ w + b, 0)
        for program in programs.values():
            np.testing.assert_allclose(program.main(x, w, b), expected, rtol=1e-3, atol=1e-3)
        t_blas = median_ms(lambda: x @ w, runs)
        t_gen, t_lib = (median_ms(lambda p=p: p.main(x, w, b), runs) for p in programs.values())
        lines.append(
            f"| {n} x {k} x {m} | {t_blas:.2f} | {t_gen:.2f} | {t_lib:.2f} | "
            f"{2 * n * k * m / t_gen / 1e6:.0f} | {t_blas / t_gen:.2f} |"
        )
    return "\n".join(lines)


# The convolution samples at the sizes of benchmarks/gpu.py. PyTorch's CPU convolution
# (oneDNN) is timed in a process of its own: its OpenMP workers spin after each call,
# and beside fusec's and OpenBLAS's threads they would slow whichever runs next.
CONV_WORKLOADS = [
    ("ResNet basic block N32 56x56x64", "resnet_block.tdsl", {"N": 32, "H": 56, "W": 56}, 2 * 2.0 * 32 * 56 * 56 * 64 * 64 * 9),
    ("conv-bn-relu-maxpool N32 112x112 3->32", "conv_bn_relu_pool.tdsl", {"N": 32, "H": 112, "W": 112},
     2.0 * 32 * 112 * 112 * 32 * 3 * 9),
]

TORCH_CONV = """
import sys, json, statistics, time
import numpy as np, torch, torch.nn.functional as F
sys.path.insert(0, sys.argv[1])
import fusec
def bn(x, m, v, g, b):
    return F.batch_norm(x, m, v, g, b, False, 0.0, 1e-5)
def block(x, w1, m1, v1, g1, b1, w2, m2, v2, g2, b2):
    return F.relu(bn(F.conv2d(F.relu(bn(F.conv2d(x, w1, padding=1), m1, v1, g1, b1)), w2, padding=1), m2, v2, g2, b2) + x)
def chain(x, w, m, v, g, b):
    return F.max_pool2d(F.relu(bn(F.conv2d(x, w, padding=1), m, v, g, b)), 2)
program = fusec.compile(sys.argv[2], target="numpy")
arrays = program.draw_inputs("main", dims=json.loads(sys.argv[3]))
tensors = [torch.from_numpy(a).permute(0, 3, 1, 2) if a.ndim == 4 and i == 0 else
           torch.from_numpy(a).permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last) if a.ndim == 4 else
           torch.from_numpy(a) for i, a in enumerate(arrays)]
fn = block if len(arrays) == 11 else chain
if sys.argv[5:] == ["compile"]:  # Inductor's C++ kernels: compiled at the first call, not timed
    fn = torch.compile(fn)
    with torch.no_grad():
        fn(*tensors)
times = []
with torch.no_grad():
    for _ in range(int(sys.argv[4]) + 1):
        start = time.perf_counter(); fn(*tensors); times.append(time.perf_counter() - start)
print(statistics.median(times[1:]) * 1e3)
"""


def blas_rate() -> float:
    """FLOP/s of NumPy's fp32 matmul (its BLAS) at 2048³: the convolutions' floor rate."""
    a = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    return 2 * 2048**3 / (median_ms(lambda: a @ a, 5) * 1e-3)


def conv_table(runs: int) -> str:
    rate = blas_rate()
    lines = [
        f"convolution samples, f32 NHWC, median ms of {runs} runs, {len(os.sched_getaffinity(0))} cores; "
        f"NumPy's BLAS {rate / 1e9:.0f} GFLOP/s at 2048³ (the floor's rate)",
        "",
        "| workload | floor | torch eager | fusec fused | fusec library | fusec generated | fusec --no-fuse "
        "| fused / floor | torch / fused |",
        "|" + " --- |" * 9,
    ]
    for label, sample, dims, flops in CONV_WORKLOADS:
        path = ROOT / "samples" / sample
        row, arrays = {}, None
        for name, options in (("fused", {}), ("library", {"matmul": "library"}), ("generated", {"matmul": "generated"}),
                              ("unfused", {"fuse": False})):
            program = fusec.compile(path, target="cpu", **options)
            arrays = arrays or program.draw_inputs("main", dims=dims)
            row[name] = median_ms(lambda: program.main(*arrays), runs)
        floor = flops / rate * 1e3
        try:
            out = subprocess.run([sys.executable, "-c", TORCH_CONV, str(ROOT), str(path), json.dumps(dims), str(runs)],
                                 capture_output=True, text=True, check=True, cwd=ROOT).stdout
            torch_ms = float(out.split()[-1])
        except (subprocess.CalledProcessError, ValueError, IndexError):
            torch_ms = float("nan")  # no PyTorch here
        lines.append(
            f"| {label} | {floor:.1f} | {torch_ms:.1f} | {row['fused']:.1f} | {row['library']:.1f} | "
            f"{row['generated']:.1f} | {row['unfused']:.1f} | {floor / row['fused']:.2f} | {torch_ms / row['fused']:.2f} |"
        )
    return "\n".join(lines)


# The decoder samples at S=512, B=1 and 8, against the same layers in PyTorch
# (tests/samples/torch_reference.py) run eager and through torch.compile (Inductor's C++),
# and the ResNet block at N=1 and 8 against TORCH_CONV's, each PyTorch run in a process of
# its own for the reason above.
MODEL_WORKLOADS = [
    (label, name, {"B": b, "S": 512})
    for label, name in (("Llama layer D1024 16 heads F2816", "llama_layer"), ("GPT-2 block D768 12 heads", "gpt2_block"))
    for b in (1, 8)
]

TORCH_MODEL = """
import sys, json, statistics, time
import torch
sys.path.insert(0, sys.argv[1])
from tests.samples import torch_reference
name, b, s, runs = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
model = torch_reference.MODELS[name]
args = list(torch_reference.model_inputs(name, b, s, torch.float32, "cpu", torch.Generator().manual_seed(0)).values())
def median_ms(fn):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter(); fn(); times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3
with torch.no_grad():
    eager = median_ms(lambda: model.torch_fn(*args))
    compiled = torch.compile(model.torch_fn)
    inductor = median_ms(lambda: compiled(*args))
print(json.dumps({"eager": eager, "inductor": inductor}))
"""


def models_table(runs: int) -> str:
    """The models as fusec runs them and as PyTorch does, eager and Inductor."""
    try:
        import torch

        from tests.samples import torch_reference
    except ImportError:
        return "models table: needs PyTorch (pip install -e '.[torch]')"
    lines = [
        f"models, f32, median ms of {runs} runs, {len(os.sched_getaffinity(0))} cores",
        "",
        "| workload | B | fusec | torch eager | torch.compile | fusec GFLOP/s | eager / fusec | compile / fusec |",
        "|" + " --- |" * 8,
    ]
    for label, name, dims in MODEL_WORKLOADS:
        b, s = dims["B"], dims["S"]
        model = torch_reference.MODELS[name]
        generator = torch.Generator().manual_seed(0)
        tensors = list(torch_reference.model_inputs(name, b, s, torch.float32, "cpu", generator).values())
        program = fusec.compile(ROOT / "samples" / f"{name}.tdsl", target="cpu")
        arrays = [t.numpy() for t in tensors]
        fused_ms = median_ms(lambda: program.main(*arrays), runs)
        with torch.no_grad():
            expected = model.torch_fn(*tensors).numpy()
        np.testing.assert_allclose(program.main(*arrays), expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())
        out = subprocess.run([sys.executable, "-c", TORCH_MODEL, str(ROOT), name, str(b), str(s), str(runs)],
                             capture_output=True, text=True, check=True, cwd=ROOT).stdout
        times = json.loads(out.splitlines()[-1])
        rate = model.flops(b, s) / (fused_ms * 1e-3) / 1e9
        lines.append(
            f"| {label} | {b} | {fused_ms:.1f} | {times['eager']:.1f} | {times['inductor']:.1f} | {rate:.0f} | "
            f"{times['eager'] / fused_ms:.2f} | {times['inductor'] / fused_ms:.2f} |"
        )
    lines += [resnet_row(n, runs) for n in (1, 8)]
    return "\n".join(lines)


def resnet_row(n: int, runs: int) -> str:
    """The ResNet basic block sample at N=n, 56x56x64, against PyTorch's (TORCH_CONV): the
    inputs drawn as the sample's ``# draw:`` lines say (a batch norm's variance positive)."""
    path, dims = ROOT / "samples" / "resnet_block.tdsl", {"N": n, "H": 56, "W": 56}
    program = fusec.compile(path, target="cpu")
    arrays = program.draw_inputs("main", dims=dims)
    fused_ms = median_ms(lambda: program.main(*arrays), runs)
    torch_ms = [
        float(subprocess.run([sys.executable, "-c", TORCH_CONV, str(ROOT), str(path), json.dumps(dims), str(runs), *mode],
                             capture_output=True, text=True, check=True, cwd=ROOT).stdout.split()[-1])
        for mode in ([], ["compile"])
    ]
    rate = 2 * 2.0 * n * 56 * 56 * 64 * 64 * 9 / (fused_ms * 1e-3) / 1e9
    return (
        f"| ResNet basic block 56x56x64 | {n} | {fused_ms:.1f} | {torch_ms[0]:.1f} | {torch_ms[1]:.1f} | {rate:.0f} | "
        f"{torch_ms[0] / fused_ms:.2f} | {torch_ms[1] / fused_ms:.2f} |"
    )


WARM_START = """
import sys, time
start = time.perf_counter()
import fusec
from runtime.inputs import draw_inputs
program = fusec.compile(sys.argv[1], target="cpu")
arrays = draw_inputs(program.params("main"), {}, {"B": 2, "S": 16}, 0, "main")
imported = time.perf_counter()
program.run("main", arrays)
done = time.perf_counter()
print(f"{imported - start:.3f} {done - imported:.3f}")
"""


def warm_start_table() -> str:
    sample = str(ROOT / "samples" / "transformer_block.tdsl")
    lines = [
        "transformer block sample, a fresh process each run (seconds)",
        "",
        "| run | import + front end | compile + first call |",
        "| --- | --- | --- |",
    ]
    for run in ("cold or warm", "warm", "warm"):
        out = subprocess.run(
            [sys.executable, "-c", WARM_START, sample], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.split()
        lines.append(f"| {run} | {float(out[0]):.2f} | {float(out[1]):.2f} |")
    return "\n".join(lines)


TABLES = ("large", "small", "latency", "matmul", "gemm", "conv", "models", "warm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tables", default=",".join(TABLES), help=f"which tables, of {', '.join(TABLES)}")
    args = parser.parse_args()
    chosen = args.tables.split(",")
    unknown = set(chosen) - set(TABLES)
    if unknown:
        parser.error(f"unknown table(s) {', '.join(sorted(unknown))}: choose from {', '.join(TABLES)}")
    tables = {
        "large": lambda: workload_table(args.size, args.runs),
        "small": small_table,
        "latency": latency_table,
        "matmul": lambda: matmul_table(max(3, args.runs // 3)),
        "gemm": lambda: gemm_table(max(3, args.runs // 3)),
        "conv": lambda: conv_table(max(3, args.runs // 3)),
        "models": lambda: models_table(max(3, args.runs // 3)),
        "warm": warm_start_table,
    }
    for name in (n for n in TABLES if n in chosen):  # each as it is done: a long run shows its progress
        print(tables[name](), end="\n\n", flush=True)


if __name__ == "__main__":
    main()
