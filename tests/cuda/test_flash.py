"""The flash attention kernel (``map-gpu``'s ``flash`` schedule) under the CUDA simulator
(``FUSEC_TEST_GPU=1`` on a GPU): against NumPy's softmax written out, with edge tiles,
a mask through ``where``, an additive mask holding ``-inf``, ``f16``, and the IR's
fallback where the head dimension is not known."""

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


def test_f16_computes_in_f32():
    program = fusec.compile(ATTENTION.replace("f32", "f16"), target="cuda")
    q, k, v = inputs(np.random.default_rng(4), 1, 1, 33, 64, np.float16)
    got = program.main(q, k, v)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), attention(q, k, v), rtol=2e-3, atol=2e-3)


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
