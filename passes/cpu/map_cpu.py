"""``map-cpu``: decides where the loops of each ``loop.kernel`` run on a CPU.

For each loop nest at the top of a kernel:

- the outermost loop is mapped ``prange`` (spread over the cores); a top-level
  ``loop.reduce`` (a reduction to a scalar) too, as a parallel reduction;
- with ``collapse`` (the default), outer ``loop.parallel`` loops that are perfectly
  nested (only index arithmetic between them) are first merged into one loop over
  the product of their extents, split again with div/mod, so that a nest whose
  outermost extent is small (a batch of 1, 12 heads) still fills the cores; the
  innermost loop of a nest is never merged, so it stays contiguous;
- every other loop is ``vector`` when it holds no loop (LLVM vectorises it) and
  ``serial`` otherwise.

The mapping is a property of the loops (``map(prange)``) that the code generators
read; a GPU mapping (``blocks``/``threads``/``warps``) would be another pass over the
same IR.

    loop.parallel %i = %c0 to %n step %c1 {            loop.parallel %i = %c0 to %n step %c1 map(prange) {
      loop.parallel %j = %c0 to %m step %c1 {    ->      loop.parallel %j = %c0 to %m step %c1 map(vector) {
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, Float32Type, Float64Type, IntegerType, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dialects import loop
from dialects.gpu.gemm_nest import match_wide_floats
from dialects.loop import CPU_SCHEDULE, CpuSchedule
from passes.loop_nests import (
    collapse,
    constant_index,
    contains_loops,
    defined_outside,
    loops_in,
    match_flash,
    set_mapping,
)


def map_inner(block: Block) -> None:
    for op in loops_in(block):
        serial = contains_loops(op) or isinstance(op, loop.ForOp)
        set_mapping(op, loop.MapKind.SERIAL if serial else loop.MapKind.VECTOR)
        map_inner(op.body.block)


# ---------------------------------------------------------------------------
# Reduction interchange


def _combine(combiner: loop.Combiner, a: SSAValue, b: SSAValue) -> Operation:
    is_float = not isinstance(a.type, IntegerType)
    table = {
        loop.Combiner.ADD: (arith.AddfOp, arith.AddiOp),
        loop.Combiner.MUL: (arith.MulfOp, arith.MuliOp),
        loop.Combiner.MAX: (arith.MaximumfOp, arith.MaxSIOp),
        loop.Combiner.MIN: (arith.MinimumfOp, arith.MinSIOp),
    }
    cls = table[combiner][0 if is_float else 1]
    return cls(a, b)


def _strided_in_reduction(reduce: loop.ReduceOp, j: SSAValue) -> bool:
    """Whether the reduction reads a buffer whose fastest index is ``j`` (then each
    iteration of the reduction strides over rows: B[k, j] in a matmul, x[k, j] in a
    column sum)."""
    return any(
        isinstance(op, loop.LoadOp) and op.indices and op.indices[-1] is j and op.indices[-1] is not reduce.iv
        for op in reduce.body.block.ops
    )


def _clone_into(ops: list[Operation], mapping: dict[SSAValue, SSAValue], block: Block) -> None:
    for op in ops:
        block.add_op(op.clone(value_mapper=mapping))


def _drop_dead(block: Block) -> None:
    """Removes the loop-free, effect-free ops of ``block`` nothing uses."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if op.regions or isinstance(op, loop.LoadOp | loop.StoreOp | loop.ScratchOp):
                continue
            if all(not r.uses for r in op.results) and op.results:
                op.detach()
                op.erase()
                changed = True


