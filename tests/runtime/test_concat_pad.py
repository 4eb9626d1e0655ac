"""concat, stack and pad compiled for the CPU against NumPy, fused and unfused, and
how many kernels they become: as index maps they fuse into their consumers and
producers (RoPE's rotate-half is one kernel, a pad feeding a reduction is one)."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from compiler.report import build_report
from tests.passes.fusion.schedule import assert_kernel_count

ROTATE_HALF = """
fn main(x: f32[S, 8], x1: f32[S, 4], x2: f32[S, 4], sin: f32[S, 8], cos: f32[S, 8]) -> f32[S, 8] {
    return concat((-x2, x1), axis=-1) * sin + x * cos
}
"""


def _run(source: str, arrays: list[np.ndarray], fuse: bool = True):
    program = fusec.compile(source, target="cpu", fuse=fuse)
    got = program.main(*arrays)
    return program, got if isinstance(got, tuple) else (got,)


def _kernels(program) -> int:
    return build_report(program, program.compilation("main"))["kernels"]


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_rotate_half_is_one_kernel(fuse):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 8), dtype=np.float32)
    sin, cos = rng.standard_normal((2, 5, 8), dtype=np.float32)
    x1, x2 = x[:, :4].copy(), x[:, 4:].copy()
    program, (got,) = _run(ROTATE_HALF, [x, x1, x2, sin, cos], fuse)
    np.testing.assert_allclose(got, np.concatenate([-x2, x1], axis=-1) * sin + x * cos, rtol=1e-6)
    if fuse:
        assert_kernel_count(program.compilation("main").stage("fused"), 1, entry="main")
        (group,) = build_report(program, program.compilation("main"))["groups"]
        assert any(op.startswith("concat") for op in group["ops"])


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_concat_along_each_axis_and_of_symbolic_sizes(fuse):
    source = """
    fn main(a: f32[N, 3], b: f32[N, 5], c: i32[N, 2], d: i32[N, 2]) -> (f32[N, 8], i32[3*N, 2], f32[N, 3]) {
        return concat((a, exp(b)), axis=1), concat((c, d * 2, c)), concat((a,), axis=-1)
    }
    """
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((6, 3), dtype=np.float32), rng.standard_normal((6, 5), dtype=np.float32)
    c, d = rng.integers(-9, 9, (2, 6, 2), dtype=np.int32)
    _, (ab, cdc, same) = _run(source, [a, b, c, d], fuse)
    np.testing.assert_allclose(ab, np.concatenate([a, np.exp(b)], axis=1), rtol=1e-6)
    np.testing.assert_array_equal(cdc, np.concatenate([c, d * 2, c]))
    np.testing.assert_array_equal(same, a)


def test_stack():
    source = """
    fn main(a: f32[N, 3], b: f32[N, 3]) -> (f32[2, N, 3], f32[N, 3, 3]) {
        return stack((a, b)), stack((a, b, a + b), axis=-1)
    }
    """
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 4, 3), dtype=np.float32)
    _, (first, last) = _run(source, [a, b])
    np.testing.assert_array_equal(first, np.stack([a, b]))
    np.testing.assert_allclose(last, np.stack([a, b, a + b], axis=-1), rtol=1e-6)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_pad(fuse):
    source = """
    fn main(x: f32[N, 4], i: i32[3, 2], m: bool[2, 2]) -> (f32[N, 7], i32[4, 7], bool[5, 5]) {
        return pad(x, ((0, 0), (1, 2)), value=-1.5), pad(i, ((1, 0), (2, 3)), value=-7), pad(m, (1, 2), value=true)
    }
    """
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4), dtype=np.float32)
    i = rng.integers(-9, 9, (3, 2), dtype=np.int32)
    m = rng.random((2, 2)) < 0.5
    _, (px, pi, pm) = _run(source, [x, i, m], fuse)
    np.testing.assert_array_equal(px, np.pad(x, ((0, 0), (1, 2)), constant_values=np.float32(-1.5)))
    np.testing.assert_array_equal(pi, np.pad(i, ((1, 0), (2, 3)), constant_values=-7))
    np.testing.assert_array_equal(pm, np.pad(m, ((1, 2), (1, 2)), constant_values=True))


def test_pad_feeding_a_reduction_is_one_kernel():
    """A masked softmax's padding and a padded sum: each pad is read inside its
    reduction's loops, and the two reductions of x are one kernel."""
    source = """
    fn main(x: f32[N, 6]) -> (f32[N], f32[N, 8]) {
        p = pad(x, ((0, 0), (1, 1)), value=-1e30)
        return sum(pad(x, ((0, 0), (0, 2)), value=0.5), axis=-1), softmax(p, axis=-1)
    }
    """
    x = np.random.default_rng(4).standard_normal((5, 6), dtype=np.float32)
    program, (total, soft) = _run(source, [x])
    np.testing.assert_allclose(total, np.pad(x, ((0, 0), (0, 2)), constant_values=0.5).sum(-1), rtol=1e-5)
    p = np.pad(x, ((0, 0), (1, 1)), constant_values=np.float32(-1e30))
    e = np.exp(p - p.max(-1, keepdims=True))
    np.testing.assert_allclose(soft, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert_kernel_count(program.compilation("main").stage("fused"), 1, entry="main")


def test_concat_feeding_a_matmul():
    source = """
    fn main(a: f32[N, 3], b: f32[N, 5], w: f32[8, 4]) -> f32[N, 4] {
        return concat((a, b), axis=1) @ w
    }
    """
    rng = np.random.default_rng(5)
    a, b, w = (rng.standard_normal(s, dtype=np.float32) for s in ((7, 3), (7, 5), (8, 4)))
    program, (got,) = _run(source, [a, b, w])
    np.testing.assert_allclose(got, np.concatenate([a, b], axis=1) @ w, rtol=1e-5, atol=1e-6)
    assert _kernels(program) == 1


STATIC_JOINS = """
fn main(x: f32[3, 2], y: f32[N, 2]) -> (f32[6, 1], f32[N, 6]) {
    t = max(x, axis=1, keepdims=true)
    return concat((t * 0.125, t), axis=-2), pad(y, ((0, 0), (1, 3)), value=1.5)
}
"""


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_joins_of_static_sizes_in_the_parallel_variant(fuse, monkeypatch):
    """Numba types a prange index of a static loop unsigned, and min(i0, 2) of it was a
    float that cannot index (a concat's clamped row): every kernel runs its parallel
    variant here (found by the differential tests)."""
    monkeypatch.setenv("FUSEC_PARALLEL_MIN_WORK", "0")
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((3, 2), dtype=np.float32), rng.standard_normal((5, 2), dtype=np.float32)
    _, (joined, padded) = _run(STATIC_JOINS, [x, y], fuse)
    t = x.max(axis=1, keepdims=True)
    np.testing.assert_array_equal(joined, np.concatenate([t * np.float32(0.125), t], axis=-2))
    np.testing.assert_array_equal(padded, np.pad(y, ((0, 0), (1, 3)), constant_values=1.5))
