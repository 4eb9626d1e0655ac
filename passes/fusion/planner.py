"""The fusion planner: partitions a function's ops into kernels.

1. Pattern rules (attention) claim their ops first.
2. Every other op starts as a kernel of its own. Candidates are the pairs of
   groups joined by a data edge (vertical) or reading a common input (horizontal:
   neighbours among the readers, ``siblings.py``). A candidate is *legal* when a
   rule of ``rules.RULES`` not disabled (``FusionOptions.disabled_rules``) joins
   the two kinds, the merged group fits its kind's template, it holds at most
   ``max_live`` values at once (``live.py``), chains at most ``max_depth``
   dependent ops (``depth.py``), reads at most ``max_inputs`` inputs, and the cost
   model says it saves time (``cost.fusion_score``; where ``FusionOptions.calibration``
   has factors, the times corrected by measurement overrule the model's verdict only
   by more than a margin: ``calibration.calibrated_verdict``). The
   legal candidate with the largest saving that does not close a cycle between
   groups is merged; repeat until none is left (XLA's priority fusion, Inductor's
   scheduler). A pair a path through a third group
   joins is not judged at all: it stays joined while neither group changes.
3. Every producer→consumer edge left between two groups gets the reason the
   candidate was refused, for the fusion report; every decision calibration
   changed is kept too (``Plan.calibrated``).

The candidates wait in a heap ordered by saving, then by the bytes the merge no longer
moves (a tie where both merge into a GEMM's group, whose time its FLOPs bound: an
activation joins the GEMM whose epilogue reads it, not the one whose product it reads,
which would write the product and the activation both), then by the groups' first ops; a
merge pushes the new group's candidates and outdates those of the two it
replaces. Each group keeps a ``summary.GroupSummary``, so judging a candidate
costs the size of the groups' boundary, and the groups keep a topological order
(``group_dag.py``), so the cycle check searches only between the two: planning
grows with the program about as n log n, not n².

The plan is plain data (op ids); ``fuse.py`` turns it into ``graph.fusion_group``s.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field

from xdsl.ir import SSAValue

from dialects.group_kinds import GroupKind
from passes.fusion.calibration import CalibratedChange, Calibration, calibrated_verdict
from passes.fusion.classify import OpClass, short_name
from passes.fusion.cost import (
    GPU_H200,
    DeviceModel,
    FusionScore,
    KernelCost,
    fusion_score,
    value_bytes,
)
from passes.fusion.facts import PatternMatch, in_found_order
from passes.fusion.graph_view import FuncGraph, OpSet
from passes.fusion.group_dag import GroupDag, MergeWindow
from passes.fusion.patterns import find_patterns
from passes.fusion.rules import (
    TEMPLATES,
    FusionRule,
    dominant_rule,
    find_rule,
    generic_refusal,
    refusal_reason,
)
from passes.fusion.siblings import Entry, SiblingIndex
from passes.fusion.summary import GroupSummary, MergedFacts

#: values a kernel may hold at once (``live.py``): a GPU thread has 255 registers
#: and computes a few elements, so 32 live values per element is where spilling
#: starts to loom; on the CPU, spills go to the L1 cache, cheaper than the memory
#: round trip of a split kernel's live values
DEFAULT_MAX_LIVE = 32
#: dependent ops in a row in one kernel (``depth.py``): lower-to-loops recurses along
#: them, a few Python frames each, and fails past about 240
DEFAULT_MAX_DEPTH = 128
DEFAULT_MAX_INPUTS = 16

#: groups searched for a path joining a candidate pair before judging it (a search
#: only saves judging pairs a merge would refuse; the merge itself searches all)
NEARBY = 64

NO_FUSE_REASON = "fusion disabled (no-fuse)"
DISABLED_RULE_REASON = "rule {} is disabled"
SLOW_SIBLINGS_REASON = (
    "sibling matmuls share a kernel only as GEMM library calls: without the library (or with"
    " --matmul generated) their one kernel has no tiled GEMM"
)
CYCLE_REASON = "would form a cycle"


@dataclass(frozen=True)
class FusionOptions:
    device: DeviceModel = GPU_H200
    dims: Mapping[str, int] = field(default_factory=dict)
    max_live: int = DEFAULT_MAX_LIVE
    max_depth: int = DEFAULT_MAX_DEPTH
    max_inputs: int = DEFAULT_MAX_INPUTS
    enabled: bool = True  # False: one kernel per op (no-fuse)
    disabled_rules: frozenset[str] = frozenset()  # names of rules.RULES that join nothing
    calibration: Calibration = field(default_factory=Calibration)  # measured corrections of the times


@dataclass(frozen=True)
class Decision:
    """The verdict on merging two groups (without the cycle check, which depends
    on the rest of the partition)."""

    ok: bool
    reason: str | None = None
    rule: FusionRule | None = None
    score: FusionScore | None = None
    calibrated: CalibratedChange | None = None  # set where calibration overruled the model


@dataclass
class PlannedGroup:
    ops: OpSet
    kind: GroupKind  # the planner's kind (may be index_map: its written kind is kind.written)
    rule: str
    pattern: str | None
    description: str
    index: int = 0

    @property
    def kernel(self) -> str:
        return f"k{self.index}_{self.description}"


@dataclass
class NotFused:
    producer: int
    consumer: int
    reason: str


@dataclass
class Calibrated:
    """A decision calibration changed, between the groups of ops ``first`` and ``second``."""

    first: int
    second: int
    change: CalibratedChange


@dataclass
class Plan:
    graph: FuncGraph
    groups: list[PlannedGroup]  # in an order that respects the data dependences
    not_fused: list[NotFused]
    labels: dict[int, str]  # op id -> label in the fused program's op order
    calibrated: list[Calibrated] = field(default_factory=list)

    def group_of(self) -> dict[int, PlannedGroup]:
        return {i: grp for grp in self.groups for i in grp.ops}

    def not_fused_records(self) -> list[dict[str, str]]:
        return [
            {"producer": self.labels[n.producer], "consumer": self.labels[n.consumer], "reason": n.reason}
            for n in self.not_fused
        ]

    def calibrated_records(self) -> list[dict[str, str]]:
        """What calibration changed, one ``{first, second, decision}`` per decision."""
        records = []
        for c in self.calibrated:
            first, second = self.labels[c.first], self.labels[c.second]
            records.append({"first": first, "second": second, "decision": c.change.describe(first, second)})
        return records


class Planner:
    def __init__(self, g: FuncGraph, options: FusionOptions):
        self.g = g
        self.options = options
        found = find_patterns(g) if options.enabled else ()
        self.patterns: tuple[PatternMatch, ...] = tuple(p for p in found if p.rule not in options.disabled_rules)
        #: matches of disabled pattern rules, kept to name the rule in the report
        self.switched_off = tuple(p for p in found if p.rule in options.disabled_rules)
        self.group_of: list[int] = list(range(len(g.ops)))
        self.groups: dict[int, GroupSummary] = {
            i: GroupSummary.of_op(g, i, options.dims) for i in range(len(g.ops))
        }
        self.rules: dict[int, list[str]] = {i: [] for i in range(len(g.ops))}
        self.dag = GroupDag(g.succs)
        self.siblings = SiblingIndex()
        for group in self.groups.values():
            for value, entry in self._reading(group):
                self.siblings.add(value, entry)
        self._decisions: dict[tuple[int, int, int, int, bool], Decision] = {}
        self._costs: dict[tuple[int, int], KernelCost] = {}
        self._bytes: dict[SSAValue, int] = {}
        self._heap: list[tuple] = []
        self._offered: set[tuple[int, int, int, int, bool]] = set()
        #: the merges calibration decided, by the anchors of the two groups
        self._calibrated_merges: list[Calibrated] = []

    # -- facts --------------------------------------------------------------

    def first(self, handle: int) -> int:
        return self.groups[handle].first

    def cost(self, group: GroupSummary) -> KernelCost:
        """The model's cost of a group (``calibration.correct`` gives the corrected one)."""
        key = (group.handle, group.version)
        if key not in self._costs:
            self._costs[key] = group.cost(self.options.device, self.bytes_of)
        return self._costs[key]

    def bytes_of(self, value: SSAValue) -> int:
        if value not in self._bytes:
            self._bytes[value] = value_bytes(value, self.options.dims)
        return self._bytes[value]

    def evaluate(self, x: int, y: int, horizontal: bool) -> Decision:
        a, b = self.groups[x], self.groups[y]
        key = (x, a.version, y, b.version, horizontal)
        if key not in self._decisions:
            self._decisions[key] = self._evaluate(a, b, horizontal)
        return self._decisions[key]

    def _evaluate(self, a: GroupSummary, b: GroupSummary, horizontal: bool) -> Decision:
        g, opts = self.g, self.options
        # a disabled rule is still found, so that a pair it could not join anyway gets
        # the template's reason, which holds whatever the switches say
        rule = find_rule(a.kind, b.kind, horizontal, opts.disabled_rules) or find_rule(a.kind, b.kind, horizontal)
        merged = self.union(a.handle, b.handle)
        if rule is None:
            reason = refusal_reason(a.kind, b.kind, _anchor_name(g, a), _anchor_name(g, b))
            if reason is None:
                reason = TEMPLATES[merged.kind](merged) or generic_refusal(a.kind, b.kind)
            return Decision(False, reason)
        reason = TEMPLATES[merged.kind](merged)
        if reason is not None:
            return Decision(False, reason, rule)
        if rule.name in opts.disabled_rules:
            return Decision(False, DISABLED_RULE_REASON.format(rule.name), rule)
        if rule.library_only and not opts.device.siblings_pay:
            return Decision(False, SLOW_SIBLINGS_REASON, rule)
        if merged.live_bound > opts.max_live and merged.live.peak > opts.max_live:
            held = merged.live.peak
            return Decision(False, f"kernel would hold {held} values at once (max_live={opts.max_live})", rule)
        if merged.depth > opts.max_depth:
            return Decision(
                False, f"kernel would chain {merged.depth} ops (max_depth={opts.max_depth}, for lower-to-loops)", rule
            )
        if len(merged.inputs) > opts.max_inputs:
            return Decision(False, f"group size limit (max_inputs={opts.max_inputs})", rule)
        merged_cost = merged.cost(opts.device, self.bytes_of)
        score = fusion_score(self.cost(a), self.cost(b), merged_cost, opts.device)
        change = self._calibrated(a, b, merged.kind, merged_cost, score) if opts.calibration.factors else None
        if change is not None:
            return Decision(change[0].saving > 0, _calibrated_reason(change[1]), rule, change[0], change[1])
        if score.saving <= 0:
            return Decision(False, _cost_reason(score), rule, score)
        return Decision(True, None, rule, score)

    def _calibrated(
        self, a: GroupSummary, b: GroupSummary, kind: GroupKind, merged_cost: KernelCost, model: FusionScore
    ) -> tuple[FusionScore, CalibratedChange] | None:
        """The corrected score and what it changes, where calibration overrules the
        model's verdict on merging ``a`` and ``b`` (``calibration.calibrated_verdict``)."""
        calibration, device = self.options.calibration, self.options.device
        ca, cb = calibration.correct(a.kind, self.cost(a)), calibration.correct(b.kind, self.cost(b))
        c_merged = calibration.correct(kind, merged_cost)
        corrected = fusion_score(ca, cb, c_merged, device)
        if not calibrated_verdict(model, corrected, ca.seconds + cb.seconds):
            return None
        split_s = self.cost(a).seconds + self.cost(b).seconds
        change = CalibratedChange(
            fused=corrected.saving > 0,
            model_us=(merged_cost.seconds * 1e6, split_s * 1e6),
            corrected_us=(c_merged.seconds * 1e6, (ca.seconds + cb.seconds) * 1e6),
        )
        return corrected, change

    def union(self, x: int, y: int) -> MergedFacts:
        return MergedFacts(self.g, self.patterns, self.group_of, self.groups[x], self.groups[y], self.options.dims)

    # -- merging --------------------------------------------------------------

    def merge(self, x: int, y: int, rule: str, merged: MergedFacts, window: MergeWindow) -> GroupSummary:
        """Commit the union of groups ``x`` and ``y`` (``window``: what it moves in the
        groups' order); returns its summary."""
        before = self._reading(self.groups[x]) + self._reading(self.groups[y])
        keep = merged.commit()
        gone = y if keep.handle == x else x
        del self.groups[gone]
        self.dag.merge(keep.handle, gone, window)
        self.rules[keep.handle] = self.rules.pop(x) + self.rules.pop(y) + [rule]
        for value, entry in before:
            self.siblings.remove(value, entry)
        for value, entry in self._reading(keep):
            self.siblings.add(value, entry)
        return keep

    @staticmethod
    def _reading(group: GroupSummary) -> list[tuple[SSAValue, Entry]]:
        """The group's entries in the sibling index: the values whose elements it reads."""
        return [(v, (group.first, group.handle)) for v, use in group.inputs.items() if use.data_readers]

    def _offer(self, x: int, y: int, horizontal: bool) -> None:
        """Push the candidate (x, y) if it is legal."""
        if horizontal and self.dag.adjacent(x, y):
            return  # the vertical candidate stands for the pair
        a, b = self.groups[x], self.groups[y]
        key = (x, a.version, y, b.version, horizontal)
        if key in self._offered:
            return
        self._offered.add(key)
        if self.dag.joined_nearby(x, y, NEARBY):
            return  # joined through another group, as they stay while neither changes
        d = self.evaluate(x, y, horizontal)
        if d.ok:
            assert d.score is not None and d.rule is not None
            order = (-d.score.saving, -d.score.bytes_saved, a.first, b.first)
            heapq.heappush(self._heap, (*order, x, a.version, y, b.version, horizontal, d.rule.name))

    def _offer_around(self, group: GroupSummary, gaps: list[tuple[SSAValue, int]]) -> None:
        """The candidates a new group makes: with its producers and consumers, its
        neighbours among the readers of its inputs, and the readers that became
        neighbours where the merged groups left the readers' order."""
        h = group.handle
        for s in list(self.dag.succ[h]):
            self._offer(h, s, False)
        for p in list(self.dag.pred[h]):
            self._offer(p, h, False)
        for value, use in group.inputs.items():
            if use.data_readers:
                for x, y in self.siblings.around(value, group.first):
                    self._offer(x, y, True)
        for value, first in gaps:
            for x, y in self.siblings.around(value, first):
                if h not in (x, y):
                    self._offer(x, y, True)

    # -- the plan -------------------------------------------------------------

    def apply_patterns(self) -> None:
        for match in self.patterns:
            ids = sorted(match.core)
            group = self.groups[ids[0]]
            for other in ids[1:]:
                x, y = group.handle, self.group_of[other]
                merged = self.union(x, y)
                window = self.dag.window(x, y)
                assert window is not None, "a pattern's core is convex"
                group = self.merge(x, y, match.rule, merged, window)
            group.patterns = (match,)
            group.kind = match.kind
            self.rules[group.handle] = [match.rule]

    def run(self) -> Plan:
        if self.options.enabled:
            self.apply_patterns()
            self.greedy()
        return self.finish()

    def greedy(self) -> None:
        for h in list(self.groups):
            for s in list(self.dag.succ[h]):
                self._offer(h, s, False)
        for x, y in self.siblings.pairs():
            self._offer(x, y, True)
        while self._heap:
            *_, x, vx, y, vy, horizontal, rule = heapq.heappop(self._heap)
            a, b = self.groups.get(x), self.groups.get(y)
            if a is None or b is None or a.version != vx or b.version != vy:
                continue  # one of the two merged since
            window = self.dag.window(x, y)
            if window is None:
                continue  # a path through another group joins them: it stays
            merged = self.union(x, y)
            fits = TEMPLATES[merged.kind](merged)  # (again: it records what the union fits)
            assert fits is None, fits
            gaps = [(value, entry[0]) for value, entry in self._reading(a) + self._reading(b)]
            decided = self.evaluate(x, y, horizontal)  # (known: it was offered)
            if decided.calibrated is not None:
                self._calibrated_merges.append(Calibrated(_anchor(a), _anchor(b), decided.calibrated))
            self._offer_around(self.merge(x, y, rule, merged, window), gaps)

    def finish(self) -> Plan:
        g = self.g
        order = self.dag.topological(self.first)
        groups: list[PlannedGroup] = []
        position: dict[int, int] = {}
        for index, handle in enumerate(order):
            group = self.groups[handle]
            ops = frozenset(group.members)
            matches = in_found_order(group.patterns)
            groups.append(
                PlannedGroup(
                    ops=ops,
                    kind=group.kind,
                    rule=dominant_rule(self.rules[handle]),
                    pattern=matches[0].rule if matches else None,
                    description=describe(g, ops, group.kind),
                    index=index,
                )
            )
            for i in sorted(ops):
                position[i] = len(position)
        labels = {i: f"{short_name(g.ops[i])}_{position[i]}" for i in position}
        kernels = {handle: grp.kernel for handle, grp in zip(order, groups)}
        pairs = {(j, i): (self.group_of[j], self.group_of[i]) for j in range(len(g.ops)) for i in sorted(g.succs[j])}
        reasons = self.reasons({pair for pair in pairs.values() if pair[0] != pair[1]}, kernels)
        switched_off = _matched_by(self.switched_off)
        not_fused: list[NotFused] = []
        for (j, i), (ga, gb) in pairs.items():
            if ga == gb:
                continue
            match = switched_off.get(j)
            if match is not None and switched_off.get(i) == match:  # both in one match's core
                reason = DISABLED_RULE_REASON.format(self.switched_off[match].rule)
            else:
                reason = reasons[ga, gb]
            not_fused.append(NotFused(j, i, reason))
        not_fused.sort(key=lambda n: (position[n.producer], position[n.consumer]))
        return Plan(g, groups, not_fused, labels, self._calibrated_merges + self._calibrated_splits())

    def _calibrated_splits(self) -> list[Calibrated]:
        """The pairs of final groups, joined by an edge or reading a common input, that
        calibration kept apart where the model would merge them."""
        if not self.options.calibration.factors:
            return []
        pairs = {(self.group_of[j], self.group_of[i], False) for j in range(len(self.g.ops)) for i in self.g.succs[j]}
        pairs |= {(x, y, True) for x, y in self.siblings.pairs() if not self.dag.adjacent(x, y)}
        splits: dict[tuple[int, int], Calibrated] = {}
        for x, y, horizontal in pairs:
            if x == y or (x, y) in splits or (horizontal and self.dag.window(x, y) is None):
                continue
            change = self.evaluate(x, y, horizontal).calibrated
            if change is not None and not change.fused:
                splits[x, y] = Calibrated(_anchor(self.groups[x]), _anchor(self.groups[y]), change)
        return [splits[key] for key in sorted(splits, key=lambda k: (self.first(k[0]), self.first(k[1])))]

    def reasons(self, pairs: set[tuple[int, int]], kernels: Mapping[int, str]) -> dict[tuple[int, int], str]:
        """Why each pair of groups, a producer's and a consumer's, stays apart. The
        paths that join legal pairs are looked for a producer at a time (one walk for
        all its consumers: ``GroupDag.paths_via``)."""
        if not self.options.enabled:
            return dict.fromkeys(pairs, NO_FUSE_REASON)
        reasons: dict[tuple[int, int], str] = {}
        joined: dict[int, list[int]] = {}  # producer -> consumers only a path may keep apart
        for a, b in sorted(pairs):
            d = self.evaluate(a, b, False)
            if d.ok:
                joined.setdefault(a, []).append(b)
            else:
                assert d.reason is not None
                reasons[a, b] = d.reason
        for a, consumers in joined.items():
            for b, via in self.dag.paths_via(a, consumers, self.first).items():
                if via is None:
                    reasons[a, b] = "not merged by the greedy order"  # unreachable at the fixpoint
                else:
                    reasons[a, b] = f"{CYCLE_REASON} through {kernels[via]}"
        return reasons


