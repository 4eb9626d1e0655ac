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

