"""Fusion rules as data: which kinds of kernel may merge, and into what.

A *group* (the ops of one kernel) has a kind (``dialects.group_kinds.GroupKind``),
derived from its ops' classes by ``group_kind``: elementwise, index_map, injective,
reduction, matmul, conv, attention or opaque.

``RULES`` lists each rule the way the seeds write fusion patterns (``EW+``,
``Reduce → EW+``, ``Conv → BatchNorm → Activation``, ``(Q‖K‖V) → MatMul → Softmax →
MatMul``) with the kinds of the
producer and consumer groups it joins; ``REFUSALS`` names the reason when no rule
joins two kinds. A rule only licenses a merge: the merged group must also fit the
*template* of its kind (``TEMPLATES``): one iteration space, operands of a matmul
read straight from memory, reductions over the same rows, ... A template that
does not fit says why, and that reason goes to the fusion report.

The planner (``planner.py``) applies the ``pattern`` rules first, then merges the
candidate pairs in order of the cost model's saving.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from dialects import graph
from dialects.graph import reduced_shape
from dialects.group_kinds import GroupKind
from dialects.tensor_types import Shape, format_shape
from passes.fusion.classify import OpClass, has_flag, is_index_map, short_name
from passes.fusion.facts import Domain, GroupFacts
from passes.fusion.graph_view import FuncGraph

#: every kind the planner gives a group (lower-to-loops' ``single`` is none of them)
ANY = frozenset(GroupKind) - {GroupKind.SINGLE}
#: the kinds whose kernel is a tiled matrix product
PRODUCTS = frozenset({GroupKind.MATMUL, GroupKind.CONV, GroupKind.ATTENTION})
EWISH = frozenset({GroupKind.ELEMENTWISE, GroupKind.INDEX_MAP, GroupKind.INJECTIVE})
#: the one-kind sets the tables below join
ATTENTION = frozenset({GroupKind.ATTENTION})
CONV = frozenset({GroupKind.CONV})
MATMUL = frozenset({GroupKind.MATMUL})
REDUCTION = frozenset({GroupKind.REDUCTION})
OPAQUE = frozenset({GroupKind.OPAQUE})


@dataclass(frozen=True)
class FusionRule:
    """Producer groups of a kind in ``producer`` may merge with consumer groups of a
    kind in ``consumer`` (``either_side``: also the other way round along the edge;
    ``horizontal``: siblings reading a common input, no edge between them;
    ``pattern``: applied by a matcher before the pairwise merges; ``library_only``: joins
    only where the merged group's matmuls can run as library calls, or where the device's
    generated kernel of several matmuls is as fast as its tiled GEMM,
    ``DeviceModel.siblings_pay``)."""

    name: str
    pattern: str
    producer: frozenset[GroupKind] = frozenset()
    consumer: frozenset[GroupKind] = frozenset()
    either_side: bool = False
    horizontal: bool = False
    matcher: bool = False
    library_only: bool = False
    doc: str = ""

    def joins(self, producer: GroupKind, consumer: GroupKind, horizontal: bool) -> bool:
        if self.matcher or horizontal != self.horizontal:
            return False
        if producer in self.producer and consumer in self.consumer:
            return True
        return (self.either_side or self.horizontal) and consumer in self.producer and producer in self.consumer


# fmt: off
#: In priority order: a group formed by several rules is named after the first.
RULES: tuple[FusionRule, ...] = (
    FusionRule("attention", "(Q‖K‖V) → MatMul → Scale? → Mask? → Softmax → MatMul", matcher=True,
               doc="one flash-style kernel: the scores never reach memory"),
    FusionRule("attention_operands", "(IndexMap | Scale | Mask) → Attention",
               producer=EWISH, consumer=ATTENTION,
               doc="layout index maps of Q, K, V and the scale/mask tensors, read in the kernel"),
    FusionRule("attention_epilogue", "Attention → EW+",
               producer=ATTENTION, consumer=EWISH,
               doc="elementwise ops and index maps applied before the output is stored"),
    FusionRule("conv_bn_act", "Conv → BatchNorm → Activation (→ Add)",
               producer=CONV, consumer=EWISH, either_side=True,
               doc="batch norm's per-channel affine map, the activation and a residual, applied before the store"),
    FusionRule("conv", "Window → MatMul", matcher=True,
               doc="a convolution: the matmul reads its image's windows through an index map (implicit GEMM)"),
    FusionRule("horizontal_matmul", "MatMul ‖ MatMul",
               producer=MATMUL, consumer=MATMUL, horizontal=True, library_only=True,
               doc="sibling matmuls sharing their left operand (Q‖K‖V projections)"),
    FusionRule("matmul_epilogue", "MatMul → (EW | Broadcast | IndexMap)+",
               producer=MATMUL, consumer=EWISH, either_side=True,
               doc="bias, activation, residual after a matmul, applied before the store"),
    FusionRule("horizontal_reduce", "Reduce ‖ Reduce",
               producer=REDUCTION, consumer=REDUCTION, horizontal=True,
               doc="sibling reductions of one input: one multi-output kernel reads it once"),
    FusionRule("reduce_rows", "Reduce → EW* → Reduce",
               producer=REDUCTION, consumer=REDUCTION,
               doc="dependent reductions over the same rows (softmax, mean/variance)"),
    FusionRule("reduce_epilogue", "Reduce → (EW | Broadcast)+",
               producer=REDUCTION, consumer=EWISH,
               doc="elementwise ops on the result, also broadcast back over the reduced axes"),
    FusionRule("reduce_prologue", "(EW | Broadcast)+ → Reduce",
               producer=EWISH, consumer=REDUCTION,
               doc="elementwise ops computed while reading the reduction's input"),
    FusionRule("ew_chain", "EW+",
               producer=EWISH, consumer=EWISH,
               doc="vertical chains of elementwise, broadcast and layout ops"),
    FusionRule("horizontal_elementwise", "EW ‖ EW",
               producer=EWISH, consumer=EWISH, horizontal=True,
               doc="sibling elementwise kernels of one input and one size"),
)
# fmt: on

RULES_BY_NAME = {r.name: r for r in RULES}
RULE_PRIORITY = {r.name: i for i, r in enumerate(RULES)}


@dataclass(frozen=True)
class Refusal:
    """The named reason two kinds of group are not merged when no rule joins them."""

    producer: frozenset[GroupKind]
    consumer: frozenset[GroupKind]
    reason: str | None  # None: the merged group's template says why


# fmt: off
REFUSALS: tuple[Refusal, ...] = (
    Refusal(OPAQUE, ANY, "{producer_op} is opaque: no rule fuses it"),
    Refusal(ANY, OPAQUE, "{consumer_op} is opaque: no rule fuses into it"),
    Refusal(PRODUCTS, PRODUCTS, None),
    Refusal(REDUCTION, PRODUCTS, "matmul prologue is not fused"),
    Refusal(CONV, REDUCTION,
            "no rule fuses a convolution into a reduction: a pool's windows (or a mean over the image) "
            "read output pixels that other tiles of the convolution compute"),
    Refusal(MATMUL, REDUCTION,
            "no rule fuses a matmul into a reduction (only the attention pattern does)"),
    Refusal(ATTENTION, REDUCTION,
            "no rule fuses an attention kernel into a reduction"),
)
# fmt: on


@functools.cache
def find_rule(
    producer: GroupKind, consumer: GroupKind, horizontal: bool = False, disabled: frozenset[str] = frozenset()
) -> FusionRule | None:
    """The first rule joining the two kinds, skipping the rules named in ``disabled``."""
    for rule in RULES:
        if rule.name not in disabled and rule.joins(producer, consumer, horizontal):
            return rule
    return None


def parse_rule_names(names: str | Iterable[str]) -> frozenset[str]:
    """Rule names given as ``"a,b"`` or as a sequence of such strings (``-`` may stand
    for ``_``: ``matmul-epilogue``); ``ValueError`` naming the known rules for any
    other name."""
    items = list(names) if isinstance(names, Iterable) and not isinstance(names, str) else [names]
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"fusion rules are names (strings), not {', '.join(sorted({type(i).__name__ for i in items}))}")
    chosen = {n.strip().replace("-", "_") for item in items for n in item.split(",") if n.strip()}
    unknown = sorted(chosen - RULES_BY_NAME.keys())
    if unknown:
        raise ValueError(
            f"unknown fusion rule {', '.join(map(repr, unknown))}: the rules are {', '.join(RULES_BY_NAME)}"
        )
    return frozenset(chosen)


def refusal_reason(producer: GroupKind, consumer: GroupKind, producer_op: str, consumer_op: str) -> str | None:
    """Why no rule joins the two kinds; None: ask the merged group's template."""
    for refusal in REFUSALS:
        if producer in refusal.producer and consumer in refusal.consumer:
            if refusal.reason is None:
                return None
            return refusal.reason.format(producer_op=producer_op, consumer_op=consumer_op)
    return generic_refusal(producer, consumer)


