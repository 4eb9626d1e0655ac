"""``decompose-composites``: the composite ops become the primitive ops they stand for.

softmax, layernorm, rmsnorm, logsumexp, var, std, batchnorm and the elementwise
composites (gelu, silu, sigmoid, softplus, clip: the entries of ``dialects.elementwise``
with an expansion) are written out in elementwise ops, reductions and explicit
broadcasts, and ``graph.reduce mean`` becomes a sum times ``1/n``, so fusion and the
loop level see only primitives: a layernorm is then two row reductions with an
elementwise prologue and epilogue, which fusion makes one kernel. A convolution becomes
a matmul of its image's windows (``graph.window``, an index map: the implicit GEMM),
and a pool a reduction over them.

A composite of ``f16`` or ``bf16`` operands is written out in ``f32`` between a cast of
its operands and one of its result (``widened``): it means what the reference computes
(the whole op in ``f32``, its result rounded once), whether fusion makes it one kernel
or several, or a Dask split stores its partial sums.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dialects.elementwise import Elementwise
from dialects.graph import (
    ELEMENTWISE,
    AbsOp,
    AddOp,
    BatchNormOp,
    CastOp,
    CompareOp,
    ComparePredicate,
    Conv2DOp,
    DimSizeOp,
    DivOp,
    ExpOp,
    LayerNormOp,
    LogOp,
    LogSumExpOp,
    MatmulOp,
    MaximumOp,
    MulOp,
    PoolKind,
    PoolOp,
    ReduceOp,
    ReshapeOp,
    RmsNormOp,
    RsqrtOp,
    SelectOp,
    SoftmaxOp,
    SqrtOp,
    StdOp,
    SubOp,
    TransposeOp,
    VarOp,
    WindowOp,
)
from dialects.graph_canonicalization import Emitter
from dialects.reductions import ReduceKind
from dialects.tensor_types import dtype_of, is_float, is_half_float, shape_of, tensor_type

# ---------------------------------------------------------------------------
# The decompositions, as functions building ops


def count(e: Emitter, x: SSAValue, axes: Sequence[int]) -> int | SSAValue:
    """How many elements of ``x`` a reduction over ``axes`` folds: an int when every
    reduced size is static, else n_static * dim_size(x, a) * ..., a rank-0 tensor of
    ``x``'s dtype."""
    shape, dtype = shape_of(x.type), dtype_of(x.type)
    static = math.prod(d for i, d in enumerate(shape) if i in axes and isinstance(d, int))
    symbolic = [i for i in axes if isinstance(shape[i], str)]
    if not symbolic:
        return static
    total = e(DimSizeOp(x, symbolic[0], dtype))
    for axis in symbolic[1:]:
        total = e(MulOp(total, e(DimSizeOp(x, axis, dtype))))
    if static != 1:
        total = e(MulOp(total, e.splat(static, total.type)))
    return total


def mean(e: Emitter, x: SSAValue, axes: Sequence[int], keepdims: bool = True) -> SSAValue:
    """mean(x, axes) = sum(x, axes) * (1/n) for a static count n,
    sum(x, axes) / (n_static * dim_size(x, a) * ...) when some reduced size is symbolic."""
    total = e(ReduceOp(x, ReduceKind.SUM, axes, keepdims))
    n = count(e, x, axes)
    if isinstance(n, int):
        return e(MulOp(total, e.splat(1.0 / n if n else math.nan, total.type)))
    return e(DivOp(total, e.broadcast(n, total.type)))


def logsumexp(e: Emitter, x: SSAValue, axes: Sequence[int], keepdims: bool) -> SSAValue:
    """logsumexp(x, axes) = log(sum(exp(x - broadcast(s)), axes)) + s, with
    s = where(abs(m) < inf, m, 0) and m = max(x, axes) (SciPy's shift: a row whose
    maximum is +-inf or NaN is not shifted, so inf - inf makes no NaN there, and a NaN
    still reaches the sum)."""
    top = e(ReduceOp(x, ReduceKind.MAX, axes, keepdims=True))
    finite = e(CompareOp(ComparePredicate.LT, e(AbsOp(top)), e.splat(math.inf, top.type)))
    shift = e(SelectOp(finite, top, e.splat(0.0, top.type)))
    exps = e(ExpOp(e(SubOp(x, e.broadcast(shift, x.type)))))
    total = e(ReduceOp(exps, ReduceKind.SUM, axes, keepdims))
    if not keepdims:
        assert isinstance(total.type, TensorType)  # the type of a graph value (graph ops verify it)
        shift = e(ReshapeOp(shift, total.type))
    return e(AddOp(e(LogOp(total)), shift))


