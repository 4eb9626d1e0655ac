"""``runtime/cuda/gemm``: cuBLAS's GEMM called with the operands' addresses
(``GemmCall``), and library GEMMs in packed calls. How it reads each
factor (``operand_layout``: no copy for row-major and transposed matrices, batches with
one stride, a shared right factor) is checked here everywhere; the products, against
CuPy's matmul and the widened float32 path of bf16 (``bf16_matmul``), and the packed
calls, on a GPU with CuPy (``FUSEC_TEST_GPU=1``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from numba import config

from runtime.cuda.gemm import _OP_N, _OP_T, Operand, operand_layout


def layout(array: np.ndarray, batch: tuple[int, ...] = ()) -> Operand | None:
    return operand_layout(array.shape, tuple(s // array.itemsize for s in array.strides), batch)


def test_row_major_and_transposed_factors_are_read_in_place():
    a = np.zeros((6, 10), np.uint16)
    assert layout(a) == Operand(_OP_N, 10, 0)
    assert layout(a.T) == Operand(_OP_T, 10, 0)
    assert layout(a[:, :4]) == Operand(_OP_N, 10, 0)  # a slice of columns: the row stride stays
    assert layout(a[:, ::2]) is None  # neither index adjacent: copied
    assert layout(a[::-1]) is None  # a negative stride: copied
    assert layout(np.zeros((1, 5), np.uint16)[:, :3]) == Operand(_OP_N, 3, 0)  # one row: any stride


def test_batches_with_one_stride_or_none():
    x = np.zeros((2, 3, 4, 5), np.uint16)
    assert layout(x, (2, 3)) == Operand(_OP_N, 5, 20)
    assert layout(x.swapaxes(-1, -2), (2, 3)) == Operand(_OP_T, 5, 20)
    assert layout(np.zeros((4, 5), np.uint16), (2, 3)) == Operand(_OP_N, 5, 0)  # shared by the batch
    heads = np.zeros((2, 4, 3, 5), np.uint16).transpose(0, 2, 1, 3)  # [B, S, H, D] as [B, H, S, D]
    assert layout(heads, (2, 3)) is None  # batch strides that are not one: copied
    assert layout(x, (3, 2)) is None  # another batch shape


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="cuBLAS through CuPy needs a GPU")
@pytest.mark.parametrize(
    "a_shape, b_shape, transpose_a, transpose_b",
    [((64, 96), (96, 48), False, False), ((3, 33, 17), (17, 40), False, False),
     ((2, 3, 16, 24), (2, 3, 24, 8), True, False), ((5, 7), (7, 9), False, True), ((4, 0), (0, 3), False, False)],
)  # fmt: skip
def test_cublas_bf16_gemm_as_the_widened_product(a_shape, b_shape, transpose_a, transpose_b):
    cupy = pytest.importorskip("cupy")
    from runtime.cuda.gemm import cuda_gemm
    from runtime.library_gemm import bf16_matmul

    rng = np.random.default_rng(0)

    def factor(shape, transposed):
        values = rng.standard_normal(shape).astype(ml_dtypes.bfloat16).view(np.uint16)
        if transposed:  # a transposed view of a row-major array
            return cupy.asarray(np.ascontiguousarray(values.swapaxes(-1, -2))).swapaxes(-1, -2)
        return cupy.asarray(values)

    a, b = factor(a_shape, transpose_a), factor(b_shape, transpose_b)
    out_shape = np.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + (a_shape[-2], b_shape[-1])
    got, expected = cupy.empty(out_shape, np.uint16), cupy.empty(out_shape, np.uint16)
    cuda_gemm(a, b, got, False, False)
    bf16_matmul(cupy, a, b, expected)
    got_values = cupy.asnumpy(got).view(ml_dtypes.bfloat16).astype(np.float32)
    expected_values = cupy.asnumpy(expected).view(ml_dtypes.bfloat16).astype(np.float32)
    # the same float32 products; the sums' order is cuBLAS's in both, the rounding one bf16 ulp
    np.testing.assert_allclose(got_values, expected_values, rtol=2**-7, atol=1e-6)


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="cuBLAS through CuPy needs a GPU")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "a_shape, b_shape, transpose_b",
    [((64, 96), (96, 48), False), ((3, 33, 17), (17, 40), False), ((2, 8, 24), (2, 16, 24), True)],
)
def test_cublas_gemm_call_as_cupy_matmul(dtype, a_shape, b_shape, transpose_b):
    cupy = pytest.importorskip("cupy")
    from runtime.cuda.gemm import cuda_gemm

    rng = np.random.default_rng(1)
    a = cupy.asarray(rng.standard_normal(a_shape).astype(dtype))
    b = cupy.asarray(rng.standard_normal(b_shape).astype(dtype))
    expected = cupy.matmul(a, b.swapaxes(-1, -2) if transpose_b else b).astype(np.float32)
    got = cupy.empty(expected.shape, dtype)
    call = cuda_gemm(a, b, got, False, transpose_b)
    assert call is not None  # one cuBLAS call on the operands in place: packable
    tolerance = 1e-5 if dtype == np.float32 else 2e-3  # f16: one rounding of a float32 sum
    got_values = cupy.asnumpy(got).astype(np.float32)
    np.testing.assert_allclose(got_values, cupy.asnumpy(expected), rtol=tolerance, atol=tolerance)


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="packed calls need a GPU")
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_a_library_gemm_is_packed_with_the_same_bits(dtype):
    cupy = pytest.importorskip("cupy")
    import fusec
    from runtime.cuda.launch import DirectGemm

    source = f"""
