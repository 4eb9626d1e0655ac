"""The flash attention kernel (``map-gpu``'s ``flash`` schedule) under the CUDA simulator
(``FUSEC_TEST_GPU=1`` on a GPU): against NumPy's softmax written out, with edge tiles,
a mask through ``where``, an additive mask holding ``-inf``, ``f16`` and ``bf16`` (on
tensor cores: under the simulator the kernel's twin), a causal mask's skipped tiles,
heads split and merged by index maps, and the IR's fallback where the head dimension is
not known."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import fusec
from runtime.cuda import codegen as codegen_cuda
from tests.samples.reference import SAMPLES

ATTENTION = """
fn main(q: f32[B, H, S, 64], k: f32[B, H, S, 64], v: f32[B, H, S, 64]) -> f32[B, H, S, 64] {
    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125, axis=-1) @ v
}
"""

WHERE = """
fn main(q: f32[B, H, S, 32], k: f32[B, H, S, 32], v: f32[B, H, S, 32], m: bool[S, S]) -> f32[B, H, S, 32] {
    s = where(m, q @ transpose(k, (0, 1, 3, 2)) * 0.125, -1e30)
    return softmax(s, axis=-1) @ v
}
"""

BIAS = """
fn main(q: f32[B, H, S, 32], k: f32[B, H, S, 32], v: f32[B, H, S, 32], bias: f32[S, S]) -> f32[B, H, S, 32] {
    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125 + bias, axis=-1) @ v
}
"""


def attention(q, k, v, scores=lambda s: s * np.float32(0.125)):
    """NumPy's attention written out (float64 scores from float32 inputs)."""
    s = scores(q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2))
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)


def schedules(program) -> dict[str, str]:
    executable = program.executable("main")
    return {name: codegen_cuda.schedule_of(op).value for name, op in executable.kernel_ops.items()}


def inputs(rng, b, h, s, d, dtype=np.float32):
    return [rng.standard_normal((b, h, s, d)).astype(dtype) for _ in range(3)]


def test_rows_and_keys_past_a_whole_tile():
    """70 rows and keys: a second tile of 6 rows and a third of 6 keys, guarded."""
    program = fusec.compile(ATTENTION, target="cuda")
    q, k, v = inputs(np.random.default_rng(0), 1, 2, 70, 64)
    got = program.main(q, k, v)
    assert schedules(program) == {"k0_attention": "flash"}
    np.testing.assert_allclose(got, attention(q, k, v), rtol=1e-5, atol=1e-6)


def test_the_same_bits_every_run():
    program = fusec.compile(ATTENTION, target="cuda")
    q, k, v = inputs(np.random.default_rng(1), 1, 1, 40, 64)
    assert program.main(q, k, v).tobytes() == program.main(q, k, v).tobytes()


def test_a_mask_through_where():
    program = fusec.compile(WHERE, target="cuda")
    rng = np.random.default_rng(2)
    q, k, v = inputs(rng, 1, 2, 37, 32)
    m = rng.random((37, 37)) < 0.7
    m[5] = False  # a row masked everywhere: uniform over -1e30, as NumPy's
    got = program.main(q, k, v, m)
    assert schedules(program) == {"k0_attention": "flash"}
    expected = attention(q, k, v, lambda s: np.where(m, s * 0.125, -1e30))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


#: the mask as PyTorch's door hands it: a bool mask choosing between two scalar parameters
SCALAR_MASK = """
fn main(q: f32[B, H, S, 32], k: f32[B, H, S, 32], v: f32[B, H, S, 32], m: bool[B, 1, S, S], keep: f32, drop: f32)
    -> f32[B, H, S, 32] {
    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125 + where(m, keep, drop), axis=-1) @ v
}
"""


