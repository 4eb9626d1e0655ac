"""What the targets' mapping passes (``map-cpu``, ``map-gpu``) share: finding the loops
of a ``loop.kernel``'s nests, marking how each runs (``map(...)``), and collapsing a
band of perfectly nested parallel loops into one.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from dialects import loop
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