fn main(x: {dtype}[T, D], w: {dtype}[D, F], b: {dtype}[F]) -> {dtype}[T, F] {{
    return relu(x @ w + b)
}}
"""
    program = fusec.compile(source, target="cuda", matmul="library")
    rng = np.random.default_rng(2)
    storage = np.uint16 if dtype == "bf16" else np.dtype(dtype.replace("f", "float"))

    def argument(shape):
        values = rng.standard_normal(shape).astype(np.float32)
        if dtype == "bf16":
            import ml_dtypes

            return cupy.asarray(values.astype(ml_dtypes.bfloat16).view(np.uint16))
        return cupy.asarray(values.astype(storage))

    calls = [[argument((48, 64)), argument((64, 80)), argument(80)] for _ in range(2)]
    first = [cupy.asnumpy(cupy.asarray(program.main(*args))) for args in calls]  # the general path
    executable = program.executable("main")
    outs = [cupy.empty((48, 80), storage) for _ in calls]  # the same addresses every round
    again = []
    for _ in range(3):
        for args, out in zip(calls, outs):
            executable.run("main", args, out=[out])
        again.append([cupy.asnumpy(out) for out in outs])
    prepared = next(iter(executable._prepared.values()))
    assert prepared.direct is not None and any(isinstance(step, DirectGemm) for step in prepared.direct)
    assert prepared.graphs and executable.ungraphed("main") is None  # the GEMM in the graph
    for results in again:  # packed, then replayed: the first call's bits
        for got, expected in zip(results, first):
            np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))


LINEAR = """
fn main(x: f16[T, D], w: f16[D, F], b: f16[F]) -> f16[T, F] {
    return gelu(x @ w + b)
}
"""


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="CUDA graphs need a GPU")
def test_a_graph_holding_a_library_gemm_replays_with_each_calls_new_addresses():
    """Inputs and results at new addresses every call (PyTorch's allocator hands out a
    few in turn): the graph's GEMM nodes are captured again with them, kernel nodes
    re-addressed; every call's result is its own inputs' product."""
    torch = pytest.importorskip("torch")
    import fusec

    program = fusec.compile(LINEAR, target="cuda", matmul="library")
    w = torch.randn(64, 96, device="cuda").half()
    b = torch.randn(96, device="cuda").half()
    kept = []
    for k in range(8):
        x = torch.randn(32, 64, device="cuda").half() * (k + 1)
        kept.append((x, program.main(x, w, b)))
    executable = program.executable("main")
    (prepared,) = executable._prepared.values()
    assert prepared.graphs and executable.ungraphed("main") is None
    assert len({y.data_ptr() for _, y in kept}) == len(kept)
    first = program.main(kept[0][0], w, b)  # (a shape's first call runs the general path)
    for x, y in kept[1:]:
        expected = torch.nn.functional.gelu((x.float() @ w.float() + b.float()).half().float(), approximate="none")
        torch.testing.assert_close(y.float(), expected, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(first, kept[0][1], rtol=0, atol=0)


@pytest.mark.skipif(config.ENABLE_CUDASIM, reason="CUDA graphs need a GPU")
def test_a_step_a_graph_cannot_hold_leaves_the_calls_step_by_step_and_says_why(monkeypatch):
    torch = pytest.importorskip("torch")
    import fusec
    from runtime.cuda.launch import DirectGemm

    def refuse(self, pointers):
        raise RuntimeError("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")

    monkeypatch.setattr(DirectGemm, "captured", refuse)
    program = fusec.compile(LINEAR, target="cuda", matmul="library")
    x, w, b = (torch.randn(*shape, device="cuda").half() for shape in ((32, 64), (64, 96), (96,)))
    results = [program.main(x, w, b) for _ in range(4)]
    executable = program.executable("main")
    reason = executable.ungraphed("main")
    assert reason is not None and "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" in reason and "step" in reason
    (prepared,) = executable._prepared.values()
    assert not prepared.graphs
    for y in results[1:]:
        torch.testing.assert_close(y, results[0], rtol=0, atol=0)