def test_a_mask_of_scalar_parameters_keeps_the_flash_schedule():
    """The scalars' loads are copied to their uses (``map-gpu``'s ``sink_scalar_loads``):
    loaded at the kernel's top, they made the whole attention one thread block."""
    program = fusec.compile(SCALAR_MASK, target="cuda")
    rng = np.random.default_rng(4)
    q, k, v = inputs(rng, 2, 2, 24, 32)
    m = np.tril(np.ones((24, 24), bool))[None, None].repeat(2, axis=0)
    keep, drop = np.float32(0.0), np.float32(-1e9)
    got = program.main(q, k, v, m, keep, drop)
    assert schedules(program) == {"k0_attention": "flash"}
    expected = attention(q, k, v, lambda s: s * 0.125 + np.where(m, 0.0, -1e9))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


#: two layers reading one mask made from token positions, as Hugging Face's models make it
SHARED_MASK = """
fn main(q: f32[B, H, S, 16], k: f32[B, H, S, 16], v: f32[B, H, S, 16], p: i64[B, S]) -> f32[B, H, S, 16] {
    m = where(expand_dims(expand_dims(p, 1), 3) >= expand_dims(expand_dims(p, 1), 2), 0.0, -1e9)
    o = softmax((q @ transpose(k, (0, 1, 3, 2))) * 0.25 + m, axis=-1) @ v
    return softmax((o @ transpose(k, (0, 1, 3, 2))) * 0.25 + m, axis=-1) @ v
}
"""


def test_a_mask_two_attentions_read_is_made_outside_both():
    """A score-sized operand used by a second kernel stays out of the first attention
    kernel (``check_attention``): written from inside it, the kernel was no flash kernel
    (for Llama's mask made by gathers, one thread block for the whole attention)."""
    program = fusec.compile(SHARED_MASK, target="cuda")
    rng = np.random.default_rng(7)
    q, k, v = inputs(rng, 2, 2, 20, 16)
    p = np.tile(np.arange(20), (2, 1))
    got = program.main(q, k, v, p)
    assert [s for name, s in schedules(program).items() if "attention" in name] == ["flash", "flash"]
    m = np.where(p[:, None, :, None] >= p[:, None, None, :], 0.0, -1e9)
    o = attention(q, k, v, lambda s: s * 0.25 + m).astype(np.float32)
    np.testing.assert_allclose(got, attention(o, k, v, lambda s: s * 0.25 + m), rtol=1e-5, atol=1e-5)


#: heads and batch merged into the output's rows, as PyTorch's door hands a projection's input
MERGED_ROWS = """
fn main(q: f32[2, 4, 24, 32], k: f32[2, 4, 24, 32], v: f32[2, 4, 24, 32], w: f32[128, 16]) -> f32[48, 16] {
    o = softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125, axis=-1) @ v
    return reshape(transpose(o, (0, 2, 1, 3)), (48, 128)) @ w
}
"""


def test_an_output_whose_rows_merge_batch_and_sequence_keeps_the_flash_schedule():
    """The reshape reads ``i / 24``, ``i % 24`` of the row and ``j / 32``, ``j % 32`` of
    the column (``lower-to-loops``' ``reshape_index``, run by run), which ``map-gpu``
    splits into loops again."""
    program = fusec.compile(MERGED_ROWS, target="cuda")
    rng = np.random.default_rng(6)
    q, k, v = inputs(rng, 2, 4, 24, 32)
    w = rng.standard_normal((128, 16)).astype(np.float32)
    got = program.main(q, k, v, w)
    assert schedules(program)["k0_attention"] == "flash"
    expected = np.swapaxes(attention(q, k, v), 1, 2).reshape(48, 128) @ w
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_a_scalar_parameter_leaves_a_row_kernel_on_many_blocks():
    source = "fn main(x: f32[N, D], s: f32) -> f32[N, D] { return softmax(x * s, axis=-1) }"
    program = fusec.compile(source, target="cuda")
    x = np.random.default_rng(5).standard_normal((6, 40)).astype(np.float32)
    got = program.main(x, np.float32(0.5))
    assert schedules(program) == {"k0_softmax": "rows"}
    e = np.exp(x * 0.5 - (x * 0.5).max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-6, atol=1e-7)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the simulator divides 0 / 0
