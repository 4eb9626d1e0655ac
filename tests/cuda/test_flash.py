"""The flash attention kernel (``map-gpu``'s ``flash`` schedule) under the CUDA simulator
(``FUSEC_TEST_GPU=1`` on a GPU): against NumPy's softmax written out, with edge tiles,
a mask through ``where``, an additive mask holding ``-inf``, ``f16`` (on tensor cores:
under the simulator the kernel's twin), a causal mask's skipped tiles, heads split and
merged by index maps, and the IR's fallback where the head dimension is not known."""

from __future__ import annotations

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


def test_f16_off_tensor_cores_computes_in_f32():
    """A head dimension of 24 is no whole number of mma steps (16): the CUDA cores."""
    program = fusec.compile(ATTENTION.replace("f32", "f16").replace("64", "24"), target="cuda")
    q, k, v = inputs(np.random.default_rng(4), 1, 1, 33, 24, np.float16)
    got = program.main(q, k, v)
    assert got.dtype == np.float16 and "gpu.mma" not in program.ir("tiled")
    np.testing.assert_allclose(got.astype(np.float64), attention(q, k, v), rtol=2e-3, atol=2e-3)


def test_bf16_runs_the_flash_kernel_on_cuda_cores():
    """bf16 q, k and v (their bits in uint16 buffers) are widened as they are staged and
    the output rounded to bf16 when stored; the kernel is flash, not one block per row
    recomputing every score (which took 190 ms at B8 H16 S2048 on an H100)."""
    import ml_dtypes

    causal = "s = q @ transpose(k, (0, 1, 3, 2)) * 0.125\n    causal = iota((S, S), 0) >= iota((S, S), 1)\n"
    source = ATTENTION.replace("f32", "bf16").replace(
        "return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125, axis=-1) @ v",
        causal + "    return softmax(where(causal, s, -inf), axis=-1) @ v",
    )
    program = fusec.compile(source, target="cuda")
    q, k, v = inputs(np.random.default_rng(6), 1, 2, 70, 64, ml_dtypes.bfloat16)
    got = program.main(q, k, v)
    assert set(schedules(program).values()) == {"flash"} and "gpu.mma" not in program.ir("tiled")
    assert got.dtype == ml_dtypes.bfloat16
    want = attention(q, k, v, lambda s: np.where(causal_mask(70), s * 0.125, -np.inf))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1.6e-2, atol=1.6e-2)  # 2 ulp of bf16


# -- on tensor cores (f16 q, k, v; under the simulator, the kernel's twin) ----------------

#: P rounds to f16 for the second product, the output to f16 when stored: 2 ulp of f16
HALF_TOLERANCE = {"rtol": 2e-3, "atol": 2e-3}

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


def causal_mask(s: int) -> np.ndarray:
    return np.tril(np.ones((s, s), bool))


def flash_attributes(program) -> str:
    (line,) = [l for l in program.ir("tiled").splitlines() if 'gpu.schedule = "flash"' in l]
    return line


def test_f16_on_tensor_cores_with_edge_tiles():
    """70 rows and keys: a second tile of 6 rows and a second of 6 keys, guarded."""
    program = fusec.compile(ATTENTION.replace("f32", "f16"), target="cuda")
    q, k, v = inputs(np.random.default_rng(7), 1, 2, 70, 64, np.float16)
    got = program.main(q, k, v)
    attributes = flash_attributes(program)
    assert 'gpu.mma = "f16"' in attributes and "gpu.causal" not in attributes
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), attention(q, k, v), **HALF_TOLERANCE)


