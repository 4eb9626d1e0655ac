"""The ``flash`` mapping of ``map-gpu``: an attention kernel (``dialects.gpu.attention``)
as one thread block per (batch, head, tile of query rows), keys and values streamed
through shared memory with an online softmax (``runtime.cuda.codegen_flash``).

Before matching, a band loop whose index is only ever split as ``%i / C`` and
``%i % C`` (a head merge: the output's columns ``h * Dv + c``) becomes two loops,
``%h`` over ``E / C`` and ``%c`` over ``C``: the heads then are a group of the band
and the columns a loop of their own, as attention needs them.

    loop.parallel %x = 0 to 256 {          loop.parallel %h = 0 to 4 {
      %c = arith.remui %x, 64        ->      loop.parallel %c = 0 to 64 {
      %h = arith.divui %x, 64                  %x = %h * 64 + %c   (only if %x has other uses)

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

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.rewriter import InsertPoint

from dialects import loop
from dialects.gpu.attention import Attention, band_of, causal, choose_mma_tiles, choose_tiles, constant_value, match
from dialects.gpu.mapping import CAUSAL, MMA, MMA_TYPES, PER_THREAD, SCHEDULE, THREADS, TILE, Schedule
from passes.loop_nests import loops_in, set_mapping


def _head_split(l: loop.ParallelOp) -> int | None:
    """The divisor ``C`` when ``l``'s index is used as ``/ C`` and ``% C`` (and the
    extent is a multiple of ``C`` greater than it), else None."""
    extent = constant_value(l.ub)
    divisors = {
        constant_value(u.operation.rhs)
        for u in l.iv.uses
        if isinstance(u.operation, arith.DivUIOp | arith.RemUIOp) and u.operation.lhs is l.iv
    }
    if len(divisors) != 1 or not isinstance(extent, int):
        return None
    (divisor,) = divisors
    if not isinstance(divisor, int) or divisor <= 1 or extent <= divisor or extent % divisor:
        return None
    return divisor


def split_heads(top: loop.ParallelOp) -> bool:
    """Splits each band loop of ``top`` that merges heads (module docstring); returns
    whether one was split."""
    split = False
    for l in band_of(top):
        divisor = _head_split(l)
        if divisor is None:
            continue
        extent = constant_value(l.ub)
        assert isinstance(extent, int)  # as _head_split found it
        before = Builder(InsertPoint.before(top))  # the kernel's top loop, split or not
        heads = before.insert(arith.ConstantOp(IntegerAttr(extent // divisor, IndexType())))
        width = before.insert(arith.ConstantOp(IntegerAttr(divisor, IndexType())))
        outer = loop.ParallelOp(l.lb, heads.result, l.step)
        inner = loop.ParallelOp(l.lb, width.result, l.step)
        outer.body.block.add_op(inner)
        body = inner.body.block
        for use in list(l.iv.uses):
            op = use.operation
            if isinstance(op, arith.DivUIOp | arith.RemUIOp) and op.lhs is l.iv:
                op.result.replace_all_uses_with(outer.iv if isinstance(op, arith.DivUIOp) else inner.iv)
                op.detach()
                op.erase()
        if l.iv.uses:
            scaled = arith.MuliOp(outer.iv, width.result)
            merged = arith.AddiOp(scaled.result, inner.iv)
            body.add_ops([scaled, merged])
            l.iv.replace_all_uses_with(merged.result)
        for op in list(l.body.block.ops):
            op.detach()
            body.add_op(op)
        block = l.parent_block()
        assert block is not None  # a loop of the band, in the kernel
        block.insert_op_before(outer, l)
        if l is top:  # (a merge of batch and rows: the top loop itself)
            top = outer
        l.detach()
        l.erase()
        split = True
    return split


def match_flash(kernel: loop.KernelOp) -> Attention | None:
    """The kernel's attention pieces, its heads split out of a merged band loop first."""
    found = match(kernel)
    if found is not None:
        return found
    top = loops_in(kernel.body.block)
    if len(top) == 1 and isinstance(top[0], loop.ParallelOp) and split_heads(top[0]):
        return match(kernel)
    return None


#: the ``gpu.mma`` types the flash kernel stages (``runtime/cuda/codegen_flash_mma.py``):
#: both halves, ``bf16`` as its bits (``codegen_gemm_mma.TILE_STORAGE``)
FLASH_MMA = frozenset({"f16", "bf16"})


def tensor_core_type(attention: Attention) -> str | None:
    """The half type q, k and v share, which the tensor cores multiply exactly with
    float32 sums (``MMA_TYPES``, those of ``FLASH_MMA``); None otherwise."""
    types_ = {type(load.result.type) for load in (attention.q, attention.k, attention.v)}
    half = MMA_TYPES.get(types_.pop()) if len(types_) == 1 else None
    return half if half in FLASH_MMA else None


def map_flash(kernel: loop.KernelOp) -> bool:
    """Maps an attention kernel ``flash``; False (the kernel unchanged but for a
    head split, which keeps its meaning) where it is not one or no tile fits."""
    attention = match_flash(kernel)
    if attention is None:
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
