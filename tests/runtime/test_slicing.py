"""Slices, flip, expand_dims, squeeze, split and destructuring, compiled for the CPU and
interpreted by the NumPy reference, against NumPy's own indexing; the RoPE-style halves
as one kernel; the run-time checks of slices whose bounds are sizes."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from tests.passes.fusion.schedule import assert_kernel_count

TARGETS = ["cpu", "numpy"]

PROGRAM = """
fn main(x: f32[N, 8], y: i32[N, D]) -> (f32[N, 6], f32[N, 3], f32[8], f32[N/2, 4], f32[N, 8], i32[N, D/2], i32[2, D]) {
    return x[:, 2:100], x[:, ::-3], x[-1], x[N/2:, ::2], x[::-1], y[:, D/2:], y[-2:]
}

fn layout(x: f32[B, 1, 4]) -> (f32[B, 1, 4], f32[B, 1, 4], f32[1, B, 4, 1], f32[B, 4]) {
    return flip(x), flip(x, axis=(0, 2)), expand_dims(squeeze(x, 1), (0, -1)), x[:, 0, ::-1][::-1]
}

fn heads(qkv: f32[4, D]) -> (f32[4, D/3], f32[2, D/3]) {
    q, k, v = split(qkv, 3)
    a, b = pair(q, k)
    return (a + b) * v, split_rows(qkv)
}

fn pair(a: f32[T, E], b: f32[T, E]) -> (f32[T, E], f32[T, E]) {
    return a * 2.0, b
}

