"""The shape of a matmul nest in the loop dialect, as ``map-gpu``'s ``gemm`` schedule
and ``runtime.cuda.codegen_gemm`` both read it.

``lower-to-loops`` writes a matmul kernel as a band of ``loop.parallel`` loops (batch,
rows, columns, and any split of them a reshape made) around one ``loop.reduce add``
whose body multiplies two values, followed by the group's epilogue and stores:

    loop.parallel %b ... {                               roles from what each factor reads:
      loop.parallel %i ... {                               %i: only the first factor -> "m"
        loop.parallel %j ... {                             %j: only the second       -> "n"
          %acc = loop.reduce add %k ... init(%zero) {      %b: both (or neither)     -> "batch"
            %a = loop.load %x[%b, %i, %k]     <- the "a" side: ops the first factor needs
            %w = loop.load %y[%b, %k, %j]     <- the "b" side
            %p = arith.mulf %a, %w
            loop.yield %p
          }
          <epilogue: loads, arith, math, casts> ; loop.store ..., %out[<index map>]

``match`` finds that shape (or says None), with no assumption on index maps: each
factor is whatever slice of the body (and of the band's own index arithmetic) it
depends on, so a transposed, broadcast or head-split operand, or a cheap prologue
(``(a * s) @ b``), is read through its own expression. The roles come from the
dependences: the loops only the first factor depends on are ``m``, those only the
second depends on ``n``, the rest ``batch``; the factors are swapped when that puts
the band's innermost loop (the output's contiguous index) among ``n``.

This lives beside the dialects because the pass and the code generator both need it
and the runtime imports no pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, Float64Type, IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from dialects import loop

#: a band loop's role (``gpu.gemm_dim`` on the loop)
BATCH, M, N = "batch", "m", "n"


@dataclass
class GemmNest:
    """A matched matmul nest. ``a``/``b`` are the product's factors (``a`` varies along
    the ``m`` loops, ``b`` along ``n``); the slices are the ops inside the band that
    each factor, and the stores, need, in program order."""

    band: list[loop.ParallelOp]
    reduce: loop.ReduceOp
    product: Operation
    a: SSAValue
    b: SSAValue
    a_slice: list[Operation]
    b_slice: list[Operation]
    epilogue: list[Operation]  # what the stores need, the stores last
    roles: dict[loop.ParallelOp, str]

    def loops(self, role: str) -> list[loop.ParallelOp]:
        """The band loops of ``role``, outer to inner (the last one varies fastest)."""
        return [l for l in self.band if self.roles[l] == role]

    def extent(self, role: str) -> int | None:
        """The product of the trip counts of ``role``'s loops, where all are constants."""
        total = 1
        for l in self.loops(role):
            size = constant_index(l.ub)
            if size is None:
                return None
            total *= size
        return total

    def along(self, side: str) -> str:
        """Which tile index consecutive addresses of ``side``'s operand follow: ``"k"``
        when the last index of its first load moves with the reduction, else the
        side's own rows (``"m"`` for ``a``, ``"n"`` for ``b``). The tile is loaded
        that way, so that consecutive threads read consecutive addresses."""
        ops = self.a_slice if side == "a" else self.b_slice
        loads = [o for o in ops if isinstance(o, loop.LoadOp) and o.indices]
        own = M if side == "a" else N
        if not loads:
            return own
        deps = Dependences(self.band, self.reduce)
        return "k" if self.reduce.iv in deps.of(loads[0].indices[-1]) else own