def test_minus_inf_scores_as_numpy():
    """A causal mask as an additive -inf bias (the language has no iota): the first row
    sees one key, so the rest of its tiles are -inf; a row of -inf everywhere is NaN,
    as NumPy's softmax written out."""
    program = fusec.compile(BIAS, target="cuda")
    rng = np.random.default_rng(3)
    q, k, v = inputs(rng, 1, 1, 40, 32)
    bias = np.where(np.tril(np.ones((40, 40), bool)), 0.0, -np.inf).astype(np.float32)
    bias[7] = -np.inf
    got = program.main(q, k, v, bias)
    expected = attention(q, k, v, lambda s: s * 0.125 + bias)
    assert np.isnan(got[0, 0, 7]).all() and not np.isnan(np.delete(got, 7, axis=2)).any()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


#: the half types, as the language and NumPy name them (a bf16 buffer on a GPU holds its
#: bits as uint16; a NumPy argument is ml_dtypes' bfloat16)
HALVES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}

#: the output rounds to the half when stored, and on tensor cores P rounds to it for the
#: second product: 2 ulp of the type (f16's 2**-10, bf16's 2**-7)
HALF_TOLERANCE = {"f16": {"rtol": 2e-3, "atol": 2e-3}, "bf16": {"rtol": 1.6e-2, "atol": 1.6e-2}}


@pytest.mark.parametrize("half", HALVES)
def test_half_off_tensor_cores_computes_in_f32(half):
    """A head dimension of 24 is no whole number of mma steps (16): the CUDA cores, the
    elements (bf16's from their bits) widened as they are staged, the output rounded to
    the half when stored; the kernel is flash, not one block per row recomputing every
    score (which took 190 ms at B8 H16 S2048 on an H100)."""
    program = fusec.compile(ATTENTION.replace("f32", half).replace("64", "24"), target="cuda")
    q, k, v = inputs(np.random.default_rng(4), 1, 1, 33, 24, HALVES[half])
    got = program.main(q, k, v)
    assert schedules(program) == {"k0_attention": "flash"} and "gpu.mma" not in program.ir("tiled")
    assert got.dtype == HALVES[half]
    np.testing.assert_allclose(got.astype(np.float64), attention(q, k, v), **HALF_TOLERANCE[half])


# -- on tensor cores (f16 or bf16 q, k, v; under the simulator, the kernel's twin) --------

CAUSAL = """
fn main(q: f16[B, H, S, 64], k: f16[B, H, S, 64], v: f16[B, H, S, 64]) -> f16[B, H, S, 64] {
    s = q @ transpose(k, (0, 1, 3, 2)) * 0.125
    causal = iota((S, S), 0) >= iota((S, S), 1)
    return softmax(where(causal, s, -inf), axis=-1) @ v
}
"""

# the heads split out of [B, S, 128] and merged back by index maps, a causal mask
HEADS_CAUSAL = """
fn heads(t: f16[B, S, 128]) -> f16[B, 2, S, 64] {
    return transpose(reshape(t, (B, S, 2, 64)), (0, 2, 1, 3))
}

fn main(q: f16[B, S, 128], k: f16[B, S, 128], v: f16[B, S, 128]) -> f16[B, S, 128] {
    s = heads(q) @ transpose(heads(k), (0, 1, 3, 2)) * 0.125
    p = softmax(where(iota((S, S), 1) <= iota((S, S), 0), s, -inf), axis=-1)
    return reshape(transpose(p @ heads(v), (0, 2, 1, 3)), (B, S, 128))
}
"""

