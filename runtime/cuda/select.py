"""``select(condition, a, b)``: ``a if condition else b`` as one LLVM ``select``, for the
GPU kernels' choices of a value.

Why not Python's conditional expression: Numba compiles each one as two basic blocks and
a merge, and its front end's liveness and SSA passes cost about (blocks x variables). The
flash-attention kernel's 288 conditional expressions (masked loads, the NaN-aware maxima,
the masked exponentials) made 870 blocks of it, and 200 of the 264 s its compile took
(cProfile of ``numba.cuda.compile_ptx``). A select is one instruction in one block. Both
values are computed, which the generated code allows: each is a name or an expression
without effects (a load is clamped into bounds before it is chosen), and what the
unchosen side computes (an ``fptosi`` out of range, an ``exp`` of ``-inf - -inf``) is
discarded. The simulator runs kernels as Python, so there the generator writes the
conditional expression (``runtime.codegen_scalar.ScalarSource.choose``).
"""

from __future__ import annotations

from numba import types
from numba.cuda.extending import intrinsic


@intrinsic
def select(typingctx, condition, if_true, if_false):
    """``if_true if condition else if_false``, typed as Numba types that expression: the
    two values unified, ``condition`` taken by its truth."""
    unified = typingctx.unify_pairs(if_true, if_false)
    if unified is None or unified == types.pyobject:
        return None

    def codegen(context, builder, signature, args):
        condition_type, true_type, false_type = signature.args
        truth = context.is_true(builder, condition_type, args[0])
        chosen = context.cast(builder, args[1], true_type, signature.return_type)
        other = context.cast(builder, args[2], false_type, signature.return_type)
        return builder.select(truth, chosen, other)

    return unified(condition, if_true, if_false), codegen
