"""What the planner keeps of each group, so that judging a merge costs the size of
the two groups' boundary, not of the groups.

A ``GroupSummary`` holds a group's inputs and outputs (with the ops that read each
input), the ops that anchor its kind, its ops by ``facts.OpSignature``, the FLOPs
its ops cost and the extra FLOPs of recomputing ops upstream of a broadcast, and
the ranges over which it holds values (``live.LiveRanges``). ``MergedFacts``
answers the templates' questions for the union of two groups from their summaries
and computes the union's bytes, FLOPs and live values; ``commit`` turns it into
the merged group's summary, folding the smaller group into the larger one.

What a merge changes crosses the edges from one group (``up``) to the other
(``down``): the values ``up`` computes and ``down`` reads become internal, held
until their last reader in ``down``; ops of ``up`` feeding a broadcast in ``down``
may be recomputed once per element of the broadcast; ops of ``down`` may come to
depend on an anchor of ``up``. Siblings (a horizontal merge) share inputs only.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from xdsl.ir import SSAValue

from dialects import graph
from dialects.group_kinds import GroupKind
from passes.fusion.classify import OpClass, is_index_map
from passes.fusion.cost import DeviceModel, KernelCost, op_flops, type_elements
from passes.fusion.depth import Chains, join, joined_depth
from passes.fusion.facts import (
    Domain,
    GroupFacts,
    OpCheck,
    OpSetFacts,
    OpSignature,
    PatternMatch,
    in_found_order,
    op_signature,
    reduction_domain,
)
from passes.fusion.graph_view import ROW_KINDS, FuncGraph
from passes.fusion.live import LiveRanges
from passes.fusion.rules import group_kind


@dataclass
class InputUse:
    """How a group reads one value it does not compute."""

    readers: list[int]  # the group's ops that read it, directly or through free ops
    data_readers: list[int]  # those that read its elements (not only its shape)

    @property
    def shape_only(self) -> bool:
        return not self.data_readers


@dataclass
class SignatureOps:
    """A group's ops of one signature."""

    first: int
    ids: list[int]


@dataclass
class GroupSummary:
    """One group of the partition being planned."""

    handle: int  # the planner's name for the group, kept while it absorbs others
    first: int  # its first op: orders candidates and names kernels
    members: list[int]
    first_of_class: dict[OpClass, int]
    anchors: dict[OpClass, list[int]]  # ops of class REDUCTION and above
    domains: dict[Domain, int]  # first reduction over each iteration space
    index_maps_only: bool
    data_injective: bool
    patterns: tuple[PatternMatch, ...]
    inputs: dict[SSAValue, InputUse]
    outputs: dict[SSAValue, int]  # value -> ops outside the group reading it
    last_use: dict[SSAValue, int]  # values read inside the group -> their last reader
    live: LiveRanges
    chains: Chains
    flops_once: float
    factors: dict[int, float]  # ops computed more than once per result element
    extra_flops: float  # what those recomputations cost
    signatures: dict[OpSignature, SignatureOps]
    kind: GroupKind
    context: Hashable | None = None  # the per-op context the group is known to fit
    version: int = 0

    @staticmethod
    def of_op(g: FuncGraph, i: int, dims: Mapping[str, int]) -> GroupSummary:
        op = g.ops[i]
        cls = g.cls[i]
        inputs: dict[SSAValue, InputUse] = {}
        for value, data in _reads(g, i):
            use = inputs.setdefault(value, InputUse([i], []))
            if data and not use.data_readers:
                use.data_readers.append(i)
        outputs: dict[SSAValue, int] = {}
        for r in op.results:
            ids, escapes = g.users(r)
            if ids or escapes:
                outputs[r] = len(ids)
        domains = {reduction_domain(op): i} if isinstance(op, graph.ReduceOp) else {}
        return GroupSummary(
            handle=i,
            first=i,
            members=[i],
            first_of_class={cls: i},
            anchors={cls: [i]} if cls >= OpClass.REDUCTION else {},
            domains=domains,
            index_maps_only=is_index_map(op),
            data_injective=cls == OpClass.INJECTIVE and not is_index_map(op),
            patterns=(),
            inputs=inputs,
            outputs=outputs,
            last_use={},
            live=LiveRanges(len(g.ops)),
            chains=Chains.of_op(i),
            flops_once=op_flops(op, dims),
            factors={},
            extra_flops=0.0,
            signatures={op_signature(g, i): SignatureOps(i, [i])},
            kind=group_kind(OpSetFacts(g, frozenset({i}))),
        )

    @property
    def size(self) -> int:
        return len(self.members)

    def cost(self, device: DeviceModel, bytes_of: Callable[[SSAValue], int]) -> KernelCost:
        data = [v for v, use in self.inputs.items() if not use.shape_only]
        return group_cost(data, self.outputs, self.flops_once, self.extra_flops, self.kind, device, bytes_of)