#: q, k and v as column ranges of one fused projection (GPT-2's c_attn): k's column is
#: ``(h * 64 + d) + 128``, a chain of additions, and still steps along the row
FUSED_QKV = """
fn heads(t: f16[B, S, 128]) -> f16[B, 2, S, 64] {
    return transpose(reshape(t, (B, S, 2, 64)), (0, 2, 1, 3))
}

fn main(qkv: f16[B, S, 384]) -> f16[B, S, 128] {
    s = heads(qkv[:, :, :128]) @ transpose(heads(qkv[:, :, 128:256]), (0, 1, 3, 2)) * 0.125
    p = softmax(where(iota((S, S), 1) <= iota((S, S), 0), s, -inf), axis=-1)
    return reshape(transpose(p @ heads(qkv[:, :, 256:]), (0, 2, 1, 3)), (B, S, 128))
}
"""


def causal_mask(s: int) -> np.ndarray:
    return np.tril(np.ones((s, s), bool))


def flash_attributes(program) -> str:
    (line,) = [l for l in program.ir("tiled").splitlines() if 'gpu.schedule = "flash"' in l]
    return line


@pytest.mark.parametrize("half", HALVES)
def test_half_on_tensor_cores_with_edge_tiles(half):
    """70 rows and keys: a second tile of 6 rows and a second of 6 keys, guarded."""
    program = fusec.compile(ATTENTION.replace("f32", half), target="cuda")
    q, k, v = inputs(np.random.default_rng(7), 1, 2, 70, 64, HALVES[half])
    got = program.main(q, k, v)
    attributes = flash_attributes(program)
    assert f'gpu.mma = "{half}"' in attributes and "gpu.causal" not in attributes
    assert got.dtype == HALVES[half]
    np.testing.assert_allclose(got.astype(np.float64), attention(q, k, v), **HALF_TOLERANCE[half])


@pytest.mark.parametrize("half", HALVES)
def test_half_on_tensor_cores_the_same_bits_every_run(half):
    program = fusec.compile(ATTENTION.replace("f32", half), target="cuda")
    q, k, v = inputs(np.random.default_rng(8), 1, 1, 20, 64, HALVES[half])
    assert program.main(q, k, v).tobytes() == program.main(q, k, v).tobytes()


def test_bf16_probabilities_round_to_bf16_on_tensor_cores():
    """bf16 q, k and v run on tensor cores, the probabilities rounded to bf16 (not f16)
    for the second product: a probability of e**-20 (2e-9, below half of f16's least
    subnormal, where f16 would make it 0) keeps bf16's range, float32's. Every row's
    first key scores 0 and has v = 0, the others score -20 and have v = 1, so the
    output is theirs alone: 39 e**-20 / (1 + 39 e**-20), 8e-8, within 2 bf16 ulp."""
    program = fusec.compile(BIAS.replace("f32", "bf16").replace("32]", "64]"), target="cuda")
    q = k = np.zeros((1, 1, 40, 64), ml_dtypes.bfloat16)
    v = np.ones((1, 1, 40, 64), ml_dtypes.bfloat16)
    v[:, :, 0] = 0
    bias = np.full((40, 40), -20, ml_dtypes.bfloat16)
    bias[:, 0] = 0
    got = program.main(q, k, v, bias)
    assert 'gpu.mma = "bf16"' in flash_attributes(program)
    expected = attention(q, k, v, lambda s: s * 0.125 + bias)
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=HALF_TOLERANCE["bf16"]["rtol"], atol=0)


@pytest.mark.parametrize("half", HALVES)
def test_half_a_cast_in_the_modification_rounds_on_tensor_cores(half):
    """A cast to the half in the score modification rounds each score there: the kernel's
    module defines the half-float function it calls (runtime/half_floats.py)."""
    scaled = f"cast(cast(q @ transpose(k, (0, 1, 3, 2)), f32) * 0.125, {half})"
    source = ATTENTION.replace("f32", half).replace("q @ transpose(k, (0, 1, 3, 2)) * 0.125", scaled)
    program = fusec.compile(source, target="cuda")
    q, k, v = inputs(np.random.default_rng(13), 1, 1, 20, 64, HALVES[half])
    got = program.main(q, k, v)
    assert f'gpu.mma = "{half}"' in flash_attributes(program)
    expected = attention(q, k, v, lambda s: (s.astype(np.float32) * np.float32(0.125)).astype(HALVES[half]))
    np.testing.assert_allclose(got.astype(np.float64), expected, **HALF_TOLERANCE[half])


