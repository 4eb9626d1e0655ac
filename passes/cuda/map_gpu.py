"""``map-gpu``: decides how the loops of each ``loop.kernel`` run on a GPU.

Each kernel gets one of these schedules, written on it as ``gpu.schedule`` with its
launch parameters, and its loops get ``map(blocks)``, ``map(threads)`` or
``map(serial)``; ``runtime.cuda.codegen`` reads nothing else:

- ``elementwise``: one perfectly nested parallel nest with no loop inside (what a nest
  of parallel loops alone computes between its loops is moved into the innermost one
  first, ``sink_into_nest``). Its outer
  loops are collapsed into one, mapped ``blocks`` (the grid's y axis); the innermost
  loop is mapped ``threads``: each thread takes ``gpu.per_thread`` elements strided
  by the block size, so a warp's accesses stay contiguous, and issues all its loads
  before any store (kernel arguments may alias, so the compiler would not reorder
  them; loads first alone took these kernels from 0.74 to 0.96 of the copy floor,
  docs/gpu.md, "The code").
- ``rows``: a parallel nest whose body holds loops (a softmax, a layernorm, a row
  sum). The outer band is collapsed and mapped ``blocks``, one block per row; the
  first parallel or reduction loops inside it are mapped ``threads`` (the block's
  threads take their iterations cyclically, reductions combine through warp shuffles
  and shared memory); deeper loops and ``loop.for`` run ``serial`` in each thread.
  When a row fits in ``gpu.threads`` x ``gpu.per_thread`` elements the row is held
  in registers: per-row temporaries (``loop.scratch``) whose every access is at the
  index of a ``threads`` loop get ``gpu.memory = "registers"`` (else ``"global"``, a
  per-block workspace; ``"thread"`` for one made inside a ``threads`` loop, a slice
  per thread), and loads of kernel inputs at such an index are marked
  ``gpu.row_cache``: read once per row, before any store, and reused by every loop
  that reads the same element. Longer rows take the same IR through a strided loop
  per thread (the runtime picks by the row's length at launch).
- ``threads``: one thread per iteration of the outer band, the loops inside serial,
  for nests whose inner reductions walk a buffer along the outer index (a column sum,
  a matmul's ``B[k, j]``, a pool's window of channels-last pixels): adjacent threads
  then read adjacent elements.
- ``split``: a reduction of a whole tensor (the kernel's one loop is a ``loop.reduce``):
  a nest of reductions (of one combiner) keeps two levels, the outer over the grid's
  blocks (``map(blocks)``), the inner over a block's threads, so warps read rows
  contiguously; a single reduction spreads over every thread of the grid. Each block
  combines its threads' values into a partial, and the last block to finish (a
  counter in global memory) combines the partials in block order and runs the rest of
  the kernel. No atomics touch the values, so the result is the same bits on every run.
- ``gemm``: a matmul nest (``passes.cuda.map_gemm``): output tiles over the grid, the
  reduction staged through shared memory, a tile of accumulators per thread.
- ``flash``: an attention kernel (``passes.cuda.map_flash``): one block per batch, head
  and tile of query rows, keys and values streamed through shared memory with an
  online softmax; where its loops are not of the attention form, the others apply.
- ``block``: anything else (several loop nests in one kernel, a reduction whose result
  feeds another loop): the kernel runs as one block whose threads share its loops as in
  ``rows``.

    loop.parallel %i = %c0 to %n step %c1 {        loop.parallel %i = %c0 to %n step %c1 map(blocks) {
      %m = loop.reduce max %j = ... {         ->     %m = loop.reduce max %j = ... map(threads) {
      loop.parallel %j = ... {                       loop.parallel %j = ... map(threads) {

The parameters (``gpu.threads``, ``gpu.per_thread``) are the defaults the autotuner
starts from; ``--autotune`` may replace them per shape at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, MemRefType, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dialects import loop
from dialects.gpu.mapping import MEMORY, PER_THREAD, ROW_CACHE, SCHEDULE, THREADS, Schedule
from dialects.group_kinds import GroupKind
from passes.cuda.map_flash import map_flash
from passes.cuda.map_gemm import map_gemm
from passes.loop_nests import (
    collapse,
    constant_index,
    contains_loops,
    defined_outside,
    loops_in,
    perfect_band,
    set_mapping,
)

#: default launch parameters per schedule: (threads per block, elements per thread)
DEFAULTS = {
    Schedule.ELEMENTWISE: (256, 8),
    Schedule.ROWS: (256, 16),
    Schedule.THREADS: (256, 1),
    Schedule.BLOCK: (1024, 16),
    Schedule.SPLIT: (256, 4),
}


def _touches_no_memory(op: Operation) -> bool:
    return not op.regions and not isinstance(op, loop.LoadOp | loop.StoreOp | loop.ScratchOp)


def _only_reductions(reduce: loop.ReduceOp) -> bool:
    """Whether the loops inside ``reduce`` are reductions nested in it (a pool's window:
    a reduction over its rows, each over its columns), with no other loop."""
    return all(isinstance(r, loop.ReduceOp) and _only_reductions(r) for r in loops_in(reduce.body.block))


def _reads_along(block: Block, ivs: set[SSAValue]) -> bool:
    """Whether every reduction in ``block`` (and every one nested in it) reads a buffer
    whose fastest index is one of ``ivs`` (the outer loops' indices), so threads over
    ``ivs`` read contiguously."""
    reduces = loops_in(block)
    if not reduces or not all(isinstance(r, loop.ReduceOp) and _only_reductions(r) for r in reduces):
        return False
    for r in reduces:
        loads = [o for o in r.walk() if isinstance(o, loop.LoadOp) and o.indices]
        if not any(o.indices[-1] in ivs for o in loads):
            return False
    return True


def _memory_before(block: Block, op: Operation) -> bool:
    for other in block.ops:
        if other is op:
            return False
        if isinstance(other, loop.LoadOp | loop.StoreOp | loop.ScratchOp):
            return True
    return False


def choose_schedule(kernel: loop.KernelOp) -> Schedule:
    top = loops_in(kernel.body.block)
    memory_at_top = any(isinstance(o, loop.LoadOp | loop.StoreOp | loop.ScratchOp) for o in kernel.body.block.ops)
    if len(top) == 1 and isinstance(top[0], loop.ReduceOp) and not _memory_before(kernel.body.block, top[0]):
        return Schedule.SPLIT
    if len(top) != 1 or not isinstance(top[0], loop.ParallelOp) or memory_at_top:
        return Schedule.BLOCK
    band = perfect_band(top[0])
    has_scratch = any(isinstance(o, loop.ScratchOp) for o in top[0].walk())
    if not contains_loops(band[-1]) and not has_scratch:
        return Schedule.ELEMENTWISE
    if not has_scratch and _reads_along(band[-1].body.block, {l.iv for l in band}):
        return Schedule.THREADS
    return Schedule.ROWS


# ---------------------------------------------------------------------------
# Distributing a row's loops over a block's threads


def distribute(block: Block) -> list[loop.ParallelOp | loop.ReduceOp]:
    """Maps the first parallel/reduce loops met in ``block`` (looking through
    ``loop.for``, which every thread runs) to ``threads`` and what they hold to
    ``serial``; returns the loops mapped to threads."""
    mapped: list[loop.ParallelOp | loop.ReduceOp] = []
    for op in loops_in(block):
        if isinstance(op, loop.ForOp):
            set_mapping(op, loop.MapKind.SERIAL)
            mapped += distribute(op.body.block)
        else:
            set_mapping(op, loop.MapKind.THREADS)
            _serial(op.body.block)
            mapped.append(op)
    return mapped


def _serial(block: Block) -> None:
    for op in loops_in(block):
        set_mapping(op, loop.MapKind.SERIAL)
        _serial(op.body.block)


def _same_bounds(a: loop.LoopOp, b: loop.LoopOp) -> bool:
    return a.operands[:3] == b.operands[:3]


def mark_registers(row: Block, thread_loops: Sequence[loop.ParallelOp | loop.ReduceOp], kernel: loop.KernelOp) -> None:
    """Marks the per-row temporaries and input loads a register row can hold: every
    access at the induction variable of a ``threads`` loop directly in the row
    (not inside a ``loop.for``), all such loops with the same bounds."""
    direct = [l for l in thread_loops if l.parent_block() is row]
    ivs = {l.iv: l for l in direct}
    stored = {o.buffer for o in kernel.walk() if isinstance(o, loop.StoreOp)}
    for scratch in [o for o in row.ops if isinstance(o, loop.ScratchOp)]:
        uses = [u.operation for u in scratch.result.uses]
        owners = [
            ivs.get(u.indices[0]) if isinstance(u, loop.LoadOp | loop.StoreOp) and len(u.indices) == 1 else None
            for u in uses
        ]
        first = owners[0] if owners else None
        in_registers = first is not None and all(
            owner is not None and use.parent_block() is owner.body.block and _same_bounds(owner, first)
            for use, owner in zip(uses, owners)
        )
        scratch.attributes[MEMORY] = StringAttr("registers" if in_registers else "global")
    for l in direct:
        for op in l.body.block.ops:
            if (
                isinstance(op, loop.LoadOp)
                and op.buffer in kernel.inputs
                and op.buffer not in stored
                and l.iv in op.indices
                and all(i is l.iv or defined_outside(i, l) for i in op.indices)
            ):
                op.attributes[ROW_CACHE] = UnitAttr()


def _is_identity(value: SSAValue, combiner: loop.Combiner) -> bool:
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, FloatAttr | IntegerAttr):
        return False
    return owner.value.value.data == loop.combiner_identity(combiner, value.type)


def nested_reduction(outer: loop.ReduceOp) -> loop.ReduceOp | None:
    """The reduction inside ``outer`` when ``outer`` only folds its results (index
    arithmetic aside): ``reduce (+) i { r = reduce (+) j from identity {...}; yield r }``,
    which is one reduction over (i, j), reassociated."""
    ops = [o for o in outer.body.block.ops]
    terminator = ops[-1]
    inner = ops[-2] if len(ops) >= 2 else None
    if not isinstance(inner, loop.ReduceOp) or len(outer.res) != 1 or len(inner.res) != 1:
        return None
    assert isinstance(terminator, loop.YieldOp)
    if (
        terminator.values[0] is not inner.res[0]
        or inner.combiner_kinds != outer.combiner_kinds
        or not _is_identity(inner.inits[0], inner.combiner_kinds[0])
        or not all(_touches_no_memory(o) for o in ops[:-2])
    ):
        return None
    return inner


def shorten_reduction(reduce: loop.ReduceOp) -> tuple[loop.ReduceOp, loop.ReduceOp | None]:
    """Merges the outer levels of a nest of reductions until two are left (the
    innermost, contiguous in memory, stays whole); returns the outer and the inner one
    (None for a single reduction)."""
    while True:
        chain = [reduce]
        while (inner := nested_reduction(chain[-1])) is not None:
            chain.append(inner)
        flat = flatten_reduction(reduce) if len(chain) > 2 else None
        if flat is None:
            return reduce, (chain[1] if len(chain) > 1 else None)
        reduce = flat


def flatten_reduction(outer: loop.ReduceOp) -> loop.ReduceOp | None:
    """``reduce (+) i { r = reduce (+) j from identity { f(i, j) }; yield r }`` =
    ``reduce (+) k { f(k / n, k % n) }``: one reduction over the product of the extents
    (the same sum, reassociated); returns it, or None where the nest is not of that
    form."""
    body = [o for o in outer.body.block.ops]
    if len(body) != 2 or not isinstance(body[0], loop.ReduceOp) or len(outer.res) != 1:
        return None
    inner, terminator = body
    assert isinstance(terminator, loop.YieldOp)
    if (
        len(inner.res) != 1
        or terminator.values[0] is not inner.res[0]
        or inner.combiner_kinds != outer.combiner_kinds
        or not _is_identity(inner.inits[0], inner.combiner_kinds[0])
    ):
        return None
    for l in (outer, inner):
        if constant_index(l.lb) != 0 or constant_index(l.step) != 1 or not defined_outside(l.ub, outer):
            return None
    where = InsertPoint.before(outer)
    total = arith.MuliOp(outer.ub, inner.ub)
    Builder(where).insert(total)
    flat = loop.ReduceOp(outer.lb, total.result, outer.step, outer.combiner_kinds, list(outer.inits))
    block = flat.body.block
    row = arith.DivUIOp(flat.iv, inner.ub)
    column = arith.RemUIOp(flat.iv, inner.ub)
    block.add_ops([row, column])
    outer.iv.replace_all_uses_with(row.result)
    inner.iv.replace_all_uses_with(column.result)
    for op in list(inner.body.block.ops):
        op.detach()
        block.add_op(op)
    Builder(where).insert(flat)
    outer.res[0].replace_all_uses_with(flat.res[0])
    outer.detach()
    outer.erase()
    return flat


def mark_thread_scratch(kernel: loop.KernelOp) -> None:
    """A temporary made inside a ``threads`` loop belongs to one thread (one per
    iteration of that loop): ``gpu.memory = "thread"``, a slice of a workspace per
    thread of the grid."""
    for scratch in [o for o in kernel.walk() if isinstance(o, loop.ScratchOp)]:
        parent = scratch.parent_op()
        while parent is not None and parent is not kernel:
            if isinstance(parent, loop.ParallelOp | loop.ReduceOp) and parent.mapping == loop.MapKind.THREADS:
                scratch.attributes[MEMORY] = StringAttr("thread")
                break
            parent = parent.parent_op()
        else:
            scratch.attributes.setdefault(MEMORY, StringAttr("global"))


# ---------------------------------------------------------------------------


def _set_launch(kernel: loop.KernelOp, schedule: Schedule, element_bits: int) -> None:
    threads, per_thread = DEFAULTS[schedule]
    if schedule in (Schedule.ELEMENTWISE, Schedule.ROWS):
        # the same bytes in flight per thread whatever the width: twice the f16
        # elements (measured on an H200: f16 softmax 0.62 -> see the note), half the f64
        per_thread = per_thread * 32 // element_bits
    kernel.attributes[SCHEDULE] = StringAttr(schedule.value)
    kernel.attributes[THREADS] = IntegerAttr(threads, i64)
    kernel.attributes[PER_THREAD] = IntegerAttr(per_thread, i64)


def _is_attention(kernel: loop.KernelOp) -> bool:
    return kernel.kind is GroupKind.ATTENTION


def _widest_element(kernel: loop.KernelOp) -> int:
    """The widest element of the kernel's buffers, in bits (bools count as bytes)."""
    widths = []
    for t in kernel.arg_types:
        assert isinstance(t, MemRefType)
        e = t.element_type
        width = e.width.data if isinstance(e, IntegerType) else getattr(e, "bitwidth", 32)
        widths.append(max(8, width))
    return max(widths, default=32)


def sink_scalar_loads(kernel: loop.KernelOp) -> None:
    """Copies each load of a rank-0 input at the kernel's top level (a scalar parameter,
    read once by the lowering) to each of its uses inside the loops. Memory read at the
    top would make the kernel one thread block (``choose_schedule``'s ``BLOCK``), which
    ran a [4, 16, 512, 512] attention whose mask was ``where(m, s0, s1)`` of two scalars
    for minutes; each copy reads the same cached word."""
    block = kernel.body.block
    written = {o.buffer for o in kernel.walk() if isinstance(o, loop.StoreOp)}
    for op in list(block.ops):
        if not isinstance(op, loop.LoadOp) or op.indices or op.buffer in written:
            continue
        uses = list(op.result.uses)
        if not uses or any(use.operation.parent_block() is block for use in uses):
            continue
        for use in uses:
            copy = loop.LoadOp(op.buffer, [])
            Builder(InsertPoint.before(use.operation)).insert(copy)
            use.operation.operands[use.index] = copy.result
        op.detach()
        op.erase()


def sink_into_nest(kernel: loop.KernelOp) -> None:
    """Moves what a nest of parallel loops computes between its loops (values the
    lowering computes once per outer index: a gathered position, its comparison) into
    the innermost loop, where each element computes it again, so the nest is perfect
    and takes the ``elementwise`` schedule. Left between the loops, they made the
    schedule ``rows`` with a row per outer index: Llama's [4, 16, 512, 512] mask ran on
    4 blocks of 16 threads, 18 ms for 64 MB. Only for nests of parallel loops alone
    (no reduction, no scratch) that store in the innermost loop and read no buffer the
    kernel writes: moving a read then changes no value."""
    top = loops_in(kernel.body.block)
    if len(top) != 1 or not isinstance(top[0], loop.ParallelOp):
        return
    if any(isinstance(o, loop.ReduceOp | loop.ForOp | loop.ScratchOp) for o in top[0].walk()):
        return
    written = {o.buffer for o in kernel.walk() if isinstance(o, loop.StoreOp)}

    def movable(op: Operation) -> bool:
        if op.regions or isinstance(op, loop.StoreOp):
            return False
        return not isinstance(op, loop.LoadOp) or op.buffer not in written

    current = top[0]
    while True:
        inner = loops_in(current.body.block)
        if len(inner) != 1 or not isinstance(inner[0], loop.ParallelOp):
            return
        ops = list(current.body.block.ops)
        if ops[-1] is not inner[0] or not all(movable(o) for o in ops[:-1]):
            return
        body = inner[0].body.block
        first = body.first_op
        for op in ops[:-1]:
            op.detach()
            if first is None:
                body.add_op(op)
            else:
                body.insert_op_before(op, first)
        current = inner[0]


def map_kernel_gpu(kernel: loop.KernelOp) -> Schedule:
    sink_scalar_loads(kernel)
    if _is_attention(kernel) and map_flash(kernel):
        return Schedule.FLASH
    if map_gemm(kernel):
        return Schedule.GEMM
    sink_into_nest(kernel)
    schedule = choose_schedule(kernel)
    _set_launch(kernel, schedule, _widest_element(kernel))
    if schedule == Schedule.BLOCK:
        mark_registers(kernel.body.block, distribute(kernel.body.block), kernel)
        mark_thread_scratch(kernel)
        return schedule
    if schedule == Schedule.SPLIT:
        (reduce,) = loops_in(kernel.body.block)
        assert isinstance(reduce, loop.ReduceOp)
        reduce, row = shorten_reduction(reduce)
        if row is None:
            distribute(kernel.body.block)
        else:  # rows of the reduction over the grid, a row over a block's threads
            set_mapping(reduce, loop.MapKind.BLOCKS)
            set_mapping(row, loop.MapKind.THREADS)
            _serial(row.body.block)
        return schedule
    (nest,) = loops_in(kernel.body.block)
    assert isinstance(nest, loop.ParallelOp)
    outer = collapse(nest)  # the innermost loop of an elementwise nest stays out of it
    inner = loops_in(outer.body.block)
    if schedule == Schedule.ELEMENTWISE and inner and contains_loops(inner[0]):
        schedule = Schedule.ROWS  # a band collapse could not merge: its last loop shares a block
        _set_launch(kernel, schedule, _widest_element(kernel))
    if schedule == Schedule.ELEMENTWISE:
        if inner:
            set_mapping(outer, loop.MapKind.BLOCKS)
            set_mapping(inner[0], loop.MapKind.THREADS)
        else:
            set_mapping(outer, loop.MapKind.THREADS)
    elif schedule == Schedule.THREADS:
        set_mapping(outer, loop.MapKind.THREADS)
        _serial(outer.body.block)
    else:
        set_mapping(outer, loop.MapKind.BLOCKS)
        mark_registers(outer.body.block, distribute(outer.body.block), kernel)
        mark_thread_scratch(kernel)
    return schedule


@dataclass(frozen=True)
class MapGpuPass(ModulePass):
    """Chooses each kernel's GPU schedule and maps its loops to blocks, threads or serial."""

    name = "map-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [o for o in op.walk() if isinstance(o, loop.KernelOp)]:
            map_kernel_gpu(kernel)
