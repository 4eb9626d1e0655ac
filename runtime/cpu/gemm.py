"""The CPU's GEMM library behind ``loop.gemm``: NumPy's ``matmul`` (its BLAS for floats)."""

from __future__ import annotations

import numpy as np

from runtime.library_gemm import library_operands


def cpu_gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_lhs: bool, transpose_rhs: bool) -> None:
    """``out = matmul(a, b)`` through NumPy (its BLAS for floats; integers wrap)."""
    a, b, out = library_operands(a, b, out, transpose_lhs, transpose_rhs)
    np.matmul(a, b, out=out)
