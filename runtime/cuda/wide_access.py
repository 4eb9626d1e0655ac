"""16-byte loads and stores of runs of 8 elements for generated kernels, as Numba
intrinsics: a thread reading or writing 8 consecutive halves issues one 16-byte access
(``ld.global.v4.b32`` / ``st.global.v4.b32``) instead of 8 two-byte ones, and 8
consecutive floats two, not 8 (docs/gpu.md, "Half precision in memory").

- ``aligned16(array)``: whether ``array``'s data starts on a 16-byte boundary (a
  C-contiguous array whose last axis is a multiple of 8 then has every run of 8 along it,
  from a multiple of 8, on one).
- ``load_x8(array, indices)``: the 8 elements of an ``f16`` or ``f32`` array from
  ``array[indices]`` along the last axis, as float32 (halves widened exactly); of a
  ``uint16`` array (``bf16``'s bits), the 8 as they are.
- ``store_x8(array, indices, values)``: the 8 ``values`` into ``array[indices]`` and the
  7 elements after it, each converted as a one-element store converts it (a float32
  rounded to a half to nearest even; ``bf16``'s bits, rounded by the kernel, as they are).

Numba's CUDA simulator runs none of this: a generated kernel reads and writes its
elements one by one there (``runtime/cuda/codegen.py``, ``wide_load``/``wide_store``).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.cuda.extending import intrinsic

from runtime.cuda.tensor_cores import element_pointer, index_values

_I16 = ir.IntType(16)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_WORDS = ir.VectorType(_I32, 4)  # one 16-byte access
#: the element types a run is accessed in: 16 bytes are 8 halves (or bf16's bits) or 4 floats
_RUN_TYPES = (types.float16, types.uint16, types.float32)
RUN = 8


@intrinsic
def aligned16(typingctx, array):
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        low = builder.and_(builder.ptrtoint(data, _I64), ir.Constant(_I64, 15))
        return builder.icmp_unsigned("==", low, ir.Constant(_I64, 0))

    return types.boolean(array), codegen


def _run_pointer(context, builder, array_type, array, index_type, indices) -> ir.Value:
    """``array[indices]`` as a pointer to 16-byte words (aligned: ``aligned16``)."""
    pointer = element_pointer(context, builder, array_type, array, index_values(context, builder, index_type, indices))
    return builder.bitcast(pointer, _WORDS.as_pointer())


def _half_bits(builder, value: ir.Value) -> ir.Value:
    """The 16 bits of a float16 value as numba-cuda holds it (an i16 or a half)."""
    return value if value.type == _I16 else builder.bitcast(value, _I16)


def _half_value(context, builder, bits: ir.Value) -> ir.Value:
    """A float16 value, as numba-cuda holds it, of its 16 bits."""
    held = context.get_value_type(types.float16)
    return bits if held == _I16 else builder.bitcast(bits, held)


def _runnable(array, indices) -> bool:
    return (
        isinstance(array, types.Array)
        and array.dtype in _RUN_TYPES
        and isinstance(indices, types.UniTuple)
        and indices.count == array.ndim
        and isinstance(indices.dtype, types.Integer)
    )


@intrinsic
def load_x8(typingctx, array, indices):
    if not _runnable(array, indices):
        return None
    signature = types.UniTuple(types.uint16 if array.dtype == types.uint16 else types.float32, RUN)(array, indices)

    def codegen(context, builder, sig, args):
        array_type, index_type = sig.args
        words = _run_pointer(context, builder, array_type, args[0], index_type, args[1])
        count = 16 // (array_type.dtype.bitwidth // 8)  # elements in 16 bytes
        values = []
        for part in range(RUN // count):
            word = builder.load(builder.gep(words, [ir.Constant(_I32, part)]), align=16)
            for w in range(4):
                bits = builder.extract_element(word, ir.Constant(_I32, w))
                if array_type.dtype == types.float32:
                    values.append(builder.bitcast(bits, ir.FloatType()))
                    continue
                for h in range(2):  # the low half is the lower-addressed element
                    half = builder.trunc(builder.lshr(bits, ir.Constant(_I32, 16 * h)), _I16)
                    if array_type.dtype == types.uint16:
                        values.append(half)
                        continue
                    values.append(
                        context.cast(builder, _half_value(context, builder, half), types.float16, types.float32)
                    )
        return context.make_tuple(builder, sig.return_type, values)

    return signature, codegen


@intrinsic
def store_x8(typingctx, array, indices, values):
    if not (_runnable(array, indices) and isinstance(values, types.BaseTuple) and len(values) == RUN):
        return None
    signature = types.void(array, indices, values)

    def codegen(context, builder, sig, args):
        array_type, index_type, value_type = sig.args
        words = _run_pointer(context, builder, array_type, args[0], index_type, args[1])
        items = [
            context.cast(builder, builder.extract_value(args[2], i), value_type[i], array_type.dtype)
            for i in range(RUN)
        ]
        if array_type.dtype == types.float32:
            bits = [builder.bitcast(v, _I32) for v in items]
        else:
            halves = [builder.zext(_half_bits(builder, v), _I32) for v in items]
            bits = [
                builder.or_(halves[2 * w], builder.shl(halves[2 * w + 1], ir.Constant(_I32, 16)))
                for w in range(RUN // 2)
            ]
        for part in range(len(bits) // 4):
            word = ir.Constant(_WORDS, ir.Undefined)
            for w in range(4):
                word = builder.insert_element(word, bits[4 * part + w], ir.Constant(_I32, w))
            builder.store(word, builder.gep(words, [ir.Constant(_I32, part)]), align=16)
        return context.get_dummy_value()

    return signature, codegen
