"""The ``flash`` mapping of ``map-gpu``: an attention kernel (``dialects.gpu.attention``)
as one thread block per (batch, head, tile of query rows), keys and values streamed
through shared memory with an online softmax (``runtime.cuda.codegen_flash``).

Before matching, a band loop that merges heads becomes two loops
(``passes.loop_nests.split_heads``).

The mapping written: ``gpu.schedule = "flash"``, ``gpu.threads``, ``gpu.per_thread``
(query rows a thread) and ``gpu.tile = [rows, keys]``; the band's group and row loops
``map(blocks)``, the column and key loops ``map(threads)``, the head dimension's
reduction ``map(serial)``. Where q, k and v are all ``f16`` or all ``bf16`` (so their
products are exact in float32) and the dimensions fit
(``dialects.gpu.attention.MmaTiles``), both products run on tensor cores: ``gpu.mma =
"f16"`` (``"bf16"``), 16 query rows a warp (``runtime.cuda.codegen_flash_mma``); an
``f32`` attention stays on the CUDA cores, which tensor cores would round (TF32). Where
the score modification is a causal mask (``dialects.gpu.attention.causal``),
``gpu.causal``: a block visits no key tile past its last row.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    i64,
)

from dialects import loop
from dialects.gpu.attention import Attention, causal, choose_mma_tiles, choose_tiles
from dialects.gpu.mapping import CAUSAL, MMA, MMA_TYPES, PER_THREAD, SCHEDULE, THREADS, TILE, Schedule
from passes.loop_nests import match_flash, set_mapping

#: the ``gpu.mma`` types the flash kernel stages (``runtime/cuda/codegen_flash_mma.py``):
#: both halves, ``bf16`` as its bits (``codegen_gemm_mma.TILE_STORAGE``)
FLASH_MMA = frozenset({"f16", "bf16"})


def tensor_core_type(attention: Attention) -> str | None:
    """The half type q, k and v share, which the tensor cores multiply exactly with
    float32 sums (``MMA_TYPES``, those of ``FLASH_MMA``); None otherwise."""
    types_ = {type(load.result.type) for load in (attention.q, attention.k, attention.v)}
    half = MMA_TYPES.get(types_.pop()) if len(types_) == 1 else None
    return half if half in FLASH_MMA else None


def _computed_in_float32(load: loop.LoadOp) -> bool:
    """Whether the kernel computes ``load``'s values in float32 (``f32``, ``f16``, ``bf16``)."""
    return isinstance(load.result.type, BFloat16Type | Float16Type | Float32Type)


def map_flash(kernel: loop.KernelOp) -> bool:
    """Maps an attention kernel ``flash``; False (the kernel unchanged but for a
    head split, which keeps its meaning) where it is not one or no tile fits."""
    attention = match_flash(kernel)
    if attention is None or not all(_computed_in_float32(load) for load in (attention.q, attention.k, attention.v)):
        return False
    half = tensor_core_type(attention)
    mma_tiles = choose_mma_tiles(attention.head_dim, attention.value_dim) if half else None
    if half is not None and mma_tiles is not None:
        # 16 rows a warp; a thread holds rows g and g + 8 of its warp's (lane g * 4 + q)
        rows, keys, threads, per_thread = mma_tiles.rows, mma_tiles.keys, mma_tiles.threads, 2
        kernel.attributes[MMA] = StringAttr(half)
    else:
        tiles = choose_tiles(attention.head_dim, attention.value_dim)
        if tiles is None:
            return False
        rows, keys, threads, per_thread = tiles.rows, tiles.keys, tiles.threads, tiles.per_row
    kernel.attributes[SCHEDULE] = StringAttr(Schedule.FLASH.value)
    kernel.attributes[THREADS] = IntegerAttr(threads, i64)
    kernel.attributes[PER_THREAD] = IntegerAttr(per_thread, i64)
    kernel.attributes[TILE] = ArrayAttr([IntegerAttr(rows, i64), IntegerAttr(keys, i64)])
    if causal(attention):
        kernel.attributes[CAUSAL] = UnitAttr()
    for grid_loop in [*attention.groups, attention.row]:
        set_mapping(grid_loop, loop.MapKind.BLOCKS)
    for thread_loop in (attention.column, attention.keys, attention.logits, attention.pv):
        set_mapping(thread_loop, loop.MapKind.THREADS)
    set_mapping(attention.scores, loop.MapKind.SERIAL)
    return True