def generic_refusal(producer: GroupKind, consumer: GroupKind) -> str:
    return f"no rule fuses a {producer.value} kernel into a {consumer.value} kernel"


def dominant_rule(names: Iterable[str]) -> str:
    names = list(names)
    return min(names, key=lambda n: RULE_PRIORITY.get(n, len(RULES))) if names else "none"


# ---------------------------------------------------------------------------
# Kinds and templates
#
# A template reads a group through ``facts.GroupFacts``: the planner answers for a
# merge from the two groups' summaries, ``OpSetFacts`` for any set of ops. Per-op
# conditions are ``OpCheck``s given to ``first_failure``.


def group_kind(f: GroupFacts) -> GroupKind:
    for match in f.matched():
        return match.kind
    top = max(f.first_of_class(), default=OpClass.ELEMENTWISE)
    if top == OpClass.OPAQUE:
        return GroupKind.OPAQUE
    if top == OpClass.OUT_FUSABLE:
        return GroupKind.MATMUL
    if top == OpClass.REDUCTION:
        return GroupKind.REDUCTION
    if f.index_maps_only():
        return GroupKind.INDEX_MAP
    if f.data_injective():
        return GroupKind.INJECTIVE
    return GroupKind.ELEMENTWISE


def _fmt(shape: Shape) -> str:
    return format_shape(shape)


