"""The tensor-core instructions a generated kernel calls, as Numba intrinsics that emit
inline PTX (numba-cuda has no tensor-core API of its own; it compiles through NVVM, which
takes inline assembly as ``activemask`` and the cache-hinted loads of numba-cuda do).

- ``ldmatrix_x4_trans(tile, index)``: ``ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16``.
  Lane ``l`` gives the address of row ``l % 8`` of 8 x 8 matrix ``l // 8`` (16 bytes
  from ``tile[index]``, a shared array of 2-byte elements); each lane receives four
  32-bit registers, two halves of each matrix, transposed: lane ``t`` holds, of matrix
  ``i``, column ``t // 4`` at rows ``2 (t % 4)`` and ``2 (t % 4) + 1``.
- ``mma_f16(a0, a1, a2, a3, b0, b1, c0, c1, c2, c3)`` and ``mma_bf16``:
  ``mma.sync.aligned.m16n8k16.row.col.f32.<half>.<half>.f32``, one 16 x 8 x 16 product
  per warp with float32 accumulators; returns the four new accumulators.

Which fragment element each lane holds (PTX ISA, "Matrix Fragments for mma.m16n8k16"),
with ``g = lane // 4`` and ``q = lane % 4``: ``a0``: row ``g``, columns ``2q, 2q+1`` (of
the 16 x 16 ``a``); ``a1``: row ``g + 8``; ``a2``: columns ``+ 8``; ``a3``: both.
``b0``: rows ``2q, 2q+1`` (of the 16 x 8 ``b``), column ``g``; ``b1``: rows ``+ 8``.
``c0, c1``: row ``g``, columns ``2q, 2q+1``; ``c2, c3``: row ``g + 8``. A k-major staging
tile (``[k][m]``, ``[k][n]``) read with ``.trans`` gives exactly these registers
(runtime/cuda/codegen_gemm_mma.py).

Numba's CUDA simulator runs none of these: the generated kernel's simulator twin does the
same product from the same shared tiles without them (``codegen_gemm_mma``).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.cuda.extending import intrinsic

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()


def _address(context, builder, array_type, array, index) -> ir.Value:
    """The generic address of ``array[index]`` (a 1-D array) as a 64-bit integer."""
    view = context.make_array(array_type)(context, builder, array)
    pointer = cgutils.get_item_pointer(context, builder, array_type, view, [index], wraparound=False)
    return builder.ptrtoint(pointer, _I64)


def _unpack(context, builder, return_type, struct: ir.Value, count: int):
    return context.make_tuple(builder, return_type, [builder.extract_value(struct, i) for i in range(count)])


@intrinsic
def ldmatrix_x4_trans(typingctx, tile, index):
    if not (isinstance(tile, types.Array) and tile.ndim == 1 and tile.dtype.bitwidth == 16):
        return None
    signature = types.UniTuple(types.uint32, 4)(tile, index)

    def codegen(context, builder, sig, args):
        address = _address(context, builder, sig.args[0], args[0], args[1])
        asm = ir.InlineAsm(
            ir.FunctionType(ir.LiteralStructType([_I32] * 4), [_I64]),
            "{ .reg .u64 s; cvta.to.shared.u64 s, $4; "
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [s]; }",
            "=r,=r,=r,=r,l",
            side_effect=True,  # reads shared memory another thread wrote: not hoisted past a barrier
        )
        return _unpack(context, builder, sig.return_type, builder.call(asm, [address]), 4)

    return signature, codegen


def _mma(half: str):
    @intrinsic
    def mma(typingctx, a0, a1, a2, a3, b0, b1, c0, c1, c2, c3):
        signature = types.UniTuple(types.float32, 4)(a0, a1, a2, a3, b0, b1, c0, c1, c2, c3)

        def codegen(context, builder, sig, args):
            operands = [context.cast(builder, v, t, types.uint32) for v, t in zip(args[:6], sig.args[:6])]
            operands += [context.cast(builder, v, t, types.float32) for v, t in zip(args[6:], sig.args[6:])]
            asm = ir.InlineAsm(
                ir.FunctionType(ir.LiteralStructType([_F32] * 4), [_I32] * 6 + [_F32] * 4),
                f"mma.sync.aligned.m16n8k16.row.col.f32.{half}.{half}.f32 "
                "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
                "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
            )
            return _unpack(context, builder, sig.return_type, builder.call(asm, operands), 4)

        return signature, codegen

    return mma


mma_f16 = _mma("f16")
mma_bf16 = _mma("bf16")
