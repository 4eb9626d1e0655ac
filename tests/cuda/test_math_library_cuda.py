"""The elementwise ops of the math library on `--target cuda`, fused into one kernel,
against the NumPy reference on the values where NumPy's rules show (under the simulator
in CI; `FUSEC_TEST_GPU=1` on a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from dialects import graph
from dialects.elementwise import OPS, Accepts
from tests.runtime import test_math_library as host

FLOATS = """
fn main(x: f32[N], y: f32[N]) -> (f32[N], f32[N], f32[N], bool[N]) {
    rounding = floor(x) + ceil(y) * 10.0 + round(x) * 100.0 + sign(y) * 1000.0
    division = x // y + (x % y) * 10.0 + mod(y, x) * 100.0
    c = clip(x, -4.0, 4.0)
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


#: the edges of each float type: the infinities, -1 and 1, both zeros, a denormal, NaN and
#: a huge value
EDGES = {
    "f32": [-np.inf, -1.0, -0.0, 0.0, 1e-40, 1.0, np.inf, np.nan, 1e30],
    "f64": [-np.inf, -1.0, -0.0, 0.0, 1e-310, 1.0, np.inf, np.nan, 1e300],
}
FLOAT_OPS = [entry for entry in OPS if entry.accepts is not Accepts.BOOL]


@pytest.mark.parametrize("dtype", list(EDGES))
def test_every_float_op_at_the_edges(dtype):
    """Every elementwise op of floats, in one program, on every pair of its type's edges:
    IEEE's results, as NumPy's (NaN for sqrt(-1), log(-1) and tan(inf), -inf for log(0),
    inf for exp of a huge value). Under the simulator a kernel is Python, whose math
    module raised there ("math domain error")."""
    edges = np.array(EDGES[dtype], np.dtype(f"float{dtype[1:]}"))
    operands = [np.repeat(edges, len(edges)), np.tile(edges, len(edges)), np.roll(np.tile(edges, len(edges)), 4)]
    params = ", ".join(f"{name}: {dtype}[N]" for name in host.OPERANDS)
    results = ", ".join("bool[N]" if entry.predicate else f"{dtype}[N]" for entry in FLOAT_OPS)
    calls = ", ".join(host.call_of(entry) for entry in FLOAT_OPS)
    got = fusec.compile(f"fn main({params}) -> ({results}) {{ return {calls} }}", target="cuda").run("main", operands)
    wrong = {}
    for entry, result in zip(FLOAT_OPS, got, strict=True):
        try:
            host.assert_numpys_values(entry, result, operands[: entry.arity])
        except AssertionError as error:
            wrong[entry.name] = str(error)
    assert not wrong, "\n".join(f"{name}: {error}" for name, error in wrong.items())
