"""What the GEMM libraries behind ``loop.gemm`` share (``runtime.cpu.gemm``: NumPy's
BLAS; ``runtime.cuda.gemm``: cuBLAS through CuPy): the operands as the library takes
them. Both take the operands as they are (strided views: a transposed or head-split
operand is passed to the library with its strides, never copied by fusec) and write
the product into a contiguous buffer of the result's shape.
"""

from __future__ import annotations

from typing import Any


def library_operands(a: Any, b: Any, out: Any, transpose_lhs: bool, transpose_rhs: bool) -> tuple[Any, Any, Any]:
    """The operands as the library takes them: transposes as strided views, and a batch
    of rows times one matrix (``[B, S, K] @ [K, N]``) as one matrix product of
    ``B*S`` rows instead of ``B`` small ones."""
    if b.ndim == 2 and a.ndim > 2 and not transpose_lhs and a.flags.c_contiguous and out.flags.c_contiguous:
        a, out = a.reshape(-1, a.shape[-1]), out.reshape(-1, out.shape[-1])
    return (a.swapaxes(-1, -2) if transpose_lhs else a), (b.swapaxes(-1, -2) if transpose_rhs else b), out
