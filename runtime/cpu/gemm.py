"""The CPU's GEMM library behind ``loop.gemm``: NumPy's ``matmul`` (its BLAS for floats)."""

from __future__ import annotations

import numpy as np

from runtime.host_plan import BF16_BITS
from runtime.library_gemm import bf16_matmul, library_operands


def cpu_gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_lhs: bool, transpose_rhs: bool) -> None:
    """``out = matmul(a, b)`` through NumPy (its BLAS for floats; integers wrap)."""
    a, b, out = library_operands(a, b, out, transpose_lhs, transpose_rhs)
    if out.dtype == BF16_BITS:  # bf16's bits (runtime/host_plan.storage_dtype)
        bf16_matmul(np, a, b, out)
    else:
        np.matmul(a, b, out=out)
