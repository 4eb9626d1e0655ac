"""The kinds of array a GPU program takes and gives back (docs/gpu.md, "Arrays, streams
and results"): NumPy in, NumPy out; Numba in, Numba out; PyTorch and CuPy in, their own
arrays out, made by their allocators, the kernels on their current stream; and the
graph of a call replayed with the new addresses of each call's results."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from runtime.cuda.device import as_device_array, cuda_module, cuda_usable, is_device_array, same_stream
from runtime.errors import FusecError

SCALE = """
fn main(x: f32[N, D], b: f32[D]) -> f32[N, D] {
    return exp(x - b) * 2.0
}
"""

#: four kernels unfused: a graph whose first and last nodes hold the caller's addresses
CHAIN = """
fn main(x: f32[N, D]) -> (f32[N, D], f32[N]) {
    y = sin(x) * 3.0 + 1.0
    return y, sum(y, axis=1)
}
"""

GATHER = """
fn main(table: f32[V, D], ids: i64[N]) -> f32[N, D] {
    return gather(table, ids)
}
"""


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not cuda_usable() or not torch.cuda.is_available():
        pytest.skip("PyTorch's CUDA tensors need a GPU (FUSEC_TEST_GPU=1 on the GPU machine)")
    return torch


def test_numpy_in_numpy_out():
    program = fusec.compile(SCALE, target="cuda")
    x, b = np.ones((2, 8), np.float32), np.zeros(8, np.float32)
    y = program.main(x, b)
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, np.exp(x - b) * 2, rtol=1e-6)


def test_numba_in_numba_out():
    cuda = cuda_module()
    program = fusec.compile(CHAIN, target="cuda")
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(3, 8)
    for _ in range(3):  # the general path, then the packed launches (on a GPU)
        y, s = program.main(cuda.to_device(x))
        assert is_device_array(y) and is_device_array(s)
        expected = np.sin(x) * 3 + 1
        np.testing.assert_allclose(y.copy_to_host(), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s.copy_to_host(), expected.sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_in_torch_out_on_the_inputs_device(dtype):
    torch = _torch_cuda()
    source = SCALE.replace("f32", {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[dtype])
    program = fusec.compile(source, target="cuda")
    x = torch.randn(64, 32, device="cuda").to(getattr(torch, dtype))
    b = torch.randn(32, device="cuda").to(x.dtype)
    expected = (torch.exp(x.float() - b.float()) * 2).to(x.dtype)
    for _ in range(4):  # the general path, the packed launches, the graph built, replayed
        y = program.main(x, b)
        assert isinstance(y, torch.Tensor) and y.dtype == x.dtype and y.device == x.device
        torch.testing.assert_close(y.float(), expected.float(), rtol=1e-2 if dtype != "float32" else 1e-6, atol=1e-6)


def test_a_graph_replays_with_each_calls_new_addresses():
    torch = _torch_cuda()
    program = fusec.compile(CHAIN, target="cuda", fuse=False)
    kept = []
    for k in range(6):
        x = torch.full((16, 64), float(k), device="cuda")  # new inputs, new results: new addresses
        kept.append((x, *program.main(x)))
    executable = program.executable("main")
    (prepared,) = executable._prepared.values()
    assert len(prepared.graphs) == 1  # one graph, its nodes re-addressed each call
    assert len({y.data_ptr() for _, y, _ in kept}) == len(kept)
    for x, y, s in kept:
        expected = torch.sin(x) * 3 + 1
        torch.testing.assert_close(y, expected)
        torch.testing.assert_close(s, expected.sum(dim=1), rtol=1e-5, atol=1e-4)


def test_kernels_run_on_the_callers_current_stream():
    """The input is written on a side stream after the GPU sleeps there: a kernel on any
    other stream would read it before it is written."""
    torch = _torch_cuda()
    program = fusec.compile(CHAIN, target="cuda")
    source = torch.randn(256, 1024, device="cuda")
    expected = torch.sin(source) * 3 + 1
    x = torch.zeros_like(source)
    program.main(x)  # the general path and the packing, on the default stream
    program.main(x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    for _ in range(3):  # packed launches, then the graph, each on the side stream
        with torch.cuda.stream(side):
            x.zero_()
            torch.cuda._sleep(20_000_000)
            x.copy_(source)
            y, _ = program.main(x)
            got = y.cpu()  # ordered on the side stream
        torch.testing.assert_close(got, expected.cpu())


def test_the_host_waits_for_an_arrays_stream_only_where_the_call_goes_to_another():
    """Viewing a framework's array waits for the stream its interface names (1 for the
    legacy default) unless the call's kernels go to that stream, after its work anyway."""
    assert same_stream(1, 0) and same_stream(2, 2) and same_stream(0x5A0, 0x5A0)
    assert not same_stream(None, 0) and not same_stream(1, 0x5A0) and not same_stream(0x5A0, 0)
    torch = _torch_cuda()
    cupy = pytest.importorskip("cupy")
    x = cupy.ones(1024, np.float32)  # (CuPy's interface names its stream; PyTorch's names none)
    current = torch.cuda.current_stream()  # the legacy default stream, CuPy's too
    torch.cuda._sleep(2_000_000_000)  # about a second of GPU time queued before the view
    as_device_array(x, 0)
    assert not current.query()  # the host did not wait
    as_device_array(x, torch.cuda.Stream().cuda_stream)
    assert current.query()  # it did: the call's work would go to another stream