def _matched_by(matches: tuple[PatternMatch, ...]) -> dict[int, int]:
    """Op id -> the index of the match whose core holds it (``find_patterns``'s
    matches never overlap)."""
    return {i: index for index, match in enumerate(matches) for i in match.core}


def _anchor_name(g: FuncGraph, group: GroupSummary) -> str:
    """The name of a group's anchor op (``_anchor``), for messages."""
    return short_name(g.ops[_anchor(group)])


def _anchor(group: GroupSummary) -> int:
    """The op that gives a group its kind (the first of its highest class)."""
    first = group.first_of_class
    return first[max(first)]


def _calibrated_reason(change: CalibratedChange) -> str | None:
    """The refusal's reason where calibration refused a merge the model would make."""
    if change.fused:
        return None
    c_merged, c_split = change.corrected_us
    return f"cost model: fusing saves no time (calibrated: 1 kernel {c_merged:.3f} us, 2 kernels {c_split:.3f} us)"


def _cost_reason(score: FusionScore) -> str:
    note = f"score {score.saving_us:+.3f} us"
    if score.recompute_flops > 0:
        return f"cost model: fusing would recompute {score.recompute_flops:.3g} FLOPs ({note})"
    return f"cost model: fusing saves no time ({note})"


# ---------------------------------------------------------------------------
# kernel names

