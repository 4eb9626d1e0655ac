"""The Llama decoder layer and the GPT-2 block of samples/llama_layer.tdsl and
samples/gpt2_block.tdsl in PyTorch, and the same models built by Hugging Face transformers
(the NumPy references of every sample are in reference.py).

The PyTorch functions take the samples' arguments in the samples' order (weights [in, out],
as ``x @ w``) and are written from the models' published definitions, as Hugging Face's
modules compute them in half precision too: RMSNorm upcasts to float32 and casts back
before the weight, attention is PyTorch's SDPA (causal), LayerNorm and softmax are
PyTorch's. benchmarks/gpu.py and benchmarks/cpu.py time them (torch eager and torch.compile);
tests/samples/test_models_hf.py checks them, the samples and their NumPy references
against Hugging Face's ``LlamaModel`` and ``GPT2Model`` of one layer.

``hugging_face(name, inputs)`` builds that one-layer model from a sample's inputs (NumPy
float32 arrays by parameter name) and returns the function of ``x`` it computes; it needs
``transformers``, imported only there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

LLAMA_D, LLAMA_HEADS, LLAMA_F, LLAMA_EPS = 1024, 16, 2816, 1e-5
GPT2_D, GPT2_HEADS, GPT2_F, GPT2_EPS = 768, 12, 3072, 1e-5
HEAD_DIM = 64
ROPE_BASE = 10000.0


def _heads(t: torch.Tensor, heads: int) -> torch.Tensor:
    """[B, S, H*64] -> [B, H, S, 64]"""
    b, s, _ = t.shape
    return t.view(b, s, heads, HEAD_DIM).transpose(1, 2)


def _merge(t: torch.Tensor) -> torch.Tensor:
    """[B, H, S, 64] -> [B, S, H*64]"""
    b, h, s, dh = t.shape
    return t.transpose(1, 2).reshape(b, s, h * dh)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = LLAMA_EPS) -> torch.Tensor:
    """LlamaRMSNorm: normalised in float32, cast back to x's dtype, then scaled."""
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return weight * xf.to(x.dtype)


