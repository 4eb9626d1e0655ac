"""gather, iota and arange end to end on the CPU target, against NumPy: values, negative
indices, the run-time error of an index out of range, and the kernels they fuse into."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from compiler.report import build_report
from runtime.errors import ExecutionError, IndexOutOfRangeError
from runtime.reference.interpreter import EvaluationError
from tests.passes.fusion.schedule import assert_kernel_count

EMBED_LAYERNORM = """
fn main(table: f32[V, D], ids: i32[B, T], gamma: f32[D], beta: f32[D]) -> f32[B, T, D] {
    return layernorm(gather(table, ids), gamma, beta)
}
"""

CAUSAL_SOFTMAX = """
fn main(s: f32[S, S]) -> f32[S, S] {
    return softmax(where(iota((S, S), 0) >= iota((S, S), 1), s, -1e30))
}
"""


def layernorm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize(
    ("axis", "x_shape", "indices"),
    [
        (0, (7, 5), np.array([0, 6, -1, -7, 3], dtype=np.int64)),
        (1, (3, 6, 2), np.array([[5, -2], [0, 1]], dtype=np.int32)),
        (-1, (4, 9), np.array(-9, dtype=np.int64)),
    ],
)
def test_gather_is_numpy_take(axis, x_shape, indices, rng):
    def type_(dtype, shape):
        return dtype + (str(list(shape)) if shape else "")

    result_shape = np.take(np.empty(x_shape), indices, axis=axis).shape
    src = f"""
    fn main(x: {type_("f32", x_shape)}, i: {type_(str(indices.dtype).replace("nt", ""), indices.shape)})
        -> {type_("f32", result_shape)} {{
        return gather(x, i, axis={axis}) * 2.0
    }}
    """
    x = rng.standard_normal(x_shape).astype(np.float32)
    expected = np.take(x, indices, axis=axis) * 2
    for target in ("numpy", "cpu"):
        np.testing.assert_array_equal(fusec.compile(src, target=target).main(x, indices), expected)


def test_gather_of_computed_indices_and_integers():
    """Indices computed in the kernel (from an iota) and an integer table wrap as NumPy's."""
    src = """
    fn main(x: i32[N, 3]) -> i32[N, 3] {
        return gather(x, 2 - arange(N), axis=0) * 1000000
    }
    """
    x = np.arange(12, dtype=np.int32).reshape(4, 3) * 1000
    expected = np.take(x, 2 - np.arange(4), axis=0) * np.int32(1000000)
    program = fusec.compile(src, target="cpu")
    np.testing.assert_array_equal(program.main(x), expected)
    assert_kernel_count(program.compilation("main").stage("fused"), 1, entry="main")


@pytest.mark.parametrize("bad", [7, -8, 1 << 40])
def test_an_index_out_of_range_is_an_error_naming_it(bad):
    src = "fn main(x: f32[N, 2], i: i64[T]) -> f32[T, 2] { return gather(x, i) * 3.0 }"
    x = np.ones((7, 2), np.float32)
    indices = np.array([0, bad, 1])
    program = fusec.compile(src, target="cpu")
    message = rf"gather of x along axis 0: index {bad} is out of range for an axis of size 7"
    with pytest.raises(IndexOutOfRangeError, match=message):
        program.main(x, indices)
    with pytest.raises(EvaluationError, match=rf"graph.gather: index {bad} is out of range for axis 0 of size 7"):
        fusec.compile(src, target="numpy").main(x, indices)
    # the error does not stick: the next call with good indices runs
    np.testing.assert_array_equal(program.main(x, np.array([6, -7])), np.full((2, 2), 3, np.float32))
    assert issubclass(IndexOutOfRangeError, ExecutionError) and issubclass(IndexOutOfRangeError, fusec.FusecError)


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_a_gather_without_wraparound_takes_no_negative_index(target):
    """`wraparound=false` (PyTorch's index_select): [0, n) only, the error naming the
    index as given."""
    src = "fn main(x: f32[N, 2], i: i64[T]) -> f32[T, 2] { return gather(x, i, wraparound=false) * 3.0 }"
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    program = fusec.compile(src, target=target)
    np.testing.assert_array_equal(program.main(x, np.array([6, 0, 3])), np.take(x, [6, 0, 3], axis=0) * 3)
    error = IndexOutOfRangeError if target == "cpu" else EvaluationError
    for bad in (-1, -7, 7):
        with pytest.raises(error, match=rf"index {bad} is out of range for (an )?axis"):
            program.main(x, np.array([0, bad]))


def test_iota_and_arange(rng):
    src = """
    fn main(x: f32[N, M]) -> (i64[N], f32[M], i32[N, M], f32[N, M]) {
        return arange(N), arange(M, dtype=f32), iota((N, M), 1, dtype=i32), x + iota((N, M), 0, dtype=f32)
    }
    """
    x = rng.standard_normal((3, 5)).astype(np.float32)
    expected = (
        np.arange(3),
        np.arange(5, dtype=np.float32),
        np.broadcast_to(np.arange(5, dtype=np.int32), (3, 5)),
        x + np.arange(3, dtype=np.float32)[:, None],
    )
    for target in ("numpy", "cpu"):
        results = fusec.compile(src, target=target).main(x)
        for got, want in zip(results, expected):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_embedding_lookup_and_layernorm_are_one_kernel(rng):
    program = fusec.compile(EMBED_LAYERNORM, target="cpu")
    assert_kernel_count(program.compilation("main").stage("fused"), 1, entry="main")
    (group,) = build_report(program, program.compilation("main"))["groups"]
    assert group["kind"] == "reduction" and group["ops"][0] == "gather_0"
    table = rng.standard_normal((11, 16)).astype(np.float32)
    ids = rng.integers(-11, 11, (2, 5)).astype(np.int32)
    gamma, beta = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    got = program.main(table, ids, gamma, beta)
    np.testing.assert_allclose(got, layernorm(np.take(table, ids, axis=0), gamma, beta), rtol=1e-5, atol=1e-5)


def test_causal_mask_fuses_into_the_softmax(rng):
    program = fusec.compile(CAUSAL_SOFTMAX, target="cpu")
    assert_kernel_count(program.compilation("main").stage("fused"), 1, entry="main")
    s = rng.standard_normal((6, 6)).astype(np.float32)
    masked = np.where(np.tril(np.ones((6, 6), bool)), s, np.float32(-1e30))
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(program.main(s), e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_a_kernel_gets_the_sizes_of_an_iota_from_an_argument(fuse):
    """Summed over D, the iota leaves no buffer of size D in its kernel: the kernel reads
    D from an argument that has it (for its shape only, moving no bytes)."""
    src = """
    fn main(x: f32[N, D]) -> f32[N] {
        return sum(iota((N, D), 1, dtype=f32), axis=1) + sum(x, axis=1)
    }
    """
    x = np.ones((3, 4), np.float32)
    program = fusec.compile(src, target="cpu", fuse=fuse)
    np.testing.assert_array_equal(program.main(x), np.full(3, 6 + 4, np.float32))
