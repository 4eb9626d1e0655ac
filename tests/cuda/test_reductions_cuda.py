"""argmax, argmin and prod over whole tensors and long rows on the GPU (the simulator in
CI): the block partials of both of an argmax's reductions combine across the grid, and
the first occurrence still wins."""

from __future__ import annotations

import numpy as np
import pytest

import fusec

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("shape", [(5, 7), (64, 80)], ids=["5-rows", "64-rows"])
def test_whole_tensor_argmax_over_blocks(shape):
    program = fusec.compile(
        "fn main(x: f32[N, D]) -> (i64, i64, i64[N]) { return argmax(x), argmin(x * x), argmax(x, axis=1) }",
        target="cuda",
    )
    x = np.random.default_rng(0).integers(-4, 5, shape).astype(np.float32)  # ties everywhere
    got = program.main(x)
    assert [int(got[0]), int(got[1])] == [np.argmax(x), np.argmin(x * x)]
    assert got[2].tolist() == np.argmax(x, axis=1).tolist()
    x[shape[0] - 1, 3] = np.nan  # in the last block: still found, and first among NaNs
    x[shape[0] - 1, 5] = np.nan
    assert int(program.main(x)[0]) == np.argmax(x)


def test_argmax_of_a_matmul_on_the_gpu():
    program = fusec.compile(
        "fn main(x: f32[T, D], w: f32[D, V]) -> i64[T] { return argmax(x @ w, axis=-1) }", target="cuda"
    )
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    w = rng.standard_normal((8, 33)).astype(np.float32)
    assert program.main(x, w).tolist() == np.argmax(x @ w, axis=-1).tolist()


def test_prod_wraps_and_propagates_nan_over_blocks():
    program = fusec.compile("fn main(k: i32[N], x: f32[N]) -> (i32, f32) { return prod(k), prod(x) }", target="cuda")
    rng = np.random.default_rng(2)
    k = rng.integers(1, 7, 3000).astype(np.int32)
    x = rng.uniform(0.999, 1.001, 3000).astype(np.float32)
    got = program.main(k, x)
    assert int(got[0]) == int(np.prod(k, dtype=np.int32))
    np.testing.assert_allclose(got[1], np.prod(x.astype(np.float64)), rtol=1e-4)
    x[2500] = np.nan
    assert np.isnan(program.main(k, x)[1])
