"""concat and pad on `--target cuda` (the simulator in CI; `FUSEC_TEST_GPU=1` on a GPU):
RoPE's rotate-half and a padded softmax, each one kernel, against NumPy."""

from __future__ import annotations

import numpy as np

import fusec
from dialects import graph


def test_rotate_half_and_padded_softmax_on_cuda():
    source = """
    fn main(x: f32[S, 8], x1: f32[S, 4], x2: f32[S, 4], sin: f32[S, 8], cos: f32[S, 8]) -> f32[S, 8] {
        return concat((-x2, x1), axis=-1) * sin + x * cos
    }

    fn masked(x: f32[S, 6]) -> f32[S, 8] {
        return softmax(pad(x, ((0, 0), (1, 1)), value=-1e30), axis=-1)
    }
    """
    program = fusec.compile(source, target="cuda")
    for entry in ("main", "masked"):
        fused = program.compilation(entry).stage("fused")
        groups = [op for op in fused.walk() if isinstance(op, graph.FusionGroupOp)]
        assert len(groups) == 1, entry

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8), dtype=np.float32)
    sin, cos = rng.standard_normal((2, 3, 8), dtype=np.float32)
    x1, x2 = x[:, :4].copy(), x[:, 4:].copy()
    got = program.main(x, x1, x2, sin, cos)
    np.testing.assert_allclose(got, np.concatenate([-x2, x1], axis=-1) * sin + x * cos, rtol=1e-6)

    y = rng.standard_normal((3, 6), dtype=np.float32)
    p = np.pad(y, ((0, 0), (1, 1)), constant_values=np.float32(-1e30))
    e = np.exp(p - p.max(-1, keepdims=True))
    np.testing.assert_allclose(program.masked(y), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