@pytest.mark.parametrize("dtype", [*HALVES, "f32"])
def test_a_causal_mask_from_iota_skips_the_tiles_past_the_diagonal(dtype):
    """100 rows: the first block of 64 rows visits only its first key tile (tensor cores:
    64 keys; CUDA cores: 32), the rest are masked everywhere and skipped."""
    program = fusec.compile(CAUSAL.replace("f16", dtype), target="cuda")
    q, k, v = inputs(np.random.default_rng(9), 1, 1, 100, 64, HALVES.get(dtype, np.float32))
    got = program.main(q, k, v)
    attributes = flash_attributes(program)
    assert "gpu.causal" in attributes and (f'gpu.mma = "{dtype}"' in attributes) == (dtype in HALVES)
    expected = attention(q, k, v, lambda s: np.where(causal_mask(100), s * 0.125, -np.inf))
    tolerance = HALF_TOLERANCE.get(dtype, {"rtol": 1e-5, "atol": 1e-6})
    np.testing.assert_allclose(got.astype(np.float64), expected, **tolerance)


@pytest.mark.parametrize("half", HALVES)
def test_half_causal_heads_split_and_merged_by_index_maps(half):
    program = fusec.compile(HEADS_CAUSAL.replace("f16", half), target="cuda")
    rng = np.random.default_rng(10)
    q, k, v = (rng.standard_normal((2, 67, 128)).astype(HALVES[half]) for _ in range(3))
    got = program.main(q, k, v)
    attributes = flash_attributes(program)
    assert "gpu.causal" in attributes and f'gpu.mma = "{half}"' in attributes

    def heads(t):
        return t.reshape(2, 67, 2, 64).transpose(0, 2, 1, 3)

    o = attention(heads(q), heads(k), heads(v), lambda s: np.where(causal_mask(67), s * 0.125, -np.inf))
    expected = o.transpose(0, 2, 1, 3).reshape(2, 67, 128)
    np.testing.assert_allclose(got.astype(np.float64), expected, **HALF_TOLERANCE[half])


@pytest.mark.parametrize("half", HALVES)
def test_half_q_k_v_as_columns_of_one_fused_projection(half):
    program = fusec.compile(FUSED_QKV.replace("f16", half), target="cuda")
    rng = np.random.default_rng(13)
    qkv = rng.standard_normal((2, 71, 384)).astype(HALVES[half])
    got = program.main(qkv)
    assert f'gpu.mma = "{half}"' in flash_attributes(program)

    def heads(t):
        return t.reshape(2, 71, 2, 64).transpose(0, 2, 1, 3)

    q, k, v = (heads(qkv[:, :, n : n + 128]) for n in (0, 128, 256))
    o = attention(q, k, v, lambda s: np.where(causal_mask(71), s * 0.125, -np.inf))
    expected = o.transpose(0, 2, 1, 3).reshape(2, 71, 128)
    np.testing.assert_allclose(got.astype(np.float64), expected, **HALF_TOLERANCE[half])


@pytest.mark.parametrize("half", HALVES)
def test_half_a_mask_input_is_applied_per_score_and_skips_nothing(half):
    program = fusec.compile(WHERE.replace("f32", half).replace("32]", "64]").replace("-1e30", "-6e4"), target="cuda")
    rng = np.random.default_rng(11)
    q, k, v = inputs(rng, 1, 1, 37, 64, HALVES[half])
    m = rng.random((37, 37)) < 0.7
    m[5] = False
    got = program.main(q, k, v, m)
    attributes = flash_attributes(program)
    assert f'gpu.mma = "{half}"' in attributes and "gpu.causal" not in attributes
    expected = attention(q, k, v, lambda s: np.where(m, s * 0.125, -6e4))
    np.testing.assert_allclose(got.astype(np.float64), expected, **HALF_TOLERANCE[half])