fn split_rows(x: f32[4, D]) -> f32[2, D/3] {
    top, bottom = split(x, 2, axis=0)
    return (top - bottom)[:, :D/3]
}
"""


@pytest.fixture(scope="module", params=TARGETS)
def program(request):
    return fusec.compile(PROGRAM, target=request.param)


def test_subscripts_as_numpy(program):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    y = rng.integers(-50, 50, (6, 10)).astype(np.int32)
    got = program.main(x, y)
    expected = (x[:, 2:100], x[:, ::-3], x[-1], x[3:, ::2], x[::-1], y[:, 5:], y[-2:])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


PAST_THE_START = """
fn main(x: f32[2, 9]) -> (f32[2, 9], f32[1, 9], f32[2, 5], f32[2, 9]) {
    return x[-3:], x[0:-3:-1], x[:, :-10:-2], x[-5:7, -100:]
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_negative_bounds_past_the_start_clamp_as_numpy(target):
    """A negative bound beyond -n clamps to the start (Python's rule as written), rather
    than being counted from the end first (found by the differential tests)."""
    x = np.arange(18, dtype=np.float32).reshape(2, 9)
    got = fusec.compile(PAST_THE_START, target=target).main(x)
    for g, e in zip(got, (x[-3:], x[0:-3:-1], x[:, :-10:-2], x[-5:7, -100:]), strict=True):
        np.testing.assert_array_equal(g, e)


def test_flip_expand_dims_squeeze_as_numpy(program):
    x = np.random.default_rng(1).standard_normal((3, 1, 4)).astype(np.float32)
    got = program.layout(x)
    expected = (np.flip(x), np.flip(x, axis=(0, 2)), np.expand_dims(np.squeeze(x, 1), (0, -1)), x[:, 0, ::-1][::-1])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def test_split_and_destructuring_as_numpy():
    rng = np.random.default_rng(2)
    qkv = rng.standard_normal((4, 12)).astype(np.float32)
    q, k, v = np.split(qkv, 3, axis=-1)
    top, bottom = np.split(qkv, 2, axis=0)
    for target in TARGETS:
        got = fusec.compile(PROGRAM, target=target).heads(qkv)
        np.testing.assert_allclose(got[0], (q * 2 + k) * v, rtol=1e-6)
        np.testing.assert_allclose(got[1], (top - bottom)[:, :4], rtol=1e-6)


ROPE = """
fn main(x: f32[N, D], c: f32[N, D/2], s: f32[N, D/2]) -> f32[N, D/2] {
    return x[:, :D/2] * c + x[:, D/2:] * s
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_rope_halves_are_one_kernel(target):
    program = fusec.compile(ROPE, target=target)
    assert_kernel_count(program.compilation().stage("fused"), 1)
    rng = np.random.default_rng(3)
    x, c, s = (rng.standard_normal(shape).astype(np.float32) for shape in ((5, 16), (5, 8), (5, 8)))
    np.testing.assert_allclose(program.main(x, c, s), x[:, :8] * c + x[:, 8:] * s, rtol=1e-6)


def test_slice_of_a_matmul_and_slices_into_one():
    source = """
    fn main(x: f32[M, D], w: f32[D/2, F]) -> (f32[M, F], f32[M, F/2]) {
        return x[:, D/2:] @ w, relu(x[:, :D/2] @ w)[:, F/2:]
    }
    """
    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    w = rng.standard_normal((4, 6)).astype(np.float32)
    for target in TARGETS:
        got = fusec.compile(source, target=target).main(x, w)
        np.testing.assert_allclose(got[0], x[:, 4:] @ w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[1], np.maximum(x[:, :4] @ w, 0)[:, 3:], rtol=1e-5, atol=1e-6)


BOUNDS = """
fn first(x: f32[M, D], n: f32[N]) -> f32[N, D] {
    return x[:N]
}

fn tail(x: f32[N, D]) -> f32[2, D] {
    return exp(x[-2:])
}

fn every_other(x: f32[N]) -> f32[N/2] {
    return x[::2]
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_symbolic_bounds_are_checked_when_the_program_runs(target):
    program = fusec.compile(BOUNDS, target=target)
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    np.testing.assert_array_equal(program.first(x, np.zeros(4, np.float32)), x[:4])
    out_of_range = r"a slice reads index N-1 of an axis of size M, out of range with M = 6, N = 7"
    with pytest.raises(fusec.FusecError, match=out_of_range):
        program.first(x, np.zeros(7, np.float32))
    np.testing.assert_allclose(program.tail(x), np.exp(x[-2:]), rtol=1e-6)
    too_short = r"a slice reads index N-2 of an axis of size N, out of range with N = 1$"
    with pytest.raises(fusec.FusecError, match=too_short):
        program.tail(x[:1])
    np.testing.assert_array_equal(program.every_other(np.arange(6, dtype=np.float32)), [0, 2, 4])
    with pytest.raises(fusec.FusecError, match=r"size N/2 is not a whole number with N = 5"):
        program.every_other(np.arange(5, dtype=np.float32))


def test_a_callee_slices_with_its_own_sizes():
    """half's E/2 is main's D/2: the specialisation of half for main's sizes renames the
    slices' starts with the types."""
    source = """
    fn half(x: f32[N, E]) -> (f32[N, E/2], f32[N, E/2]) {
        a, b = split(x, 2)
        return x[:, E/2:] - b, a
    }
    fn main(x: f32[M, D]) -> (f32[M, D/2], f32[M, D/2]) {
        p, q = half(x)
        return p, q
    }
    """
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    for target in TARGETS:
        low, high = fusec.compile(source, target=target).main(x)
        np.testing.assert_array_equal(low, np.zeros((3, 4), np.float32))
        np.testing.assert_array_equal(high, x[:, :4])


@pytest.mark.parametrize("target", TARGETS)
def test_a_slice_of_a_product_is_one_kernel(target):
    """(x @ w)[1:, ::2] multiplies only the rows and columns it reads: the slices move
    onto the operands, as index maps of the matmul's loads."""
    source = "fn main(x: f32[8, K], w: f32[K, N]) -> f32[7, N/2] { return (x @ w)[1:, ::2] }"
    program = fusec.compile(source, target=target)
    assert_kernel_count(program.compilation().stage("fused"), 1)
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((8, 5)).astype(np.float32), rng.standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_allclose(program.main(x, w), (x @ w)[1:, ::2], rtol=1e-5, atol=1e-6)
