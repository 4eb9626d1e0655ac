"""gather and iota on ``--target cuda`` (the simulator in CI): an embedding lookup
with layernorm in one kernel, and an index out of range raised after the kernel, as on
the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from runtime.errors import IndexOutOfRangeError

EMBED_LAYERNORM = """
fn main(table: f32[V, D], ids: i32[T], gamma: f32[D], beta: f32[D]) -> (f32[T, D], i64[T]) {
    return layernorm(gather(table, ids), gamma, beta), arange(T)
}
"""


def layernorm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def test_gather_layernorm_and_an_index_out_of_range_on_cuda():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((6, 8)).astype(np.float32)
    gamma, beta = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    program = fusec.compile(EMBED_LAYERNORM, target="cuda")
    ids = np.array([5, -1, 0], np.int32)
    y, positions = program.main(table, ids, gamma, beta)
    np.testing.assert_allclose(y, layernorm(np.take(table, ids, axis=0), gamma, beta), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(positions, np.arange(3))
    message = "gather of table along axis 0: index 6 is out of range for an axis of size 6"
    with pytest.raises(IndexOutOfRangeError, match=message):
        program.main(table, np.array([0, 6, 1], np.int32), gamma, beta)
    # the record is cleared before each launch: a good call after a bad one runs
    y, _ = program.main(table, ids[::-1].copy(), gamma, beta)
    np.testing.assert_allclose(y, layernorm(np.take(table, ids[::-1], axis=0), gamma, beta), rtol=1e-5, atol=1e-5)


def test_a_whole_tensor_reduction_of_a_gather_checks_its_indices_too():
    """A split reduction's kernel takes its partials and counter, then the error record."""
    program = fusec.compile("fn main(x: f32[N], i: i64[T]) -> f32 { return sum(gather(x, i)) }", target="cuda")
    x = np.arange(5, dtype=np.float32)
    assert program.main(x, np.array([4, -5, 2])) == np.float32(6)
    with pytest.raises(IndexOutOfRangeError, match="index -6 is out of range for an axis of size 5"):
        program.main(x, np.array([0, -6, 1]))


def test_a_gather_without_wraparound_refuses_a_negative_index_on_cuda():
    program = fusec.compile(
        "fn main(x: f32[N], i: i64[T]) -> f32[T] { return gather(x, i, wraparound=false) + 1.0 }", target="cuda"
    )
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(program.main(x, np.array([4, 0, 2])), np.array([5, 1, 3], np.float32))
    with pytest.raises(IndexOutOfRangeError, match="index -1 is out of range for an axis of size 5"):
        program.main(x, np.array([0, -1, 1]))