def interchange(lj: loop.ParallelOp) -> bool:
    """Turns ``parallel j { r = reduce k {f(j, k)}; g(j, r) }`` into a row of
    accumulators updated once per k over all j, so the innermost loop runs along
    contiguous memory:

        acc = scratch[n]; parallel j { acc[j] = init }
        for k { [f's part not depending on j]; parallel j { acc[j] = acc[j] (+) f(j, k) } }
        parallel j { g(j, acc[j]) }

    Only for a reduction that reads a buffer along j (a matmul's right operand, a
    column sum), with one result and no loop inside."""
    block = lj.body.block
    ops = list(block.ops)
    inner = loops_in(block)
    if len(inner) != 1 or not isinstance(inner[0], loop.ReduceOp):
        return False
    red = inner[0]
    if len(red.res) != 1 or contains_loops(red) or any(isinstance(o, loop.ScratchOp) for o in ops):
        return False
    if constant_index(lj.lb) != 0 or constant_index(lj.step) != 1:
        return False
    if not all(defined_outside(v, lj) for v in (lj.ub, red.lb, red.ub, red.step, red.inits[0])):
        return False
    if not _strided_in_reduction(red, lj.iv):
        return False
    pre, post = ops[: ops.index(red)], ops[ops.index(red) + 1 :]
    body = [o for o in red.body.block.ops if not isinstance(o, loop.YieldOp)]
    terminator = red.body.block.last_op
    assert isinstance(terminator, loop.YieldOp)
    depends: set[SSAValue] = {lj.iv}
    for op in [*pre, *body]:
        if any(v in depends for v in op.operands):
            depends.update(op.results)
    where = InsertPoint.before(lj)
    element = red.res[0].type
    extent = constant_index(lj.ub)
    if extent is not None:
        acc = loop.ScratchOp(MemRefType(element, [extent]), [])
    else:
        acc = loop.ScratchOp(MemRefType(element, [DYNAMIC_INDEX]), [lj.ub])
    Builder(where).insert(acc)
    init = loop.ParallelOp(lj.lb, lj.ub, lj.step)
    init.iv.name_hint = lj.iv.name_hint
    init.body.block.add_op(loop.StoreOp(red.inits[0], acc.result, [init.iv]))
    Builder(where).insert(init)
    # the sequential loop over k, with the j loop inside
    k_loop = loop.ForOp(red.lb, red.ub, red.step)
    k_loop.iv.name_hint = red.iv.name_hint
    j1 = loop.ParallelOp(lj.lb, lj.ub, lj.step)
    j1.iv.name_hint = lj.iv.name_hint
    mapping: dict[SSAValue, SSAValue] = {red.iv: k_loop.iv, lj.iv: j1.iv}
    for op in [*pre, *body]:
        dependent = any(r in depends for r in op.results)
        (j1.body.block if dependent else k_loop.body.block).add_op(op.clone(value_mapper=mapping))
    value = mapping.get(terminator.values[0], terminator.values[0])
    old = loop.LoadOp(acc.result, [j1.iv])
    new = _combine(red.combiner_kinds[0], old.result, value)
    j1.body.block.add_ops([old, new, loop.StoreOp(new.results[0], acc.result, [j1.iv])])
    k_loop.body.block.add_op(j1)
    _drop_dead(j1.body.block)
    _drop_dead(k_loop.body.block)
    Builder(where).insert(k_loop)
    # the epilogue, per j, on the accumulated row
    j2 = loop.ParallelOp(lj.lb, lj.ub, lj.step)
    j2.iv.name_hint = lj.iv.name_hint
    mapping = {lj.iv: j2.iv}
    _clone_into(pre, mapping, j2.body.block)
    result = loop.LoadOp(acc.result, [j2.iv])
    j2.body.block.add_op(result)
    mapping[red.res[0]] = result.result
    _clone_into(post, mapping, j2.body.block)
    _drop_dead(j2.body.block)
    Builder(where).insert(j2)
    lj.detach()
    lj.erase()
    return True


def interchange_reductions(block: Block, depth: int = 0) -> None:
    """Applies ``interchange`` to every eligible parallel loop nested in another loop
    (at the top of a kernel, the loop over k would be outside any ``prange``)."""
    for op in loops_in(block):
        if depth > 0 and isinstance(op, loop.ParallelOp) and interchange(op):
            continue
        interchange_reductions(op.body.block, depth + 1)


def _wide_float_attention(kernel: loop.KernelOp) -> bool:
    """Whether ``kernel`` is attention (its heads split out of a merged band loop) whose
    queries, keys, values and output are all ``f32`` or all ``f64``."""
    attention = match_flash(kernel)
    return attention is not None and isinstance(attention.value_type, Float32Type | Float64Type)


def map_kernel_cpu(
    kernel: loop.KernelOp, collapse_outer: bool = True, interchange: bool = True, gemm: bool = True
) -> None:
    schedule = None
    if gemm and match_wide_floats(kernel) is not None:
        schedule = CpuSchedule.GEMM
    elif gemm and _wide_float_attention(kernel):
        schedule = CpuSchedule.FLASH
    if schedule is not None:
        # work items on a register tile: they are spread over the cores, not the
        # loops (the outer one stays ``prange``: the kernel is threaded)
        kernel.attributes[CPU_SCHEDULE] = StringAttr(schedule.value)
        for op in loops_in(kernel.body.block):
            set_mapping(op, loop.MapKind.PRANGE)
            map_inner(op.body.block)
        return
    if interchange:
        interchange_reductions(kernel.body.block)
    for op in loops_in(kernel.body.block):
        if isinstance(op, loop.ParallelOp) and collapse_outer:
            op = collapse(op)
        if isinstance(op, loop.ForOp):
            set_mapping(op, loop.MapKind.SERIAL)
        else:
            set_mapping(op, loop.MapKind.PRANGE)
        map_inner(op.body.block)


@dataclass(frozen=True)
class MapCpuPass(ModulePass):
    """Marks each kernel's outer loops ``prange`` and its innermost loops ``vector``;
    a matmul nest of ``f32`` or ``f64`` factors gets the ``gemm`` schedule instead, an
    attention kernel of them ``flash`` (``gemm=false``: both mapped as any nest)."""

    name = "map-cpu"

    collapse: bool = True
    interchange: bool = True
    gemm: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [o for o in op.walk() if isinstance(o, loop.KernelOp)]:
            map_kernel_cpu(kernel, self.collapse, self.interchange, self.gemm)
