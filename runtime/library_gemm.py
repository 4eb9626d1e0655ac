"""What the GEMM libraries behind ``loop.gemm`` share (``runtime.cpu.gemm``: NumPy's
BLAS; ``runtime.cuda.gemm``: cuBLAS through CuPy): the operands as the library takes
them. Both take the operands as they are (strided views: a transposed or head-split
operand is passed to the library with its strides, never copied by fusec) and write
the product into a contiguous buffer of the result's shape.
"""

from __future__ import annotations

import math
from typing import Any


def library_operands(a: Any, b: Any, out: Any, transpose_lhs: bool, transpose_rhs: bool) -> tuple[Any, Any, Any]:
    """The operands as the library takes them: transposes as strided views, and a batch
    of rows times one matrix (``[B, S, K] @ [K, N]``) as one matrix product of
    ``B*S`` rows instead of ``B`` small ones."""
    if b.ndim == 2 and a.ndim > 2 and not transpose_lhs and a.flags.c_contiguous and out.flags.c_contiguous:
        rows = math.prod(a.shape[:-1])  # named, not -1: a reshape cannot infer it beside an axis of 0
        a, out = a.reshape(rows, a.shape[-1]), out.reshape(rows, out.shape[-1])
    return (a.swapaxes(-1, -2) if transpose_lhs else a), (b.swapaxes(-1, -2) if transpose_rhs else b), out


def bf16_matmul(xp: Any, a: Any, b: Any, out: Any) -> None:
    """``out = matmul(a, b)`` of ``bf16`` operands held as their ``uint16`` bits, with
    ``xp`` (NumPy or CuPy, neither of which has a bfloat16 GEMM): widened to float32
    (exact), multiplied by the library in float32, rounded to nearest even as
    ``runtime/half_floats.py``'s ``bf16_bits`` (NaN stays NaN, overflow is inf)."""
    sixteen = xp.uint32(16)
    product = xp.matmul((a.astype(xp.uint32) << sixteen).view(xp.float32), (b.astype(xp.uint32) << sixteen).view(xp.float32))
    u = product.view(xp.uint32)
    nan = xp.isnan(product)
    u = xp.where(nan, u | xp.uint32(0x400000), u)  # quiet, and no carry out of a NaN's exponent
    carry = xp.where(nan, xp.uint32(0), xp.uint32(0x7FFF) + ((u >> sixteen) & xp.uint32(1)))
    out[...] = ((u + carry) >> sixteen).astype(xp.uint16)
