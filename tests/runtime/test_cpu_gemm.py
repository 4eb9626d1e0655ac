"""The CPU's gemm schedule (runtime/cpu/codegen_gemm.py, runtime/cpu/micro_kernel.py):
generated matmul kernels of f32 and f64 factors as a cache-blocked product with a
register tile, on sizes that cut its tiles anywhere, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import fusec

MATMUL_RELU = """
fn main(x: {t}[N, K], w: {t}[K, M], b: {t}[M]) -> {t}[N, M] {{
    return relu(x @ w + b)
}}
"""

#: (N, K, M): a tile's rows (8) and columns (32), an item's rows (384) and columns (256),
#: the reduction's block (256) each cut unevenly, one row, one column, a short reduction
SIZES = [(1, 1, 1), (7, 3, 5), (9, 33, 31), (300, 70, 130), (385, 257, 257), (40, 600, 520), (2, 5, 1)]


def _generated(source: str):
    program = fusec.compile(source, target="cpu", matmul="generated")
    assert 'cpu.schedule = "gemm"' in program.ir("tiled")
    return program


def _small_integers(rng, shape, dtype):
    """Values whose products and sums are exact in the type: any order, any rounding of
    them gives NumPy's bits."""
    return rng.integers(-3, 4, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("n, k, m", SIZES)
def test_a_generated_product_with_its_epilogue_is_numpys(n, k, m, dtype):
    np_dtype = np.float32 if dtype == "f32" else np.float64
    program = _generated(MATMUL_RELU.format(t=dtype))
    rng = np.random.default_rng(n * k * m)
    x, w, b = (_small_integers(rng, s, np_dtype) for s in ((n, k), (k, m), (m,)))
    got = program.main(x, w, b)
    np.testing.assert_array_equal(got, np.maximum(x @ w + b, 0))


def test_a_batched_product_with_a_transposed_factor():
    program = _generated("""
fn main(q: f32[B, S, 64], k: f32[B, T, 64]) -> f32[B, S, T] {
    return q @ transpose(k, (0, 2, 1))
}
""")
    rng = np.random.default_rng(1)
    q, k = _small_integers(rng, (3, 45, 64), np.float32), _small_integers(rng, (3, 70, 64), np.float32)
    got = program.main(q, k)
    np.testing.assert_array_equal(got, q @ k.transpose(0, 2, 1))


def test_a_convolution_reads_its_windows_into_the_panels():
    program = _generated("""
fn main(x: f32[N, 9, 11, 5], w: f32[3, 3, 5, 7]) -> f32[N, 9, 11, 7] {
    return conv2d(x, w, padding=1)
}
""")
    rng = np.random.default_rng(2)
    x, w = _small_integers(rng, (2, 9, 11, 5), np.float32), _small_integers(rng, (3, 3, 5, 7), np.float32)
    got = program.main(x, w)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = sum(padded[:, i : i + 9, j : j + 11, :] @ w[i, j] for i in range(3) for j in range(3))
    np.testing.assert_array_equal(got, want)


def test_random_floats_are_close_to_numpy_and_the_same_bits_on_every_run():
    program = _generated(MATMUL_RELU.format(t="f32"))
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s, dtype=np.float32) for s in ((500, 700), (700, 300), (300,)))
    first = program.main(x, w, b)
    np.testing.assert_allclose(first, np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)
    for _ in range(3):
        np.testing.assert_array_equal(program.main(x, w, b), first)