def constant_index(value: SSAValue) -> int | None:
    """The value of an ``index`` constant, None for any other value."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) and isinstance(value.type, IndexType):
        return owner.value.value.data
    return None


def _inside(op: Operation, ancestor: Operation) -> bool:
    node: Operation | None = op
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent_op()
    return False


class Dependences:
    """Which loop variables (of the band and the reduction) a value depends on."""

    def __init__(self, band: list[loop.ParallelOp], reduce: loop.ReduceOp):
        self.top = band[0]
        self.ivs = {l.iv for l in band} | {reduce.iv}
        self.memo: dict[SSAValue, frozenset[SSAValue]] = {}

    def of(self, value: SSAValue) -> frozenset[SSAValue]:
        if value in self.ivs:
            return frozenset([value])
        owner = value.owner
        if not isinstance(owner, Operation) or not _inside(owner, self.top):
            return frozenset()
        if value not in self.memo:
            found: set[SSAValue] = set()
            for operand in owner.operands:
                found |= self.of(operand)
            self.memo[value] = frozenset(found)
        return self.memo[value]

    def of_op(self, op: Operation) -> frozenset[SSAValue]:
        """The loop variables any result of ``op`` depends on."""
        found: frozenset[SSAValue] = frozenset()
        for result in op.results:
            found |= self.of(result)
        return found


def _slice(values: list[SSAValue], top: Operation, exclude: Operation) -> set[Operation]:
    """The ops inside ``top`` (not ``exclude``) that ``values`` depend on."""
    found: set[Operation] = set()
    stack = list(values)
    while stack:
        owner = stack.pop().owner
        if not isinstance(owner, Operation) or owner is exclude or owner in found or not _inside(owner, top):
            continue
        found.add(owner)
        stack.extend(owner.operands)
    return found


def _band(kernel: loop.KernelOp) -> tuple[list[loop.ParallelOp], loop.ReduceOp] | None:
    """The band of parallel loops down to the one reduction, each level holding one
    loop and otherwise only loads and scalar ops; None for any other shape."""
    loops = [o for o in kernel.body.block.ops if o.regions]
    if len(loops) != 1 or not isinstance(loops[0], loop.ParallelOp):
        return None
    if any(isinstance(o, loop.LoadOp | loop.StoreOp | loop.ScratchOp) for o in kernel.body.block.ops):
        return None
    band = [loops[0]]
    while True:
        body = band[-1].body.block
        inner = [o for o in body.ops if o.regions]
        if len(inner) != 1:
            return None
        if isinstance(inner[0], loop.ReduceOp):
            return band, inner[0]
        if not isinstance(inner[0], loop.ParallelOp) or any(isinstance(o, loop.StoreOp) for o in body.ops):
            return None
        band.append(inner[0])


def _counts_from_zero(op: Operation, top: Operation) -> bool:
    lb, ub, step = op.operands[:3]
    owner = ub.owner
    outside = not isinstance(owner, Operation) or not _inside(owner, top)
    return constant_index(lb) == 0 and constant_index(step) == 1 and outside


def match(kernel: loop.KernelOp) -> GemmNest | None:
    """The matmul nest of ``kernel``, or None when it is not one (see the module
    docstring); the loops count from 0 by 1 up to sizes known before the band, and
    the kernel reads no buffer it writes."""
    found = _band(kernel)
    if found is None:
        return None
    band, reduce = found
    top = band[0]
    if not all(_counts_from_zero(l, top) for l in [*band, reduce]):
        return None
    init = reduce.inits[0].owner
    if isinstance(init, Operation) and _inside(init, top):
        return None
    innermost = band[-1].body.block
    if any(isinstance(o, loop.ScratchOp) for o in kernel.walk()):
        return None
    stored = {o.buffer for o in kernel.walk() if isinstance(o, loop.StoreOp)}
    if any(isinstance(o, loop.LoadOp) and o.buffer in stored for o in kernel.walk()):
        return None
    if reduce.combiner_kinds != (loop.Combiner.ADD,) or len(reduce.res) != 1:
        return None
    body = reduce.body.block
    if any(o.regions or isinstance(o, loop.StoreOp) for o in body.ops):
        return None
    terminator = body.last_op
    assert isinstance(terminator, loop.YieldOp)
    product = terminator.values[0].owner
    if not isinstance(product, arith.MulfOp | arith.MuliOp) or product.parent_block() is not body:
        return None
    deps = Dependences(band, reduce)
    a, b = product.operands
    band_ivs = {l.iv for l in band}
    da, db = deps.of(a) & band_ivs, deps.of(b) & band_ivs
    if not (da - db) or not (db - da):
        return None
    if band[-1].iv in da - db:  # the output's contiguous index goes to n
        a, b, da, db = b, a, db, da
    roles = {l: M if l.iv in da - db else N if l.iv in db - da else BATCH for l in band}
    order = {op: n for n, op in enumerate(kernel.walk())}
    a_slice = sorted(_slice([a], top, reduce) - {product}, key=order.__getitem__)
    b_slice = sorted(_slice([b], top, reduce) - {product}, key=order.__getitem__)
    stores = [o for o in innermost.ops if isinstance(o, loop.StoreOp)]
    needed = _slice([v for s in stores for v in s.operands], top, reduce) - set(stores)
    epilogue = sorted(needed, key=order.__getitem__) + stores
    return GemmNest(band, reduce, product, a, b, a_slice, b_slice, epilogue, roles)


def match_wide_floats(kernel: loop.KernelOp) -> GemmNest | None:
    """The matmul nest of ``kernel`` where its product multiplies two ``f32`` or two
    ``f64`` factors (the CPU's register tile, ``runtime/cpu/micro_kernel.py``); None
    otherwise."""
    nest = match(kernel)
    if nest is None:
        return None
    types = {v.type for v in (*nest.product.operands, *nest.product.results)}
    if len(types) != 1 or not isinstance(next(iter(types)), Float32Type | Float64Type):
        return None
    return nest
