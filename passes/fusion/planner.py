"""The fusion planner: partitions a function's ops into kernels.

1. Pattern rules (attention) claim their ops first.
2. Every other op starts as a kernel of its own. Candidates are the pairs of
   groups joined by a data edge (vertical) or reading a common input (horizontal).
   A candidate is *legal* when a rule of ``rules.RULES`` joins the two kinds, the
   merged group fits its kind's template, it respects the size limits and the cost
   model says it saves time (``cost.fusion_score``). The legal candidate with the
   largest saving that does not close a cycle between groups is merged; repeat
   until none is left (XLA's priority fusion, Inductor's scheduler).
3. Every producer→consumer edge left between two groups gets the reason the
   candidate was refused, for the fusion report.

The plan is plain data (op ids); ``fuse.py`` turns it into ``graph.fusion_group``s.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field

from passes.fusion.classify import OpClass, short_name
from passes.fusion.cost import GPU_H200, DeviceModel, FusionScore, fusion_score
from passes.fusion.graph_view import FuncGraph, OpSet
from passes.fusion.patterns import find_patterns
from passes.fusion.rules import (
    REPORT_KIND,
    FusionRule,
    PatternMatch,
    TEMPLATES,
    dominant_rule,
    find_rule,
    generic_refusal,
    group_kind,
    refusal_reason,
)

DEFAULT_MAX_OPS = 64
DEFAULT_MAX_INPUTS = 16

NO_FUSE_REASON = "fusion disabled (no-fuse)"
CYCLE_REASON = "would form a cycle"


@dataclass(frozen=True)
class FusionOptions:
    device: DeviceModel = GPU_H200
    dims: Mapping[str, int] = field(default_factory=dict)
    max_ops: int = DEFAULT_MAX_OPS
    max_inputs: int = DEFAULT_MAX_INPUTS
    enabled: bool = True  # False: one kernel per op (no-fuse)


@dataclass(frozen=True)
class Decision:
    """The verdict on merging two groups (without the cycle check, which depends
    on the rest of the partition)."""

    ok: bool
    reason: str | None = None
    rule: FusionRule | None = None
    score: FusionScore | None = None


@dataclass
class PlannedGroup:
    ops: OpSet
    kind: str  # the planner's kind (may be "index_map")
    rule: str
    pattern: str | None
    description: str
    index: int = 0

    @property
    def report_kind(self) -> str:
        return REPORT_KIND.get(self.kind, self.kind)

    @property
    def kernel(self) -> str:
        return f"k{self.index}_{self.description}"


@dataclass
class NotFused:
    producer: int
    consumer: int
    reason: str


@dataclass
class Plan:
    graph: FuncGraph
    groups: list[PlannedGroup]  # in an order that respects the data dependences
    not_fused: list[NotFused]
    labels: dict[int, str]  # op id -> label in the fused program's op order

    def group_of(self) -> dict[int, PlannedGroup]:
        return {i: grp for grp in self.groups for i in grp.ops}

    def not_fused_records(self) -> list[dict[str, str]]:
        return [
            {"producer": self.labels[n.producer], "consumer": self.labels[n.consumer], "reason": n.reason}
            for n in self.not_fused
        ]


class Planner:
    def __init__(self, g: FuncGraph, options: FusionOptions):
        self.g = g
        self.options = options
        self.patterns: tuple[PatternMatch, ...] = find_patterns(g) if options.enabled else ()
        self.group_of: list[int] = list(range(len(g.ops)))
        self.members: dict[int, OpSet] = {i: frozenset({i}) for i in range(len(g.ops))}
        self.rules: dict[int, list[str]] = {i: [] for i in range(len(g.ops))}
        self._decisions: dict[tuple[OpSet, OpSet, bool], Decision] = {}
        self._kinds: dict[OpSet, str] = {}
        self._costs: dict[OpSet, object] = {}

    # -- facts --------------------------------------------------------------

    def kind(self, group: OpSet) -> str:
        if group not in self._kinds:
            self._kinds[group] = group_kind(self.g, group, self.patterns)
        return self._kinds[group]

    def cost(self, group: OpSet):
        if group not in self._costs:
            self._costs[group] = self.g.cost(group, self.kind(group), self.options.device, self.options.dims)
        return self._costs[group]

    def evaluate(self, a: OpSet, b: OpSet, horizontal: bool) -> Decision:
        key = (a, b, horizontal)
        if key not in self._decisions:
            self._decisions[key] = self._evaluate(a, b, horizontal)
        return self._decisions[key]

    def _evaluate(self, a: OpSet, b: OpSet, horizontal: bool) -> Decision:
        g, opts = self.g, self.options
        ka, kb = self.kind(a), self.kind(b)
        rule = find_rule(ka, kb, horizontal)
        merged = a | b
        kind = self.kind(merged)
        if rule is None:
            reason = refusal_reason(ka, kb, _anchor_name(g, a), _anchor_name(g, b))
            if reason is None:
                reason = TEMPLATES[kind](g, merged, self.patterns) or generic_refusal(ka, kb)
            return Decision(False, reason)
        reason = TEMPLATES[kind](g, merged, self.patterns)
        if reason is not None:
            return Decision(False, reason, rule)
        if len(merged) > opts.max_ops:
            return Decision(False, f"group size limit (max_ops={opts.max_ops})", rule)
        io = g.io(merged)
        if len(io.inputs) > opts.max_inputs:
            return Decision(False, f"group size limit (max_inputs={opts.max_inputs})", rule)
        score = fusion_score(self.cost(a), self.cost(b), self.cost(merged), opts.device)
        if score.saving <= 0:
            return Decision(False, _cost_reason(g, merged, score), rule, score)
        return Decision(True, None, rule, score)

    # -- the group graph ------------------------------------------------------

    def group_succs(self, gid: int) -> set[int]:
        return {self.group_of[s] for i in self.members[gid] for s in self.g.succs[i]} - {gid}

    def cycle_through(self, a: int, b: int) -> int | None:
        """A group other than ``a`` and ``b`` on a path between them (merging them
        would then close a cycle), or None."""
        for src, dst in ((a, b), (b, a)):
            parent: dict[int, int] = {}
            stack = [s for s in self.group_succs(src) if s != dst]
            for s in stack:
                parent[s] = s
            while stack:
                x = stack.pop()
                for y in self.group_succs(x):
                    if y == dst:
                        return parent[x]
                    if y not in parent and y != src:
                        parent[y] = parent[x]
                        stack.append(y)
        return None

    def merge(self, a: int, b: int, rule: str) -> int:
        keep, gone = min(a, b), max(a, b)
        self.members[keep] = self.members[keep] | self.members.pop(gone)
        for i in self.members[keep]:
            self.group_of[i] = keep
        self.rules[keep] = self.rules[keep] + self.rules.pop(gone) + [rule]
        return keep

    def candidates(self) -> list[tuple[int, int, bool]]:
        g = self.g
        pairs: dict[tuple[int, int], bool] = {}
        for i in range(len(g.ops)):
            gi = self.group_of[i]
            for s in g.succs[i]:
                gs = self.group_of[s]
                if gs != gi:
                    pairs[(gi, gs)] = False
        # siblings reading one input: function arguments and op results
        readers: dict[object, set[int]] = {}
        for i, op in enumerate(g.ops):
            for v in op.operands:
                if g.free_producer(v) is None:
                    readers.setdefault(v, set()).add(self.group_of[i])
        for v, gids in readers.items():
            j = g.producer(v)
            if j is not None:
                gids = gids - {self.group_of[j]}
            ordered = sorted(gids)
            for x in range(len(ordered)):
                for y in range(x + 1, len(ordered)):
                    a, b = ordered[x], ordered[y]
                    if (a, b) not in pairs and (b, a) not in pairs:
                        pairs[(a, b)] = True
        return [(a, b, h) for (a, b), h in pairs.items()]

    # -- the plan -------------------------------------------------------------

    def apply_patterns(self) -> None:
        for match in self.patterns:
            if len(match.core) > self.options.max_ops:
                continue
            ids = sorted(match.core)
            gid = ids[0]
            for other in ids[1:]:
                gid = self.merge(gid, self.group_of[other], match.rule)
            self.rules[gid] = [match.rule]

    def run(self) -> Plan:
        if self.options.enabled:
            self.apply_patterns()
            self.greedy()
        return self.finish()

    def greedy(self) -> None:
        while True:
            ranked = []
            for a, b, horizontal in self.candidates():
                d = self.evaluate(self.members[a], self.members[b], horizontal)
                if d.ok:
                    assert d.score is not None
                    order = (min(self.members[a]), min(self.members[b]))
                    ranked.append((-d.score.saving, order, a, b, d))
            ranked.sort(key=lambda t: (t[0], t[1]))
            for _, _, a, b, d in ranked:
                if self.cycle_through(a, b) is not None:
                    continue
                assert d.rule is not None
                self.merge(a, b, d.rule.name)
                break
            else:
                return

    def finish(self) -> Plan:
        g = self.g
        order = self.topological_groups()
        groups: list[PlannedGroup] = []
        position: dict[int, int] = {}
        for index, gid in enumerate(order):
            ops = self.members[gid]
            kind = self.kind(ops)
            pattern = next((p.rule for p in self.patterns if p.core <= ops), None)
            groups.append(
                PlannedGroup(
                    ops=ops,
                    kind=kind,
                    rule=dominant_rule(self.rules[gid]),
                    pattern=pattern,
                    description=describe(g, ops, kind),
                    index=index,
                )
            )
            for i in sorted(ops):
                position[i] = len(position)
        labels = {i: f"{short_name(g.ops[i])}_{position[i]}" for i in position}
        kernels = {gid: grp.kernel for gid, grp in zip(order, groups)}
        not_fused: list[NotFused] = []
        for j in range(len(g.ops)):
            for i in sorted(g.succs[j]):
                ga, gb = self.group_of[j], self.group_of[i]
                if ga == gb:
                    continue
                not_fused.append(NotFused(j, i, self.reason(ga, gb, kernels)))
        not_fused.sort(key=lambda n: (position[n.producer], position[n.consumer]))
        return Plan(g, groups, not_fused, labels)

    def reason(self, a: int, b: int, kernels: Mapping[int, str]) -> str:
        if not self.options.enabled:
            return NO_FUSE_REASON
        d = self.evaluate(self.members[a], self.members[b], False)
        if not d.ok:
            assert d.reason is not None
            return d.reason
        via = self.cycle_through(a, b)
        if via is not None:
            return f"{CYCLE_REASON} through {kernels[via]}"
        return "not merged by the greedy order"  # unreachable at the fixpoint

    def topological_groups(self) -> list[int]:
        indegree = {gid: 0 for gid in self.members}
        succs = {gid: self.group_succs(gid) for gid in self.members}
        for gid, ss in succs.items():
            for s in ss:
                indegree[s] += 1
        heap = [(min(self.members[gid]), gid) for gid, d in indegree.items() if d == 0]
        heapq.heapify(heap)
        order: list[int] = []
        while heap:
            _, gid = heapq.heappop(heap)
            order.append(gid)
            for s in succs[gid]:
                indegree[s] -= 1
                if indegree[s] == 0:
                    heapq.heappush(heap, (min(self.members[s]), s))
        if len(order) != len(self.members):
            raise AssertionError("fusion groups form a cycle")  # the planner never allows one
        return order


def _anchor_name(g: FuncGraph, group: OpSet) -> str:
    """The op that gives a group its kind, for messages."""
    best = max(sorted(group), key=lambda i: g.cls[i])
    return short_name(g.ops[best])


def _cost_reason(g: FuncGraph, merged: OpSet, score: FusionScore) -> str:
    if score.recompute_flops > 0:
        return (
            f"cost model: fusing would recompute {score.recompute_flops:.3g} FLOPs "
            f"(score {score.saving_us:+.3f} us)"
        )
    return f"cost model: fusing saves no time (score {score.saving_us:+.3f} us)"


# ---------------------------------------------------------------------------
# kernel names

_SKIP_IN_NAMES = {"broadcast", "transpose", "reshape"}


def _distinct(names: list[str]) -> list[str]:
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen


def describe(g: FuncGraph, group: OpSet, kind: str) -> str:
    """A short description for the kernel's name: ``softmax``, ``layernorm``,
    ``matmul_add_tanh``, ``sin_cos_mul``, ``reduce_sum_max_mean``."""
    ops = [g.ops[i] for i in sorted(group)]
    names = [short_name(op) for op in ops]
    if kind == "attention":
        return "attention"
    if kind == "reduction":
        reductions = [n for n in names if n.startswith("reduce_")]
        if "exp" in names and "reduce_max" in reductions and "reduce_sum" in reductions:
            return "softmax"
        if any(n in ("rsqrt", "sqrt") for n in names):
            return "layernorm" if len(reductions) >= 2 else "rmsnorm"
        return "_".join(["reduce"] + [r.removeprefix("reduce_") for r in _distinct(reductions)][:3])
    if kind == "matmul":
        count = sum(1 for i in group if g.cls[i] == OpClass.OUT_FUSABLE)
        head = "matmul" if count == 1 else f"matmul{count}"
        tail = [n for n in _distinct(names) if n != "matmul" and n not in _SKIP_IN_NAMES][:2]
        return "_".join([head, *tail])
    distinct = _distinct(names)
    shown = [n for n in distinct if n not in _SKIP_IN_NAMES] or distinct
    return "_".join(shown[:3])


def plan_function(g: FuncGraph, options: FusionOptions) -> Plan:
    return Planner(g, options).run()
