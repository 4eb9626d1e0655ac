"""Checks of the NumPy references themselves (they run without the compiler).

The references are the oracle for the samples, so they are checked against the math
(identities, normalisation) and against a second, loop-based implementation.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.samples import reference as R
from tests.samples.reference import SAMPLES


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_every_sample_file_exists():
    for name, case in SAMPLES.items():
        assert case.path.is_file(), f"{name}: {case.path} missing"
        assert case.path.stem == name


def test_sincos_is_one():
    (y,) = R.ref_sincos(**R.in_sincos(_rng()))
    np.testing.assert_allclose(y, 1.0, rtol=0, atol=1e-15)


def test_gelu_chain_matches_tanh_formula_and_erf_gelu():
    x = R.in_gelu_chain(_rng())["x"].astype(np.float64)
    (y,) = R.ref_gelu_chain(x=x)
    # the formula exactly as the sample writes it, constants included
    written = 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(y, written, rtol=1e-9, atol=1e-12)
    # and the tanh approximation is close to the exact (erf) GELU
    erf = np.vectorize(math.erf)
    exact = 0.5 * x * (1 + erf(x / math.sqrt(2)))
    np.testing.assert_allclose(y, exact, rtol=0, atol=1e-3)


def test_builtin_gelu_reference_is_the_chain():
    inp = R.in_bias_gelu_residual(_rng())
    (y,) = R.ref_bias_gelu_residual(**inp)
    (g,) = R.ref_gelu_chain(x=inp["x"].astype(np.float64) + inp["b"])
    np.testing.assert_allclose(y, g + inp["r"], rtol=1e-12, atol=1e-12)


def test_softmax_rows_sum_to_one_and_match_unstabilised():
    x = R.in_softmax(_rng())["x"]
    (y,) = R.ref_softmax(x=x)
    assert y.shape == x.shape
    assert np.all(y > 0)
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    e = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(y, e / e.sum(axis=-1, keepdims=True), rtol=1e-12)
    # shift invariance: the max subtraction changes nothing
    (y2,) = R.ref_softmax(x=x.astype(np.float64) + 7.0)
    np.testing.assert_allclose(y, y2, rtol=1e-12)


def test_layernorm_normalises_rows():
    inp = R.in_layernorm(_rng())
    d = inp["x"].shape[-1]
    (y,) = R.ref_layernorm(x=inp["x"], gamma=np.ones(d), beta=np.zeros(d))
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    # var(y) = var / (var + eps), slightly under 1
    var = inp["x"].astype(np.float64).var(axis=-1)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, atol=1e-4)
    # gamma and beta are an affine map per column
    (yg,) = R.ref_layernorm(**inp)
    np.testing.assert_allclose(yg, y * inp["gamma"] + inp["beta"], rtol=1e-12, atol=1e-12)


def test_rmsnorm_rows_have_unit_rms():
    inp = R.in_rmsnorm(_rng())
    x = inp["x"].astype(np.float64)
    (y,) = R.ref_rmsnorm(x=x, g=np.ones(x.shape[-1]))
    n = y - x
    np.testing.assert_allclose(np.sqrt((n * n).mean(axis=-1)), 1.0, atol=1e-5)


def test_reductions():
    x = R.in_reductions(_rng())["x"]
    s, m, mu = R.ref_reductions(x=x)
    for r in (s, m, mu):
        assert r.shape == (x.shape[0],)
    np.testing.assert_allclose(mu * x.shape[-1], s, rtol=1e-12)
    assert np.all(m >= mu)
    np.testing.assert_array_equal(m, [max(row) for row in x.astype(np.float64)])


def _attention_loops(x, wq, wk, wv, wo, heads=4):
    """Straightforward attention: a loop over batch and head, a loop over query rows."""
    x, wq, wk, wv, wo = (np.asarray(a, np.float64) for a in (x, wq, wk, wv, wo))
    b, s, d = x.shape
    dh = d // heads
    out = np.zeros((b, s, d))
    for bi in range(b):
        q, k, v = x[bi] @ wq, x[bi] @ wk, x[bi] @ wv          # [S, D]
        concat = np.zeros((s, d))
        for h in range(heads):
            cols = slice(h * dh, (h + 1) * dh)
            qh, kh, vh = q[:, cols], k[:, cols], v[:, cols]   # [S, Dh]
            for i in range(s):
                sc = np.array([qh[i] @ kh[j] for j in range(s)]) / math.sqrt(dh)
                p = np.exp(sc - sc.max())
                p /= p.sum()
                concat[i, cols] = p @ vh
        out[bi] = concat @ wo
    return out


def test_attention_matches_per_head_loops():
    inp = R.in_attention(_rng())
    (y,) = R.ref_attention(**inp)
    assert y.shape == inp["x"].shape
    np.testing.assert_allclose(y, _attention_loops(**inp), rtol=1e-10, atol=1e-12)


def _layernorm_loops(x, g, b, eps=1e-5):
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        mu = sum(row) / len(row)
        var = sum((v - mu) ** 2 for v in row) / len(row)
        out[idx] = [(v - mu) / math.sqrt(var + eps) * gi + bi for v, gi, bi in zip(row, g, b)]
    return out


def test_transformer_block_matches_composition_of_loops():
    inp = {k: v.astype(np.float64) for k, v in R.in_transformer_block(_rng()).items()}
    (y,) = R.ref_transformer_block(**inp)
    x = inp["x"]
    h = x + _attention_loops(_layernorm_loops(x, inp["ln1_g"], inp["ln1_b"]),
                             inp["wq"], inp["wk"], inp["wv"], inp["wo"])
    z = _layernorm_loops(h, inp["ln2_g"], inp["ln2_b"])
    a = z @ inp["w1"] + inp["b1"]
    gelu = 0.5 * a * (1 + np.tanh(0.7978845608028654 * (a + 0.044715 * a ** 3)))
    want = h + gelu @ inp["w2"] + inp["b2"]
    np.testing.assert_allclose(y, want, rtol=1e-9, atol=1e-10)
    # values stay O(1): the drawn weights keep the block well scaled for float32
    assert 0.1 < np.abs(y).std() < 10


def test_mlp_reference_is_residual_ffn():
    inp = R.in_mlp(_rng())
    (y,) = R.ref_mlp(**inp)
    f = {k: v.astype(np.float64) for k, v in inp.items()}
    hidden = R.gelu_tanh(f["x"] @ f["w1"] + f["b1"])
    np.testing.assert_allclose(y - f["x"], hidden @ f["w2"] + f["b2"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_tolerances_admit_a_float32_evaluation(name, monkeypatch):
    """The same formulas evaluated in float32 NumPy must pass with a wide margin (10x),
    so the tolerances are not tighter than float32 arithmetic allows."""
    case = SAMPLES[name]
    inputs = case.make_inputs(_rng(1))
    want = case.reference(**inputs)
    monkeypatch.setattr(R, "_f64", lambda *a: tuple(np.asarray(v, np.float32) for v in a))
    got = case.reference(**inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=case.rtol / 10, atol=case.atol / 10)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_inputs_are_deterministic_float32(name):
    """Deterministic, and float32 but for indices (the embedding's ids, i64)."""
    case = SAMPLES[name]
    a, b = case.make_inputs(_rng(3)), case.make_inputs(_rng(3))
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == (np.int64 if k.endswith("ids") else np.float32), k
        np.testing.assert_array_equal(a[k], b[k])