@pytest.mark.parametrize("half", HALVES)
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the simulator divides 0 / 0
def test_half_minus_inf_rows_are_nan_as_numpy(half):
    program = fusec.compile(BIAS.replace("f32", half).replace("32]", "64]"), target="cuda")
    rng = np.random.default_rng(12)
    q, k, v = inputs(rng, 1, 1, 40, 64, HALVES[half])
    bias = np.where(causal_mask(40), 0.0, -np.inf).astype(HALVES[half])
    bias[7] = -np.inf
    got = program.main(q, k, v, bias)
    assert f'gpu.mma = "{half}"' in flash_attributes(program)
    expected = attention(q, k, v, lambda s: s * 0.125 + bias)
    assert np.isnan(got[0, 0, 7]).all() and not np.isnan(np.delete(got, 7, axis=2)).any()
    np.testing.assert_allclose(got.astype(np.float64), expected, **HALF_TOLERANCE[half])


def test_the_sample_with_its_head_split_and_merge():
    """samples/attention.tdsl: q, k (stored transposed) and v read through the head
    split's index maps, the output written through the merge."""
    case = SAMPLES["attention"]
    program = fusec.compile(case.path, target="cuda")
    data = case.make_inputs(np.random.default_rng(5), b=1, s=9)
    got = program.run("main", [data[p.name] for p in program.params("main")])
    assert [schedule for name, schedule in schedules(program).items() if "attention" in name] == ["flash"]
    np.testing.assert_allclose(got[0], case.reference(**data)[0], rtol=1e-4, atol=1e-5)


def test_a_head_dimension_known_only_at_run_time_keeps_the_rows_mapping():
    program = fusec.compile(ATTENTION.replace("64", "D"), target="cuda")
    assert 'gpu.schedule = "rows"' in program.ir("tiled")


