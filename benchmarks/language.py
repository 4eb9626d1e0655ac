"""The samples of issue 12 (RoPE attention, causal attention, embedding -> layernorm),
side by side with the same math written by hand.

    python benchmarks/language.py [--cpu] [--gpu] [--quick]

CPU table: NumPy written by hand (BLAS matmuls, fancy indexing) against fusec's fused CPU
kernels and fusec ``--no-fuse``, medians after a warm-up. GPU table (needs CUDA, PyTorch
and Triton): torch eager, torch.compile, fusec fused and ``--no-fuse``, timed with
``triton.testing.do_bench`` (device events, median) on the same device tensors, with the
floor: the larger of the bytes the workload must move (inputs read once, the output
written once) over the measured copy bandwidth and its FLOPs over cuBLAS's fp32 rate
(both measured as ``benchmarks/gpu.py`` measures them).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# fusec before NumPy: it sets how long idle BLAS workers spin, which OpenBLAS reads as NumPy loads (docs/reference.md, Environment)
import fusec  # noqa: E402  isort: skip

import numpy as np  # noqa: E402
from tests.samples.reference import rope_tables  # noqa: E402

SAMPLES = ROOT / "samples"
HEADS, DH, D = 4, 64, 256


# ---------------------------------------------------------------- the math, by hand (NumPy)


def np_softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_heads(t):
    b, s, _ = t.shape
    return t.reshape(b, s, HEADS, DH).transpose(0, 2, 1, 3)


def np_merge(o):
    b, _, s, _ = o.shape
    return o.transpose(0, 2, 1, 3).reshape(b, s, D)


def np_rope(t, cos, sin):
    half = DH // 2
    return t * cos + np.concatenate([-t[..., half:], t[..., :half]], axis=-1) * sin


def np_rope_attention(x, wq, wk, wv, wo, cos, sin):
    q, k, v = np_rope(np_heads(x @ wq), cos, sin), np_rope(np_heads(x @ wk), cos, sin), np_heads(x @ wv)
    return np_merge(np_softmax(q @ k.transpose(0, 1, 3, 2) * 0.125) @ v) @ wo


def np_causal_attention(x, wq, wk, wv, wo):
    q, k, v = np_heads(x @ wq), np_heads(x @ wk), np_heads(x @ wv)
    s = q.shape[2]
    scores = np.where(np.tri(s, dtype=bool), q @ k.transpose(0, 1, 3, 2) * 0.125, -np.inf)
    return np_merge(np_softmax(scores) @ v) @ wo


def np_embedding_layernorm(tokens, positions, ids, position_ids, gamma, beta):
    x = tokens[ids] + positions[position_ids]
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    return xc / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + 1e-5) * gamma + beta


# ---------------------------------------------------------------- inputs


def attention_inputs(rng, b, s, rope):
    w = [(rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float32) for _ in range(4)]
    arrays = [rng.standard_normal((b, s, D)).astype(np.float32), *w]
    if rope:
        arrays += [t.astype(np.float32) for t in rope_tables(s)]
    return arrays


def embedding_inputs(rng, b, s, vocab=32000, positions=4096):
    return [
        rng.standard_normal((vocab, D)).astype(np.float32),
        (0.1 * rng.standard_normal((positions, D))).astype(np.float32),
        rng.integers(0, vocab, (b, s)).astype(np.int64),
        np.broadcast_to(np.arange(s), (b, s)).astype(np.int64).copy(),
        (1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
        (0.1 * rng.standard_normal(D)).astype(np.float32),
    ]


def workloads(b, s):
    """(name, NumPy by hand, inputs(rng), FLOPs)."""
    attention_flops = 2.0 * b * s * D * D * 4 + 4.0 * b * HEADS * s * s * DH
    return [
        ("rope_attention", np_rope_attention, lambda rng: attention_inputs(rng, b, s, True), attention_flops),
        ("causal_attention", np_causal_attention, lambda rng: attention_inputs(rng, b, s, False), attention_flops),
        ("embedding_layernorm", np_embedding_layernorm, lambda rng: embedding_inputs(rng, b, s), 8.0 * b * s * D),
    ]


def needed_bytes(name, arrays, out_elements):
    """Inputs read once and the output written once; of the embedding tables only the
    rows the ids name."""
    if name == "embedding_layernorm":
        ids, position_ids = arrays[2], arrays[3]
        rows = len(np.unique(ids)) + len(np.unique(position_ids))
        return rows * D * 4 + ids.nbytes + position_ids.nbytes + 2 * D * 4 + out_elements * 4
    return sum(a.nbytes for a in arrays) + out_elements * 4


# ---------------------------------------------------------------- CPU


def median_ms(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def chosen(b, s, only):
    return [w for w in workloads(b, s) if not only or w[0] in only.split(",")]


def cpu_table(b, s, runs, only=None) -> str:
    rng = np.random.default_rng(0)
    lines = [
        f"CPU, B={b} S={s} D={D}: medians of {runs} runs, ms",
        "",
        "| workload | NumPy by hand | fusec fused | fusec --no-fuse | kernels | fused / NumPy |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, by_hand, make, _ in chosen(b, s, only):
        arrays = make(rng)
        want = by_hand(*arrays)
        fused = fusec.compile(SAMPLES / f"{name}.tdsl", target="cpu")
        unfused = fusec.compile(SAMPLES / f"{name}.tdsl", target="cpu", fuse=False)
        got = fused.main(*arrays)
        if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
            print(f"  {name}: MISMATCH, max abs diff {np.abs(got - want).max():.3g}")
        count = fused.ir("fused").count("graph.fusion_group")
        t_np = median_ms(lambda: by_hand(*arrays), runs)
        t_fused = median_ms(lambda: fused.main(*arrays), runs)
        t_unfused = median_ms(lambda: unfused.main(*arrays), runs)
        lines.append(
            f"| {name} | {t_np:.2f} | {t_fused:.2f} | {t_unfused:.2f} | {count} | {t_fused / t_np:.2f} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- GPU


def gpu_table(b, s, only=None) -> None:
    import torch
    from gpu import bench_ms, copy_bandwidth, fusec_runner, matmul_rate  # the GPU benchmark's measures

    torch.backends.cuda.matmul.allow_tf32 = False
    bandwidth, rate = copy_bandwidth(), matmul_rate()

    def t_heads(t):
        return t.reshape(t.shape[0], t.shape[1], HEADS, DH).transpose(1, 2)

    def t_merge(o):
        return o.transpose(1, 2).reshape(o.shape[0], o.shape[2], D)

    def t_rope(t, cos, sin):
        return t * cos + torch.cat([-t[..., DH // 2 :], t[..., : DH // 2]], dim=-1) * sin

    def t_rope_attention(x, wq, wk, wv, wo, cos, sin):
        q, k, v = t_rope(t_heads(x @ wq), cos, sin), t_rope(t_heads(x @ wk), cos, sin), t_heads(x @ wv)
        return t_merge(torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1) @ v) @ wo

    def t_causal_attention(x, wq, wk, wv, wo):
        q, k, v = t_heads(x @ wq), t_heads(x @ wk), t_heads(x @ wv)
        n = q.shape[2]
        rows = torch.arange(n, device="cuda")
        scores = torch.where(rows[:, None] >= rows[None, :], q @ k.transpose(-1, -2) * 0.125, -torch.inf)
        return t_merge(torch.softmax(scores, dim=-1) @ v) @ wo

    def t_embedding_layernorm(tokens, positions, ids, position_ids, gamma, beta):
        x = tokens[ids] + positions[position_ids]
        return torch.nn.functional.layer_norm(x, (D,), gamma, beta, eps=1e-5)

    torch_fns = {"rope_attention": t_rope_attention, "causal_attention": t_causal_attention,
                 "embedding_layernorm": t_embedding_layernorm}  # fmt: skip
    lines = [
        f"GPU {torch.cuda.get_device_name()}, B={b} S={s} D={D}, fp32 (TF32 off): copy bandwidth "
        f"{bandwidth / 1e12:.2f} TB/s, fp32 matmul {rate / 1e12:.1f} TFLOP/s; medians, ms",
        "",
        "| workload | floor | torch eager | torch.compile | fusec fused | fusec --no-fuse | kernels | fused / floor "
        "| fused / compile |",
        "|" + " --- |" * 9,
    ]
    print("\n".join(lines), flush=True)  # and each row as soon as it is measured: torch.compile starts slowly
    rng = np.random.default_rng(0)
    for name, _, make, flops in chosen(b, s, only):
        arrays = make(rng)
        inputs = [torch.from_numpy(a).cuda() for a in arrays]
        reference = torch_fns[name]
        expected = reference(*inputs)
        floor = max(needed_bytes(name, arrays, expected.numel()) / bandwidth, flops / rate) * 1e3
        eager = bench_ms(lambda: reference(*inputs))
        compiled = torch.compile(reference)
        compiled(*inputs)
        compiled_ms = bench_ms(lambda: compiled(*inputs))
        row = {}
        for label, options in (("fused", {}), ("unfused", {"fuse": False})):
            program = fusec.compile(SAMPLES / f"{name}.tdsl", target="cuda", **options)
            out = torch.empty_like(expected)
            run = fusec_runner(program, "main", inputs, [out])
            run()
            torch.cuda.synchronize()
            scale = max(1.0, expected.abs().max().item())
            if not torch.allclose(out, expected, rtol=1e-3, atol=1e-3 * scale):
                print(f"  {name} ({label}): MISMATCH, max abs diff {(out - expected).abs().max().item():.3g}")
            row[label] = bench_ms(run)
            if label == "fused":
                row["kernels"] = program.ir("fused").count("graph.fusion_group")
        lines.append(
            f"| {name} | {floor:.3f} | {eager:.3f} | {compiled_ms:.3f} | {row['fused']:.3f} | {row['unfused']:.3f} "
            f"| {row['kernels']} | {floor / row['fused']:.2f} | {row['fused'] / compiled_ms:.2f} |"
        )
        print(lines[-1], flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="the CPU table")
    parser.add_argument("--gpu", action="store_true", help="the GPU table")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--only", help="comma-separated workload names")
    args = parser.parse_args(argv)
    if not (args.cpu or args.gpu):
        args.cpu = True
    if args.cpu:
        print(cpu_table(*((2, 64) if args.quick else (4, 512)), args.runs, args.only))
        print()
    if args.gpu:
        gpu_table(*((2, 128) if args.quick else (8, 2048)), args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