def var(e: Emitter, x: SSAValue, axes: Sequence[int], keepdims: bool, ddof: float) -> SSAValue:
    """var(x, axes) = sum(c*c, axes) / max(n - ddof, 0), c = x - broadcast(mean(x, axes))
    (NumPy's two passes and divisor)."""
    centred = e(SubOp(x, e.broadcast(mean(e, x, axes), x.type)))
    total = e(ReduceOp(e(MulOp(centred, centred)), ReduceKind.SUM, axes, keepdims))
    n = count(e, x, axes)
    if isinstance(n, int):
        divisor = e.splat(max(n - ddof, 0), total.type)
    else:
        divisor = e(MaximumOp(e(SubOp(n, e.splat(ddof, n.type))), e.splat(0.0, n.type)))
    return e(DivOp(total, e.broadcast(divisor, total.type)))


def softmax(e: Emitter, x: SSAValue, axis: int) -> SSAValue:
    """softmax(x, a) = s / broadcast(sum(s, a)), s = exp(x - broadcast(max(x, a)))."""
    top = e(ReduceOp(x, ReduceKind.MAX, [axis], keepdims=True))
    exps = e(ExpOp(e(SubOp(x, e.broadcast(top, x.type)))))
    total = e(ReduceOp(exps, ReduceKind.SUM, [axis], keepdims=True))
    return e(DivOp(exps, e.broadcast(total, x.type)))


def layernorm(e: Emitter, x: SSAValue, gamma: SSAValue, beta: SSAValue, eps: float) -> SSAValue:
    """layernorm(x) = c * broadcast(rsqrt(mean(c*c) + eps)) * gamma + beta over the last
    axis, c = x - broadcast(mean(x)) (biased variance, as PyTorch)."""
    last = [len(shape_of(x.type)) - 1]
    centred = e(SubOp(x, e.broadcast(mean(e, x, last), x.type)))
    var = mean(e, e(MulOp(centred, centred)), last)
    scale = e(RsqrtOp(e(AddOp(var, e.splat(eps, var.type)))))
    normed = e(MulOp(centred, e.broadcast(scale, x.type)))
    return e(AddOp(e(MulOp(normed, e.broadcast(gamma, x.type))), e.broadcast(beta, x.type)))


def rmsnorm(e: Emitter, x: SSAValue, gamma: SSAValue, eps: float) -> SSAValue:
    """rmsnorm(x) = x * broadcast(rsqrt(mean(x*x) + eps)) * gamma over the last axis."""
    last = [len(shape_of(x.type)) - 1]
    ms = mean(e, e(MulOp(x, x)), last)
    scale = e(RsqrtOp(e(AddOp(ms, e.splat(eps, ms.type)))))
    return e(MulOp(e(MulOp(x, e.broadcast(scale, x.type))), e.broadcast(gamma, x.type)))


def along(e: Emitter, vector: SSAValue, like: SSAValue, axis: int) -> SSAValue:
    """A vector over axis ``axis`` of ``like`` broadcast to ``like``'s type."""
    trailing = len(shape_of(like.type)) - 1 - axis
    if trailing:
        shape = (*shape_of(vector.type), *(1,) * trailing)
        vector = e(ReshapeOp(vector, tensor_type(dtype_of(vector.type), shape)))
    return e.broadcast(vector, like.type)


def batchnorm(
    e: Emitter, x: SSAValue, mean: SSAValue, var: SSAValue, gamma: SSAValue, beta: SSAValue, eps: float, axis: int
) -> SSAValue:
    """batchnorm(x) = (x - mean) / sqrt(var + eps) * gamma + beta along the channel axis,
    in that order (PyTorch's formula, and the reference's): the square root is a vector op
    per channel, the rest one pass over x."""
    centred = e(SubOp(x, along(e, mean, x, axis)))
    root = e(SqrtOp(e(AddOp(var, e.splat(eps, var.type)))))
    normed = e(DivOp(centred, along(e, root, x, axis)))
    return e(AddOp(e(MulOp(normed, along(e, gamma, x, axis))), along(e, beta, x, axis)))


def _reshaped(e: Emitter, x: SSAValue, shape) -> SSAValue:
    return e(ReshapeOp(x, tensor_type(dtype_of(x.type), tuple(shape))))