_SKIP_IN_NAMES = {"broadcast", "transpose", "reshape"}


def _distinct(names: list[str]) -> list[str]:
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen


def describe(g: FuncGraph, group: OpSet, kind: GroupKind) -> str:
    """A short description for the kernel's name: ``softmax``, ``layernorm``,
    ``matmul_add_tanh``, ``sin_cos_mul``, ``reduce_sum_max_mean``."""
    ops = [g.ops[i] for i in sorted(group)]
    names = [short_name(op) for op in ops]
    if kind is GroupKind.ATTENTION:
        return "attention"
    if kind is GroupKind.REDUCTION:
        reductions = [n for n in names if n.startswith("reduce_")]
        if "exp" in names and "reduce_max" in reductions and "reduce_sum" in reductions:
            return "softmax"
        if any(n in ("rsqrt", "sqrt") for n in names):
            return "layernorm" if len(reductions) >= 2 else "rmsnorm"
        return "_".join(["reduce"] + [r.removeprefix("reduce_") for r in _distinct(reductions)][:3])
    if kind in (GroupKind.MATMUL, GroupKind.CONV):
        count = sum(1 for i in group if g.cls[i] == OpClass.OUT_FUSABLE)
        head = "conv2d" if kind is GroupKind.CONV else "matmul" if count == 1 else f"matmul{count}"
        tail = [n for n in _distinct(names) if n not in ("matmul", "window", *_SKIP_IN_NAMES)][:2]
        return "_".join([head, *tail])
    distinct = _distinct(names)
    shown = [n for n in distinct if n not in _SKIP_IN_NAMES] or distinct
    return "_".join(shown[:3])


def plan_function(g: FuncGraph, options: FusionOptions) -> Plan:
    return Planner(g, options).run()