@pytest.mark.parametrize("d", [16, 128])
def test_other_head_dimensions(d):
    program = fusec.compile(ATTENTION.replace("64", str(d)), target="cuda")
    q, k, v = inputs(np.random.default_rng(6), 1, 1, 20, d)
    np.testing.assert_allclose(program.main(q, k, v), attention(q, k, v), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("half", HALVES)
def test_the_gpu_source_of_the_tensor_core_kernel(half):
    """The simulator runs the twin; the GPU's source (shuffles, inline PTX) is generated
    here and read as Python: q's fragments once, both products on tensor cores in the
    half of q, k and v, rows by 16-byte copies where a load reads along them (else
    element by element, ``load_<half>``), the next key tile's in flight during this
    one's products; the mask's tiles stop at the diagonal. The shared tiles hold the
    half as its buffers do (bf16's bits as uint16), and a bf16 output is stored as its
    bits rounded to nearest even."""
    from runtime.cuda.sources import kernel_source

    program = fusec.compile(CAUSAL.replace("f16", half), target="cuda")
    (op,) = program.executable("main").kernel_ops.values()
    source = kernel_source(op, shuffles=True)
    compile(source, "<flash>", "exec")
    names = ("ldmatrix_x4", "ldmatrix_x4_at", "ldmatrix_x4_trans_at", f"mma_{half}", f"pack_{half}x2", "cp_async_16",
             "cp_async_16_at", "cuda.shfl_xor_sync")
    calls = {name: source.count(f"{name}(") for name in names}
    # Dh 64, 64 keys: q 4 x4 loads; k 4 steps x 4 pairs, v 4 steps x 4 pairs, each from the
    # lane's shared address plus a constant; 2 x 4 steps x 8 parts mma; 4 steps x 4 packs;
    # 4 copies of q, and of k and of v from addresses computed once, the first tile's
    # before the loop and the next one's in it; 2 rows x 2 steps x (max, sum)
    expected = {"ldmatrix_x4": 4, "ldmatrix_x4_at": 16, "ldmatrix_x4_trans_at": 16, f"mma_{half}": 64,
                f"pack_{half}x2": 16, "cp_async_16": 4, "cp_async_16_at": 2 * (4 + 4), "cuda.shfl_xor_sync": 8}
    assert calls == expected
    assert source.count("global_address(") == 4 + 2  # q's copies; k's and v's first row, once
    assert "kend = min(" in source
    # where a row is misaligned, a loop copies its 8 halves element by element: 4 copies
    # of q, 8 of k, 8 of v
    assert source.count(f"load_{half}(") == 4 + 8 + 8
    assert source.count("in range(8):") == 4 + 8 + 8
    storage = {"f16": "np.float16", "bf16": "np.uint16"}[half]
    assert source.count("cuda.shared.array(") == source.count(f", {storage}, alignment=16)") == 3
    # a thread's outputs, 2 rows x 8 parts x 2 columns: bf16's bits rounded from float32
    assert source.count("= bf16_bits(ac_") == (32 if half == "bf16" else 0)


def test_the_gpu_source_copies_columns_of_a_fused_projection_by_rows():
    """k's and v's columns of a fused projection, ``(h * 64 + d) + 128``, step along the
    row as a plain index does: their tiles are 16-byte copies from addresses computed
    once, as in ``test_the_gpu_source_of_the_tensor_core_kernel``, not staged element by
    element."""
    from runtime.cuda.sources import kernel_source

    program = fusec.compile(FUSED_QKV, target="cuda")
    (op,) = [op for name, op in program.executable("main").kernel_ops.items() if "attention" in name]
    source = kernel_source(op, shuffles=True)
    assert source.count("global_address(") == 4 + 2
    assert source.count("cp_async_16_at(") == 2 * (4 + 4)


def test_the_gpu_source_chooses_values_without_branches():
    """On a GPU each choice of a value (a masked load, a NaN-aware maximum, a masked
    exponential) is one ``select``, not a conditional expression, whose two blocks a
    kernel this size multiplies into hundreds (runtime/cuda/select.py: 264 s of compile
    became 25); the simulator's source keeps Python's conditional expressions."""
    from runtime.cuda.sources import kernel_source

    program = fusec.compile(ATTENTION, target="cuda")
    (op,) = program.executable("main").kernel_ops.values()
    gpu, simulator = kernel_source(op, shuffles=True), kernel_source(op, shuffles=False)
    compile(gpu, "<flash>", "exec")
    assert "from runtime.cuda.select import select" in gpu and gpu.count("select(") > 100
    assert " else " not in gpu and " and " not in gpu and " or " not in gpu
    assert "select(" not in simulator and simulator.count(" else ") > 100


def test_the_gpu_source_writes_a_tile_copy_once_per_input():
    """Each of q's, k's and v's tiles is copied by one device function (inlined on the
    GPU) that each copy calls, all of a tile's calls before its stores to shared
    memory, rather than each copy writing its index arithmetic and load out."""
    from runtime.cuda.sources import kernel_source

    program = fusec.compile(ATTENTION, target="cuda")
    (op,) = program.executable("main").kernel_ops.values()
    source = kernel_source(op, shuffles=True)
    copies = re.findall(r"forceinline=True\)\ndef (copy[0-9]+)\(", source)
    assert len(copies) == 3
    for name in copies:
        calls = [n for n, line in enumerate(source.splitlines()) if f"= {name}(" in line]
        stores = [n for n, line in enumerate(source.splitlines()) if line.strip().startswith("shm[") and n > calls[0]]
        assert len(calls) >= 8 and max(calls) < min(stores)
