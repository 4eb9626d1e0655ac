"""Kernels meet infinities for real: the fast-math flags must not assume they don't."""

import numpy as np

import fusec


def test_max_identity_survives_a_constant_row():
    # Under LLVM's `ninf`, max(-inf, abs(x - x)) folded to garbage and the softmax of a
    # constant row came out nan (found by the differential tests, seed 7000).
    program = fusec.compile(
        "fn main(x: f32[M, N]) -> f32[M, N] {\n    return softmax(abs(x - x))\n}\n", target="cpu"
    )
    x = np.random.default_rng(0).standard_normal((8, 2)).astype(np.float32)
    np.testing.assert_allclose(program.main(x), np.full((8, 2), 0.5, np.float32))


def test_minus_infinity_in_the_data():
    program = fusec.compile(
        "fn main(x: f32[M, N]) -> f32[M] {\n    return max(x, axis=1)\n}\n", target="cpu"
    )
    x = np.full((3, 4), -np.inf, np.float32)
    x[1, 2] = 1.0
    np.testing.assert_array_equal(program.main(x), np.array([-np.inf, 1.0, -np.inf], np.float32))


def test_vectorisable_exp_matches_numpy():
    from runtime.cpu_math import exp_f32

    x = np.concatenate([
        np.linspace(-110, 95, 20001, dtype=np.float32),
        np.array([-np.inf, np.inf, np.nan, 0.0, -0.0, 88.72, -87.34, -103.9], np.float32),
    ])
    got = np.array([exp_f32(v) for v in x], np.float32)
    want = np.exp(x.astype(np.float64))
    with np.errstate(over="ignore"):
        want32 = want.astype(np.float32)
    normal = np.isfinite(want32) & (want32 >= np.finfo(np.float32).tiny)
    ulp = np.spacing(np.abs(want32[normal]))
    assert np.max(np.abs(got[normal] - want[normal]) / ulp) <= 3
    np.testing.assert_array_equal(np.isnan(got), np.isnan(x))
    assert np.all(got[np.isposinf(want32)] == np.inf)
    assert np.all(got[want32 == 0] <= np.finfo(np.float32).tiny)  # underflow: 0 or denormal