def _pad(shape: Shape, rank: int) -> Shape:
    return (1,) * (rank - len(shape)) + tuple(shape)


#: a gather reads its input at indices known only when it runs, so it stays out of a
#: kernel whose own result it would read: that kernel computes its result tile by tile
#: (a matmul, attention) or row by row (a reduction), never at an arbitrary index
_GATHERS_RESULT = "gather reads the result of {what} at data-dependent indices"


def check_elementwise(f: GroupFacts) -> str | None:
    """EW+: one parallel loop nest; every output the same number of elements (the
    kind holds no op above INJECTIVE)."""
    g = f.g
    if len({g.count(v) for v in f.output_values()}) < 2:
        return None
    counts = {g.count(v): g.shape(v) for v in f.outputs()}  # each size's last output, in order
    shapes = ", ".join(_fmt(s) for s in counts.values())
    return f"outputs of different sizes ({shapes}) need separate loop nests"


def check_rows(f: GroupFacts, domain: Domain, what: str) -> str | None:
    """Every op of the group runs in the row space of ``domain`` = (shape, reduced
    axes): a full-shape op once per element, a reduced-shape op once per row;
    a reduction's result is broadcast back only over the reduced axes."""
    g = f.g
    full, axes = domain
    keep = reduced_shape(full, axes, True)
    nokeep = reduced_shape(full, axes, False)
    rows = (keep, nokeep)

    def check(i: int, row_dependent: bool) -> str | None:
        op = g.ops[i]
        cls = g.cls[i]
        name = short_name(op)
        if cls == OpClass.REDUCTION:
            return None
        if cls > OpClass.REDUCTION:
            return f"no rule fuses {name} into {what}"
        if row_dependent and isinstance(op, graph.GatherOp):
            return _GATHERS_RESULT.format(what="a reduction")
        shape = g.shape(op.results[0])
        if cls == OpClass.INJECTIVE:
            if not is_index_map(op):
                return f"no rule fuses {name} into reduction"
            if row_dependent and not (g.shape(op.operands[0]) in rows and shape in rows):
                return f"{name} of a reduction result is not an index map over rows"
        if shape != full and shape not in rows:
            return f"{name} of shape {_fmt(shape)} is outside the row space {_fmt(full)} of {what}"
        if cls == OpClass.BROADCAST and row_dependent:
            source = g.shape(op.operands[0])
            if source != shape and not (shape == full and _pad(source, len(full)) == keep):
                return "reduction result is broadcast over axes other than the reduced ones"
        return None

    return f.first_failure(check, OpClass.REDUCTION, frozenset(), ("rows", domain, what))


