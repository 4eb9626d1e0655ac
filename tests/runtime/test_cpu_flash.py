"""The CPU's flash schedule (runtime/cpu/codegen_flash.py): attention of f32 and f64 as
one kernel per (group, block of query rows) with an online softmax, on sizes that cut its
blocks anywhere, with and without a causal mask, against the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

import fusec

ATTENTION = """
fn main(q: {t}[B, H, S, {d}], k: {t}[B, H, T, {d}], v: {t}[B, H, T, {e}]) -> {t}[B, H, S, {e}] {{
    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125, axis=-1) @ v
}}
"""

CAUSAL = """
fn main(q: f32[B, H, S, 16], k: f32[B, H, S, 16], v: f32[B, H, S, 16]) -> f32[B, H, S, 16] {
    scores = q @ transpose(k, (0, 1, 3, 2))
    p = softmax(where(iota((S, S), 0) >= iota((S, S), 1), scores, -inf), axis=-1)
    return p @ v
}
"""

#: heads split from and merged into rows of the model's width: the kernel reads and writes
#: through the index maps
MERGED_HEADS = """
fn main(x: f32[B, S, 64], y: f32[B, S, 64]) -> f32[B, S, 64] {
    q = transpose(reshape(x, (B, S, 4, 16)), (0, 2, 1, 3))
    k = transpose(reshape(y, (B, S, 4, 16)), (0, 2, 1, 3))
    o = softmax(q @ transpose(k, (0, 1, 3, 2)), axis=-1) @ k
    return reshape(transpose(o, (0, 2, 1, 3)), (B, S, 64))
}
"""


def _flash(source: str):
    program = fusec.compile(source, target="cpu", matmul="generated")
    assert 'cpu.schedule = "flash"' in program.ir("tiled")
    return program


def _reference(source: str, arrays):
    return fusec.compile(source, target="numpy").main(*arrays)


#: (S, T): a tile's rows (8, 6), an item's rows (48), a key block (256) and a lane block
#: (64) each cut unevenly, one row, one key
SIZES = [(1, 1), (7, 5), (49, 70), (100, 257), (300, 300)]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("s, t", SIZES)
def test_attention_is_numpys(s, t, dtype):
    np_dtype = np.float32 if dtype == "f32" else np.float64
    source = ATTENTION.format(t=dtype, d=24, e=40)
    rng = np.random.default_rng(s * t)
    arrays = [rng.standard_normal(shape).astype(np_dtype) for shape in ((2, 3, s, 24), (2, 3, t, 24), (2, 3, t, 40))]
    got = _flash(source).main(*arrays)
    tolerance = 1e-5 if dtype == "f32" else 1e-12
    np.testing.assert_allclose(got, _reference(source, arrays), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("s", [1, 47, 300])
def test_causal_attention_is_numpys(s):
    rng = np.random.default_rng(s)
    arrays = [rng.standard_normal((2, 2, s, 16)).astype(np.float32) for _ in range(3)]
    got = _flash(CAUSAL).main(*arrays)
    np.testing.assert_allclose(got, _reference(CAUSAL, arrays), rtol=1e-5, atol=1e-5)


def test_heads_are_read_and_written_through_their_index_maps():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 70, 64)).astype(np.float32) for _ in range(2)]
    got = _flash(MERGED_HEADS).main(*arrays)
    np.testing.assert_allclose(got, _reference(MERGED_HEADS, arrays), rtol=1e-5, atol=1e-5)


def test_nan_inf_and_fully_masked_rows_are_numpys():
    """A NaN score gives its row NaN, a +inf one NaN (inf - inf), a row masked everywhere
    0 / 0 = NaN, as NumPy's softmax written out; other rows are untouched."""
    source = """
fn main(q: f32[1, 1, S, 16], k: f32[1, 1, S, 16], v: f32[1, 1, S, 16], m: f32[S, S]) -> f32[1, 1, S, 16] {
    scores = q @ transpose(k, (0, 1, 3, 2)) + m
    return softmax(scores, axis=-1) @ v
}
"""
    rng = np.random.default_rng(5)
    s = 70
    q, k, v = (rng.standard_normal((1, 1, s, 16)).astype(np.float32) for _ in range(3))
    m = np.zeros((s, s), np.float32)
    m[3, 60] = np.nan
    m[10, 2] = np.inf
    m[20, :] = -np.inf
    got = _flash(source).main(q, k, v, m)
    expected = _reference(source, [q, k, v, m])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    assert np.isnan(got[0, 0, [3, 10, 20]]).all()
    np.testing.assert_allclose(got[0, 0, 30], expected[0, 0, 30], rtol=1e-5, atol=1e-5)


def test_the_same_bits_on_every_run():
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in ((2, 3, 130, 24), (2, 3, 300, 24), (2, 3, 300, 40))]
    program = _flash(ATTENTION.format(t="f32", d=24, e=40))
    first = program.main(*arrays)
    np.testing.assert_array_equal(program.main(*arrays), first)