def group_cost(
    data_inputs: Iterable[SSAValue],
    outputs: Iterable[SSAValue],
    flops_once: float,
    extra_flops: float,
    kind: GroupKind,
    device: DeviceModel,
    bytes_of: Callable[[SSAValue], int],
) -> KernelCost:
    """A kernel's roofline cost (``cost.kernel_cost``): its inputs read and outputs
    written once; a row kernel hoists broadcasts, so only other kinds recompute
    (``extra_flops``)."""
    flops = flops_once if kind in ROW_KINDS else flops_once + extra_flops
    moved = sum(bytes_of(v) for v in data_inputs) + sum(bytes_of(v) for v in outputs)
    return KernelCost(moved, flops, flops_once, device.time(moved, flops))


def _reads(g: FuncGraph, i: int) -> Iterator[tuple[SSAValue, bool]]:
    """The values op ``i`` reads, with whether it reads their elements: its operands,
    and what the free ops among them read (they are cloned into its kernel; the only
    one reading a computed value is ``graph.dim_size``, for its shape)."""
    stack = [(v, True) for v in g.ops[i].operands]
    seen: set[SSAValue] = set()
    while stack:
        value, data = stack.pop()
        free = g.free_producer(value)
        if free is not None:
            if value not in seen:
                seen.add(value)
                stack.extend((v, False) for v in free.operands)
            continue
        yield value, data


@dataclass
class Boundary:
    """The edges between two groups: the values ``up`` computes and ``down`` reads."""

    up: GroupSummary | None
    down: GroupSummary | None
    crossing: list[SSAValue] = field(default_factory=list)


