"""The GPU's GEMM library behind ``loop.gemm``: cuBLAS through CuPy, an optional
dependency: where CuPy cannot be imported, or on Numba's CUDA simulator, the fusion
pass is told there is no library and generates every GEMM.
"""

from __future__ import annotations

import functools
from typing import Any

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
        if out.dtype == BF16_BITS:  # bf16's bits (runtime/cuda/executor.device_dtype)
            bf16_matmul(cupy, a, b, out)
        else:
            cupy.matmul(a, b, out=out)
    except Exception as error:  # CuPy's and cuBLAS's own errors (out of memory, a failed call)
        raise ExecutionError(f"the library GEMM (cuBLAS through CuPy) failed: {type(error).__name__}: {error}") from error
