"""conv2d, the pools, batchnorm and global_avg_pool on `--target cuda` (the simulator in
CI; `FUSEC_TEST_GPU=1` on a GPU), on small images, against NumPy written out in
tests/frontend/test_conv_builtins.py."""

from __future__ import annotations

import numpy as np

import fusec
from tests.frontend.test_conv_builtins import batchnorm, conv2d, nchw, oihw, pool


def test_conv_batchnorm_relu_and_pools_on_cuda():
    source = """
    fn main(x: f32[N, H, W, 2], w: f32[3, 3, 2, 4], m: f32[4], v: f32[4], g: f32[4], b: f32[4]) -> f32[N, H, W, 4] {
        return relu(batchnorm(conv2d(x, w, padding="same"), m, v, g, b))
    }

    fn nchw(x: f32[1, 4, 5, 6], w: f32[2, 2, 2, 2]) -> (f32[1, 2, 3, 2], f32[1, 4, 3, 3], f32[1, 4]) {
        y = conv2d(x, w, stride=2, padding=((1, 0), (0, 0)), dilation=(1, 2), groups=2, layout="NCHW")
        return y, avg_pool2d(x, 3, stride=2, padding=1, layout="NCHW"), global_avg_pool(x, layout="NCHW")
    }

    fn pools(x: f32[1, 4, 6, 2]) -> f32[1, 2, 3, 2] {
        return max_pool2d(x, 2)
    }
    """
    program = fusec.compile(source, target="cuda")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 4, 3, 2), dtype=np.float32), rng.standard_normal((3, 3, 2, 4), dtype=np.float32)
    m, g, b = rng.standard_normal((3, 4), dtype=np.float32)
    v = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    want = np.maximum(batchnorm(conv2d(x, w, low=(1, 1), high=(1, 1)), m, v, g, b, 1e-5, -1), 0)
    np.testing.assert_allclose(program.main(x, w, m, v, g, b), want, rtol=1e-4, atol=1e-5)

    y = rng.standard_normal((1, 5, 6, 4), dtype=np.float32)  # NHWC
    k = rng.standard_normal((2, 2, 2, 2), dtype=np.float32)  # HWIO
    conv, avg, mean = program.nchw(nchw(y), oihw(k))
    want = nchw(conv2d(y, k, (2, 2), (1, 2), low=(1, 0), high=(0, 0), groups=2))
    np.testing.assert_allclose(conv, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(avg, nchw(pool(y, "avg", (3, 3), (2, 2), (1, 1), (1, 1))), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, y.mean(axis=(1, 2)), rtol=1e-5, atol=1e-6)

    z = rng.standard_normal((1, 4, 6, 2), dtype=np.float32)
    np.testing.assert_array_equal(program.pools(z), pool(z, "max", (2, 2), (2, 2)))