def check_reduction(f: GroupFacts) -> str | None:
    """Reduce rows: reductions over one row space with their prologue and epilogue."""
    domains = f.reduction_domains()
    domain, first = min(domains.items(), key=lambda item: item[1])
    others = [(i, d) for d, i in domains.items() if d != domain]
    if others:
        r, other = min(others)
        detail = f"{_fmt(domain[0])} axes {list(domain[1])} vs {_fmt(other[0])} axes {list(other[1])}"
        if f.reaches(first, r):
            return f"reduction feeds a broadcast of another reduction ({detail})"
        return f"sibling reductions over different iteration spaces ({detail})"
    return check_rows(f, domain, "a reduction")


def _operand_maps(f: GroupFacts, value: SSAValue) -> tuple[set[int], int | None]:
    """Follow index maps inside the group up from a matmul operand, through every
    operand of a concat: (the index-map ops crossed, the first other op of the group
    reached or None)."""
    g = f.g
    crossed: set[int] = set()
    pending = [value]
    while pending:
        j = g.producer(pending.pop())
        if j is None or not f.has(j):
            continue
        if not is_index_map(g.ops[j]):
            return crossed, j
        crossed.add(j)
        pending.extend(g.ops[j].operands)
    return crossed, None


def _operand_map_output(f: GroupFacts, operand_maps: set[int], what: str) -> str | None:
    """A matmul's operand read through index maps is read tile by tile, never written
    whole: an index map whose value is also used outside the group would leave the
    kernel a second loop nest (and, on a GPU, one thread block for all of it)."""
    outputs = set(f.output_values())
    for j in sorted(operand_maps):
        if any(v in outputs for v in f.g.ops[j].results):
            return f"{short_name(f.g.ops[j])} of the {what}'s operand is also used outside the kernel"
    return None


def _matmul_operands(op: Operation) -> tuple:
    assert isinstance(op, graph.MatmulOp)
    return (op.lhs, op.rhs)


