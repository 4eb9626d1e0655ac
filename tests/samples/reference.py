"""Independent NumPy references for the programs in ``samples/``.

Each sample has a :class:`SampleCase`: the path of its ``.tdsl`` file, a function that draws
small inputs (keyed by the entry function's parameter names), a hand-written NumPy reference
that computes the same results in float64, and the tolerances to compare float32 results with.

The references do not share code with the compiler: they are written from the math (and, for
attention, checked against a per-head loop in ``test_reference_sanity.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

REPO = Path(__file__).resolve().parents[2]
SAMPLES_DIR = REPO / "samples"

# sqrt(2 / pi), the constant of the tanh approximation of GELU
GELU_C = math.sqrt(2.0 / math.pi)


@dataclass(frozen=True)
class SampleCase:
    """One sample program and how to check it.

    path:        the ``.tdsl`` file.
    make_inputs: ``rng -> {param_name: np.ndarray}``, small shapes, float32.
    reference:   ``(**inputs) -> tuple of arrays``, one per result of ``main`` in return order.
    rtol, atol:  tolerances for ``np.testing.assert_allclose`` against float32 results.
    kernels:     how many kernels (fusion groups) the sample's entry function fuses into
                 on the CPU, planned for its ``# dims:`` sizes.
    gpu_kernels: the same on the GPU, where it differs.
    unshared_gpu_kernels: the same on a GPU without its GEMM library (no CuPy, the CUDA
                 simulator), where it differs: sibling projections keep a kernel each
                 (docs/reference.md, ``horizontal_matmul``).
    out_dtype:   NumPy dtype every result of ``main`` must have.
    """

    path: Path
    make_inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[..., tuple[np.ndarray, ...]]
    rtol: float
    atol: float
    kernels: int | None = None
    gpu_kernels: int | None = None
    unshared_gpu_kernels: int | None = None
    out_dtype: str = "float32"

    def kernels_on_gpu(self, library: bool) -> int | None:
        """The kernels on the GPU, where its GEMM library is installed (``library``) or not."""
        if not library and self.unshared_gpu_kernels is not None:
            return self.unshared_gpu_kernels
        return self.kernels if self.gpu_kernels is None else self.gpu_kernels


# ---------------------------------------------------------------- helpers

def _f64(*arrays):
    return tuple(np.asarray(a, dtype=np.float64) for a in arrays)


def _normal(rng, shape, scale=1.0, loc=0.0):
    return (loc + scale * rng.standard_normal(shape)).astype(np.float32)


def _uniform(rng, shape, lo, hi):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def gelu_tanh(x):
    """GELU, tanh approximation (PyTorch ``approximate='tanh'``)."""
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x * x * x)))


def softmax_last(x):
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def layernorm_last(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)  # biased variance, as PyTorch
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def rmsnorm_last(x, g, eps=1e-6):
    ms = (x * x).mean(axis=-1, keepdims=True)
    return x / np.sqrt(ms + eps) * g


def attend(q, k, v, heads, causal=False, rotate=None):
    """Multi-head scaled dot-product attention of projected queries, keys and values
    [B, S, D], heads split from the last axis and merged back; with ``causal``, position i
    attends to positions <= i; ``rotate`` is applied to each head's queries and keys."""
    b, s, d = q.shape
    dh = d // heads

    def split(t):  # [B, S, D] -> [B, H, S, Dh]
        return t.reshape(b, s, heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(q), split(k), split(v)
    if rotate is not None:
        q, k = rotate(q), rotate(k)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    if causal:
        above = np.triu(np.ones((s, s), dtype=bool), k=1)
        scores = np.where(above, -np.inf, scores)
    p = softmax_last(scores)
    return (p @ v).transpose(0, 2, 1, 3).reshape(b, s, d)


def mha(x, wq, wk, wv, wo, heads=4, causal=False, rotate=None):
    """Multi-head self-attention without biases (``attend`` of x's projections, then the
    output projection)."""
    return attend(x @ wq, x @ wk, x @ wv, heads, causal, rotate) @ wo


def rope_tables(s, dh=64, base=10000.0):
    """The cos and sin of each position's rotation angles, each frequency twice (the
    halves of a head rotate together): [S, Dh]."""
    freqs = base ** (-np.arange(0, dh, 2) / dh)
    angles = np.arange(s)[:, None] * freqs[None, :]
    angles = np.concatenate([angles, angles], axis=-1)
    return np.cos(angles), np.sin(angles)


def rotate_half(t, cos, sin):
    """RoPE in the rotate-half form: the first half of each head paired with the second."""
    half = t.shape[-1] // 2
    first, second = t[..., :half], t[..., half:]
    return t * cos + np.concatenate([-second, first], axis=-1) * sin


# ---------------------------------------------------------------- references

def ref_sincos(x):
    (x,) = _f64(x)
    return (np.sin(x) ** 2 + np.cos(x) ** 2,)


def ref_gelu_chain(x):
    (x,) = _f64(x)
    return (gelu_tanh(x),)


def ref_softmax(x):
    (x,) = _f64(x)
    return (softmax_last(x),)


def ref_layernorm(x, gamma, beta):
    x, gamma, beta = _f64(x, gamma, beta)
    return (layernorm_last(x, gamma, beta, eps=1e-5),)


def ref_bias_gelu_residual(x, b, r):
    x, b, r = _f64(x, b, r)
    return (gelu_tanh(x + b) + r,)


def ref_mlp(x, w1, b1, w2, b2):
    x, w1, b1, w2, b2 = _f64(x, w1, b1, w2, b2)
    return (x + gelu_tanh(x @ w1 + b1) @ w2 + b2,)


def ref_attention(x, wq, wk, wv, wo):
    return (mha(*_f64(x, wq, wk, wv, wo), heads=4),)


def ref_rope_attention(x, wq, wk, wv, wo, cos, sin):
    x, wq, wk, wv, wo, cos, sin = _f64(x, wq, wk, wv, wo, cos, sin)
    return (mha(x, wq, wk, wv, wo, heads=4, rotate=lambda t: rotate_half(t, cos, sin)),)


def ref_causal_attention(x, wq, wk, wv, wo):
    return (mha(*_f64(x, wq, wk, wv, wo), heads=4, causal=True),)


def ref_embedding_layernorm(tokens, positions, ids, position_ids, gamma, beta):
    tokens, positions, gamma, beta = _f64(tokens, positions, gamma, beta)
    x = tokens[ids] + positions[position_ids]  # NumPy's fancy indexing: a negative id counts from the end
    return (layernorm_last(x, gamma, beta, eps=1e-5),)


def ref_transformer_block(x, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2):
    (x, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2) = _f64(
        x, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2)
    h = x + mha(layernorm_last(x, ln1_g, ln1_b), wq, wk, wv, wo, heads=4)
    z = layernorm_last(h, ln2_g, ln2_b)
    return (h + gelu_tanh(z @ w1 + b1) @ w2 + b2,)


def silu(x):
    return x / (1.0 + np.exp(-x))


def ref_llama_layer(x, cos, sin, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down, final_norm):
    """Hugging Face's LlamaDecoderLayer (rms_norm_eps 1e-5, 16 heads, SwiGLU) and the model's
    final norm, from the published definition."""
    (x, cos, sin, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down, final_norm) = _f64(
        x, cos, sin, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down, final_norm)

    def rope(t):
        return rotate_half(t, cos, sin)

    h = x + mha(rmsnorm_last(x, attn_norm, eps=1e-5), wq, wk, wv, wo, heads=16, causal=True, rotate=rope)
    z = rmsnorm_last(h, mlp_norm, eps=1e-5)
    y = h + (silu(z @ w_gate) * (z @ w_up)) @ w_down
    return (rmsnorm_last(y, final_norm, eps=1e-5),)


def ref_gpt2_block(x, positions, ln1_g, ln1_b, w_qkv, b_qkv, w_attn, b_attn, ln2_g, ln2_b, w_fc, b_fc, w_mlp,
                   b_mlp, lnf_g, lnf_b):
    """Hugging Face's GPT2Block (12 heads, LayerNorm eps 1e-5, gelu_new) after the learned
    positions, and the model's ln_f, from the published definition."""
    (x, positions, ln1_g, ln1_b, w_qkv, b_qkv, w_attn, b_attn, ln2_g, ln2_b, w_fc, b_fc, w_mlp, b_mlp, lnf_g,
     lnf_b) = _f64(x, positions, ln1_g, ln1_b, w_qkv, b_qkv, w_attn, b_attn, ln2_g, ln2_b, w_fc, b_fc, w_mlp,
                   b_mlp, lnf_g, lnf_b)
    e = x + positions
    q, k, v = np.split(layernorm_last(e, ln1_g, ln1_b) @ w_qkv + b_qkv, 3, axis=-1)
    h = e + attend(q, k, v, heads=12, causal=True) @ w_attn + b_attn
    y = h + gelu_tanh(layernorm_last(h, ln2_g, ln2_b) @ w_fc + b_fc) @ w_mlp + b_mlp
    return (layernorm_last(y, lnf_g, lnf_b),)


def conv2d_nhwc(x, w, pad):
    """Cross-correlation of NHWC ``x`` with HWIO ``w``, stride 1, ``pad`` zeros on every
    side: the sum over the taps (i, j) of the shifted image times ``w[i, j]``."""
    kh, kw = w.shape[:2]
    xp = np.pad(x, [(0, 0), (pad, pad), (pad, pad), (0, 0)])
    oh, ow = xp.shape[1] - kh + 1, xp.shape[2] - kw + 1
    return sum(xp[:, i : i + oh, j : j + ow, :] @ w[i, j] for i in range(kh) for j in range(kw))


def batchnorm_last(x, mean, var, gamma, beta, eps=1e-5):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def ref_conv_bn_relu_pool(x, w, mean, var, gamma, beta):
    x, w, mean, var, gamma, beta = _f64(x, w, mean, var, gamma, beta)
    y = np.maximum(batchnorm_last(conv2d_nhwc(x, w, 1), mean, var, gamma, beta), 0.0)
    n, h, w_, c = y.shape
    return (y.reshape(n, h // 2, 2, w_ // 2, 2, c).max(axis=(2, 4)),)


def ref_resnet_block(x, w1, mean1, var1, gamma1, beta1, w2, mean2, var2, gamma2, beta2):
    x, w1, mean1, var1, gamma1, beta1, w2, mean2, var2, gamma2, beta2 = _f64(
        x, w1, mean1, var1, gamma1, beta1, w2, mean2, var2, gamma2, beta2)
    y = np.maximum(batchnorm_last(conv2d_nhwc(x, w1, 1), mean1, var1, gamma1, beta1), 0.0)
    z = batchnorm_last(conv2d_nhwc(y, w2, 1), mean2, var2, gamma2, beta2)
    return (np.maximum(z + x, 0.0),)


def ref_reductions(x):
    (x,) = _f64(x)
    return (x.sum(axis=-1), x.max(axis=-1), x.mean(axis=-1))


def ref_rmsnorm(x, g):
    x, g = _f64(x, g)
    return (x + rmsnorm_last(x, g, eps=1e-6),)


# ---------------------------------------------------------------- inputs

def in_sincos(rng):
    return {"x": _uniform(rng, (8, 16), -4.0, 4.0)}


def in_gelu_chain(rng):
    return {"x": _normal(rng, (8, 16), scale=2.0)}


def in_softmax(rng):
    return {"x": _normal(rng, (8, 16), scale=3.0)}


def in_layernorm(rng):
    return {
        "x": _normal(rng, (8, 32), scale=2.0, loc=0.5),
        "gamma": _normal(rng, (32,), scale=0.1, loc=1.0),
        "beta": _normal(rng, (32,), scale=0.1),
    }


def in_bias_gelu_residual(rng):
    return {
        "x": _normal(rng, (8, 16), scale=2.0),
        "b": _normal(rng, (16,), scale=0.5),
        "r": _normal(rng, (8, 16)),
    }


def in_mlp(rng, t=8, d=16, f=64):
    return {
        "x": _normal(rng, (t, d)),
        "w1": _normal(rng, (d, f), scale=1 / math.sqrt(d)),
        "b1": _normal(rng, (f,), scale=0.1),
        "w2": _normal(rng, (f, d), scale=1 / math.sqrt(f)),
        "b2": _normal(rng, (d,), scale=0.1),
    }


def _attn_weights(rng, d=256):
    s = 1 / math.sqrt(d)
    return {name: _normal(rng, (d, d), scale=s) for name in ("wq", "wk", "wv", "wo")}


def in_attention(rng, b=2, s=8):
    return {"x": _normal(rng, (b, s, 256)), **_attn_weights(rng)}


def in_rope_attention(rng, b=2, s=8):
    cos, sin = rope_tables(s)
    return {"x": _normal(rng, (b, s, 256)), **_attn_weights(rng),
            "cos": cos.astype(np.float32), "sin": sin.astype(np.float32)}


def in_embedding_layernorm(rng, b=2, s=8, v=50, p=16):
    return {
        "tokens": _normal(rng, (v, 256)),
        "positions": _normal(rng, (p, 256), scale=0.1),
        "ids": rng.integers(-v, v, (b, s)).astype(np.int64),
        "position_ids": np.broadcast_to(np.arange(s), (b, s)).astype(np.int64).copy(),
        "gamma": _normal(rng, (256,), scale=0.1, loc=1.0),
        "beta": _normal(rng, (256,), scale=0.1),
    }


def in_transformer_block(rng, b=2, s=8, d=256, f=1024):
    w = _attn_weights(rng, d)
    return {
        "x": _normal(rng, (b, s, d)),
        "ln1_g": _normal(rng, (d,), scale=0.1, loc=1.0),
        "ln1_b": _normal(rng, (d,), scale=0.1),
        "wq": w["wq"], "wk": w["wk"], "wv": w["wv"], "wo": w["wo"],
        "ln2_g": _normal(rng, (d,), scale=0.1, loc=1.0),
        "ln2_b": _normal(rng, (d,), scale=0.1),
        "w1": _normal(rng, (d, f), scale=1 / math.sqrt(d)),
        "b1": _normal(rng, (f,), scale=0.1),
        "w2": _normal(rng, (f, d), scale=1 / math.sqrt(f)),
        "b2": _normal(rng, (d,), scale=0.1),
    }


def in_llama_layer(rng, b=2, s=8, d=1024, f=2816):
    cos, sin = rope_tables(s)
    return {
        "x": _normal(rng, (b, s, d)),
        "cos": cos.astype(np.float32), "sin": sin.astype(np.float32),
        "attn_norm": _normal(rng, (d,), scale=0.1, loc=1.0),
        **_attn_weights(rng, d),
        "mlp_norm": _normal(rng, (d,), scale=0.1, loc=1.0),
        "w_gate": _normal(rng, (d, f), scale=1 / math.sqrt(d)),
        "w_up": _normal(rng, (d, f), scale=1 / math.sqrt(d)),
        "w_down": _normal(rng, (f, d), scale=1 / math.sqrt(f)),
        "final_norm": _normal(rng, (d,), scale=0.1, loc=1.0),
    }


def in_gpt2_block(rng, b=2, s=8, d=768, f=3072):
    return {
        "x": _normal(rng, (b, s, d)),
        "positions": _normal(rng, (s, d), scale=0.1),
        "ln1_g": _normal(rng, (d,), scale=0.1, loc=1.0),
        "ln1_b": _normal(rng, (d,), scale=0.1),
        "w_qkv": _normal(rng, (d, 3 * d), scale=1 / math.sqrt(d)),
        "b_qkv": _normal(rng, (3 * d,), scale=0.1),
        "w_attn": _normal(rng, (d, d), scale=1 / math.sqrt(d)),
        "b_attn": _normal(rng, (d,), scale=0.1),
        "ln2_g": _normal(rng, (d,), scale=0.1, loc=1.0),
        "ln2_b": _normal(rng, (d,), scale=0.1),
        "w_fc": _normal(rng, (d, f), scale=1 / math.sqrt(d)),
        "b_fc": _normal(rng, (f,), scale=0.1),
        "w_mlp": _normal(rng, (f, d), scale=1 / math.sqrt(f)),
        "b_mlp": _normal(rng, (d,), scale=0.1),
        "lnf_g": _normal(rng, (d,), scale=0.1, loc=1.0),
        "lnf_b": _normal(rng, (d,), scale=0.1),
    }


def _batchnorm_inputs(rng, c, suffix=""):
    return {
        f"mean{suffix}": _normal(rng, (c,), scale=0.1),
        f"var{suffix}": _uniform(rng, (c,), 0.5, 1.5),
        f"gamma{suffix}": _normal(rng, (c,), scale=0.1, loc=1.0),
        f"beta{suffix}": _normal(rng, (c,), scale=0.1),
    }


def in_conv_bn_relu_pool(rng, n=2, h=8, w=6):
    return {"x": _normal(rng, (n, h, w, 3)), "w": _normal(rng, (3, 3, 3, 32), scale=1 / math.sqrt(27)),
            **_batchnorm_inputs(rng, 32)}


def in_resnet_block(rng, n=2, h=6, w=5, c=64):
    inputs = {"x": _normal(rng, (n, h, w, c))}
    for k in ("1", "2"):
        inputs[f"w{k}"] = _normal(rng, (3, 3, c, c), scale=1 / math.sqrt(9 * c))
        inputs.update(_batchnorm_inputs(rng, c, k))
    return inputs


def in_reductions(rng):
    return {"x": _normal(rng, (8, 16))}


def in_rmsnorm(rng):
    return {"x": _normal(rng, (8, 32)), "g": _normal(rng, (32,), scale=0.1, loc=1.0)}


def _case(name, make_inputs, reference, rtol, atol, kernels=None, gpu_kernels=None, unshared_gpu_kernels=None):
    return SampleCase(
        SAMPLES_DIR / f"{name}.tdsl", make_inputs, reference, rtol, atol, kernels, gpu_kernels, unshared_gpu_kernels
    )


# Tolerances are for float32 programs against float64 references: about 100x the error
# measured for a float32 NumPy evaluation of the same formulas (see test_reference_sanity.py).
SAMPLES: dict[str, SampleCase] = {
    "sincos": _case("sincos", in_sincos, ref_sincos, 1e-5, 1e-6, kernels=1),
    "gelu_chain": _case("gelu_chain", in_gelu_chain, ref_gelu_chain, 1e-5, 1e-6, kernels=1),
    "softmax": _case("softmax", in_softmax, ref_softmax, 1e-5, 1e-7, kernels=1),
    "layernorm": _case("layernorm", in_layernorm, ref_layernorm, 1e-5, 1e-5, kernels=1),
    "bias_gelu_residual": _case("bias_gelu_residual", in_bias_gelu_residual,
                                ref_bias_gelu_residual, 1e-5, 1e-6, kernels=1),
    "mlp": _case("mlp", in_mlp, ref_mlp, 1e-4, 1e-5, kernels=2),
    "attention": _case("attention", in_attention, ref_attention, 1e-4, 1e-5, kernels=3, unshared_gpu_kernels=5),
    "transformer_block": _case("transformer_block", in_transformer_block,
                               ref_transformer_block, 1e-4, 1e-4, kernels=7, unshared_gpu_kernels=9),
    "reductions": _case("reductions", in_reductions, ref_reductions, 1e-5, 1e-5, kernels=1),
    "rmsnorm": _case("rmsnorm", in_rmsnorm, ref_rmsnorm, 1e-5, 1e-6, kernels=1),
    "rope_attention": _case("rope_attention", in_rope_attention, ref_rope_attention, 1e-4, 1e-5, kernels=5,
                            gpu_kernels=6),
    "causal_attention": _case("causal_attention", in_attention, ref_causal_attention, 1e-4, 1e-5, kernels=3,
                              unshared_gpu_kernels=5),
    "embedding_layernorm": _case("embedding_layernorm", in_embedding_layernorm, ref_embedding_layernorm,
                                 1e-5, 1e-5, kernels=1),
    "conv_bn_relu_pool": _case("conv_bn_relu_pool", in_conv_bn_relu_pool, ref_conv_bn_relu_pool,
                               1e-4, 1e-5, kernels=3, gpu_kernels=2),
    "resnet_block": _case("resnet_block", in_resnet_block, ref_resnet_block, 1e-4, 1e-4, kernels=4,
                          gpu_kernels=2),
    "llama_layer": _case("llama_layer", in_llama_layer, ref_llama_layer, 1e-4, 1e-4, kernels=12),
    "gpt2_block": _case("gpt2_block", in_gpt2_block, ref_gpt2_block, 1e-4, 1e-4, kernels=8),
}
