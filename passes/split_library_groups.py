"""``split-library-groups``: a fusion group with ``strategy = "library"`` becomes its
library calls and the kernels between them (``strategy.split_at_matmuls``).

Each matmul becomes a group of its own, ``{strategy = "library"}``, holding the
matmul and the layout ops it reads its operands through (``lower-to-loops`` makes
them strided views and a ``loop.gemm``); the group's other ops become one group per
level, named after the group they came from:

    %y = graph.fusion_group(%x, %w, %b) {kernel = "k0_matmul", strategy = "library"} {
      %m = graph.matmul %x, %w ...
      %r = graph.relu (%m + broadcast(%b)) ...            ->
      graph.yield %r
    }
    %m = graph.fusion_group(%x, %w) {kernel = "k0_matmul_gemm0", kind = "matmul", strategy = "library"} {...}
    %y = graph.fusion_group(%m, %b) {kernel = "k0_matmul_epilogue1", kind = "elementwise", part_of = "k0_matmul"} {...}

The attention group becomes a call (Q K^T), a softmax kernel, a call (P V) and, when
the heads are merged after it, a kernel writing the merged layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dialects import graph
from dialects.group_kinds import GroupKind, GroupStrategy
from passes.fusion.classify import is_free
from passes.fusion.select_strategy import KernelPart, LibraryCall, split_at_matmuls


def _clone_into(body: Block, ops: Sequence[Operation], mapping: dict[SSAValue, SSAValue]) -> None:
    """Clones ``ops`` into ``body``, first cloning the free ops they read from outside."""

    def need(v: SSAValue) -> None:
        owner = v.owner
        if v in mapping or not isinstance(owner, Operation) or not is_free(owner):
            return
        for w in owner.operands:
            need(w)
        clone = owner.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(owner.results, clone.results))

    for op in ops:
        for v in op.operands:
            need(v)
        clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))


def _new_group(
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    ops: Sequence[Operation],
    outer: Mapping[SSAValue, SSAValue],
    **properties,
) -> graph.FusionGroupOp:
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for v, arg in zip(inputs, body.args):
        if v.name_hint:
            arg.name_hint = v.name_hint
    _clone_into(body, ops, mapping)
    body.add_op(graph.YieldOp(*[mapping[v] for v in outputs]))
    return graph.FusionGroupOp([outer[v] for v in inputs], [v.type for v in outputs], Region(body), **properties)


#: the word naming each kind of piece a group is split into (``k1_attention_rows1``): a
#: library call, or a kernel between calls by its kind; ``compiler.bench`` finds a
#: group's pieces by it
PART_WORDS: dict[GroupStrategy | GroupKind, str] = {
    GroupStrategy.LIBRARY: "gemm",
    GroupKind.REDUCTION: "rows",
    GroupKind.INJECTIVE: "layout",
    GroupKind.ELEMENTWISE: "epilogue",
}


def _part_kind(part: KernelPart) -> GroupKind:
    if any(isinstance(op, graph.ReduceOp) for op in part.ops):
        return GroupKind.REDUCTION
    if all(isinstance(op, graph.TransposeOp | graph.ReshapeOp) or is_free(op) for op in part.ops):
        return GroupKind.INJECTIVE
    return GroupKind.ELEMENTWISE


def split_group(group: graph.FusionGroupOp) -> None:
    block = group.body.block
    name = group.kernel_name or "k"
    yielded = list(block.last_op.operands) if block.last_op is not None else []
    outer: dict[SSAValue, SSAValue] = dict(zip(block.args, group.inputs))
    where = InsertPoint.before(group)
    for n, step in enumerate(split_at_matmuls(block)):
        outs: Sequence[SSAValue]
        if isinstance(step, LibraryCall):
            roots = list(dict.fromkeys(step.roots))
            ops = [*step.chains[0], *step.chains[1], step.matmul]
            new = _new_group(
                roots,
                [step.matmul.result],
                list(dict.fromkeys(ops)),
                outer,
                kernel=f"{name}_{PART_WORDS[GroupStrategy.LIBRARY]}{n}",
                kind=GroupKind.MATMUL,
                strategy=GroupStrategy.LIBRARY,
                part_of=name,
            )
            outs = [step.matmul.result]
        else:
            outs = step.outputs(set(yielded))
            kind = _part_kind(step)
            new = _new_group(
                step.inputs(),
                outs,
                step.ops,
                outer,
                kernel=f"{name}_{PART_WORDS[kind]}{n}",
                kind=kind,
                rule="split",
                part_of=name,
            )
        Builder(where).insert(new)
        for old, result in zip(outs, new.results):
            outer[old] = result
            if old.name_hint:
                result.name_hint = old.name_hint
    for result, value in zip(group.results, yielded):
        result.replace_all_uses_with(outer[value])
    group.detach()
    group.erase()


@dataclass(frozen=True)
class SplitLibraryGroupsPass(ModulePass):
    """Every ``strategy = "library"`` group holding more than its matmul becomes its
    library calls and the kernels between them."""

    name = "split-library-groups"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or fn.is_declaration:
                continue
            for group in list(fn.body.block.ops):
                if (
                    isinstance(group, graph.FusionGroupOp)
                    and group.strategy is GroupStrategy.LIBRARY
                    and group.part_of is None
                ):
                    split_group(group)
