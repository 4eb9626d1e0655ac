"""16-byte loads of half-precision elements for generated kernels, as Numba intrinsics
emitting inline PTX: a thread reading 8 consecutive halves issues one ``ld.global.v4``
instead of 8 two-byte loads, as many bytes per instruction as 4 floats (docs/gpu.md,
"Half precision in memory").

- ``aligned16(array)``: whether ``array``'s data starts on a 16-byte boundary (a
  C-contiguous array whose last axis is a multiple of 8 then has every run of 8 along it,
  from a multiple of 8, on one).
- ``load_f16x8(array, indices)``: the 8 ``f16`` elements from ``array[indices]`` along the
  last axis, widened to float32 (exactly).

Numba's CUDA simulator runs no PTX: a generated kernel reads its elements one by one there
(``runtime/cuda/codegen.py``, ``wide_load``).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.cuda.extending import intrinsic

from runtime.cuda.tensor_cores import element_pointer, index_values

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


@intrinsic
def aligned16(typingctx, array):
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        low = builder.and_(builder.ptrtoint(data, _I64), ir.Constant(_I64, 15))
        return builder.icmp_unsigned("==", low, ir.Constant(_I64, 0))

    return types.boolean(array), codegen


@intrinsic
def load_f16x8(typingctx, array, indices):
    if not (
        isinstance(array, types.Array)
        and array.dtype == types.float16
        and isinstance(indices, types.UniTuple)
        and indices.count == array.ndim
        and isinstance(indices.dtype, types.Integer)
    ):
        return None
    signature = types.UniTuple(types.float32, 8)(array, indices)

    def codegen(context, builder, sig, args):
        array_type, index_type = sig.args
        pointer = element_pointer(
            context, builder, array_type, args[0], index_values(context, builder, index_type, args[1])
        )
        asm = ir.InlineAsm(
            ir.FunctionType(ir.LiteralStructType([_I32] * 4), [_I64]),
            "{ .reg .u64 g; cvta.to.global.u64 g, $4; ld.global.v4.b32 {$0, $1, $2, $3}, [g]; }",
            "=r,=r,=r,=r,l",
        )
        words = builder.call(asm, [builder.ptrtoint(pointer, _I64)])
        pair = ir.VectorType(ir.HalfType(), 2)
        values = []
        for w in range(4):
            halves = builder.bitcast(builder.extract_value(words, w), pair)
            for h in range(2):
                values.append(builder.fpext(builder.extract_element(halves, ir.Constant(_I32, h)), ir.FloatType()))
        return context.make_tuple(builder, sig.return_type, values)

    return signature, codegen
