"""The tensor-core instructions a generated kernel calls, as Numba intrinsics that emit
inline PTX (numba-cuda has no tensor-core API of its own; it compiles through NVVM, which
takes inline assembly as ``activemask`` and the cache-hinted loads of numba-cuda do).

- ``ldmatrix_x4(tile, index)``: ``ldmatrix.sync.aligned.m8n8.x4.shared.b16``.
  Lane ``l`` gives the address of row ``l % 8`` of 8 x 8 matrix ``l // 8`` (16 bytes
  from ``tile[index]``, a shared array of 2-byte elements); each lane receives four
  32-bit registers, two halves of each matrix: lane ``t`` holds, of matrix ``i``, row
  ``t // 4`` at columns ``2 (t % 4)`` and ``2 (t % 4) + 1``.
- ``ldmatrix_x4_trans(tile, index)``: the same with ``.trans``, each matrix transposed:
  lane ``t`` holds column ``t // 4`` at rows ``2 (t % 4)`` and ``2 (t % 4) + 1``.
- ``shared_address(tile, index)``: the shared-window address of ``tile[index]``
  (``cvta.to.shared``), computed once where a loop reads or fills the same places each
  step; ``ldmatrix_x4_at(address, offset)`` and ``ldmatrix_x4_trans_at``: the loads above
  from such an address plus ``offset`` bytes (a literal: an immediate of the
  instruction); ``cp_async_16_at(address, source, size)``: ``cp_async_16`` to one.
- ``mma_f16(a0, a1, a2, a3, b0, b1, c0, c1, c2, c3)`` and ``mma_bf16``:
  ``mma.sync.aligned.m16n8k16.row.col.f32.<half>.<half>.f32``, one 16 x 8 x 16 product
  per warp with float32 accumulators; returns the four new accumulators.
- ``pack_f16x2(lo, hi)`` and ``pack_bf16x2``: ``cvt.rn.<half>x2.f32``, two float32 values
  rounded to nearest even into one 32-bit register, ``lo`` in its low half (the lower
  column of a fragment's pair): accumulators of one ``mma`` become the ``a`` fragment of
  the next (runtime/cuda/codegen_flash_mma.py).
- ``global_address(array, indices)``: the address of ``array[indices]`` (a tuple of
  indices, unchecked), for a copy's alignment test; ``cp_async_16(tile, index, address,
  size)``: ``cp.async.cg.shared.global``, 16 bytes from global ``address`` (16-byte
  aligned) to ``tile[index]``, the ``16 - size`` bytes past ``size`` zero;
  ``cp_async_commit()``: ``cp.async.commit_group``, the thread's copies since the last one a
  group; ``cp_async_wait(n)``: ``cp.async.wait_group n``, all but the ``n`` (a literal)
  latest groups done (a barrier then makes them every thread's); ``load_f16(address)``:
  the half at ``address``, for a copy that cannot be one ``cp.async`` (``load_bf16``: a bf16's
  bits).

Which fragment element each lane holds (PTX ISA, "Matrix Fragments for mma.m16n8k16"),
with ``g = lane // 4`` and ``q = lane % 4``: ``a0``: row ``g``, columns ``2q, 2q+1`` (of
the 16 x 16 ``a``); ``a1``: row ``g + 8``; ``a2``: columns ``+ 8``; ``a3``: both.
``b0``: rows ``2q, 2q+1`` (of the 16 x 8 ``b``), column ``g``; ``b1``: rows ``+ 8``.
``c0, c1``: row ``g``, columns ``2q, 2q+1``; ``c2, c3``: row ``g + 8``. A k-major staging
tile (``[k][m]``, ``[k][n]``) read with ``.trans`` gives exactly these registers
(runtime/cuda/codegen_gemm_mma.py); so does an ``m``-major ``a`` (``[m][k]``) or an
``n``-major ``b`` (``[n][k]``) read without it (runtime/cuda/codegen_flash_mma.py). The
``c`` fragments of two adjacent 8-column parts are, packed in pairs, the ``a`` fragment
of a 16-step reduction over those columns.

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


def element_pointer(context, builder, array_type, array, indices: list) -> ir.Value:
    """The pointer to ``array[indices]`` (one ``intp`` per axis), no bounds or wrap-around."""
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, indices, wraparound=False)


def index_values(context, builder, tuple_type, indices) -> list:
    """The items of a tuple of integer indices as ``intp`` values."""
    items = cgutils.unpack_tuple(builder, indices, len(tuple_type))
    return [context.cast(builder, v, t, types.intp) for v, t in zip(items, tuple_type)]


def _address(context, builder, array_type, array, index) -> ir.Value:
    """The generic address of ``array[index]`` (a 1-D array) as a 64-bit integer."""
    return builder.ptrtoint(element_pointer(context, builder, array_type, array, [index]), _I64)


@intrinsic
def global_address(typingctx, array, indices):
    if not (isinstance(array, types.Array) and isinstance(indices, types.BaseTuple) and len(indices) == array.ndim):
        return None
    signature = types.uint64(array, indices)

    def codegen(context, builder, sig, args):
        array_type, tuple_type = sig.args
        index = index_values(context, builder, tuple_type, args[1])
        return builder.ptrtoint(element_pointer(context, builder, array_type, args[0], index), _I64)

    return signature, codegen


def _load_at(held):
    @intrinsic
    def load(typingctx, address):
        signature = held(address)

        def codegen(context, builder, sig, args):
            source = context.cast(builder, args[0], sig.args[0], types.uint64)
            # numba-cuda holds a float16 as its 16 bits (an i16)
            return builder.load(builder.inttoptr(source, ir.PointerType(context.get_value_type(held))))

        return signature, codegen

    return load


load_f16 = _load_at(types.float16)
load_bf16 = _load_at(types.uint16)  # a bf16's bits, as its buffers and staging tiles hold it


def _cp_async(builder, target: ir.Value, source: ir.Value, count: ir.Value) -> None:
    """``cp.async`` of 16 bytes from generic ``source`` to shared-window ``target``."""
    asm = ir.InlineAsm(
        ir.FunctionType(ir.VoidType(), [_I64, _I64, _I32]),
        "{ .reg .u64 g; cvta.to.global.u64 g, $1; cp.async.cg.shared.global [$0], [g], 16, $2; }",
        "l,l,r,~{memory}",
        side_effect=True,
    )
    builder.call(asm, [target, source, count])


@intrinsic
def cp_async_16(typingctx, tile, index, address, size):
    if not (isinstance(tile, types.Array) and tile.ndim == 1):
        return None
    signature = types.void(tile, index, address, size)

    def codegen(context, builder, sig, args):
        target = _to_shared(builder, _address(context, builder, sig.args[0], args[0], args[1]))
        source = context.cast(builder, args[2], sig.args[2], types.uint64)
        _cp_async(builder, target, source, context.cast(builder, args[3], sig.args[3], types.uint32))
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def cp_async_16_at(typingctx, target, source, size):
    signature = types.void(target, source, size)

    def codegen(context, builder, sig, args):
        target, source = (context.cast(builder, v, t, types.uint64) for v, t in zip(args[:2], sig.args[:2]))
        _cp_async(builder, target, source, context.cast(builder, args[2], sig.args[2], types.uint32))
        return context.get_dummy_value()

    return signature, codegen


def _asm_statement(text: str):
    """The codegen of an intrinsic that is one statement of PTX touching memory."""

    def codegen(context, builder, sig, args):
        builder.call(ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), text, "~{memory}", side_effect=True), [])
        return context.get_dummy_value()

    return codegen


@intrinsic
def cp_async_commit(typingctx):
    return types.void(), _asm_statement("cp.async.commit_group;")


@intrinsic
def cp_async_wait(typingctx, pending):
    if not isinstance(pending, types.IntegerLiteral):
        return None
    return types.void(pending), _asm_statement(f"cp.async.wait_group {pending.literal_value};")


def _unpack(context, builder, return_type, struct: ir.Value, count: int):
    return context.make_tuple(builder, return_type, [builder.extract_value(struct, i) for i in range(count)])


def _to_shared(builder, address: ir.Value) -> ir.Value:
    """The shared-window address of a generic ``address`` (``cvta.to.shared``)."""
    asm = ir.InlineAsm(ir.FunctionType(_I64, [_I64]), "cvta.to.shared.u64 $0, $1;", "=l,l")
    return builder.call(asm, [address])


@intrinsic
def shared_address(typingctx, tile, index):
    if not (isinstance(tile, types.Array) and tile.ndim == 1):
        return None
    signature = types.uint64(tile, index)

    def codegen(context, builder, sig, args):
        return _to_shared(builder, _address(context, builder, sig.args[0], args[0], args[1]))

    return signature, codegen


def _ldmatrix_call(context, builder, return_type, shape: str, address: ir.Value, offset: int):
    asm = ir.InlineAsm(
        ir.FunctionType(ir.LiteralStructType([_I32] * 4), [_I64]),
        f"ldmatrix.sync.aligned.m8n8.{shape}.shared.b16 {{$0, $1, $2, $3}}, [$4+{offset}];",
        "=r,=r,=r,=r,l",
        side_effect=True,  # reads shared memory another thread wrote: not hoisted past a barrier
    )
    return _unpack(context, builder, return_type, builder.call(asm, [address]), 4)


def _ldmatrix(shape: str):
    @intrinsic
    def ldmatrix(typingctx, tile, index):
        if not (isinstance(tile, types.Array) and tile.ndim == 1 and tile.dtype.bitwidth == 16):
            return None
        signature = types.UniTuple(types.uint32, 4)(tile, index)

        def codegen(context, builder, sig, args):
            address = _to_shared(builder, _address(context, builder, sig.args[0], args[0], args[1]))
            return _ldmatrix_call(context, builder, sig.return_type, shape, address, 0)

        return signature, codegen

    return ldmatrix


def _ldmatrix_at(shape: str):
    @intrinsic
    def ldmatrix_at(typingctx, address, offset):
        if not isinstance(offset, types.IntegerLiteral):
            return None
        signature = types.UniTuple(types.uint32, 4)(address, offset)

        def codegen(context, builder, sig, args):
            source = context.cast(builder, args[0], sig.args[0], types.uint64)
            return _ldmatrix_call(context, builder, sig.return_type, shape, source, offset.literal_value)

        return signature, codegen

    return ldmatrix_at


ldmatrix_x4 = _ldmatrix("x4")
ldmatrix_x4_trans = _ldmatrix("x4.trans")
ldmatrix_x4_at = _ldmatrix_at("x4")
ldmatrix_x4_trans_at = _ldmatrix_at("x4.trans")


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


def _pack(half: str):
    @intrinsic
    def pack(typingctx, lo, hi):
        signature = types.uint32(lo, hi)

        def codegen(context, builder, sig, args):
            values = [context.cast(builder, v, t, types.float32) for v, t in zip(args, sig.args)]
            # cvt's first source goes to the upper half
            asm = ir.InlineAsm(ir.FunctionType(_I32, [_F32, _F32]), f"cvt.rn.{half}x2.f32 $0, $1, $2;", "=r,f,f")
            return builder.call(asm, values[::-1])

        return signature, codegen

    return pack


pack_f16x2 = _pack("f16")
pack_bf16x2 = _pack("bf16")
