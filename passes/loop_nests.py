"""What the targets' mapping passes (``map-cpu``, ``map-gpu``) share: finding the loops
of a ``loop.kernel``'s nests, marking how each runs (``map(...)``), and collapsing a
band of perfectly nested parallel loops into one; an attention kernel's pieces, its heads split
out of a merged band loop (the targets' flash schedules).
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from dialects import loop
from dialects.gpu.attention import Attention, band_of, constant_value, match
from dialects.gpu.gemm_nest import constant_index


def loops_in(block: Block) -> list[loop.LoopOp]:
    return [op for op in block.ops if isinstance(op, loop.LoopOp)]


def contains_loops(op: Operation) -> bool:
    return any(isinstance(o, loop.LoopOp) for o in op.walk() if o is not op)


def set_mapping(op: loop.LoopOp, kind: loop.MapKind | None) -> None:
    if kind is None:
        op.properties.pop("map", None)
    else:
        op.properties["map"] = loop.MapAttr(kind)


def sinkable(op: Operation) -> bool:
    """Index arithmetic that may be moved into a loop body and recomputed there."""
    if op.regions:
        return False
    if isinstance(op, arith.ConstantOp | loop.DimOp):
        return True
    return op.dialect_name() == "arith" and all(isinstance(r.type, IndexType) for r in op.results)


def perfect_band(outer: loop.ParallelOp) -> list[loop.ParallelOp]:
    """``outer`` and the ``loop.parallel`` loops perfectly nested in it."""
    band = [outer]
    current = outer
    while True:
        inner = loops_in(current.body.block)
        if len(inner) != 1 or not isinstance(inner[0], loop.ParallelOp):
            return band
        if not all(sinkable(o) for o in current.body.block.ops if o is not inner[0]):
            return band
        band.append(inner[0])
        current = inner[0]


def defined_outside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    node = owner if isinstance(owner, Operation) else owner.parent_op()
    while node is not None:
        if node is op:
            return False
        node = node.parent_op()
    return True


def collapse(outer: loop.ParallelOp) -> loop.ParallelOp:
    """Merges the perfectly nested outer parallel loops of ``outer``'s nest into one
    (keeping the innermost loop of the nest out of it); returns the new outer loop."""
    band = perfect_band(outer)
    if not contains_loops(band[-1]):
        band = band[:-1]
    if len(band) < 2:
        return outer
    for l in band:
        if constant_index(l.lb) != 0 or constant_index(l.step) != 1 or not defined_outside(l.ub, outer):
            return outer
    where = InsertPoint.before(outer)
    total = band[0].ub
    for l in band[1:]:
        mul = arith.MuliOp(total, l.ub)
        Builder(where).insert(mul)
        total = mul.result
    merged = loop.ParallelOp(outer.lb, total, outer.step)
    body = merged.body.block
    flat = merged.iv
    ivs: list[SSAValue] = [flat] * len(band)
    rest = flat
    for t in range(len(band) - 1, 0, -1):
        rem = arith.RemUIOp(rest, band[t].ub)
        div = arith.DivUIOp(rest, band[t].ub)
        body.add_ops([rem, div])
        ivs[t] = rem.result
        rest = div.result
    ivs[0] = rest
    for t, l in enumerate(band):
        nxt = band[t + 1] if t + 1 < len(band) else None
        for op in list(l.body.block.ops):
            if op is nxt:
                continue
            op.detach()
            body.add_op(op)
    for l, iv in zip(band, ivs):
        l.iv.replace_all_uses_with(iv)
    Builder(where).insert(merged)
    outer.detach()
    outer.erase()
    return merged


# ---------------------------------------------------------------------------
# Attention kernels (the targets' flash schedules)


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
    """Splits each band loop of ``top`` whose index is only ever split as ``%i / C`` and
    ``%i % C`` (a head merge: the output's columns ``h * Dv + c``) into two loops, ``%h``
    over ``E / C`` and ``%c`` over ``C``: the heads then are a group of the band and the
    columns a loop of their own, as attention needs them (the flash schedules of
    ``map-gpu`` and ``map-cpu``). Returns whether one was split.

        loop.parallel %x = 0 to 256 {          loop.parallel %h = 0 to 4 {
          %c = arith.remui %x, 64        ->      loop.parallel %c = 0 to 64 {
          %h = arith.divui %x, 64                  %x = %h * 64 + %c   (only if %x has other uses)
    """
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