def check_matmul(f: GroupFacts) -> str | None:
    """MatMul → EW+: operands read from memory (through index maps at most), every
    other op an elementwise epilogue over the matmul's output elements, or a smaller
    value independent of the matmul, of sizes of the output's (``_within``), that the
    epilogue reads through a broadcast (a batch norm's per-channel scale, also reshaped
    to [C, 1, 1] for NCHW): the kernel computes it where it reads it. Every output is
    the size of the matmul's."""
    g = f.g
    matmuls = f.anchors(OpClass.OUT_FUSABLE)
    operand_maps: set[int] = set()
    for m in matmuls:
        for value in _matmul_operands(g.ops[m]):
            crossed, j = _operand_maps(f, value)
            if j is not None:
                if g.cls[j] == OpClass.OUT_FUSABLE:
                    return "matmul feeds a matmul outside the attention pattern"
                return "matmul prologue is not fused"
            operand_maps |= crossed
    reason = _operand_map_output(f, operand_maps, "matmul")
    if reason is not None:
        return reason
    first = g.ops[matmuls[0]]
    assert isinstance(first, graph.MatmulOp)
    for m in matmuls[1:]:
        other = g.ops[m]
        assert isinstance(other, graph.MatmulOp)
        if f.share_descendant(matmuls[0], m):
            return "no rule fuses two dependent matmuls outside the attention pattern"
        if (
            other.lhs is not first.lhs
            or other.result.type != first.result.type
            or has_flag(other, "transpose_lhs") != has_flag(first, "transpose_lhs")
        ):
            return "sibling matmuls share no left operand and output shape"
    out_count = g.count(first.result)
    out_shape = g.shape(first.result)

    def check(i: int, from_matmul: bool) -> str | None:
        op = g.ops[i]
        name = short_name(op)
        cls = g.cls[i]
        if cls == OpClass.REDUCTION:
            return "no rule fuses a reduction into a matmul epilogue"
        if cls == OpClass.INJECTIVE and not is_index_map(op):
            return f"no rule fuses {name} into a matmul epilogue"
        if cls > OpClass.OUT_FUSABLE:
            return f"no rule fuses {name} into a matmul kernel"
        if from_matmul and isinstance(op, graph.GatherOp):
            return _GATHERS_RESULT.format(what="a matmul")
        if cls == OpClass.BROADCAST and from_matmul and g.count(op.operands[0]) != out_count:
            return "matmul result is broadcast in its epilogue"
        shape = g.shape(op.results[0])
        if g.count(op.results[0]) != out_count and (from_matmul or not _within(shape, out_shape)):
            return f"{name} of shape {_fmt(shape)} is outside the matmul's output space {_fmt(out_shape)}"
        return None

    skip = frozenset(matmuls) | operand_maps
    reason = f.first_failure(check, OpClass.OUT_FUSABLE, skip, ("matmul", out_count, out_shape))
    if reason is not None:
        return reason
    outputs = list(f.output_values())
    if any(g.count(v) != out_count for v in outputs):
        small = next(v for v in f.outputs() if g.count(v) != out_count)
        return f"an output of shape {_fmt(g.shape(small))} is outside the matmul's output space {_fmt(out_shape)}"
    # the kernel walks the output tiles in one order: outputs in two layouts (a conv's
    # NCHW result and its NHWC copy for the next conv; a projection kept flat beside
    # siblings split into heads) would be two loop nests, scheduled as one thread block
    shapes = {g.shape(v) for v in outputs}
    if len(shapes) > 1:
        return f"outputs in two layouts ({', '.join(sorted(map(_fmt, shapes)))}) would need two loop nests"
    return None


