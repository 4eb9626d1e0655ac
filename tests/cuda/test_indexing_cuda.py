"""gather and iota on ``--target cuda`` (the simulator in CI): an embedding lookup
with layernorm in one kernel, and an index out of range raised after the kernel, as on
the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from runtime.cuda.device import cuda_usable
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


def test_a_call_on_device_arrays_raises_its_failure_at_the_programs_next_call(monkeypatch):
    """A call on device arrays of shapes seen before returns once its work is queued: the
    failure its kernel records is read behind it and raised by the next call, which then
    runs nothing; FUSEC_CUDA_SYNC_CHECKS=on makes each call wait and raise its own
    (runtime/cuda/error_records.py). A GPU only: the simulator has no such path."""
    torch = pytest.importorskip("torch")
    if not cuda_usable() or not torch.cuda.is_available():
        pytest.skip("PyTorch's CUDA tensors need a GPU (FUSEC_TEST_GPU=1 on the GPU machine)")
    program = fusec.compile("fn main(x: f32[N], i: i64[T]) -> f32[T] { return gather(x, i) + 1.0 }", target="cuda")
    x = torch.arange(5, dtype=torch.float32, device="cuda")
    good, want = torch.tensor([4, 0, 2], device="cuda"), torch.tensor([5.0, 1.0, 3.0], device="cuda")
    for _ in range(2):  # the first call prepares the shapes, the second replays them
        torch.testing.assert_close(program.main(x, good), want)
    program.main(x, torch.tensor([0, 7, 1], device="cuda"))
    torch.cuda.synchronize()
    with pytest.raises(IndexOutOfRangeError, match=r"index 7 is out of range for an axis of size 5 .*in an earlier call"):
        program.main(x, good)
    torch.testing.assert_close(program.main(x, good), want)  # the record was cleared
    monkeypatch.setenv("FUSEC_CUDA_SYNC_CHECKS", "on")
    with pytest.raises(IndexOutOfRangeError, match=r"index -6 is out of range for an axis of size 5 \(kernel \w+\)$"):
        program.main(x, torch.tensor([0, -6, 1], device="cuda"))
    torch.testing.assert_close(program.main(x, good), want)
