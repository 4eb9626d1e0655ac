"""``fold-layout``: layout ops that need not be copies are marked so.

A transpose or reshape only renames indices: a consumer can read the producer's
buffer through an index map (``y[b, h, s, d] = x[b, s, h*64 + d]``) instead of a
materialized copy. This is the seeds' implicit head split and merge of attention.
The pass records the decision in the IR; the loop lowering reads it:

- ``graph.matmul %a, %b transpose_lhs`` / ``transpose_rhs``: a transpose of an operand's
  last two axes (batch axes kept) is folded into the matmul, which then multiplies by
  ``swapaxes(operand, -1, -2)`` — the GEMM reads its operand in the other order.
- ``{index_map}`` (a unit attribute) on a ``graph.transpose``, ``graph.reshape``,
  ``graph.slice``, ``graph.concat``, ``graph.pad`` or ``graph.window`` (a select between index maps) whose
  every user reads it element by element: an elementwise op, a broadcast, a reduction,
  a matmul, a ``graph.dim_size`` (which reads only the shape), or another layout op
  marked ``index_map``. Such a layout op is an index map of its consumers' loads, never
  a kernel of its own. One with a user that needs a real tensor (a ``func.return``, a
  call, a softmax or norm not decomposed yet) stays unmarked: it is materialized.

Every consumer of the graph level must honour the matmul flags (read the operand
swapped: ``A[b.., k, i]`` for ``transpose_lhs``, ``B[b.., j, k]`` for ``transpose_rhs``),
as ``runtime.reference.interpreter`` does. Until the loop lowering does too, the pipeline runs this
pass with ``matmul=False`` (see ``passes/pipeline.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dialects.graph import (
    BinaryOp,
    BroadcastOp,
    CastOp,
    CompareOp,
    ConcatOp,
    DimSizeOp,
    MatmulOp,
    PadOp,
    ReduceOp,
    ReshapeOp,
    SelectOp,
    SliceOp,
    TransposeOp,
    UnaryOp,
    WindowOp,
)

#: the unit attribute marking a layout op that is read through an index map
INDEX_MAP = "index_map"

#: users that read their operands element by element, through any index map
_INDEXED_READERS = (UnaryOp, BinaryOp, CompareOp, SelectOp, CastOp, BroadcastOp, ReduceOp, MatmulOp, DimSizeOp)
_LAYOUT_OPS = (TransposeOp, ReshapeOp, SliceOp, ConcatOp, PadOp, WindowOp)


def _swapped_source(value: SSAValue) -> SSAValue | None:
    """x when ``value`` is ``transpose(x, [0, ..., n-3, n-1, n-2])``, else None."""
    op = value.owner
    if not isinstance(op, TransposeOp):
        return None
    n = len(op.permutation)
    if n < 2 or op.permutation != (*range(n - 2), n - 1, n - 2):
        return None
    return op.input


class FoldTransposeIntoMatmul(RewritePattern):
    """matmul(transpose(a, swap), b) = matmul(a, b) {transpose_lhs}, and
    matmul(a, transpose(b, swap)) = matmul(a, b) {transpose_rhs}, swap exchanging the
    last two axes; a flag already set and a swap cancel (swap∘swap = id)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = _swapped_source(op.lhs), _swapped_source(op.rhs)
        if lhs is None and rhs is None:
            return
        transpose_lhs = (op.transpose_lhs is not None) != (lhs is not None)
        transpose_rhs = (op.transpose_rhs is not None) != (rhs is not None)
        folded = MatmulOp(lhs or op.lhs, rhs or op.rhs, transpose_lhs, transpose_rhs)
        folded.attributes.update(op.attributes)
        transposes = {
            v.owner for v, source in ((op.lhs, lhs), (op.rhs, rhs)) if source is not None and isinstance(v.owner, TransposeOp)
        }
        rewriter.replace(op, folded)
        for transpose in transposes:
            if not transpose.results[0].uses:  # read by nothing else: gone
                rewriter.erase(transpose)


def is_index_map(op: Operation) -> bool:
    """Whether the loop level should read ``op`` (a layout op) through an
    index map rather than materialize it."""
    return isinstance(op, _LAYOUT_OPS) and INDEX_MAP in op.attributes


def _read_through_index_map(op: Operation) -> bool:
    users = [use.operation for use in op.results[0].uses]
    return bool(users) and all(
        isinstance(user, _INDEXED_READERS) or is_index_map(user) for user in users
    )


def mark_index_maps(module: ModuleOp) -> None:
    """Sets (or clears) ``index_map`` on every transpose, reshape and slice. Users come after
    their producers in a block, so a reverse walk decides a layout op's layout users
    before the op itself."""
    for op in module.walk(reverse=True):
        if not isinstance(op, _LAYOUT_OPS):
            continue
        if _read_through_index_map(op):
            op.attributes[INDEX_MAP] = UnitAttr()
        else:
            op.attributes.pop(INDEX_MAP, None)


@dataclass(frozen=True)
class FoldLayoutPass(ModulePass):
    """Folds last-two-axes transposes into matmuls (``transpose_lhs``/``transpose_rhs``)
    and marks the transposes and reshapes read through index maps (``index_map``)."""

    name = "fold-layout"

    #: fold operand transposes into the matmuls' ``transpose_*`` flags
    matmul: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.matmul:
            PatternRewriteWalker(
                GreedyRewritePatternApplier([FoldTransposeIntoMatmul()], dce_enabled=False),
                apply_recursively=False,
            ).rewrite_module(op)
        mark_index_maps(op)
