"""``tile{sizes=32,64}``: splits the outer parallel loops of each kernel into tiles.

The first ``len(sizes)`` loops of the perfectly nested parallel band at the top of
each loop nest (a size of 0 leaves that loop alone) become a tile loop stepping by
the tile size, with the original loop running over one tile inside all the tile
loops; the last tile is cut at the loop's bound with ``arith.minsi``:

    loop.parallel %i = %c0 to %n step %c1 {         loop.parallel %it = %c0 to %n step %c32 attributes {tile_size = 32 : i64} {
      loop.parallel %j = %c0 to %m step %c1 {  ->     loop.parallel %jt = %c0 to %m step %c64 attributes {tile_size = 64 : i64} {
        ...                                             %a = arith.addi %it, %c32 : index
                                                        %ie = arith.minsi %a, %n : index
                                                        ... (the same for %j)
                                                        loop.parallel %i = %it to %ie step %c1 {
                                                          loop.parallel %j = %jt to %je step %c1 {
                                                            ...

Tiles keep a block of rows and columns in cache (a transposing copy, a matmul's
operands), and give a GPU mapping its block/thread split (tile loops to blocks, the
loops inside to threads). Reduction loops are not tiled yet. The kernel records the
sizes it was tiled with as ``tile_sizes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntegerAttr, ModuleOp, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dialects import loop
from passes.loop_nests import constant_index, loops_in, perfect_band
from passes.loop_nests import defined_outside as _defined_outside


def tile_nest(outer: loop.ParallelOp, sizes: tuple[int, ...]) -> loop.ParallelOp:
    """Tiles the band of ``outer``; returns the new outermost loop."""
    band = perfect_band(outer)
    chosen: list[tuple[loop.ParallelOp, int]] = []
    for l, size in zip(band, sizes):
        if size <= 0:
            continue
        extent = constant_index(l.ub)
        if extent is not None and constant_index(l.lb) == 0 and extent <= size:
            continue  # one tile: nothing to split
        if not all(_defined_outside(v, outer) for v in (l.lb, l.ub, l.step)):
            break
        chosen.append((l, size))
    if not chosen:
        return outer
    where = InsertPoint.before(outer)
    steps: list[SSAValue] = []
    for l, size in chosen:
        constant_step = constant_index(l.step)
        if constant_step is not None:
            c = arith.ConstantOp.from_int_and_width(constant_step * size, IndexType())
            Builder(where).insert(c)
            steps.append(c.result)
        else:
            c = arith.ConstantOp.from_int_and_width(size, IndexType())
            m = arith.MuliOp(l.step, c)
            Builder(where).insert(c)
            Builder(where).insert(m)
            steps.append(m.result)
    tiles: list[loop.ParallelOp] = []
    for (l, size), step in zip(chosen, steps):
        tile = loop.ParallelOp(l.lb, l.ub, step)
        tile.attributes["tile_size"] = IntegerAttr(size, i64)
        tile.iv.name_hint = "tile"
        if tiles:
            tiles[-1].body.block.add_op(tile)
        else:
            Builder(where).insert(tile)
        tiles.append(tile)
    body = tiles[-1].body.block
    bounds: list[SSAValue] = []
    for (l, _), step, tile in zip(chosen, steps, tiles):
        end = arith.AddiOp(tile.iv, step)
        hi = arith.MinSIOp(end, l.ub)
        body.add_ops([end, hi])
        bounds.append(hi.result)
    outer.detach()
    body.add_op(outer)
    for (l, _), tile, upper in zip(chosen, tiles, bounds):
        l.operands = [tile.iv, upper, l.step]
    return tiles[0]


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Tiles the outer parallel loops of every kernel by ``sizes``."""

    name = "tile"

    sizes: tuple[int, ...] = (32, 32)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.sizes:
            return
        for kernel in [o for o in op.walk() if isinstance(o, loop.KernelOp)]:
            for nest in loops_in(kernel.body.block):
                if isinstance(nest, loop.ParallelOp) and "tile_size" not in nest.attributes:
                    tile_nest(nest, tuple(self.sizes))
            kernel.attributes["tile_sizes"] = DenseArrayBase.from_list(i64, list(self.sizes))
