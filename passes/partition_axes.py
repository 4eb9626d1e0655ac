"""``partition-axes``: along which of its symbolic sizes a function can be split into
chunks that run apart (on Dask workers, say), and how.

For each symbolic size ``S`` of a function's signature, the pass records in the
function's ``partition`` attribute one of:

- ``parallel``: no op mixes elements across ``S``, so each chunk of ``S`` runs the
  whole function on its own (the batch axis of a transformer block, softmax's rows);
- ``reduction(add, max; 2 passes)``: reductions (``sum``, ``mean`` as sum and count,
  ``prod``, ``max``, ``min``, ``any``, ``all``) or matmul contractions run along ``S``;
  each splits into a partial per chunk and a combine with the listed folds (each
  reduction's ``partials`` in ``dialects.reductions``).
  ``passes`` counts the rounds of them that depend on each other: softmax's max, then
  its sum of exponentials, is 2; layernorm's mean, then its variance, is 2;
- ``unsplittable: <reason>``: an op needs all of ``S`` at once, with the op named.

    func.func @main(%x: tensor<?x?xf32, ["B", "N"]>) ...
        attributes {partition = {B = "parallel", N = "reduction(max, add; 2 passes)"}}

It reads sizes by name, as the types keep them: an axis is ``S`` wherever a dimension
is named ``S``, the way XLA's sharding propagation follows a sharded dimension from
op to op (there through the ops' dimension maps, here through the names every op
already keeps). The rules, for one size ``S``:

- elementwise ops, broadcasts and transposes keep ``S`` where it is: parallel;
- a slice that cuts an axis of size ``S`` (or of a size made from it, ``2*S``), or
  whose window or start is made from it (``x[:S]``), is unsplittable along ``S``: ``x[:, :D/2]`` of a
  chunk of ``D`` is not the chunk of ``x[:, :D/2]``, nor ``flip`` of a chunk;
  the axes it reads whole stay parallel;
- a value with two dimensions named ``S`` (attention's ``q @ kT`` scores) is
  unsplittable along ``S``: a chunk of one of them needs all of the other;
- a reshape keeps ``S`` only where the dimensions before it and after it multiply to
  the same sizes on both sides (``[B, S, 256] -> [B, S, 4, 64]``); one that merges or
  splits ``S`` (``[B, S] -> [B*S]``) is unsplittable, even where ``S`` is the outer
  factor, whose chunks stay contiguous in the merged axis (a mapping of chunks that
  follows merged axes is not written);
- ``iota`` along ``S`` is unsplittable (a chunk would need its offset in ``S``, which the
  chunked program is not given); along another axis it is parallel in ``S``;
- ``gather`` along an axis of ``S`` of its input is unsplittable (any index may land in
  any chunk); the axes of its indices, and the other axes of its input, are parallel;
- a concat along an axis of size ``S`` (or made of it, as ``2*S``) is unsplittable: a
  chunk of the result is not the concat of the operands' chunks; ``S`` on its other
  axes stays parallel, and so does every size through a pad, which pads only axes
  of integer size (``S + 2`` has no name);
- a reduction over ``S`` and a matmul contracting ``S`` are reductions; a reduction
  of a value that itself depends on one along ``S`` (``sum(exp(x - max(x)))``) is one
  pass more. ``prod``, ``any`` and ``all`` combine by mul, or and and; an ``argmax``
  or ``argmin`` over ``S`` is unsplittable (a chunk's index is local to the chunk).

Run it on inlined, decomposed IR (``fusec-opt -p inline,decompose-composites,
canonicalize,partition-axes``): ``softmax`` and ``layernorm`` are then the reductions
they are made of.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.str_enum import StrEnum

from dialects import graph
from dialects.reductions import Fold
from dialects.sizes import Size, is_derived
from dialects.tensor_types import shape_of

#: the attribute of a function that holds the result
PARTITION_ATTR = "partition"



class SplitKind(StrEnum):
    """Whether a function splits along a size: each kind is described in the module
    docstring."""

    PARALLEL = "parallel"
    REDUCTION = "reduction"
    UNSPLITTABLE = "unsplittable"


@dataclass(frozen=True)
class AxisPartition:
    """How a function splits along one size."""

    kind: SplitKind
    combiners: tuple[Fold, ...] = ()  # of a reduction, in first-use order
    passes: int = 0  # of a reduction: rounds of partials that depend on each other
    reason: str = ""  # of an unsplittable size: the op that needs all of it

    def describe(self) -> str:
        if self.kind is SplitKind.REDUCTION:
            return f"reduction({', '.join(self.combiners)}; {self.passes} pass{'es' if self.passes > 1 else ''})"
        if self.kind is SplitKind.UNSPLITTABLE:
            return f"unsplittable: {self.reason}"
        return self.kind.value

    __str__ = describe


class _Unsplittable(Exception):
    """An op that needs all of the size at once; the message says which and why."""


def _dims(value: SSAValue) -> tuple:
    return shape_of(value.type) if isinstance(value.type, TensorType) else ()


def contracted_dim(op: graph.MatmulOp):
    """The dimension a matmul contracts, as its left operand names it."""
    lhs = _dims(op.lhs)
    return lhs[-2] if op.transpose_lhs is not None else lhs[-1]


def _product(dims) -> tuple[int, tuple[str, ...]]:
    """A product of dimensions as (integer factor, sorted names)."""
    names = tuple(sorted(str(d) for d in dims if isinstance(d, str)))
    return math.prod(d for d in dims if isinstance(d, int)), names


def _keeps(source: tuple, target: tuple, size: str) -> bool:
    """Whether a row-major reshape from ``source`` to ``target`` keeps the dimension
    ``size`` as a dimension of its own (the same sizes before it and after it)."""
    if size not in target:
        return False
    i, j = source.index(size), target.index(size)
    return _product(source[:i]) == _product(target[:j]) and _product(source[i + 1 :]) == _product(target[j + 1 :])


@dataclass(frozen=True)
class Cut:
    """A reduction along the size (or a matmul contracting it): the round it runs in
    (1 for one that reads no other cut's result) and how its partials combine."""

    op: Operation
    round: int
    combiner: Fold


class _Analysis:
    """The partition of one function along one size, and its cuts in program order."""

    def __init__(self, size: str):
        self.size = size
        self.depth: dict[SSAValue, int] = {}  # rounds of reductions along size a value needs
        self.combiners: list[Fold] = []
        self.cuts: list[Cut] = []

    def depth_of(self, values) -> int:
        return max((self.depth.get(v, 0) for v in values), default=0)

    def reduction(self, op: Operation, combiner: Fold, operands) -> None:
        depth = self.depth_of(operands) + 1
        for result in op.results:
            self.depth[result] = depth
        if combiner not in self.combiners:
            self.combiners.append(combiner)
        self.cuts.append(Cut(op, depth, combiner))

    def op(self, op: Operation) -> None:
        size = self.size
        for value in (*op.operands, *op.results):
            if Counter(_dims(value))[size] > 1:
                raise _Unsplittable(f"{op.name} has two axes of size {size}: a chunk of one needs all of the other")
        if isinstance(op, graph.ReduceOp):
            dims = _dims(op.input)
            if any(dims[a] == size for a in op.axes_list):
                partials = op.reduction.partials
                if partials is None:  # an index: a chunk's would need the chunk's offset
                    raise _Unsplittable(f"{op.reduction.name} reduces {size}: it needs all of it")
                self.reduction(op, partials, op.operands)
                return
        elif isinstance(op, graph.MatmulOp):
            if contracted_dim(op) == size:
                self.reduction(op, Fold.ADD, op.operands)  # partial products add up
                return
        elif isinstance(op, graph.IotaOp):
            if _dims(op.result)[op.axis.value.data] == size:
                raise _Unsplittable(
                    f"{op.name} counts along {size} from its start, which a chunk of {size} does not know"
                )
        elif isinstance(op, graph.GatherOp):
            if _dims(op.input)[op.axis.value.data] == size:
                raise _Unsplittable(f"{op.name} reads along {size} at indices known only when it runs")
        elif isinstance(op, graph.ConcatOp):
            axis = op.axis_index
            if any(size in Size.of(d).names for v in (*op.operands, *op.results) if isinstance(d := _dims(v)[axis], str)):
                raise _Unsplittable(f"{op.name} along axis {axis} needs all of {size}")
        elif isinstance(op, graph.WindowOp | graph.Conv2DOp | graph.PoolOp):
            spatial = _dims(op.input)[1:-1]
            if any(isinstance(d, str) and size in Size.of(d).names for d in spatial):
                raise _Unsplittable(f"{op.name} reads windows across {size}, over the edges of a chunk")
        elif isinstance(op, graph.ReshapeOp):
            source, target = _dims(op.input), _dims(op.result)
            if (size in source or size in target) and not (size in source and _keeps(source, target, size)):
                raise _Unsplittable(
                    f"{op.name} from {list(source)} to {list(target)} merges or splits {size} with other axes"
                )
        elif isinstance(op, graph.SliceOp):
            dims, window = _dims(op.input), _dims(op.result)
            for axis, first, _, _ in op.reads():
                names = {*Size.of(dims[axis]).names, *Size.of(window[axis]).names}
                names.update(n for t in first.terms for n in t.names)
                if size in names:
                    raise _Unsplittable(f"{op.name} reads a window of axis {axis} ({dims[axis]}), not each chunk's own")
        depth = self.depth_of(op.operands)
        for result in op.results:
            self.depth[result] = depth

    def run(self, function: func.FuncOp) -> AxisPartition:
        try:
            for op in function.body.walk():
                if op is not function:
                    self.op(op)
        except _Unsplittable as error:
            return AxisPartition(SplitKind.UNSPLITTABLE, reason=str(error))
        if not self.combiners:
            return AxisPartition(SplitKind.PARALLEL)
        passes = max(self.depth.values(), default=1)
        return AxisPartition(SplitKind.REDUCTION, tuple(self.combiners), passes)


def signature_sizes(function: func.FuncOp) -> list[str]:
    """The symbolic sizes of a function's arguments, in order of first appearance."""
    sizes: list[str] = []
    for arg in function.body.block.args:
        for dim in _dims(arg):
            if isinstance(dim, str) and not is_derived(dim) and dim not in sizes:
                sizes.append(dim)
    return sizes


def axis_partition(function: func.FuncOp, size: str) -> AxisPartition:
    """How ``function`` splits along ``size``."""
    return _Analysis(size).run(function)


def cuts(function: func.FuncOp, size: str) -> tuple[AxisPartition, list[Cut]]:
    """How ``function`` splits along ``size`` and, for a reduction, its cuts."""
    analysis = _Analysis(size)
    return analysis.run(function), analysis.cuts


def partition(function: func.FuncOp) -> dict[str, AxisPartition]:
    """How ``function`` splits along each symbolic size of its signature."""
    return {size: axis_partition(function, size) for size in signature_sizes(function)}


@dataclass(frozen=True)
class PartitionAxesPass(ModulePass):
    """Records in each function's ``partition`` attribute how it splits along each
    symbolic size of its signature (see the module docstring)."""

    name = "partition-axes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and not function.is_declaration:
                axes = partition(function)
                function.attributes[PARTITION_ATTR] = DictionaryAttr(
                    {size: StringAttr(axis.describe()) for size, axis in axes.items()}
                )
