"""The elementwise ops of the math library on `--target cuda`, fused into one kernel,
against the NumPy reference on the values where NumPy's rules show (under the simulator
in CI; `FUSEC_TEST_GPU=1` on a GPU)."""

from __future__ import annotations

import numpy as np

import fusec
from dialects import graph

FLOATS = """
fn main(x: f32[N], y: f32[N]) -> (f32[N], f32[N], f32[N], bool[N]) {
    rounding = floor(x) + ceil(y) * 10.0 + round(x) * 100.0 + sign(y) * 1000.0
    division = x // y + (x % y) * 10.0 + mod(y, x) * 100.0
    c = clip(x, -4.0, 4.0)  # the simulator runs Python's math, which raises at tan(inf)
    functions = atan2(y, x) + exp2(c) + softplus(y) + log1p(abs(x)) + expm1(y / 8.0) + tan(c / 8.0)
    tests = isnan(x) or isinf(y) and not (x > y)
    return rounding, division, functions, tests
}
"""

INTEGERS = """
fn main(i: i32[N], j: i32[N]) -> i32[N] {
    return i // j + (i % j) * 3 + sign(j) + clip(i, -5, 5)
}
"""


def _run_both(source, *args):
    cuda = fusec.compile(source, target="cuda")
    fused = cuda.compilation().stage("fused")
    assert sum(isinstance(op, graph.FusionGroupOp) for op in fused.walk()) == 1
    reference = fusec.compile(source, target="numpy")
    return cuda.run("main", args), reference.run("main", args)


def test_float_math_on_cuda():
    specials = np.array([0.0, -0.0, 0.5, -2.5, 2.5, 3.0, -7.0, np.inf, -np.inf, np.nan], dtype=np.float32)
    x = np.repeat(specials, len(specials))
    y = np.tile(specials, len(specials))
    got, want = _run_both(FLOATS, x, y)
    for g, w in zip(got[:2], want[:2]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[3], want[3])


def test_integer_division_on_cuda():
    values = np.array([0, 1, -1, 7, -7, 3, -2147483648, 2147483647], dtype=np.int32)
    i = np.repeat(values, len(values))
    j = np.tile(values, len(values))
    ((got,), (want,)) = _run_both(INTEGERS, i, j)
    np.testing.assert_array_equal(got, want)
