"""``plan-memory``: the buffers of each host function, planned by liveness.

1. Results are written straight into buffers the caller passes. Each result becomes
   a trailing argument ``%out_k {loop.shape = ..., loop.result = k}`` and the function
   returns nothing: the ``loop.alloc`` of a result is replaced by that argument, so
   the kernel that computes the result stores into the caller's array. A result that
   is one of the function's arguments, or a value returned twice, is copied
   (``loop.copy``) into its argument.
2. Every other buffer lives from its ``loop.alloc`` to its last use, where a
   ``loop.dealloc`` now stands. An allocation reuses a buffer that died before it
   (walking the host function in order) when both hold the same element type and
   provably as many elements: equal static counts times the same multiset of size
   names (``["N", 768]`` and ``[768, "N"]`` match; ``"N"`` and ``"M"`` never do,
   whatever their run-time values). The same shape reuses the buffer itself;
   another shape gets a ``loop.view`` of it.

    %t0 = loop.alloc ["N", 768] : memref<?x768xf32>        %t0 = loop.alloc ["N", 768] : memref<?x768xf32>
    loop.launch @k0(%x, %t0) : ...                          loop.launch @k0(%x, %t0) : ...
    %t1 = loop.alloc ["N", 768] : memref<?x768xf32>   ->    loop.launch @k1(%t0, %t1) ...   (%t1 = a new alloc)
    loop.launch @k1(%t0, %t1) : ...                         loop.dealloc %t0
    %t2 = loop.alloc ["N", 768] : memref<?x768xf32>         loop.launch @k2(%t1, %t0) ...   (%t2 reuses %t0)
    loop.launch @k2(%t1, %t2) : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from dialects import loop
from dialects.tensor_types import num_elements


class PlanningError(PassFailedException):
    pass


def _arg_attrs(fn: func.FuncOp) -> list[dict[str, Attribute]]:
    n = len(fn.body.block.args)
    if fn.arg_attrs is None:
        return [{} for _ in range(n)]
    return [dict(d.data) for d in fn.arg_attrs.data]


def _shape_of(value: SSAValue, fn: func.FuncOp, attrs: list[dict[str, Attribute]]) -> tuple[int | str, ...]:
    owner = value.owner
    if isinstance(owner, loop.AllocOp | loop.ViewOp):
        return owner.dims
    if value in fn.body.block.args:
        shape = attrs[fn.body.block.args.index(value)].get(loop.SHAPE_ATTR)
        if isinstance(shape, loop.ShapeAttr):
            return shape.data
    raise PlanningError(f"@{fn.sym_name.data}: no symbolic shape known for a returned buffer")


def results_to_arguments(fn: func.FuncOp) -> None:
    """Step 1: results become caller-provided trailing arguments."""
    block = fn.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or not ret.arguments:
        return
    attrs = _arg_attrs(fn)
    returned = list(ret.arguments)
    shapes = [_shape_of(v, fn, attrs) for v in returned]
    replaced: dict[SSAValue, SSAValue] = {}  # a result's alloc -> its argument
    where = InsertPoint.before(ret)
    for k, (value, shape) in enumerate(zip(returned, shapes)):
        arg = block.insert_arg(value.type, len(block.args))
        arg.name_hint = f"out{k}"
        attrs.append({loop.SHAPE_ATTR: loop.ShapeAttr(shape), loop.RESULT_ATTR: IntegerAttr(k, i64)})
        owner = value.owner
        if isinstance(owner, loop.AllocOp) and value not in replaced:
            for use in list(value.uses):
                if isinstance(use.operation, loop.DeallocOp):
                    use.operation.detach()
                    use.operation.erase()
            value.replace_all_uses_with(arg)
            owner.detach()
            owner.erase()
            replaced[value] = arg
        else:
            Builder(where).insert(loop.CopyOp(replaced.get(value, value), arg))
    new_ret = func.ReturnOp()
    Builder(where).insert(new_ret)
    ret.detach()
    ret.erase()
    inputs = [a.type for a in block.args]
    fn.function_type = FunctionType.from_lists(inputs, [])
    fn.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in attrs])


def _root(value: SSAValue) -> SSAValue:
    while isinstance(value.owner, loop.ViewOp | loop.PermuteOp):
        value = value.owner.source
    return value


def _size_key(alloc: loop.AllocOp) -> tuple:
    assert isinstance(alloc.result.type, MemRefType)
    return (alloc.result.type.element_type, num_elements(alloc.dims))


def reuse_buffers(fn: func.FuncOp, reuse: bool = True) -> None:
    """Step 2: liveness, reuse, and a dealloc after each buffer's last use."""
    block = fn.body.block
    for op in list(block.ops):
        if isinstance(op, loop.DeallocOp):
            op.detach()
            op.erase()
    ops = list(block.ops)
    position = {op: n for n, op in enumerate(ops)}

    def last_use(value: SSAValue) -> int:
        """The position of the last op using ``value`` or a view of it."""
        end = position[value.owner] if isinstance(value.owner, Operation) else -1
        for use in value.uses:
            user = use.operation
            end = max(end, position[user])
            if isinstance(user, loop.ViewOp | loop.PermuteOp):
                end = max(end, last_use(user.result))
        return end

    ends: dict[SSAValue, int] = {}  # root buffer -> last use
    free: list[SSAValue] = []  # roots dead before the current op
    for n, op in enumerate(ops):
        if isinstance(op, loop.AllocOp) and reuse:
            key = _size_key(op)
            match = next(
                (b for b in free if isinstance(b.owner, loop.AllocOp) and _size_key(b.owner) == key),
                None,
            )
            if match is not None:
                free.remove(match)
                end = last_use(op.result)
                alloc = match.owner
                assert isinstance(alloc, loop.AllocOp)  # as the search picked it
                if alloc.dims == op.dims and match.type == op.result.type:
                    replacement = match
                else:
                    view = loop.ViewOp(match, op.dims, op.result.type)
                    Builder(InsertPoint.before(op)).insert(view)
                    position[view] = n
                    replacement = view.result
                if op.result.name_hint and replacement is not match:
                    replacement.name_hint = op.result.name_hint
                op.result.replace_all_uses_with(replacement)
                op.detach()
                op.erase()
                ends[match] = max(end, n)
                continue
        if isinstance(op, loop.AllocOp):
            ends[op.result] = last_use(op.result)
        for root, end in list(ends.items()):
            if end <= n and root not in free:
                free.append(root)
    for root, end in ends.items():
        anchor = ops[end] if end >= 0 else root.owner
        assert isinstance(anchor, Operation)  # a root is the result of a loop.alloc
        if isinstance(anchor, func.ReturnOp):
            Builder(InsertPoint.before(anchor)).insert(loop.DeallocOp(root))
        else:
            Builder(InsertPoint.after(_last_at(anchor, root))).insert(loop.DeallocOp(root))


def _last_at(anchor: Operation, root: SSAValue) -> Operation:
    """``anchor``, or the dealloc already placed after it (deallocs keep program order)."""
    nxt = anchor.next_op
    while isinstance(nxt, loop.DeallocOp):
        anchor, nxt = nxt, nxt.next_op
    return anchor


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Caller-provided results, buffers freed at their last use and reused."""

    name = "plan-memory"

    reuse: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            if fn.is_declaration or not all(
                isinstance(t, MemRefType) for t in [*fn.function_type.inputs.data, *fn.function_type.outputs.data]
            ):
                continue
            results_to_arguments(fn)
            reuse_buffers(fn, self.reuse)
