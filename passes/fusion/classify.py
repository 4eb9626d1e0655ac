"""Operator classes for fusion, as TVM's ``OpPatternKind`` orders them.

    FREE < ELEMENTWISE < BROADCAST < INJECTIVE < REDUCTION < OUT_FUSABLE < OPAQUE

The lower an op's class, the more freely it fuses: an elementwise op fuses into
anything, a reduction takes an elementwise prologue and epilogue, a matmul
(output-fusable) takes only an epilogue, an opaque op is a kernel of its own.
FREE ops (constants, ``graph.dim_size``, ``graph.iota``) cost nothing: the fusion pass clones them
into every group that uses them, so they are never a group input nor a group.

A ``graph.transpose`` / ``graph.reshape`` / ``graph.concat`` / ``graph.pad`` carrying the unit attribute ``index_map``
is still INJECTIVE, but the rewrites promise it is free as an index map at the loop
level: :func:`is_index_map` tells the fusion rules so (it may then be folded into a
matmul's or a reduction's operand loads, where a materialised layout change may not).
"""

from __future__ import annotations

from enum import IntEnum

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, OpResult

from dialects import graph


class OpClass(IntEnum):
    FREE = -1
    ELEMENTWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    REDUCTION = 3
    OUT_FUSABLE = 4
    OPAQUE = 5


#: the class of each graph op; an op not listed here is OPAQUE
OP_CLASSES: dict[type[Operation], OpClass] = {
    **{op: OpClass.ELEMENTWISE for op in graph.ELEMENTWISE.values()},  # composites too
    graph.CompareOp: OpClass.ELEMENTWISE,
    graph.SelectOp: OpClass.ELEMENTWISE,
    graph.CastOp: OpClass.ELEMENTWISE,
    graph.BroadcastOp: OpClass.BROADCAST,
    graph.TransposeOp: OpClass.INJECTIVE,
    graph.ReshapeOp: OpClass.INJECTIVE,
    graph.ConcatOp: OpClass.INJECTIVE,
    graph.PadOp: OpClass.INJECTIVE,
    graph.WindowOp: OpClass.INJECTIVE,
    graph.SliceOp: OpClass.INJECTIVE,
    graph.ReduceOp: OpClass.REDUCTION,
    graph.MatmulOp: OpClass.OUT_FUSABLE,
    # a load at data-dependent indices: like a broadcast, it reads each output element
    # from one element of its input, so it fuses wherever a broadcast does
    graph.GatherOp: OpClass.BROADCAST,
    graph.ConstantOp: OpClass.FREE,
    graph.DimSizeOp: OpClass.FREE,
    graph.IotaOp: OpClass.FREE,  # computed from the loop index: no memory traffic
    # softmax / layernorm / rmsnorm, the statistics, batchnorm, conv2d and pool are
    # decomposed before fusion;
    # one that survives is a kernel of its own
    graph.SoftmaxOp: OpClass.OPAQUE,
    graph.LayerNormOp: OpClass.OPAQUE,
    graph.RmsNormOp: OpClass.OPAQUE,
    graph.LogSumExpOp: OpClass.OPAQUE,
    graph.VarOp: OpClass.OPAQUE,
    graph.StdOp: OpClass.OPAQUE,
    graph.BatchNormOp: OpClass.OPAQUE,
    graph.Conv2DOp: OpClass.OPAQUE,
    graph.PoolOp: OpClass.OPAQUE,
}


def classify(op: Operation) -> OpClass:
    """The fusion class of ``op`` (OPAQUE for anything the table does not know)."""
    return OP_CLASSES.get(type(op), OpClass.OPAQUE)


#: layout ops that move no data when their input is a constant
_FREE_WHEN_CONSTANT = (graph.BroadcastOp, graph.ReshapeOp, graph.TransposeOp, graph.SliceOp)


def is_free(op: Operation) -> bool:
    """Ops that cost nothing and are cloned into every group that uses them:
    constants and dimension sizes, and what is made of them alone without work —
    a broadcast/reshape/transpose/slice of a free value (a splat is still a constant),
    scalar (rank-0) arithmetic on free values (``1 / dim_size``). Cloning them keeps
    a shared ``broadcast(1e-5)`` from becoming a tensor one kernel writes and
    another reads."""
    cls = classify(op)
    if cls == OpClass.FREE:
        return True
    if not op.operands or len(op.results) != 1 or graph.checks_at_run_time(op):
        return False  # a checking op is computed, whole, once (``run_checks.py``)
    if isinstance(op, _FREE_WHEN_CONSTANT):
        pass
    elif cls == OpClass.ELEMENTWISE and _is_scalar(op.results[0].type):
        pass
    else:
        return False
    return all(isinstance(v, OpResult) and is_free(v.op) for v in op.operands)


def _is_scalar(type_) -> bool:
    return isinstance(type_, TensorType) and not type_.get_shape()


def has_flag(op: Operation, name: str) -> bool:
    """Whether ``op`` carries the unit attribute (or property) ``name``."""
    return name in op.attributes or name in op.properties


def is_index_map(op: Operation) -> bool:
    """A layout op the rewrites marked free as an index map at the loop level."""
    return classify(op) == OpClass.INJECTIVE and has_flag(op, "index_map")


def is_groupable(op: Operation) -> bool:
    """Ops that can live in a ``graph.fusion_group``: every operand and result a tensor."""
    return all(isinstance(v.type, TensorType) for v in (*op.operands, *op.results)) and not op.regions


def short_name(op: Operation) -> str:
    """A short, identifier-like name of an op for kernel and op labels:
    ``exp``, ``reduce_max``, ``matmul``."""
    name = op.name.split(".", 1)[-1]
    if isinstance(op, graph.ReduceOp):
        return f"reduce_{op.kind.data.value}"
    return name