def check_attention(f: GroupFacts) -> str | None:
    """Attention: the matched core, index maps on Q/K/V, score-sized scale/mask
    operands, and an elementwise epilogue on the output. (Visits the whole group:
    an attention kernel is its pattern plus a few operands and an epilogue.)"""
    g = f.g
    matches = f.matched()
    if len(matches) != 1:
        return "two attention patterns in one kernel"
    match = matches[0]
    members = f.members()
    group = frozenset(members)
    if any(p is not match for p in f.touched()):
        return "the ops of another attention pattern"
    m1, m2 = match.anchors
    operand_maps: set[int] = set()
    for values in (_matmul_operands(g.ops[m1]), _matmul_operands(g.ops[m2])[1:]):
        for value in values:
            crossed, j = _operand_maps(f, value)
            if j is not None and j not in match.core:
                if g.cls[j] == OpClass.OUT_FUSABLE:
                    return "matmul feeds a matmul outside the attention pattern"
                return "attention prologue is not fused"
            operand_maps |= crossed
    reason = _operand_map_output(f, operand_maps, "attention")
    if reason is not None:
        return reason
    score_count = g.count(g.ops[m1].results[0])
    out_count = g.count(g.ops[m2].results[0])
    from_core = g.depends_within(group, match.core)
    from_output = g.depends_within(group, [m2])
    score_shape = g.shape(g.ops[m1].results[0])
    outputs = set(f.outputs())
    for i in members:
        if i in match.core or i in operand_maps:
            continue
        op = g.ops[i]
        name = short_name(op)
        cls = g.cls[i]
        if cls == OpClass.OUT_FUSABLE and i in from_core:
            return "matmul prologue is not fused"
        if cls > OpClass.INJECTIVE or (cls == OpClass.INJECTIVE and not is_index_map(op)):
            return f"no rule fuses {name} into an attention kernel"
        count = g.count(op.results[0])
        if isinstance(op, graph.GatherOp) and (i in from_output or i in from_core):
            return _GATHERS_RESULT.format(what="the attention")
        if i in from_output:
            if cls == OpClass.BROADCAST and g.count(op.operands[0]) != out_count:
                return "attention result is broadcast in its epilogue"
            if count != out_count:
                return f"{name} of shape {_fmt(g.shape(op.results[0]))} is outside the attention's output space"
        elif i in from_core:
            return "attention scores are used outside the attention pattern"
        elif any(v in outputs for v in op.results):
            return f"{name} of the scores' operands is also used outside the attention kernel"
        elif count not in (score_count, out_count) and not _broadcast_into(g, op, score_shape, outputs):
            return f"{name} of shape {_fmt(g.shape(op.results[0]))} is outside the attention's score space"
    return None


def _within(shape: Shape, full: Shape) -> bool:
    """Whether the sizes of ``shape`` other than 1 are sizes of ``full``, each at most
    once: a value of ``shape`` broadcast along the other axes, in any order of them (a
    channel vector as [C] for NHWC, [C, 1, 1] for NCHW), covers ``full``."""
    rest = Counter(full)
    rest.subtract(d for d in shape if d != 1)
    return all(n >= 0 for n in rest.values())


def _broadcast_into(g: FuncGraph, op: Operation, full: Shape, outputs: set[SSAValue]) -> bool:
    """Whether ``op`` is a smaller operand of the score space, computed in the kernel
    (a causal mask from iotas: ``iota((S, S), 0) >= iota((S, S), 1)``): its shape
    broadcasts to ``full``, and its value reaches no output of the group, so the kernel
    computes it at each score's index, where a broadcast reads it."""
    shape = g.shape(op.results[0])
    if len(shape) > len(full) or any(d not in (1, e) for d, e in zip(_pad(shape, len(full)), full)):
        return False
    return not any(v in outputs for v in op.results)


def check_opaque(f: GroupFacts) -> str | None:
    if f.size() > 1:
        return f"{short_name(f.g.ops[f.first_of_class()[OpClass.OPAQUE]])} is opaque: no rule fuses it"
    return None


Template = Callable[[GroupFacts], "str | None"]

#: the shape every group of a kind must have; None when it fits, else the reason
TEMPLATES: dict[GroupKind, Template] = {
    GroupKind.ELEMENTWISE: check_elementwise,
    GroupKind.INDEX_MAP: check_elementwise,
    GroupKind.INJECTIVE: check_elementwise,
    GroupKind.REDUCTION: check_reduction,
    GroupKind.MATMUL: check_matmul,
    GroupKind.CONV: check_matmul,
    GroupKind.ATTENTION: check_attention,
    GroupKind.OPAQUE: check_opaque,
}
