"""``map-gpu``'s ``gemm`` schedule: a matmul nest (``dialects.gpu.gemm_nest``) as a tiled
matrix product, which ``runtime.cuda.codegen_gemm`` generates.

Each block computes a ``gpu.tile_m`` x ``gpu.tile_n`` tile of the output (rows are
the ``m`` loops flattened, columns the ``n`` loops; the ``batch`` loops go to the
grid's second axis), staging ``gpu.tile_k`` steps of the reduction at a time through
shared memory; each thread holds a ``gpu.thread_m`` x ``gpu.thread_n`` tile of
accumulators in registers and applies the epilogue to it before storing.
``gpu.a_along`` / ``gpu.b_along`` say along which tile index each operand's
addresses are consecutive, so the tile is loaded that way (a transposed operand is
then transposed in shared memory, not read with a stride).

    loop.kernel @k ... attributes {gpu.schedule = "gemm", gpu.tile_m = 128, gpu.tile_n = 128,
                                   gpu.tile_k = 8, gpu.thread_m = 8, gpu.thread_n = 8, ...} {
      loop.parallel %b = ... map(blocks) {gpu.gemm_dim = "batch"} {
        loop.parallel %i = ... map(threads) {gpu.gemm_dim = "m"} {
          loop.parallel %j = ... map(threads) {gpu.gemm_dim = "n"} {
            %acc = loop.reduce add %k = ... map(serial) {
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType, StringAttr, i64

from dialects import loop
from dialects.gpu.gemm_nest import BATCH, GemmNest, N, match
from dialects.gpu.mapping import (
    A_ALONG,
    B_ALONG,
    GEMM_DIM,
    MMA,
    MMA_TYPES,
    PER_THREAD,
    SCHEDULE,
    THREAD_M,
    THREAD_N,
    THREADS,
    TILE_K,
    TILE_M,
    TILE_N,
    Schedule,
)
from passes.loop_nests import set_mapping

#: (tile_m, tile_n, tile_k, thread_m, thread_n) by the bits of the product's elements:
#: 256 threads of 8 x 8 accumulators for 32 bits; 64-bit accumulators take twice the
#: registers, so 4 x 4 of them, on a smaller tile that still has 256 threads
TILES = {32: (128, 128, 8, 8, 8), 64: (64, 64, 8, 4, 4)}
#: the same for a product of at most 64 (32) columns, a convolution's output channels:
#: a wider tile would compute the rest of itself past the edge, in the guarded variant
NARROW_TILES = {32: {32: (256, 32, 8, 8, 4), 64: (256, 64, 8, 8, 8)}, 64: {}}


#: a product of half-precision factors on tensor cores (``runtime/cuda/codegen_gemm_mma.py``):
#: a 128 x 128 tile, 32 reduction steps a stage, 8 warps of 64 x 32, each thread holding
#: the 8 x 8 accumulators its ``mma.m16n8k16`` fragments give it
MMA_TILES = (128, 128, 32, 8, 8)


def tensor_core_type(nest: GemmNest) -> str | None:
    """The half type a matmul nest's product can run in on tensor cores: both factors of
    it (``f16`` or ``bf16``), multiplied as floats; None otherwise. The factors are staged in that
    type, which is where their values round to it at the latest (docs/reference.md,
    Numerics), and the tensor cores multiply them exactly and accumulate in float32."""
    a, b = nest.product.operands
    if not isinstance(nest.product, arith.MulfOp) or a.type != b.type:
        return None
    return MMA_TYPES.get(type(a.type))


def tiles_for(bits: int, columns: int | None) -> tuple[int, int, int, int, int]:
    """The tiles of a product of elements of ``bits`` with ``columns`` columns (None:
    not known when compiling)."""
    for width, tile in sorted(NARROW_TILES[bits].items()):
        if columns is not None and columns <= width:
            return tile
    return TILES[bits]


def _bits(type_) -> int:
    width = type_.width.data if isinstance(type_, IntegerType) else getattr(type_, "bitwidth", 32)
    return 64 if width == 64 else 32


def map_gemm(kernel: loop.KernelOp) -> bool:
    """Maps ``kernel`` with the ``gemm`` schedule if it is a matmul nest; returns
    whether it was one."""
    nest = match(kernel)
    if nest is None:
        return False
    half = tensor_core_type(nest)
    tm, tn, tk, rm, rn = MMA_TILES if half else tiles_for(_bits(nest.product.results[0].type), nest.extent(N))
    attributes = {
        SCHEDULE: StringAttr(Schedule.GEMM.value),
        THREADS: IntegerAttr((tm // rm) * (tn // rn), i64),
        PER_THREAD: IntegerAttr(rm * rn, i64),
        TILE_M: IntegerAttr(tm, i64),
        TILE_N: IntegerAttr(tn, i64),
        TILE_K: IntegerAttr(tk, i64),
        THREAD_M: IntegerAttr(rm, i64),
        THREAD_N: IntegerAttr(rn, i64),
        A_ALONG: StringAttr(nest.along("a")),
        B_ALONG: StringAttr(nest.along("b")),
    }
    if half:
        attributes[MMA] = StringAttr(half)
    kernel.attributes.update(attributes)
    for band_loop in nest.band:
        role = nest.roles[band_loop]
        set_mapping(band_loop, loop.MapKind.BLOCKS if role == BATCH else loop.MapKind.THREADS)
        band_loop.attributes[GEMM_DIM] = StringAttr(role)
    set_mapping(nest.reduce, loop.MapKind.SERIAL)
    return True