def test_f16_on_tensor_cores_the_same_bits_every_run():
    program = fusec.compile(ATTENTION.replace("f32", "f16"), target="cuda")
    q, k, v = inputs(np.random.default_rng(8), 1, 1, 20, 64, np.float16)
    assert program.main(q, k, v).tobytes() == program.main(q, k, v).tobytes()


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_a_causal_mask_from_iota_skips_the_tiles_past_the_diagonal(dtype):
    """100 rows: the first block of 64 rows visits only its first key tile (tensor cores:
    64 keys; CUDA cores: 32), the rest are masked everywhere and skipped."""
    program = fusec.compile(CAUSAL.replace("f16", dtype), target="cuda")
    np_type = np.float16 if dtype == "f16" else np.float32
    q, k, v = inputs(np.random.default_rng(9), 1, 1, 100, 64, np_type)
    got = program.main(q, k, v)
    attributes = flash_attributes(program)
    assert "gpu.causal" in attributes and ('gpu.mma = "f16"' in attributes) == (dtype == "f16")
    expected = attention(q, k, v, lambda s: np.where(causal_mask(100), s * 0.125, -np.inf))
    tolerance = HALF_TOLERANCE if dtype == "f16" else {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(got.astype(np.float64), expected, **tolerance)


def test_f16_causal_heads_split_and_merged_by_index_maps():
    program = fusec.compile(HEADS_CAUSAL, target="cuda")
    rng = np.random.default_rng(10)
    q, k, v = (rng.standard_normal((2, 67, 128)).astype(np.float16) for _ in range(3))
    got = program.main(q, k, v)
    assert "gpu.causal" in flash_attributes(program) and 'gpu.mma = "f16"' in flash_attributes(program)

    def heads(t):
        return t.reshape(2, 67, 2, 64).transpose(0, 2, 1, 3)

    o = attention(heads(q), heads(k), heads(v), lambda s: np.where(causal_mask(67), s * 0.125, -np.inf))
    np.testing.assert_allclose(got.astype(np.float64), o.transpose(0, 2, 1, 3).reshape(2, 67, 128), **HALF_TOLERANCE)


def test_f16_a_mask_input_is_applied_per_score_and_skips_nothing():
    program = fusec.compile(WHERE.replace("f32", "f16").replace("32]", "64]").replace("-1e30", "-6e4"), target="cuda")
    rng = np.random.default_rng(11)
    q, k, v = inputs(rng, 1, 1, 37, 64, np.float16)
    m = rng.random((37, 37)) < 0.7
    m[5] = False
    got = program.main(q, k, v, m)
    attributes = flash_attributes(program)
    assert 'gpu.mma = "f16"' in attributes and "gpu.causal" not in attributes
    expected = attention(q, k, v, lambda s: np.where(m, s * 0.125, -6e4))
    np.testing.assert_allclose(got.astype(np.float64), expected, **HALF_TOLERANCE)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the simulator divides 0 / 0
def test_f16_minus_inf_rows_are_nan_as_numpy():
    program = fusec.compile(BIAS.replace("f32", "f16").replace("32]", "64]"), target="cuda")
    rng = np.random.default_rng(12)
    q, k, v = inputs(rng, 1, 1, 40, 64, np.float16)
    bias = np.where(causal_mask(40), 0.0, -np.inf).astype(np.float16)
    bias[7] = -np.inf
    got = program.main(q, k, v, bias)
    assert 'gpu.mma = "f16"' in flash_attributes(program)
    expected = attention(q, k, v, lambda s: s * 0.125 + bias)
    assert np.isnan(got[0, 0, 7]).all() and not np.isnan(np.delete(got, 7, axis=2)).any()
    np.testing.assert_allclose(got.astype(np.float64), expected, **HALF_TOLERANCE)


def test_the_sample_with_its_head_split_and_merge():
    """samples/attention.tdsl: q, k (stored transposed) and v read through the head
    split's index maps, the output written through the merge."""
    case = SAMPLES["attention"]
    program = fusec.compile(case.path, target="cuda")
    data = case.make_inputs(np.random.default_rng(5), b=1, s=9)
    got = program.run("main", [data[p.name] for p in program.params("main")])
    assert schedules(program)["k1_attention"] == "flash"
    np.testing.assert_allclose(got[0], case.reference(**data)[0], rtol=1e-4, atol=1e-5)


def test_a_head_dimension_known_only_at_run_time_keeps_the_rows_mapping():
    program = fusec.compile(ATTENTION.replace("64", "D"), target="cuda")
    assert 'gpu.schedule = "rows"' in program.ir("tiled")


@pytest.mark.parametrize("d", [16, 128])
def test_other_head_dimensions(d):
    program = fusec.compile(ATTENTION.replace("64", str(d)), target="cuda")
    q, k, v = inputs(np.random.default_rng(6), 1, 1, 20, d)
    np.testing.assert_allclose(program.main(q, k, v), attention(q, k, v), rtol=1e-5, atol=1e-6)


def test_the_gpu_source_of_the_tensor_core_kernel():
    """The simulator runs the twin; the GPU's source (shuffles, inline PTX) is generated
    here and read as Python: q's fragments once, both products on tensor cores, rows by
    16-byte copies where a load reads along them, the next key tile's in flight during
    this one's products; the mask's tiles stop at the diagonal."""
    from runtime.cuda.sources import kernel_source

    program = fusec.compile(CAUSAL, target="cuda")
    (op,) = program.executable("main").kernel_ops.values()
    source = kernel_source(op, shuffles=True)
    compile(source, "<flash>", "exec")
    calls = {name: source.count(f"{name}(") for name in ("ldmatrix_x4", "ldmatrix_x4_trans", "mma_f16", "pack_f16x2", "cp_async_16", "cuda.shfl_xor_sync")}
    # Dh 64, 64 keys: q 4 x4 loads; k 4 steps x 4 pairs; v 4 steps x 4 pairs; 2 x 4 steps x
    # 8 parts mma; 4 steps x 4 packs; 4 copies of q, of k and of v, the first tile's before
    # the loop and the next one's in it; 2 rows x 2 steps x (max, sum)
    expected = {"ldmatrix_x4": 4 + 16, "ldmatrix_x4_trans": 16, "mma_f16": 64, "pack_f16x2": 16,
                "cp_async_16": 4 + 2 * (4 + 4), "cuda.shfl_xor_sync": 8}
    assert calls == expected
    assert "kend = min(" in source


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
