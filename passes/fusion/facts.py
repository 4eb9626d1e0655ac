"""What the fusion templates ask of a group, answered two ways.

A template (``rules.TEMPLATES``) decides whether a set of ops can be one kernel of
its kind. It asks a ``GroupFacts``: which classes of op the group holds, the first
reduction of each iteration space, its outputs, whether one op depends on another
inside it, and, for the per-op conditions, the first op that breaks one
(``first_failure``). ``OpSetFacts`` answers by visiting the group's ops; the
planner's ``summary.MergedFacts`` answers for the union of two groups from their
summaries, visiting only what the merge changes, so a decision costs the size of
the groups' boundary and not of the groups.

``first_failure(check, anchor_class, skip, context)`` is the heart of it: ``check(i,
dependent)`` says why op ``i`` does not fit (None when it does), ``dependent`` being
whether ``i`` depends inside the group on an op of ``anchor_class`` (the reductions
of a row kernel, the matmuls of a matmul kernel). A check must be monotone in
``dependent`` (a dependent op meets every condition an independent one does, and
maybe more) and read nothing of an op but ``op_signature``; ``context`` names
what else it reads (a row space, a matmul's output), so that a group already known
to fit a context need not be checked again.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from xdsl.ir import SSAValue

from dialects import graph
from dialects.group_kinds import GroupKind
from dialects.tensor_types import Shape, shape_of
from passes.fusion.classify import OpClass, is_index_map
from passes.fusion.graph_view import FuncGraph, OpSet

#: (op id, whether it depends on an anchor inside the group) -> why it does not fit
OpCheck = Callable[[int, bool], "str | None"]

#: the iteration space of a reduction: its input's shape and the reduced axes
Domain = tuple[Shape, tuple[int, ...]]


@dataclass(frozen=True)
class PatternMatch:
    """Ops a pattern rule matched: ``core`` becomes one group of kind ``kind``."""

    rule: str
    kind: GroupKind
    core: OpSet
    #: attention: (scores matmul, output matmul); conv: (matmul,). The last is the op
    #: ``find_patterns`` matched at, in whose order it lists the matches
    anchors: tuple[int, ...]


def in_found_order(matches: Iterable[PatternMatch]) -> list[PatternMatch]:
    """``matches`` in the order ``find_patterns`` lists them."""
    return sorted(matches, key=lambda match: match.anchors[-1])


def reduction_domain(op: graph.ReduceOp) -> Domain:
    return shape_of(op.input.type), op.axes_list


@dataclass(frozen=True)
class OpSignature:
    """All a template's per-op check reads of an op: ops of one signature pass or fail
    a check together (in a given context, with the same ``dependent``)."""

    cls: OpClass
    index_map: bool
    result: Shape
    operand: Shape | None  # the first operand's shape
    #: no operand is computed by a groupable op, so the op depends on nothing in any group
    independent: bool


def op_signature(g: FuncGraph, i: int) -> OpSignature:
    op = g.ops[i]
    operand = g.shape(op.operands[0]) if op.operands else None
    independent = not g.preds[i]
    return OpSignature(g.cls[i], is_index_map(op), g.shape(op.results[0]), operand, independent)


class GroupFacts(ABC):
    """The questions a template asks of a group of ops of ``g``."""

    g: FuncGraph
    patterns: tuple[PatternMatch, ...]  # every pattern match of the function

    @abstractmethod
    def size(self) -> int: ...

    @abstractmethod
    def has(self, i: int) -> bool:
        """Whether op ``i`` is in the group."""

    @abstractmethod
    def members(self) -> list[int]:
        """The group's ops in program order (visits them all)."""

    @abstractmethod
    def first_of_class(self) -> dict[OpClass, int]:
        """The first op of each class the group holds."""

    @abstractmethod
    def anchors(self, cls: OpClass) -> list[int]:
        """The ops of class ``cls`` (REDUCTION or above), in program order."""

    @abstractmethod
    def reduction_domains(self) -> dict[Domain, int]:
        """The first reduction over each iteration space."""

    @abstractmethod
    def index_maps_only(self) -> bool: ...

    @abstractmethod
    def data_injective(self) -> bool:
        """Whether a transpose/reshape that moves data (not an index map) is in the group."""

    @abstractmethod
    def outputs(self) -> list[SSAValue]:
        """The values used outside the group, in program order."""

    def output_values(self) -> Iterable[SSAValue]:
        """The values used outside the group, in any order (where that is cheaper)."""
        return self.outputs()

    @abstractmethod
    def reaches(self, src: int, dst: int) -> bool:
        """Whether ``dst`` depends on ``src`` through ops of the group."""

    @abstractmethod
    def share_descendant(self, x: int, y: int) -> bool:
        """Whether an op of the group depends on both ``x`` and ``y``."""

    @abstractmethod
    def first_failure(
        self, check: OpCheck, anchor_class: OpClass, skip: frozenset[int], context: Hashable
    ) -> str | None:
        """What ``check`` says of the first op (in program order, ``skip`` aside) that
        does not fit; None when every op fits."""

    def matched(self) -> list[PatternMatch]:
        """The pattern matches whose core the group holds."""
        return [p for p in self.patterns if all(self.has(i) for i in p.core)]

    def touched(self) -> list[PatternMatch]:
        """The pattern matches of whose core the group holds any op."""
        return [p for p in self.patterns if any(self.has(i) for i in p.core)]


class OpSetFacts(GroupFacts):
    """The facts of an explicit set of ops, found by visiting them."""

    def __init__(self, g: FuncGraph, group: OpSet, patterns: tuple[PatternMatch, ...] = ()):
        self.g = g
        self.group = group
        self.patterns = patterns
        self._sorted = sorted(group)

    def size(self) -> int:
        return len(self.group)

    def has(self, i: int) -> bool:
        return i in self.group

    def members(self) -> list[int]:
        return list(self._sorted)

    def first_of_class(self) -> dict[OpClass, int]:
        first: dict[OpClass, int] = {}
        for i in self._sorted:
            first.setdefault(self.g.cls[i], i)
        return first

    def anchors(self, cls: OpClass) -> list[int]:
        return [i for i in self._sorted if self.g.cls[i] == cls]

    def reduction_domains(self) -> dict[Domain, int]:
        domains: dict[Domain, int] = {}
        for i in self.anchors(OpClass.REDUCTION):
            op = self.g.ops[i]
            assert isinstance(op, graph.ReduceOp)
            domains.setdefault(reduction_domain(op), i)
        return domains

    def index_maps_only(self) -> bool:
        return all(is_index_map(self.g.ops[i]) for i in self._sorted)

    def data_injective(self) -> bool:
        return any(self.g.cls[i] == OpClass.INJECTIVE and not is_index_map(self.g.ops[i]) for i in self._sorted)

    def outputs(self) -> list[SSAValue]:
        return self.g.io(self.group).outputs

    def reaches(self, src: int, dst: int) -> bool:
        return dst in self.g.depends_within(self.group, [src])

    def share_descendant(self, x: int, y: int) -> bool:
        return bool(self.g.depends_within(self.group, [x]) & self.g.depends_within(self.group, [y]))

    def first_failure(
        self, check: OpCheck, anchor_class: OpClass, skip: frozenset[int], context: Hashable
    ) -> str | None:
        dependent = self.g.depends_within(self.group, self.anchors(anchor_class))
        for i in self._sorted:
            if i in skip:
                continue
            reason = check(i, i in dependent)
            if reason is not None:
                return reason
        return None
