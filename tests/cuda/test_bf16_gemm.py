"""``runtime/cuda/gemm.bf16_gemm``: cuBLAS's bfloat16 GEMM called with the operands'
addresses. How it reads each factor (``operand_layout``: no copy for row-major and
transposed matrices, batches with one stride, a shared right factor) is checked here
everywhere; the products, against the widened float32 path (``bf16_matmul``), on a GPU
with CuPy (``FUSEC_TEST_GPU=1``)."""

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
    from runtime.cuda.gemm import bf16_gemm
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
    bf16_gemm(cupy, a, b, got)
    bf16_matmul(cupy, a, b, expected)
    got_values = cupy.asnumpy(got).view(ml_dtypes.bfloat16).astype(np.float32)
    expected_values = cupy.asnumpy(expected).view(ml_dtypes.bfloat16).astype(np.float32)
    # the same float32 products; the sums' order is cuBLAS's in both, the rounding one bf16 ulp
    np.testing.assert_allclose(got_values, expected_values, rtol=2**-7, atol=1e-6)