class MergedFacts(GroupFacts):
    """The union of groups ``a`` and ``b``, from their summaries. ``group_of`` maps
    an op id to the handle of its group."""

    def __init__(
        self,
        g: FuncGraph,
        patterns: tuple[PatternMatch, ...],
        group_of: list[int],
        a: GroupSummary,
        b: GroupSummary,
        dims: Mapping[str, int],
    ):
        self.g = g
        self.dims = dims
        self.patterns = patterns
        self.group_of = group_of
        self.a = a
        self.b = b
        self.boundary = self._boundary()
        self.fits: Hashable | None = None  # the context first_failure found it fits
        self._dependent: dict[OpClass, dict[int, bool]] = {}

    # -- the structure of the union ------------------------------------------------

    def _boundary(self) -> Boundary:
        a, b = self.a, self.b
        into_b = [v for v in b.inputs if self._produced_in(v, a)]
        if into_b:
            return Boundary(a, b, into_b)
        into_a = [v for v in a.inputs if self._produced_in(v, b)]
        if into_a:
            return Boundary(b, a, into_a)
        return Boundary(None, None)

    def _produced_in(self, value: SSAValue, side: GroupSummary) -> bool:
        j = self.g.producer(value)
        return j is not None and self.group_of[j] == side.handle

    @functools.cached_property
    def kind(self) -> GroupKind:
        return group_kind(self)

    @functools.cached_property
    def inputs(self) -> dict[SSAValue, bool]:
        """The union's inputs -> whether it reads only their shape."""
        crossing = set(self.boundary.crossing)
        merged: dict[SSAValue, bool] = {}
        for side in (self.a, self.b):
            for value, use in side.inputs.items():
                if value not in crossing:
                    merged[value] = merged.get(value, True) and use.shape_only
        return merged

    @functools.cached_property
    def output_counts(self) -> dict[SSAValue, int]:
        """The union's outputs -> ops outside it reading each."""
        merged: dict[SSAValue, int] = {}
        for side, other in ((self.a, self.b), (self.b, self.a)):
            for value, outside in side.outputs.items():
                use = other.inputs.get(value)
                if use is not None:
                    outside -= len(use.readers)
                if outside > 0 or self.g.users(value)[1]:
                    merged[value] = outside
        return merged

    @functools.cached_property
    def live(self) -> LiveRanges:
        """The union's held values: both groups', and each crossing value held from
        its definition (or its last use in ``up``) to its last reader in ``down``."""
        live = self.a.live.merged(self.b.live)
        up, down = self.boundary.up, self.boundary.down
        for value in self.boundary.crossing:
            assert up is not None and down is not None
            readers = down.inputs[value].data_readers
            if not readers:
                continue
            end = max(readers)
            held_to = up.last_use.get(value)
            start = held_to if held_to is not None else self.g.producer(value)
            assert start is not None  # a crossing value is made by an op of up
            live = live.held(start + 1, end)
        return live

    @functools.cached_property
    def crossing_edges(self) -> list[tuple[int, int]]:
        """The op edges from ``up`` to ``down``."""
        down = self.boundary.down
        edges: list[tuple[int, int]] = []
        for value in self.boundary.crossing:
            assert down is not None
            u = self.g.producer(value)
            assert u is not None
            edges.extend((u, r) for r in down.inputs[value].readers)
        return edges

    @property
    def depth(self) -> int:
        """The longest chain of dependent ops of the union (``depth.py``)."""
        up, down = self.boundary.up, self.boundary.down
        if up is None or down is None:
            return max(self.a.chains.depth, self.b.chains.depth)
        return joined_depth(up.chains, down.chains, self.crossing_edges)

    @property
    def live_bound(self) -> int:
        """At least ``live.peak``, without building the merged ranges: the two
        groups' peaks, and every crossing value held throughout."""
        return self.a.live.peak + self.b.live.peak + len(self.boundary.crossing)

    @functools.cached_property
    def recomputed(self) -> tuple[dict[int, float], float]:
        """(the ops of ``up`` whose recompute factor grows, with the new factor; the
        extra FLOPs of the union in a kernel that does not hoist broadcasts).

        An op of a fused loop nest runs once per element of the largest broadcast
        downstream of it: its factor is the largest over its readers in the group of
        the reader's factor, times the broadcast's growth where the reader is a
        broadcast. Only ops of ``up`` gain readers; they are visited from the
        crossing edges upward, last op first, each once."""
        extra = self.a.extra_flops + self.b.extra_flops
        up, down = self.boundary.up, self.boundary.down
        if up is None or down is None:
            return {}, extra
        g, dims = self.g, self.dims
        pending: dict[int, float] = {}
        heap: list[int] = []

        def offer(j: int, factor: float) -> None:
            if factor > up.factors.get(j, 1.0) and factor > pending.get(j, 0.0):
                if j not in pending:
                    heapq.heappush(heap, -j)
                pending[j] = factor

        def passed_up(reader: int, factor: float, value: SSAValue) -> float:
            op = g.ops[reader]
            if isinstance(op, graph.BroadcastOp):
                return factor * type_elements(op.result.type, dims) / max(1, type_elements(value.type, dims))
            return factor

        for value in self.boundary.crossing:
            producer = g.producer(value)
            assert producer is not None  # a crossing value is made by an op of up
            for reader in down.inputs[value].data_readers:
                offer(producer, passed_up(reader, down.factors.get(reader, 1.0), value))
        grown: dict[int, float] = {}
        while heap:
            j = -heapq.heappop(heap)
            factor = pending[j]
            grown[j] = factor
            extra += op_flops(g.ops[j], dims) * (factor - up.factors.get(j, 1.0))
            for value in g.ops[j].operands:
                p = g.producer(value)
                if p is not None and self.group_of[p] == up.handle:
                    offer(p, passed_up(j, factor, value))
        return grown, extra

    # -- GroupFacts ----------------------------------------------------------------

    def size(self) -> int:
        return self.a.size + self.b.size

    def has(self, i: int) -> bool:
        return self.group_of[i] in (self.a.handle, self.b.handle)

    def members(self) -> list[int]:
        return sorted(self.a.members + self.b.members)

    def first_of_class(self) -> dict[OpClass, int]:
        first = dict(self.a.first_of_class)
        for cls, i in self.b.first_of_class.items():
            first[cls] = min(first.get(cls, i), i)
        return first

    def anchors(self, cls: OpClass) -> list[int]:
        return sorted(self.a.anchors.get(cls, []) + self.b.anchors.get(cls, []))

    def reduction_domains(self) -> dict[Domain, int]:
        domains = dict(self.a.domains)
        for domain, i in self.b.domains.items():
            domains[domain] = min(domains.get(domain, i), i)
        return domains

    def index_maps_only(self) -> bool:
        return self.a.index_maps_only and self.b.index_maps_only

    def data_injective(self) -> bool:
        return self.a.data_injective or self.b.data_injective

    def matched(self) -> list[PatternMatch]:
        """The two groups' matches, in ``find_patterns``' order (not every match of the
        function asked in turn: a long program holds thousands)."""
        return in_found_order(self.a.patterns + self.b.patterns)

    def touched(self) -> list[PatternMatch]:
        # a group holds a match's whole core or none of it (each core is one group
        # before any other merge: ``Planner.apply_patterns``)
        return self.matched()

    def outputs(self) -> list[SSAValue]:
        return sorted(self.output_counts, key=self._position)

    def output_values(self) -> Iterable[SSAValue]:
        return self.output_counts

    def _position(self, value: SSAValue) -> tuple[int, int]:
        j = self.g.producer(value)
        assert j is not None
        return j, self.g.ops[j].results.index(value)

    def _descendants(self, src: int, limit: int) -> set[int]:
        """``src`` and the ops of the union that depend on it, up to op ``limit``."""
        seen = {src}
        stack = [src]
        while stack:
            for s in self.g.succs[stack.pop()]:
                if s not in seen and s <= limit and self.has(s):
                    seen.add(s)
                    stack.append(s)
        return seen

    def reaches(self, src: int, dst: int) -> bool:
        return dst in self._descendants(src, dst)

    def share_descendant(self, x: int, y: int) -> bool:
        limit = len(self.g.ops)
        return bool(self._descendants(x, limit) & self._descendants(y, limit))

    def depends_on(self, i: int, anchor_class: OpClass) -> bool:
        """Whether op ``i`` is, or depends inside the union on, an op of
        ``anchor_class`` (a walk up its producers in the union, each op once per
        merge judged)."""
        g = self.g
        known = self._dependent.setdefault(anchor_class, {})
        stack = [i]
        while stack:
            j = stack[-1]
            if j in known:
                stack.pop()
                continue
            producers = [p for p in g.preds[j] if self.has(p)]
            todo = [p for p in producers if p not in known]
            if todo and g.cls[j] != anchor_class:
                stack.extend(todo)
                continue
            stack.pop()
            known[j] = g.cls[j] == anchor_class or any(known[p] for p in producers)
        return known[i]

    def first_failure(
        self, check: OpCheck, anchor_class: OpClass, skip: frozenset[int], context: Hashable
    ) -> str | None:
        """Ops of a group already known to fit ``context`` still fit, unless they come
        to depend on an anchor; the other group's ops are judged by signature (the
        first op of each), and ops that may come to depend on an anchor, one by one
        where their signature fails only so. New dependences come only down the
        boundary, from an ``up`` group holding an anchor."""
        up, down = self.boundary.up, self.boundary.down
        gains = down is not None and up is not None and anchor_class in up.anchors
        failing: list[int] = []
        for side in (self.a, self.b):
            known = side.context == context
            # (a group with an anchor not yet judged in this context is one op)
            may_depend = (gains and side is down) or (not known and anchor_class in side.anchors)
            for signature, ops in side.signatures.items():
                first = ops.first if ops.first not in skip else min((i for i in ops.ids if i not in skip), default=None)
                if first is None:
                    continue
                if not known and check(first, False) is not None:
                    failing.append(first)
                elif may_depend and not signature.independent and check(first, True) is not None:
                    dependent = [i for i in ops.ids if i not in skip and self.depends_on(i, anchor_class)]
                    if dependent:
                        failing.append(min(dependent))
        if not failing:
            self.fits = context
            return None
        i = min(failing)
        return check(i, self.depends_on(i, anchor_class))

    # -- cost ----------------------------------------------------------------------

    def cost(self, device: DeviceModel, bytes_of: Callable[[SSAValue], int]) -> KernelCost:
        data = [v for v, shape_only in self.inputs.items() if not shape_only]
        once = self.a.flops_once + self.b.flops_once
        extra = 0.0 if self.kind in ROW_KINDS else self.recomputed[1]
        return group_cost(data, self.output_counts, once, extra, self.kind, device, bytes_of)

    # -- the merged summary --------------------------------------------------------

    def commit(self) -> GroupSummary:
        """The union's summary: the smaller group folded into the larger one, whose
        handle it keeps; ``group_of`` is updated."""
        big, small = (self.a, self.b) if self.a.size >= self.b.size else (self.b, self.a)
        crossing = set(self.boundary.crossing)
        outputs = self.output_counts
        live = self.live
        grown, extra = self.recomputed
        up, down = self.boundary.up, self.boundary.down
        if up is None or down is None:
            up, down = self.a, self.b  # siblings: no edge between them
        g = self.g
        chains = join(
            up.chains,
            down.chains,
            self.crossing_edges,
            lambda i: [s for s in g.succs[i] if self.group_of[s] == down.handle],
            lambda i: [p for p in g.preds[i] if self.group_of[p] == up.handle],
        )
        for value in crossing:
            readers = down.inputs[value].data_readers
            if readers:
                big.last_use[value] = max(up.last_use.get(value, -1), *readers)
        for value, i in small.last_use.items():
            big.last_use[value] = max(big.last_use.get(value, i), i)
        for value, use in small.inputs.items():
            mine = big.inputs.get(value)
            if mine is None:
                big.inputs[value] = use
            else:
                mine.readers.extend(use.readers)
                mine.data_readers.extend(use.data_readers)
        for value in crossing:
            big.inputs.pop(value, None)
        for signature, ops in small.signatures.items():
            mine_ops = big.signatures.get(signature)
            if mine_ops is None:
                big.signatures[signature] = ops
            else:
                mine_ops.first = min(mine_ops.first, ops.first)
                mine_ops.ids.extend(ops.ids)
        for cls, ids in small.anchors.items():
            big.anchors.setdefault(cls, []).extend(ids)
        big.first_of_class = self.first_of_class()
        big.domains = self.reduction_domains()
        big.index_maps_only = self.index_maps_only()
        big.data_injective = self.data_injective()
        big.patterns = big.patterns + small.patterns
        big.outputs = outputs
        big.live = live
        big.chains = chains
        big.flops_once += small.flops_once
        big.factors.update(small.factors)
        big.factors.update(grown)
        big.extra_flops = extra
        big.kind = self.kind
        big.context = self.fits
        big.first = min(big.first, small.first)
        big.members.extend(small.members)
        for i in small.members:
            self.group_of[i] = big.handle
        big.version += 1
        return big