def test_a_library_gemm_runs_on_the_callers_current_stream():
    """As the kernels: cuBLAS through CuPy, which sets its handle to CuPy's current
    stream at every call, is given the caller's (``runtime.cuda.gemm.cupy_stream``)."""
    torch = _torch_cuda()
    pytest.importorskip("cupy")
    program = fusec.compile(
        "fn main(x: f32[M, K], w: f32[K, N]) -> f32[M, N] { return x @ w }", target="cuda", matmul="library"
    )
    source, w = torch.randn(512, 256, device="cuda"), torch.randn(256, 128, device="cuda")
    expected = (source.double() @ w.double()).float().cpu()
    x = torch.zeros_like(source)
    program.main(x, w)
    program.main(x, w)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    for _ in range(3):  # the general path's packing, then packed calls, on the side stream
        with torch.cuda.stream(side):
            x.zero_()
            torch.cuda._sleep(20_000_000)
            x.copy_(source)
            got = program.main(x, w).cpu()
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_an_index_error_is_read_on_the_callers_stream(monkeypatch):
    """The error record's copy goes on the caller's stream behind the kernels: read at the
    next call once that stream has run it, or in the call with FUSEC_CUDA_SYNC_CHECKS=on."""
    torch = _torch_cuda()
    program = fusec.compile(GATHER, target="cuda")
    table = torch.randn(10, 4, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        ids = torch.tensor([1, 2, 3], device="cuda")
        torch.testing.assert_close(program.main(table, ids), table[ids])
        torch.testing.assert_close(program.main(table, ids), table[ids])
        bad = torch.tensor([1, 12, 3], device="cuda")
        program.main(table, bad)
        side.synchronize()
        with pytest.raises(FusecError, match="out of range .*in an earlier call"):
            program.main(table, ids)
        monkeypatch.setenv("FUSEC_CUDA_SYNC_CHECKS", "on")
        with pytest.raises(FusecError, match="out of range"):
            program.main(table, bad)


def test_cupy_in_cupy_out():
    cupy = pytest.importorskip("cupy")
    if not cuda_usable():
        pytest.skip("CuPy's arrays need a GPU")
    program = fusec.compile(SCALE, target="cuda")
    x = cupy.asarray(np.random.default_rng(0).standard_normal((8, 16), np.float32))
    b = cupy.asarray(np.ones(16, np.float32))
    for _ in range(3):
        y = program.main(x, b)
        assert isinstance(y, cupy.ndarray)
        np.testing.assert_allclose(cupy.asnumpy(y), np.exp(cupy.asnumpy(x) - 1) * 2, rtol=1e-6)


def test_a_tensor_that_requires_gradients_is_read_in_place():
    """A parameter (its ``__cuda_array_interface__`` refuses: it requires gradients) is
    read through its own accessors, as the torch door hands parts their weights."""
    torch = _torch_cuda()
    program = fusec.compile(SCALE, target="cuda")
    x = torch.nn.Parameter(torch.randn(8, 16, device="cuda"))
    b = torch.zeros(16, device="cuda")
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(program.main(x, b), torch.exp(x) * 2)
