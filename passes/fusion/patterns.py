"""Matchers of the pattern rules (``FusionRule.matcher``): multi-op shapes that
pairwise merging would not find, because no pair of their parts may merge alone.

attention: ``MatMul(Q, K^T) → scale? → mask? → softmax → MatMul(·, V)``, the softmax
decomposed into row reductions over the key axis. The core is the two matmuls and
every op on a path between them; it must use only elementwise, broadcast and
reduction ops over the rows of the scores, leave no intermediate to anyone else,
and be convex (no path leaves the core and comes back). The layout index maps (reshape,
transpose) that Q, K and V pass through alone, and those after the output each the only
reader of the one before (a head merge), join the core, so the kernel reads its operands
and writes its result through them; scale and mask tensors, other index maps of Q/K/V
and an epilogue join later through the pairwise rules.

conv: ``Window → MatMul``, a matmul whose left operand is the windows of an image
(``graph.window``) through layout index maps: a convolution as ``decompose-composites``
writes it (implicit GEMM). The core is the window, the index maps between it and the
matmul, and those of the weights that nothing else reads; the batch norm, activation
and residual join later through the ``conv_bn_act`` rule.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from dialects import graph
from dialects.group_kinds import GroupKind
from dialects.tensor_types import shape_of
from passes.fusion.classify import OpClass, has_flag
from passes.fusion.facts import OpSetFacts, PatternMatch
from passes.fusion.graph_view import FuncGraph, OpSet
from passes.fusion.rules import check_rows


def _reach(edges: Sequence[Iterable[int]], roots: set[int], within: range) -> set[int]:
    """``roots`` and every op of ``within`` reachable from them along ``edges`` (succs
    or preds) through ops of ``within``. Ops are numbered in program order, so a path
    between two ops passes only ops numbered between them: bounding the walk by the
    ops it looks for keeps a match from walking the rest of a long program."""
    seen = set(roots)
    stack = list(roots)
    while stack:
        for n in edges[stack.pop()]:
            if n not in seen and n in within:
                seen.add(n)
                stack.append(n)
    return seen


def is_convex(g: FuncGraph, group: set[int]) -> bool:
    """No op outside ``group`` both depends on it and feeds it (such an op is numbered
    between the group's first and last)."""
    between = range(min(group) + 1, max(group))
    return not (_reach(g.succs, group, between) & _reach(g.preds, group, between)) - group


def match_attention(g: FuncGraph, m2: int) -> PatternMatch | None:
    out = g.ops[m2]
    if not isinstance(out, graph.MatmulOp) or has_flag(out, "transpose_lhs"):
        return None
    p = g.producer(out.lhs)
    if p is None or g.cls[p] not in (OpClass.ELEMENTWISE, OpClass.BROADCAST, OpClass.REDUCTION):
        return None
    # the ops upstream of P through elementwise/broadcast/reduction ops; the matmul
    # where that walk stops is the scores matmul, if it is the only one. Nearest
    # first, so that a second one ends the walk before it follows a residual stream
    # (elementwise adds) back through the program
    upstream: set[int] = set()
    matmuls: set[int] = set()
    queue = deque([p])
    while queue:
        i = queue.popleft()
        if i in upstream or i in matmuls:
            continue
        if g.cls[i] == OpClass.OUT_FUSABLE:
            matmuls.add(i)
            if len(matmuls) > 1:
                return None
            continue
        if g.cls[i] not in (OpClass.ELEMENTWISE, OpClass.BROADCAST, OpClass.REDUCTION):
            continue
        upstream.add(i)
        queue.extend(g.preds[i])
    if not matmuls:
        return None
    (m1,) = matmuls
    middle = upstream & _reach(g.succs, {m1}, range(m1, p + 1))
    scores = g.ops[m1].results[0]
    full = shape_of(scores.type)
    reductions = [i for i in middle if g.cls[i] == OpClass.REDUCTION]
    if not reductions or not any(isinstance(g.ops[i], graph.ExpOp) for i in middle):
        return None
    last = (len(full) - 1,)
    for r in reductions:
        op = g.ops[r]
        assert isinstance(op, graph.ReduceOp)
        if shape_of(op.input.type) != full or op.axes_list != last:
            return None
    if check_rows(OpSetFacts(g, frozenset(middle)), (full, last), "attention") is not None:
        return None
    # the layout index maps of q, k and v that nothing else reads, and those of the
    # output read by nothing but the next: the kernel reads its operands and writes its
    # result through them, so its neighbours read and write plain rows (a library GEMM
    # with no copy of a transposed operand)
    first, second = g.ops[m1], g.ops[m2]
    assert isinstance(first, graph.MatmulOp) and isinstance(second, graph.MatmulOp)
    layouts = [_layout_chain(g, value, m)[0] for value, m in ((first.lhs, m1), (first.rhs, m1), (second.rhs, m2))]
    core = middle | {m1, m2, *_layout_tail(g, m2)}.union(*layouts)
    # nothing but the core reads the scores, the probabilities or what lies between
    for i in middle | {m1}:
        for result in g.ops[i].results:
            ids, escapes = g.users(result)
            if escapes or not ids <= core:
                return None
    if not is_convex(g, core):
        return None
    return PatternMatch("attention", GroupKind.ATTENTION, frozenset(core), (m1, m2))


def _layout_chain(g: FuncGraph, value, m: int) -> tuple[set[int], int | None]:
    """The index-map layout ops (reshape, transpose) from matmul ``m``'s operand ``value``
    up to the first other op, each read by nothing but the chain: (their ids, the id of
    the op reached, or None for an argument)."""
    chain: set[int] = set()
    reader = m
    while (p := g.producer(value)) is not None:
        ids, escapes = g.users(g.ops[p].results[0])
        if escapes or ids != {reader}:
            return chain, None
        if not isinstance(g.ops[p], graph.ReshapeOp | graph.TransposeOp) or not has_flag(g.ops[p], "index_map"):
            return chain, p
        chain.add(p)
        reader, value = p, g.ops[p].operands[0]
    return chain, None


def _layout_tail(g: FuncGraph, m: int) -> set[int]:
    """The index-map layout ops (reshape, transpose) after op ``m``, each the only reader
    of the result before it."""
    chain: set[int] = set()
    while True:
        ids, escapes = g.users(g.ops[m].results[0])
        if escapes or len(ids) != 1:
            return chain
        (m,) = ids
        if not isinstance(g.ops[m], graph.ReshapeOp | graph.TransposeOp) or not has_flag(g.ops[m], "index_map"):
            return chain
        chain.add(m)


def match_conv(g: FuncGraph, m: int) -> PatternMatch | None:
    op = g.ops[m]
    if not isinstance(op, graph.MatmulOp):
        return None
    lhs_chain, window = _layout_chain(g, op.lhs, m)
    if window is None or not isinstance(g.ops[window], graph.WindowOp):
        return None
    rhs_chain, _ = _layout_chain(g, op.rhs, m)
    return PatternMatch("conv", GroupKind.CONV, frozenset({window, m, *lhs_chain, *rhs_chain}), (m,))


#: the pattern matchers, tried in this order on each matmul
MATCHERS = (match_attention, match_conv)


def find_patterns(g: FuncGraph) -> tuple[PatternMatch, ...]:
    """All non-overlapping pattern matches of a function, in program order."""
    found: list[PatternMatch] = []
    taken: set[int] = set()
    for i, cls in enumerate(g.cls):
        if cls != OpClass.OUT_FUSABLE or i in taken:
            continue
        match = next((m for matcher in MATCHERS if (m := matcher(g, i)) is not None), None)
        if match is None or match.core & taken:
            continue
        found.append(match)
        taken |= match.core
    return tuple(found)


__all__ = ["find_patterns", "is_convex", "match_attention", "match_conv", "OpSet"]
