"""The GEMM libraries behind ``loop.gemm``: NumPy's BLAS on the CPU, cuBLAS through
CuPy on the GPU (an optional dependency: where CuPy cannot be imported, or on Numba's
CUDA simulator, the fusion pass is told there is no library and generates every GEMM).

Both take the operands as they are (strided views: a transposed or head-split operand
is passed to the library with its strides, never copied by fusec) and write the
product into a contiguous buffer of the result's shape.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from runtime.device import simulated
from runtime.errors import ExecutionError


def _operands(a: Any, b: Any, out: Any, transpose_lhs: bool, transpose_rhs: bool) -> tuple[Any, Any, Any]:
    """The operands as the library takes them: transposes as strided views, and a batch
    of rows times one matrix (``[B, S, K] @ [K, N]``) as one matrix product of
    ``B*S`` rows instead of ``B`` small ones."""
    if b.ndim == 2 and a.ndim > 2 and not transpose_lhs and a.flags.c_contiguous and out.flags.c_contiguous:
        a, out = a.reshape(-1, a.shape[-1]), out.reshape(-1, out.shape[-1])
    return (a.swapaxes(-1, -2) if transpose_lhs else a), (b.swapaxes(-1, -2) if transpose_rhs else b), out


def cpu_gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_lhs: bool, transpose_rhs: bool) -> None:
    """``out = matmul(a, b)`` through NumPy (its BLAS for floats; integers wrap)."""
    a, b, out = _operands(a, b, out, transpose_lhs, transpose_rhs)
    np.matmul(a, b, out=out)


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
    a, b, out = _operands(as_cupy(a), as_cupy(b), as_cupy(out), transpose_lhs, transpose_rhs)
    try:
        cupy_module().matmul(a, b, out=out)
    except Exception as error:  # CuPy's and cuBLAS's own errors (out of memory, a failed call)
        raise ExecutionError(f"the library GEMM (cuBLAS through CuPy) failed: {type(error).__name__}: {error}") from error
