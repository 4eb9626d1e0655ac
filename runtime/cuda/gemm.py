"""The GPU's GEMM library behind ``loop.gemm``: cuBLAS through CuPy, an optional
dependency: where CuPy cannot be imported, or on Numba's CUDA simulator, the fusion
pass is told there is no library and generates every GEMM.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, NamedTuple

import numpy as np

from runtime.cuda.device import simulated
from runtime.errors import ExecutionError
from runtime.host_plan import BF16_BITS
from runtime.library_gemm import bf16_matmul, library_operands


@functools.cache
def cupy_module():
    """CuPy, or None where it cannot run (not installed, no GPU, the simulator)."""
    if simulated():
        return None
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # not installed, or no driver/device it can use
        return None


def cuda_library_available() -> bool:
    return cupy_module() is not None


def as_cupy(array: Any) -> Any:
    """A CuPy view of a device array (Numba, CuPy, PyTorch: no copy)."""
    cupy = cupy_module()
    return array if isinstance(array, cupy.ndarray) else cupy.asarray(array)


def cuda_gemm(a: Any, b: Any, out: Any, transpose_lhs: bool, transpose_rhs: bool) -> None:
    """``out = matmul(a, b)`` through cuBLAS (CuPy), on the legacy default stream the
    kernels run on, so it is ordered after the kernels that wrote ``a`` and ``b``."""
    a, b, out = library_operands(as_cupy(a), as_cupy(b), as_cupy(out), transpose_lhs, transpose_rhs)
    cupy = cupy_module()
    try:
        if out.dtype != BF16_BITS:
            cupy.matmul(a, b, out=out)
        elif hasattr(cupy.cuda.cublas, "gemmStridedBatchedEx"):  # bf16's bits (executor.device_dtype)
            bf16_gemm(cupy, a, b, out)
        else:
            bf16_matmul(cupy, a, b, out)
    except Exception as error:  # CuPy's and cuBLAS's own errors (out of memory, a failed call)
        raise ExecutionError(f"the library GEMM (cuBLAS through CuPy) failed: {type(error).__name__}: {error}") from error


#: cuBLAS's values for what ``bf16_gemm`` asks of it (cublas_api.h, library_types.h)
_OP_N, _OP_T = 0, 1
_CUDA_R_16BF = 14
_CUBLAS_COMPUTE_32F = 68
_CUBLAS_GEMM_DEFAULT = -1
#: alpha and beta, read by cuBLAS from host memory (its default pointer mode)
_ONE, _ZERO = np.ones(1, np.float32), np.zeros(1, np.float32)


class Operand(NamedTuple):
    """One factor of a strided batched GEMM in cuBLAS's column-major terms: whether it
    is transposed there, its leading dimension and its batch stride, in elements."""

    op: int
    ld: int
    batch_stride: int


def operand_layout(shape: tuple[int, ...], strides: tuple[int, ...], batch: tuple[int, ...]) -> Operand | None:
    """How cuBLAS reads a row-major matrix (or a batch of them, ``batch`` the product's
    batch shape) given its ``shape`` and element ``strides``, without a copy: op ``N``
    with its row stride as leading dimension where its columns are adjacent (a
    row-major matrix is its transpose in column-major), ``T`` with its column stride where
    its rows are (a transposed view); its batch dimensions must be the product's, with one
    stride between consecutive matrices, or absent (stride 0). None where cuBLAS cannot
    take it as it is."""
    rows, cols = shape[-2:]
    row_stride, col_stride = strides[-2:]
    if any(s < 0 for s in strides):
        return None
    if col_stride == 1 or cols == 1:
        op, ld, least = _OP_N, row_stride if rows > 1 else cols, cols
    elif row_stride == 1 or rows == 1:
        op, ld, least = _OP_T, col_stride if cols > 1 else rows, rows
    else:
        return None
    if ld < max(1, least):
        return None
    if len(shape) == 2:
        return Operand(op, ld, 0)
    if tuple(shape[:-2]) != batch:
        return None
    # the batch dimensions as one: each stride the next one's times its extent (extent 1: any)
    dims = [(n, s) for n, s in zip(shape[:-2], strides[:-2]) if n != 1]
    for (_, outer), (n, inner) in itertools.pairwise(dims):
        if outer != inner * n:
            return None
    return Operand(op, ld, dims[-1][1] if dims else 0)


def bf16_gemm(cupy: Any, a: Any, b: Any, out: Any) -> None:
    """``out = matmul(a, b)`` of ``bf16`` operands held as their ``uint16`` bits, by
    cuBLAS's own bfloat16 GEMM on tensor cores (``cublasGemmStridedBatchedEx``: products
    exact and summed in float32, rounded to nearest even once, as NumPy's float32 matmul
    of the widened factors rounded to bf16, in cuBLAS's order of the sum); CuPy has no
    bfloat16 dtype, so it is called with the operands' addresses. ``out`` is contiguous; a
    factor cuBLAS cannot read as it is (``operand_layout``) is copied contiguous first.
    Row-major ``C = A B`` is column-major ``C^T = B^T A^T``: B is passed first."""
    batch = tuple(out.shape[:-2])
    m, n, k = out.shape[-2], out.shape[-1], a.shape[-1]
    if out.size == 0:
        return
    if k == 0:
        out.fill(0)  # an empty sum: +0.0, whose bits are 0
        return
    layouts = []
    for factor in (a, b):
        layout = operand_layout(factor.shape, tuple(s // factor.itemsize for s in factor.strides), batch)
        if layout is None:
            factor = cupy.ascontiguousarray(factor)
            layout = operand_layout(factor.shape, tuple(s // factor.itemsize for s in factor.strides), batch)
        assert layout is not None  # a contiguous factor always has one
        layouts.append((factor, layout))
    (a, la), (b, lb) = layouts
    cublas = cupy.cuda.cublas
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setStream(handle, cupy.cuda.get_current_stream().ptr)
    cublas.gemmStridedBatchedEx(
        handle, lb.op, la.op, n, m, k,
        _ONE.ctypes.data, b.data.ptr, _CUDA_R_16BF, lb.ld, lb.batch_stride,
        a.data.ptr, _CUDA_R_16BF, la.ld, la.batch_stride,
        _ZERO.ctypes.data, out.data.ptr, _CUDA_R_16BF, n, m * n,
        math.prod(batch), _CUBLAS_COMPUTE_32F, _CUBLAS_GEMM_DEFAULT,
    )  # fmt: skip