def rotate_half(t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE in the rotate-half form (Hugging Face's apply_rotary_pos_emb)."""
    half = t.shape[-1] // 2
    return t * cos + torch.cat((-t[..., half:], t[..., :half]), dim=-1) * sin


def llama_layer(x, cos, sin, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down, final_norm):
    """LlamaDecoderLayer and LlamaModel.norm: samples/llama_layer.tdsl."""
    z = rmsnorm(x, attn_norm)
    q = rotate_half(_heads(z @ wq, LLAMA_HEADS), cos, sin)
    k = rotate_half(_heads(z @ wk, LLAMA_HEADS), cos, sin)
    o = F.scaled_dot_product_attention(q, k, _heads(z @ wv, LLAMA_HEADS), is_causal=True, scale=HEAD_DIM**-0.5)
    h = x + _merge(o) @ wo
    z = rmsnorm(h, mlp_norm)
    y = h + (F.silu(z @ w_gate) * (z @ w_up)) @ w_down
    return rmsnorm(y, final_norm)


def gpt2_block(x, positions, ln1_g, ln1_b, w_qkv, b_qkv, w_attn, b_attn, ln2_g, ln2_b, w_fc, b_fc, w_mlp, b_mlp,
               lnf_g, lnf_b):
    """The learned positions added, GPT2Block and GPT2Model.ln_f: samples/gpt2_block.tdsl."""
    d = x.shape[-1]
    e = x + positions
    q, k, v = (F.layer_norm(e, (d,), ln1_g, ln1_b, GPT2_EPS) @ w_qkv + b_qkv).split(d, dim=-1)
    o = F.scaled_dot_product_attention(_heads(q, GPT2_HEADS), _heads(k, GPT2_HEADS), _heads(v, GPT2_HEADS),
                                       is_causal=True, scale=HEAD_DIM**-0.5)
    h = e + _merge(o) @ w_attn + b_attn
    z = F.layer_norm(h, (d,), ln2_g, ln2_b, GPT2_EPS)
    y = h + F.gelu(z @ w_fc + b_fc, approximate="tanh") @ w_mlp + b_mlp
    return F.layer_norm(y, (d,), lnf_g, lnf_b, GPT2_EPS)


def rope_tables(s: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [S, 64] of Llama's rotary embedding (base 10000), computed in float32 as
    LlamaRotaryEmbedding does: position p, frequency i < 32, angle p * base^(-2i/64), each
    frequency in both halves."""
    inv_freq = 1.0 / ROPE_BASE ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32, device=device) / HEAD_DIM)
    angles = torch.arange(s, dtype=torch.float32, device=device)[:, None] * inv_freq[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


@dataclass(frozen=True)
class Model:
    """A sample model: its PyTorch function, the shapes of its arguments by name, its FLOPs."""

    sample: str
    torch_fn: Callable[..., torch.Tensor]
    shapes: Callable[[int, int], dict[str, tuple[int, ...]]]
    flops: Callable[[int, int], float]


def llama_shapes(b: int, s: int) -> dict[str, tuple[int, ...]]:
    d, f = LLAMA_D, LLAMA_F
    return {"x": (b, s, d), "cos": (s, HEAD_DIM), "sin": (s, HEAD_DIM), "attn_norm": (d,), "wq": (d, d),
            "wk": (d, d), "wv": (d, d), "wo": (d, d), "mlp_norm": (d,), "w_gate": (d, f), "w_up": (d, f),
            "w_down": (f, d), "final_norm": (d,)}


def gpt2_shapes(b: int, s: int) -> dict[str, tuple[int, ...]]:
    d, f = GPT2_D, GPT2_F
    return {"x": (b, s, d), "positions": (s, d), "ln1_g": (d,), "ln1_b": (d,), "w_qkv": (d, 3 * d),
            "b_qkv": (3 * d,), "w_attn": (d, d), "b_attn": (d,), "ln2_g": (d,), "ln2_b": (d,), "w_fc": (d, f),
            "b_fc": (f,), "w_mlp": (f, d), "b_mlp": (d,), "lnf_g": (d,), "lnf_b": (d,)}


def _causal_attention_flops(b: int, s: int, d: int) -> float:
    """q k^T and P v below the causal diagonal, half of the 4 B S^2 D of the whole square
    (FlashAttention's count: the work of a kernel that skips the masked tiles)."""
    return 2.0 * b * s * s * d


def llama_flops(b: int, s: int) -> float:
    d, f = LLAMA_D, LLAMA_F
    return 2.0 * b * s * (4 * d * d + 3 * d * f) + _causal_attention_flops(b, s, d)


def gpt2_flops(b: int, s: int) -> float:
    d, f = GPT2_D, GPT2_F
    return 2.0 * b * s * (4 * d * d + 2 * d * f) + _causal_attention_flops(b, s, d)


MODELS = {
    "llama_layer": Model("llama_layer", llama_layer, llama_shapes, llama_flops),
    "gpt2_block": Model("gpt2_block", gpt2_block, gpt2_shapes, gpt2_flops),
}


def model_inputs(name: str, b: int, s: int, dtype: torch.dtype, device: str, generator: torch.Generator):
    """The arguments of a sample model by name, as a trained model holds them in scale:
    activations and biases standard normal (biases 0.1), weights of variance 1/fan-in, norm
    scales near 1, learned positions 0.02 as GPT-2 initialises them, the real RoPE tables."""
    inputs = {}
    for param, shape in MODELS[name].shapes(b, s).items():
        noise = torch.randn(*shape, generator=generator, device=device)
        if param in ("cos", "sin"):
            continue
        if len(shape) == 2 and param != "positions":
            noise = noise / math.sqrt(shape[0])
        elif param == "positions":
            noise = noise * 0.02
        elif param.endswith(("norm", "_g")):
            noise = 1.0 + 0.1 * noise
        elif len(shape) == 1:
            noise = 0.1 * noise
        inputs[param] = noise.to(dtype)
    if name == "llama_layer":
        cos, sin = rope_tables(s, device)
        inputs["cos"], inputs["sin"] = cos.to(dtype), sin.to(dtype)
    return {param: inputs[param] for param in MODELS[name].shapes(b, s)}


def hugging_face_decoder(name: str, hidden: int, heads: int, vocab: int, positions: int, ffn: int, layers: int = 2):
    """Hugging Face's ``LlamaModel`` (``"llama"``, SwiGLU width ``ffn``) or ``GPT2Model``
    (``"gpt2"``, its MLP 4 x ``hidden`` as its config makes it) of ``layers`` layers, random
    weights from a config (nothing downloaded), SDPA attention, no KV cache, in evaluation
    mode: the models the PyTorch door is checked (tests/pytorch) and timed
    (benchmarks/torch_models.py) on."""
    import transformers

    if name == "llama":
        config = transformers.LlamaConfig(
            hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers, num_attention_heads=heads,
            num_key_value_heads=heads, vocab_size=vocab, max_position_embeddings=positions, attn_implementation="sdpa",
        )  # fmt: skip
        model = transformers.LlamaModel(config)
    else:
        config = transformers.GPT2Config(
            n_embd=hidden, n_layer=layers, n_head=heads, n_positions=positions, vocab_size=vocab,
            bos_token_id=0, eos_token_id=0, attn_implementation="sdpa",
        )  # fmt: skip
        model = transformers.GPT2Model(config)
    model.config.use_cache = False
    return model.eval()


def _param(array) -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.as_tensor(array, dtype=torch.float32), requires_grad=False)


def hugging_face(name: str, inputs) -> Callable[[], torch.Tensor]:
    """Hugging Face's own one-layer model with the sample's weights (NumPy float32 arrays by
    parameter name), eager attention, in evaluation mode: a function giving its
    ``last_hidden_state`` for the input ``x`` as the token embeddings. The Llama model makes
    its own RoPE tables from positions 0..S-1; the GPT-2 model's position table holds the
    sample's ``positions`` in its first S rows."""
    import transformers

    x = torch.as_tensor(inputs["x"], dtype=torch.float32)
    s = x.shape[1]
    if name == "llama_layer":
        config = transformers.LlamaConfig(
            vocab_size=32, hidden_size=LLAMA_D, intermediate_size=LLAMA_F, num_hidden_layers=1,
            num_attention_heads=LLAMA_HEADS, num_key_value_heads=LLAMA_HEADS, rms_norm_eps=LLAMA_EPS,
            rope_theta=ROPE_BASE, max_position_embeddings=max(s, 64), attn_implementation="eager")
        model = transformers.LlamaModel(config).eval()
        layer = model.layers[0]
        for module, weight in ((layer.self_attn.q_proj, "wq"), (layer.self_attn.k_proj, "wk"),
                               (layer.self_attn.v_proj, "wv"), (layer.self_attn.o_proj, "wo"),
                               (layer.mlp.gate_proj, "w_gate"), (layer.mlp.up_proj, "w_up"),
                               (layer.mlp.down_proj, "w_down")):
            module.weight = _param(inputs[weight].T)  # nn.Linear holds [out, in]
        layer.input_layernorm.weight = _param(inputs["attn_norm"])
        layer.post_attention_layernorm.weight = _param(inputs["mlp_norm"])
        model.norm.weight = _param(inputs["final_norm"])
    else:
        config = transformers.GPT2Config(
            vocab_size=32, bos_token_id=0, eos_token_id=0, n_positions=max(s, 64), n_embd=GPT2_D, n_layer=1, n_head=GPT2_HEADS, n_inner=GPT2_F,
            activation_function="gelu_new", layer_norm_epsilon=GPT2_EPS, resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, attn_implementation="eager")
        model = transformers.GPT2Model(config).eval()
        with torch.no_grad():
            model.wpe.weight[:s] = torch.as_tensor(inputs["positions"])
        block = model.h[0]
        for module, prefix in ((block.ln_1, "ln1"), (block.ln_2, "ln2"), (model.ln_f, "lnf")):
            module.weight, module.bias = _param(inputs[f"{prefix}_g"]), _param(inputs[f"{prefix}_b"])
        for module, weight, bias in ((block.attn.c_attn, "w_qkv", "b_qkv"), (block.attn.c_proj, "w_attn", "b_attn"),
                                     (block.mlp.c_fc, "w_fc", "b_fc"), (block.mlp.c_proj, "w_mlp", "b_mlp")):
            module.weight, module.bias = _param(inputs[weight]), _param(inputs[bias])  # Conv1D holds [in, out]

    def run() -> torch.Tensor:
        with torch.no_grad():
            return model(inputs_embeds=x).last_hidden_state

    return run
