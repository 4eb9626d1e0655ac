"""``fold-batchnorm``: a batch norm of a convolution with constant weights and
statistics folded into the weights at compile time (the seeds' ``Conv → BatchNorm →
Activation``, as inference compilers fold a frozen model).

    batchnorm(conv2d(x, w))     = conv2d(x, w * s) + (beta - mean * s)
    batchnorm(conv2d(x, w) + b) = conv2d(x, w * s) + (beta + (b - mean) * s)

with ``s = gamma / sqrt(var + eps)`` per output channel: the last axis of the HWIO
weights, of the NHWC result and of the bias vector ``b``. The pass computes the scaled
weights and the shift (NumPy, in their dtype), and the norm costs the convolution's
kernel one add of a constant per output element.

It changes results (the norm's arithmetic reassociated, ``w * s`` rounded before the
products), so it is not in ``fusec``'s pipeline: ``fusec-opt -p fold-batchnorm`` runs it
(docs/convolution.md).

Where the weights or the statistics are inputs the pass leaves the norm alone, and
``decompose-composites`` makes it a per-channel affine map that fuses into the
convolution's epilogue (``conv_bn_act``): Conv → BN → Act is one kernel that computes
the scale where it stores (a square root and four FLOPs per output element, against
the convolution's ``2*KH*KW*C``). Folding input weights would instead take a kernel
scaling them and one for the per-channel vectors that fusion keeps apart from the
weights' (tensors of different sizes), two launches to save those few FLOPs.

    %y = graph.conv2d %x, %w ... : tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32> -> tensor<1x8x8x16xf32>
    %z = graph.batchnorm %y, %m, %v, %g, %b eps = 1.000000e-05 axis = 3 : ...
  -> (with %w, %m, %v, %g, %b constants)
    %ws = graph.constant dense<...> : tensor<3x3x3x16xf32>        w * s
    %y2 = graph.conv2d %x, %ws ...
    %c = graph.constant dense<...> : tensor<16xf32>                b - m * s
    %z = graph.add %y2, (graph.broadcast %c) ...
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dialects.graph import AddOp, BatchNormOp, BroadcastOp, ConstantOp, Conv2DOp
from dialects.graph_canonicalization import dense_attr, static_constant
from dialects.tensor_types import shape_of


def _only_use(value: SSAValue, of_type):
    """The op of type ``of_type`` defining ``value``, where ``value`` has no other reader."""
    if isinstance(value, OpResult) and isinstance(value.op, of_type) and value.has_one_use():
        return value.op
    return None


def _channel_bias(add: AddOp, conv: Conv2DOp) -> SSAValue | None:
    """``b`` where ``add`` is ``conv + broadcast(b)`` (either order), ``b`` a vector over
    the output channels."""
    for mine, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if mine is conv.result and isinstance(other, OpResult) and isinstance(other.op, BroadcastOp):
            bias = other.op.input
            if shape_of(bias.type) == shape_of(conv.result.type)[-1:]:
                return bias
    return None


class FoldBatchNormIntoConv(RewritePattern):
    """batchnorm(conv2d(x, w) [+ b]) = conv2d(x, w * s) + (beta + ([b] - mean) * s),
    s = gamma / sqrt(var + eps), along the output channels; w, b and the statistics
    constants, so ``w * s`` and the shift are computed here, in their dtype."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormOp, rewriter: PatternRewriter) -> None:
        if op.channel_axis != len(shape_of(op.input.type)) - 1:
            return
        bias, add, conv = None, _only_use(op.input, AddOp), _only_use(op.input, Conv2DOp)
        if add is not None:
            conv = _only_use(add.lhs, Conv2DOp) or _only_use(add.rhs, Conv2DOp)
            bias = _channel_bias(add, conv) if conv is not None else None
            if bias is None:
                return
        if conv is None:
            return
        values = (conv.weight, *op.operands[1:], *([bias] if bias else []))
        arrays = [a for v in values if (a := static_constant(v)) is not None]
        if len(arrays) < len(values):
            return
        w, mean, var, gamma, beta, *b = arrays
        scale = gamma / np.sqrt(var + var.dtype.type(op.eps.value.data))
        shift = beta - mean * scale if not b else beta + (b[0] - mean) * scale
        weight = ConstantOp(dense_attr(w * scale, conv.weight.type))
        strides, dilations = conv.strides.get_values(), conv.dilations.get_values()
        low, high = conv.low.get_values(), conv.high.get_values()
        folded = Conv2DOp(conv.input, weight, strides, dilations, low, high, conv.group_count)
        offset = ConstantOp(dense_attr(shift, op.mean.type))
        spread = BroadcastOp(offset, folded.result.type)
        rewriter.replace(op, [weight, folded, offset, spread, AddOp(folded, spread)])
        for dead in (add, conv):
            if dead is not None:
                rewriter.erase(dead)


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Folds each batch norm of a convolution's output, read by nothing else, into the
    convolution's weights and an added shift where both are constants (see the module
    doc)."""

    name = "fold-batchnorm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldBatchNormIntoConv()], dce_enabled=False),
            apply_recursively=False,
        ).rewrite_module(op)
