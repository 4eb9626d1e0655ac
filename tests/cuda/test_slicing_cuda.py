"""Slices on `--target cuda` (the simulator in CI): the RoPE-style halves in one kernel,
a negative step, an integer subscript and split, against NumPy."""

from __future__ import annotations

import numpy as np

import fusec
from tests.passes.fusion.schedule import assert_kernel_count

SOURCE = """
fn main(x: f32[N, D], c: f32[N, D/2], s: f32[N, D/2]) -> (f32[N, D/2], f32[D], f32[N, D/2]) {
    lo, hi = split(x, 2)
    return x[:, :D/2] * c + x[:, D/2:] * s, x[-1, ::-1], flip(hi, 0) - lo
}
"""


def test_slices_on_cuda():
    program = fusec.compile(SOURCE, target="cuda")
    # the halves and flip(hi) - lo share one kernel (same shape, same input); x[-1, ::-1] is a second
    assert_kernel_count(program.compilation().stage("fused"), 2)
    rng = np.random.default_rng(0)
    x, c, s = (rng.standard_normal(shape).astype(np.float32) for shape in ((3, 8), (3, 4), (3, 4)))
    got = program.main(x, c, s)
    expected = (x[:, :4] * c + x[:, 4:] * s, x[-1, ::-1], x[::-1, 4:] - x[:, :4])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6)
