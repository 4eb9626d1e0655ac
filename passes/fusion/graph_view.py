"""A function's ops as a dependence graph of integer ids, for the fusion planner.

Ops are numbered in program order (which is topological). FREE ops (constants,
``graph.dim_size``) are not nodes: they are cloned into every group that uses
them. A ``graph.dim_size`` reads only the shape of its operand, so that operand
is a *shape-only* input of a group that uses it (a kernel argument moving no bytes), as
is an argument giving a size that the group's loops run over and no other buffer of it
has (``iota((N, D), 0)`` summed over ``D``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import PassFailedException

from dialects.group_kinds import GroupKind
from dialects.sizes import Size
from dialects.tensor_types import Shape, num_elements, shape_of
from passes.fusion.classify import OpClass, classify, is_free, is_groupable, is_index_map
from passes.fusion.cost import (
    DeviceModel,
    KernelCost,
    group_flops,
    kernel_cost,
)

OpSet = frozenset[int]


@dataclass
class GroupIO:
    """What a set of ops reads from and gives to the rest of the function."""

    inputs: list[SSAValue]  # in order of first use; data inputs and shape-only ones
    shape_only: list[bool]  # per input: read only through graph.dim_size
    outputs: list[SSAValue]  # in program order
    free_ops: list[Operation]  # constants / dim_sizes to clone in, in program order

    @property
    def data_inputs(self) -> list[SSAValue]:
        return [v for v, s in zip(self.inputs, self.shape_only) if not s]


@dataclass
class FuncGraph:
    """The groupable ops of one function body and their dependences."""

    func: FuncOp
    ops: list[Operation] = field(default_factory=list)
    index: dict[Operation, int] = field(default_factory=dict)
    cls: list[OpClass] = field(default_factory=list)
    free_ops: list[Operation] = field(default_factory=list)
    free_position: dict[Operation, int] = field(default_factory=dict)  # in program order
    #: data producers of each op (ids), including through the free ops it reads
    preds: list[set[int]] = field(default_factory=list)
    succs: list[set[int]] = field(default_factory=list)
    _users: dict[SSAValue, tuple[frozenset[int], bool]] = field(default_factory=dict)
    _shapes: dict[SSAValue, Shape] = field(default_factory=dict)
    _counts: dict[SSAValue, tuple[Fraction, tuple[str, ...]]] = field(default_factory=dict)

    @staticmethod
    def build(fn: FuncOp) -> FuncGraph:
        g = FuncGraph(fn)
        block = fn.body.block
        for op in block.ops:
            if op.has_trait(IsTerminator):
                continue
            if is_free(op):
                g.free_position[op] = len(g.free_ops)
                g.free_ops.append(op)
                continue
            if not is_groupable(op):
                raise PassFailedException(f"fuse: cannot put {op.name} in a fusion group (non-tensor operands)")
            g.index[op] = len(g.ops)
            g.ops.append(op)
            g.cls.append(classify(op))
        g.preds = [set() for _ in g.ops]
        g.succs = [set() for _ in g.ops]
        for i, op in enumerate(g.ops):
            for j in g._producers(op.operands):
                if j != i:
                    g.preds[i].add(j)
                    g.succs[j].add(i)
        return g

    @property
    def block(self) -> Block:
        return self.func.body.block

    # -- values -------------------------------------------------------------

    def producer(self, value: SSAValue) -> int | None:
        """The id of the groupable op defining ``value`` (None for arguments and free values)."""
        if isinstance(value, OpResult):
            return self.index.get(value.op)
        return None

    def free_producer(self, value: SSAValue) -> Operation | None:
        if isinstance(value, OpResult) and value.op in self.free_position:
            return value.op
        return None

    def _producers(self, values: Iterable[SSAValue]) -> set[int]:
        found: set[int] = set()
        for v in values:
            j = self.producer(v)
            if j is not None:
                found.add(j)
            elif (f := self.free_producer(v)) is not None:
                found |= self._producers(f.operands)
        return found

    def users(self, value: SSAValue) -> tuple[frozenset[int], bool]:
        """(ids of the ops reading ``value``, directly or through free ops; whether
        anything outside every group reads it: the terminator, or a free op it feeds)."""
        if value not in self._users:
            ids: set[int] = set()
            escapes = False
            for use in value.uses:
                user = use.operation
                if user in self.index:
                    ids.add(self.index[user])
                elif user in self.free_position:
                    for r in user.results:
                        sub, esc = self.users(r)
                        ids |= sub
                        escapes |= esc
                else:
                    escapes = True
            self._users[value] = (frozenset(ids), escapes)
        return self._users[value]

    def shape(self, value: SSAValue) -> Shape:
        """The shape of a tensor value (read from its type once)."""
        if value not in self._shapes:
            self._shapes[value] = shape_of(value.type)
        return self._shapes[value]

    def is_used_outside(self, value: SSAValue, group: OpSet) -> bool:
        ids, escapes = self.users(value)
        return escapes or any(i not in group for i in ids)

    # -- groups -------------------------------------------------------------

    def io(self, group: OpSet) -> GroupIO:
        inputs: list[SSAValue] = []
        shape_only: list[bool] = []
        position: dict[SSAValue, int] = {}
        free_needed: set[Operation] = set()

        def add_input(v: SSAValue, only_shape: bool) -> None:
            if v in position:
                if not only_shape:
                    shape_only[position[v]] = False
                return
            position[v] = len(inputs)
            inputs.append(v)
            shape_only.append(only_shape)

        def visit(v: SSAValue, only_shape: bool) -> None:
            j = self.producer(v)
            if j is not None and j in group:
                return
            f = self.free_producer(v)
            if f is not None:
                if f not in free_needed:
                    free_needed.add(f)
                    for operand in f.operands:
                        visit(operand, True)
                return
            add_input(v, only_shape)

        for i in sorted(group):
            for operand in self.ops[i].operands:
                visit(operand, False)
        outputs: list[SSAValue] = [
            r for i in sorted(group) for r in self.ops[i].results if self.is_used_outside(r, group)
        ]
        free_ops = sorted(free_needed, key=self.free_position.__getitem__)
        # a size the kernel's loops run over but none of its buffers has (a free iota or
        # broadcast constant spans it): read from an argument that has it, for its shape
        have = _size_names(v for v in (*inputs, *outputs))
        for name in _size_names(r for op in (*self.group_ops(group), *free_ops) for r in op.results) - have:
            carrier = next((a for a in self.func.body.block.args if name in _size_names([a])), None)
            if carrier is not None:
                add_input(carrier, True)
        return GroupIO(inputs, shape_only, outputs, free_ops)

    def group_ops(self, group: OpSet) -> list[Operation]:
        return [self.ops[i] for i in sorted(group)]

    def cost(self, group: OpSet, kind: GroupKind, device: DeviceModel, dims: Mapping[str, int]) -> KernelCost:
        """The cost of a group computed from its ops (the planner keeps the same
        numbers in its summaries without visiting them; the tests compare the two)."""
        io = self.io(group)
        outputs = set(io.outputs)
        flops, once = group_flops(
            self.group_ops(group),
            lambda v: v in outputs,
            hoists_broadcasts=kind in ROW_KINDS,
            dims=dims,
        )
        return kernel_cost(io.data_inputs, io.outputs, flops, once, device, dims)

    # -- facts the fusion templates ask ---------------------------------------

    def depends_within(self, group: OpSet, roots: Iterable[int]) -> set[int]:
        """Ops of ``group`` that depend (inside the group) on any op of ``roots``,
        the roots included."""
        dep = set(r for r in roots if r in group)
        for i in sorted(group):
            if i in dep:
                continue
            if any(p in dep for p in self.preds[i]):
                dep.add(i)
        return dep

    def count(self, value: SSAValue) -> tuple[Fraction, tuple[str, ...]]:
        """The symbolic element count of a value."""
        if value not in self._counts:
            self._counts[value] = num_elements(self.shape(value))
        return self._counts[value]


def _size_names(values: Iterable[SSAValue]) -> set[str]:
    """The size names in the shapes of ``values`` (those of a derived size included)."""
    return {n for v in values for d in shape_of(v.type) if isinstance(d, str) for n in Size.of(d).names}


#: kinds of kernels that run one row at a time and hoist per-row values
ROW_KINDS = frozenset({GroupKind.REDUCTION, GroupKind.ATTENTION})


__all__ = ["FuncGraph", "GroupIO", "OpSet", "ROW_KINDS", "is_index_map"]