def conv2d(e: Emitter, op: Conv2DOp) -> SSAValue:
    """conv2d(x, w) = matmul(windows(x) as [N, OH, OW, KH*KW*C], w as [KH*KW*C, O]): the
    windows are an index map (implicit GEMM, no im2col buffer). With G groups the
    windows' and the weights' channels split into [G, C/G] and the matmul is batched
    over G: [N, OH, OW, G, 1, K] @ [G, K, O/G]."""
    x, w = op.input, op.weight
    kh, kw, c, o = shape_of(w.type)
    assert isinstance(kh, int) and isinstance(kw, int) and isinstance(c, int) and isinstance(o, int)  # graph.conv2d verifies it
    strides, dilations = op.strides.get_values(), op.dilations.get_values()
    windows = e(WindowOp(x, (kh, kw), strides, dilations, op.low.get_values(), op.high.get_values()))
    n, oh, ow = shape_of(windows.type)[:3]
    g = op.group_count
    if g == 1:
        return e(MatmulOp(_reshaped(e, windows, (n, oh, ow, kh * kw * c)), _reshaped(e, w, (kh * kw * c, o))))
    grouped = _reshaped(e, windows, (n, oh, ow, kh, kw, g, c))
    lhs = _reshaped(e, e(TransposeOp(grouped, (0, 1, 2, 5, 3, 4, 6))), (n, oh, ow, g, 1, kh * kw * c))
    per_group = e(TransposeOp(_reshaped(e, w, (kh, kw, c, g, o // g)), (3, 0, 1, 2, 4)))
    product = e(MatmulOp(lhs, _reshaped(e, per_group, (g, kh * kw * c, o // g))))
    return _reshaped(e, product, (n, oh, ow, o))


def pool(e: Emitter, op: PoolOp, x: SSAValue) -> SSAValue:
    """max_pool(x) = max(windows(x) padded with -inf, taps); avg_pool(x) = mean(windows(x)
    padded with 0, taps): the padding counts in the mean's divisor."""
    window, strides = op.window.get_values(), op.strides.get_values()
    if op.pool_kind == PoolKind.MAX:
        least = -math.inf if is_float(x.type) else -(2 ** (_width(x) - 1))
        windows = e(WindowOp(x, window, strides, (1, 1), op.low.get_values(), op.high.get_values(), least))
        return e(ReduceOp(windows, ReduceKind.MAX, [3, 4], keepdims=False))
    windows = e(WindowOp(x, window, strides, (1, 1), op.low.get_values(), op.high.get_values()))
    return mean(e, windows, [3, 4], keepdims=False)


def _width(x: SSAValue) -> int:
    return int(dtype_of(x.type).lstrip("iu"))


class TensorBuilder:
    """The builder an elementwise composite's expansion (``dialects.elementwise``) is
    applied with here: entries by name become their graph ops (composites expanded in
    turn), constants splats."""

    def __init__(self, e: Emitter):
        self.e = e

    def __call__(self, name: str, *operands: SSAValue) -> SSAValue:
        op = ELEMENTWISE[name]
        if op.ENTRY.expand is not None:  # a composite in a composite (silu's sigmoid)
            return op.ENTRY.expand(self, *operands)
        return self.e(op(*operands))

    def const(self, value: float | int | bool, like: SSAValue) -> SSAValue:
        return self.e.splat(value, like.type)

    def is_float(self, value: SSAValue) -> bool:
        return is_float(value.type)


# ---------------------------------------------------------------------------
# Patterns


#: composite op -> its decomposition, a function of the emitter, the op and its operands
#: (each builder's docstring states the algebra)
DECOMPOSITIONS: dict[type[Operation], Callable[[Emitter, Any, Sequence[SSAValue]], SSAValue]] = {
    SoftmaxOp: lambda e, op, xs: softmax(e, xs[0], op.axis.value.data),
    LayerNormOp: lambda e, op, xs: layernorm(e, xs[0], xs[1], xs[2], op.eps.value.data),
    RmsNormOp: lambda e, op, xs: rmsnorm(e, xs[0], xs[1], op.eps.value.data),
    LogSumExpOp: lambda e, op, xs: logsumexp(e, xs[0], op.axes_list, op.keepdims is not None),
    VarOp: lambda e, op, xs: var(e, xs[0], op.axes_list, op.keepdims is not None, op.ddof.value.data),
    StdOp: lambda e, op, xs: e(SqrtOp(var(e, xs[0], op.axes_list, op.keepdims is not None, op.ddof.value.data))),
    BatchNormOp: lambda e, op, xs: batchnorm(e, xs[0], xs[1], xs[2], xs[3], xs[4], op.eps.value.data, op.channel_axis),
    Conv2DOp: lambda e, op, xs: conv2d(e, op),
    PoolOp: lambda e, op, xs: pool(e, op, xs[0]),
}

#: composites whose decomposition only moves, picks or multiplies-and-adds in one op
#: (a matmul accumulates in f32 by itself), so their half floats need no widening
_EXACT_IN_ITS_DTYPE: tuple[type[Operation], ...] = (Conv2DOp,)


def widened(e: Emitter, op: Operation) -> list[SSAValue]:
    """``op``'s operands, its ``f16`` and ``bf16`` ones cast to ``f32``: a composite
    computes in ``f32`` and rounds its result once, as the reference evaluates it, so
    its intermediates (a layernorm's row sums, a softmax's exponentials) keep ``f32``
    however fusion groups them, also where they cross a kernel boundary."""
    if isinstance(op, _EXACT_IN_ITS_DTYPE) or (isinstance(op, PoolOp) and op.pool_kind == PoolKind.MAX):
        return list(op.operands)
    return [
        e(CastOp(x, tensor_type("f32", shape_of(x.type)))) if is_half_float(x.type) else x for x in op.operands
    ]


def narrowed(e: Emitter, value: SSAValue, op: Operation) -> SSAValue:
    """The decomposition's ``value`` in the type of ``op``'s result: rounded once to
    its half float where the operands were widened."""
    result_type = op.results[0].type
    if value.type == result_type:
        return value
    assert isinstance(result_type, TensorType)  # the type of a graph value (graph ops verify it)
    return e(CastOp(value, result_type))


class DecomposeComposite(RewritePattern):
    """composite(x...) = its definition in primitive ops (``DECOMPOSITIONS``):
    softmax(x, a) = s / broadcast(sum(s, a)), s = exp(x - broadcast(max(x, a)));
    layernorm(x, g, b) = c * rsqrt(mean(c*c) + eps) * g + b, c = x - mean(x);
    rmsnorm(x, g) = x * rsqrt(mean(x*x) + eps) * g;
    logsumexp(x, a) = log(sum(exp(x - s), a)) + s, s = max(x, a) where finite, else 0;
    var(x, a) = sum(c*c, a) / max(n - ddof, 0), c = x - mean(x, a); std(x, a) = sqrt(var(x, a));
    batchnorm(x) = (x - mean) / sqrt(var + eps) * gamma + beta per channel;
    conv2d(x, w) = matmul(windows(x), w), both reshaped to [.., K]; max_pool(x) =
    max(windows(x), taps), avg_pool(x) = mean(windows(x), taps); and each elementwise
    composite (gelu, silu, sigmoid, softplus, clip, ...) is its
    entry's expansion in ``dialects.elementwise``. A composite of ``f16`` or ``bf16``
    operands = cast(its definition on the operands cast to ``f32``) (``widened``)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        e = Emitter()
        if (build := DECOMPOSITIONS.get(type(op))) is not None:
            result = build(e, op, widened(e, op))
        elif isinstance(entry := getattr(op, "ENTRY", None), Elementwise) and entry.expand is not None:
            result = entry.expand(TensorBuilder(e), *widened(e, op))
        else:
            return
        rewriter.replace(op, e.ops, [narrowed(e, result, op)])


class DecomposeMean(RewritePattern):
    """mean(x, axes) = sum(x, axes) * (1/n) for a static count n, or
    sum(x, axes) / (dim_size(x, a) * ...) when a reduced size is symbolic; of a half
    float, cast(mean(cast(x, f32), axes)), so the sum is not rounded to it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter) -> None:
        if not op.reduction.averages:
            return
        e = Emitter()
        result = mean(e, widened(e, op)[0], op.axes_list, op.keepdims is not None)
        rewriter.replace(op, e.ops, [narrowed(e, result, op)])


@dataclass(frozen=True)
class DecomposeCompositesPass(ModulePass):
    """Writes softmax, layernorm, rmsnorm, logsumexp, var, std, mean, batchnorm, conv2d,
    pool and the elementwise composites out in primitive graph ops."""

    name = "decompose-composites"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([DecomposeComposite(), DecomposeMean()], dce_enabled=False),
            apply_recursively=False,
        ).rewrite_module(op)
