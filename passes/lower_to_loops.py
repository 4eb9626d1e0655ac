"""``lower-to-loops``: each ``graph.fusion_group`` becomes one ``loop.kernel``, and each
function a host function that allocates buffers and launches the kernels.

Inside a kernel, producers are computed inside their consumers' loops. Every output
gets a nest of ``loop.parallel`` over its index space (outputs whose shapes start
with the same sizes share those loops), and the value to store at an index is built
by walking the group's ops backwards from the output (``_KernelEmitter.value_at``):

- an input is a ``loop.load`` of its buffer at the index;
- an elementwise op is its scalar ``arith``/``math`` op on its operands' values at
  the same index;
- ``broadcast``, ``transpose``, ``reshape`` and ``slice`` only change the index (drop
  or zero indices; permute them; linearise and split again with div/mod; ``start +
  i * step``); ``concat`` and ``pad`` select, by comparing an index with the operands'
  offsets, between the operands (or the padding value) read at shifted, clamped indices;
- ``reduce`` and ``matmul`` are ``loop.reduce`` loops over the reduced axes;
- every scalar is placed in the outermost loop whose variables it depends on, so a
  reduction whose result is broadcast along the axis it reduced (softmax, layernorm)
  runs once per row, before the row's elementwise loop, and a matmul's epilogue is
  applied to the reduction's result before the store.

Values are reused within a loop body (a per-loop memo keyed by value and index), and
recomputed across loops: an elementwise producer evaluated again inside a reduction
loop costs FLOPs, not memory traffic. Two cases would multiply the work, and there
the value is kept instead, for one iteration of the outermost parallel loops, in a
``loop.scratch`` buffer (a "per-row temporary"):

- a reduction or matmul result that another reduction reads along the result's own
  axes (the scores of attention, read by the softmax's max and sum and by the second
  matmul);
- a costly operand of a matmul (transcendentals, reductions), which every column of
  the matmul would otherwise recompute.

Host side: ``func.func`` over tensors becomes ``func.func`` over memrefs. Each
argument carries its symbolic shape (``{loop.shape = #loop.shape<["N", 768]>}``);
each group's outputs get a ``loop.alloc`` of their symbolic shape, the group a
``loop.launch @kernel(inputs..., outputs...)``; buffers that are not returned get a
``loop.dealloc`` before the return (``plan-memory`` then places frees by liveness,
reuses buffers, and makes results caller-provided).

Graph ops found outside any fusion group (unfused input) are lowered as a group of
one op each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from dialects import graph, loop
from dialects.elementwise import BY_NAME, Accepts
from dialects.group_kinds import GroupKind, GroupStrategy
from dialects.sizes import Linear, Size, is_derived, sum_dims
from dialects.tensor_types import Dim, is_bool, is_float, shape_of
from passes.split_library_groups import SplitLibraryGroupsPass


class LoweringError(PassFailedException):
    """A group this lowering cannot turn into loops (the message says why)."""


# ---------------------------------------------------------------------------
# Types


def memref_of(type_: Attribute) -> MemRefType:
    """The buffer type of a tensor type: same element type, ``?`` where dynamic."""
    assert isinstance(type_, TensorType), f"expected a tensor type, got {type_}"
    return MemRefType(type_.element_type, type_.get_shape())


def symbolic_shape(type_: Attribute) -> tuple[Dim, ...]:
    shape = shape_of(type_)
    if any(d == "?" for d in shape):
        raise LoweringError(f"{type_} has a dynamic size without a name; it cannot be allocated")
    return shape


def _element(type_: Attribute) -> Attribute:
    assert isinstance(type_, TensorType)
    return type_.element_type


# ---------------------------------------------------------------------------
# The kernel emitter


@dataclass(eq=False)
class _Frame:
    """One level of the loop nest being built: the kernel body or a loop's body."""

    op: Operation | None
    block: Block
    kind: str  # "root" | "parallel" | "reduce" | "scratch"
    memo: dict = field(default_factory=dict)  # (graph value, index tuple) -> scalar
    cse: dict = field(default_factory=dict)  # (op key, operands) -> result
    scratch: dict = field(default_factory=dict)  # graph value -> [(positions, comps, buffer)]


_INDEX_MAP_OPS = (graph.BroadcastOp, graph.TransposeOp, graph.ReshapeOp, graph.SliceOp)
#: every index map, with those that select among several operands (or a padding
#: value); where one operand's value is wanted, only ``_INDEX_MAP_OPS`` are seen through
_LAYOUT_OPS = _INDEX_MAP_OPS + (graph.ConcatOp, graph.PadOp, graph.WindowOp)
#: the elementwise ops costly enough to keep rather than recompute: transcendentals,
#: square roots, divisions (four FLOPs or more by `dialects.elementwise`)
_TRANSCENDENTAL_OPS = tuple(cls for cls in graph.ELEMENTWISE.values() if cls.ENTRY.flops >= 4)
_CONTRACTIONS = (graph.ReduceOp, graph.MatmulOp)


def _through_index_maps(value: SSAValue) -> SSAValue:
    while not isinstance(value, BlockArgument) and isinstance(value.owner, _INDEX_MAP_OPS):
        value = value.owner.operands[0]
    return value


def _contains(value: SSAValue, kinds: tuple[type[Operation], ...], memo: dict) -> bool:
    """Whether the expression of ``value`` in its group holds an op of ``kinds``."""
    if not isinstance(value, OpResult):  # a block argument: an input of the group
        return False
    key = (value, kinds)
    if key not in memo:
        memo[key] = False
        memo[key] = isinstance(value.owner, kinds) or any(_contains(v, kinds, memo) for v in value.owner.operands)
    return memo[key]


def _scratch_candidates(block: Block) -> set[SSAValue]:
    """Values worth keeping per row rather than recomputing (see the module doc):

    1. a reduction or matmul result that another reduction or matmul reads;
    2. a costly operand of a matmul (each column of the product would recompute it);
    3. a value with transcendentals that a reduction reads and something else too
       (softmax's ``exp(x - max)``: computed once per element, not once per loop);
    4. the computed operand of an argmax/argmin over one axis: its second loop looks
       for the first loop's extreme, which needs the same bits, and the CPU's fast-math
       flags do not promise them for a value computed twice.
    """
    memo: dict = {}
    reaches: dict[SSAValue, bool] = {}

    def reaches_contraction(value: SSAValue) -> bool:
        if value not in reaches:
            reaches[value] = False
            reaches[value] = any(
                isinstance(use.operation, _CONTRACTIONS)
                or (
                    not isinstance(use.operation, graph.YieldOp)
                    and any(reaches_contraction(r) for r in use.operation.results)
                )
                for use in value.uses
            )
        return reaches[value]

    def users(value: SSAValue) -> list[Operation]:
        """The ops using ``value``, looking through index maps."""
        found = []
        for use in value.uses:
            if isinstance(use.operation, _LAYOUT_OPS):
                found.extend(users(use.operation.results[0]))
            else:
                found.append(use.operation)
        return found

    candidates: set[SSAValue] = set()
    for op in block.ops:
        if isinstance(op, _CONTRACTIONS) and reaches_contraction(op.results[0]):
            candidates.add(op.results[0])
        if isinstance(op, graph.MatmulOp):
            for operand in (op.lhs, op.rhs):
                operand = _through_index_maps(operand)
                if _contains(operand, _TRANSCENDENTAL_OPS + _CONTRACTIONS, memo):
                    candidates.add(operand)
        if isinstance(op, graph.ReduceOp) and op.reduction.index and len(op.axes_list) == 1:
            operand = _through_index_maps(op.input)
            if not isinstance(operand, BlockArgument):
                candidates.add(operand)
        if op.results and not isinstance(op, _LAYOUT_OPS + _CONTRACTIONS + (graph.YieldOp,)):
            value = op.results[0]
            found = users(value)
            if (
                len(found) >= 2
                and any(isinstance(u, graph.ReduceOp) for u in found)
                and _contains(value, _TRANSCENDENTAL_OPS, memo)
            ):
                candidates.add(value)
    return candidates


def _evaluation_priority(block: Block) -> dict[SSAValue, int]:
    """Which operands to evaluate first: a reduction broadcast along the loop (it is
    hoisted out of the loop, and may keep a row in scratch that the other operands
    then read), then operands holding such a broadcast deeper, then those holding any
    reduction, then the rest."""
    memo: dict = {}
    priority: dict[SSAValue, int] = {}

    def broadcast_of_reduction(value: SSAValue) -> bool:
        if not isinstance(value, OpResult):  # a block argument
            return False
        key = ("bcast", value)
        if key not in memo:
            memo[key] = False
            owner = value.owner
            if isinstance(owner, graph.BroadcastOp):
                memo[key] = _contains(owner.input, _CONTRACTIONS, memo)
            else:
                memo[key] = any(broadcast_of_reduction(v) for v in owner.operands)
        return memo[key]

    def direct(value: SSAValue) -> bool:
        """``value`` is a reduction's result seen through index maps, one a broadcast."""
        seen_broadcast = False
        while not isinstance(value, BlockArgument) and isinstance(value.owner, _INDEX_MAP_OPS):
            seen_broadcast |= isinstance(value.owner, graph.BroadcastOp)
            value = value.owner.operands[0]
        return seen_broadcast and _contains(value, _CONTRACTIONS, memo)

    for op in block.ops:
        for value in op.results:
            if direct(value):
                priority[value] = 3
            elif broadcast_of_reduction(value):
                priority[value] = 2
            else:
                priority[value] = 1 if _contains(value, _CONTRACTIONS, memo) else 0
    return priority


class _KernelEmitter:
    """Builds the body of one ``loop.kernel`` from one fusion group."""

    def __init__(self, group: graph.FusionGroupOp, name: str):
        self.group = group
        block = group.body.block
        terminator = block.last_op
        assert isinstance(terminator, graph.YieldOp)
        self.outputs = list(terminator.values)
        in_types = [memref_of(a.type) for a in block.args]
        out_types = [memref_of(v.type) for v in self.outputs]
        self.kernel = loop.KernelOp(name, in_types, out_types, kind=group.kind, strategy=group.strategy)
        body = self.kernel.body.block
        self.root = _Frame(None, body, "root")
        self.stack: list[_Frame] = [self.root]
        self.home: dict[SSAValue, _Frame] = {}
        self.deps: dict[SSAValue, frozenset[_Frame]] = {}
        self.const_value: dict[SSAValue, int] = {}
        for arg in body.args:
            self.home[arg] = self.root
        for source, arg in zip([*block.args, *self.outputs], body.args):
            if source.name_hint:
                arg.name_hint = source.name_hint
        self.buffers: dict[SSAValue, SSAValue] = dict(zip(block.args, body.args[: len(block.args)]))
        self.out_buffers = list(body.args[len(block.args) :])
        # where each size name can be read: (buffer, axis)
        self.size_source: dict[str, tuple[SSAValue, int]] = {}
        for tensor_type, buffer in zip(
            [a.type for a in block.args] + [v.type for v in self.outputs], body.args
        ):
            for axis, dim in enumerate(shape_of(tensor_type)):
                if isinstance(dim, str) and dim not in self.size_source:
                    self.size_source[dim] = (buffer, axis)
        self.candidates = _scratch_candidates(block)
        self.priority = _evaluation_priority(block)
        self.filling: set[SSAValue] = set()

    # -- placement --------------------------------------------------------------

    def _level(self, values: Sequence[SSAValue]) -> int:
        level = 0
        for v in values:
            frame = self.home[v]
            level = max(level, self.stack.index(frame))
        return level

    def _insert(self, op: Operation, level: int) -> None:
        frame = self.stack[level]
        if level + 1 < len(self.stack):
            inner = self.stack[level + 1].op
            assert inner is not None  # only the root frame, at level 0, has no loop op
            frame.block.insert_op_before(op, inner)
        else:
            frame.block.add_op(op)
        for r in op.results:
            self.home[r] = frame

    def _emit(
        self, key: object, operands: Sequence[SSAValue], build: Callable[[], Operation], within: Sequence[SSAValue] = ()
    ) -> SSAValue:
        """An op computing ``key`` of ``operands``, reused if already built in scope,
        else placed in the outermost loop its operands (and the indices ``within``) allow."""
        memo_key = (key, tuple(operands))
        level = max(self._level(operands), self._level(within))
        for frame in reversed(self.stack[level:]):
            if memo_key in frame.cse:
                return frame.cse[memo_key]
        op = build()
        self._insert(op, level)
        result = op.results[0]
        self.stack[level].cse[memo_key] = result
        if isinstance(result.type, IndexType):
            deps: frozenset[_Frame] = frozenset()
            for v in operands:
                deps |= self.deps.get(v, frozenset())
            self.deps[result] = deps
        return result

    # -- constants and index arithmetic ------------------------------------------

    def index(self, value: int) -> SSAValue:
        result = self._emit(("index", value), (), lambda: arith.ConstantOp.from_int_and_width(value, IndexType()))
        self.const_value[result] = value
        self.deps.setdefault(result, frozenset())
        return result

    def const(self, value: float | bool, type_: Attribute) -> SSAValue:
        attr: IntegerAttr | FloatAttr
        if isinstance(type_, IntegerType):
            if type_.width.data == 1:
                attr = IntegerAttr(1 if value else 0, type_)
            else:
                attr = IntegerAttr(int(value), type_)
        else:
            assert isinstance(type_, AnyFloat)  # a scalar of a graph tensor: an integer or a float
            attr = FloatAttr(float(value), type_)
        key = ("const", str(type_), repr(float(value)) if not isinstance(type_, IntegerType) else int(value))
        return self._emit(key, (), lambda: arith.ConstantOp(attr))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = self.const_value.get(a), self.const_value.get(b)
        if ca is not None and cb is not None:
            return self.index(ca + cb)
        if ca == 0:
            return b
        if cb == 0:
            return a
        return self._emit("addi", (a, b), lambda: arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = self.const_value.get(a), self.const_value.get(b)
        if ca is not None and cb is not None:
            return self.index(ca - cb)
        if cb == 0:
            return a
        return self._emit("subi", (a, b), lambda: arith.SubiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = self.const_value.get(a), self.const_value.get(b)
        if ca is not None and cb is not None:
            return self.index(ca * cb)
        if ca == 1:
            return b
        if cb == 1:
            return a
        if ca == 0 or cb == 0:
            return self.index(0)
        return self._emit("muli", (a, b), lambda: arith.MuliOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = self.const_value.get(a), self.const_value.get(b)
        if ca is not None and cb is not None and cb:
            return self.index(ca // cb)
        if cb == 1:
            return a
        return self._emit("divui", (a, b), lambda: arith.DivUIOp(a, b))

    def rem(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = self.const_value.get(a), self.const_value.get(b)
        if ca is not None and cb is not None and cb:
            return self.index(ca % cb)
        if cb == 1:
            return self.index(0)
        return self._emit("remui", (a, b), lambda: arith.RemUIOp(a, b))

    def size(self, dim: Dim) -> SSAValue:
        """The run-time value of a size: a constant, or ``loop.dim`` of a buffer."""
        if isinstance(dim, int):
            return self.index(dim)
        source = self.size_source.get(dim)
        if source is None:
            if is_derived(dim):  # "B*S", "D/4": from its names (whole, as the runtime checked)
                size = Size.of(dim)
                result = self.index(size.factor.numerator)
                for name in size.names:
                    result = self.mul(result, self.size(name))
                return self.div(result, self.index(size.factor.denominator))
            for known in self.size_source:  # N from a buffer of size N/2 (a slice of it may start at N/4)
                scale = Size.of(dim) / Size.of(known)
                if scale is not None and not scale.names:
                    product = self.mul(self.size(known), self.index(scale.factor.numerator))
                    return self.div(product, self.index(scale.factor.denominator))
            raise LoweringError(
                f"kernel {self.kernel.sym_name.data}: size {dim!r} is not the size of any of its buffers"
            )
        buffer, axis = source
        result = self._emit(("dim", axis), (buffer,), lambda: loop.DimOp(buffer, axis))
        self.deps[result] = frozenset()
        return result

    def position(self, index: Linear) -> SSAValue:
        """The run-time value of an index along an axis (``N-1``, ``D/2``): its sizes
        added, its negative terms subtracted, so no index is ever negative."""
        result = self.index(0)
        for term in sorted(index.terms, key=lambda t: t.factor < 0):
            magnitude = self.size(Size(abs(term.factor), term.names).dim)
            result = self.add(result, magnitude) if term.factor > 0 else self.sub(result, magnitude)
        return result

    def scalar(self, key: object, operands: Sequence[SSAValue], build: Callable[[], Operation]) -> SSAValue:
        return self._emit(key, operands, build)

    def check(
        self, key: object, operands: Sequence[SSAValue], within: Sequence[SSAValue], build: Callable[[], Operation]
    ) -> SSAValue:
        """A run-time check (it may raise) of ``operands``, placed no further out than
        the loops of the indices ``within``: NumPy checks only where it computes, so a
        check hoisted above a loop that runs no iteration would raise where NumPy,
        computing nothing there, does not."""
        return self._emit(key, operands, build, within)

    def load(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return self._emit("load", (buffer, *indices), lambda: loop.LoadOp(buffer, indices))

    # -- loops ---------------------------------------------------------------------

    def _push(self, frame: _Frame, iv: SSAValue) -> None:
        self.home[iv] = frame
        self.deps[iv] = frozenset([frame])
        self.stack.append(frame)

    def reduce_loops(
        self,
        level: int,
        combiner: loop.Combiner,
        init: SSAValue,
        extents: Sequence[SSAValue],
        body: Callable[[list[SSAValue]], SSAValue],
    ) -> SSAValue:
        """Nested ``loop.reduce`` over ``extents``, placed at ``level``; ``body`` gets
        the induction variables and gives the value to fold."""
        op = loop.ReduceOp(self.index(0), extents[0], self.index(1), [combiner], [init])
        self._insert(op, level)
        saved = self.stack
        self.stack = saved[: level + 1]
        frame = _Frame(op, op.body.block, "reduce")
        op.iv.name_hint = "k"
        self._push(frame, op.iv)
        if len(extents) > 1:
            value = self.reduce_loops(level + 1, combiner, init, extents[1:], lambda ivs: body([op.iv, *ivs]))
        else:
            value = body([op.iv])
        frame.block.add_op(loop.YieldOp(value))
        self.stack = saved
        result = op.res[0]
        self.home[result] = saved[level]
        return result

    def parallel(
        self, extent: SSAValue, kind: str = "parallel", level: int | None = None, hint: str = "i"
    ) -> tuple[loop.ParallelOp, _Frame]:
        """A ``loop.parallel`` placed at ``level`` (default: the innermost frame), its
        body becoming the innermost frame (deeper frames are left)."""
        if level is None:
            level = len(self.stack) - 1
        op = loop.ParallelOp(self.index(0), extent, self.index(1))
        op.iv.name_hint = hint
        self._insert(op, level)
        frame = _Frame(op, op.body.block, kind)
        self.stack = self.stack[: level + 1]
        self._push(frame, op.iv)
        return op, frame

    # -- values ----------------------------------------------------------------------

    def value_at(self, value: SSAValue, idx: tuple[SSAValue, ...]) -> SSAValue:
        """The scalar of graph ``value`` at index ``idx`` (one index per axis)."""
        key = (value, idx)
        for frame in reversed(self.stack):
            if key in frame.memo:
                return frame.memo[key]
        result = None
        if value in self.candidates and value not in self.filling:
            result = self._from_scratch(value, idx)
        if result is None:
            result = self._compute(value, idx)
        frame = self.home[result]
        if frame in self.stack:
            frame.memo[key] = result
        return result

    def values_at(self, requests: Sequence[tuple[SSAValue, tuple[SSAValue, ...]]]) -> list[SSAValue]:
        """Several values, evaluated in priority order (``_evaluation_priority``),
        returned in request order."""
        order = sorted(range(len(requests)), key=lambda n: -self.priority.get(requests[n][0], 0))
        results: dict[int, SSAValue] = {}
        for n in order:
            results[n] = self.value_at(*requests[n])
        return [results[n] for n in range(len(requests))]

    def _from_scratch(self, value: SSAValue, idx: tuple[SSAValue, ...]) -> SSAValue | None:
        for frame in reversed(self.stack):
            for positions, comps, buffer in frame.scratch.get(value, ()):
                if all(idx[p] is c for p, c in zip(positions, comps)):
                    return self.load(buffer, [idx[p] for p in range(len(idx)) if p not in positions])
        # the outer parallel loops this index runs along
        m = 0
        for k in range(1, len(self.stack)):
            frame = self.stack[k]
            if frame.kind != "parallel" or not any(frame in self.deps[c] for c in idx):
                break
            m = k
        outer = frozenset(self.stack[: m + 1])
        fixed = [p for p, c in enumerate(idx) if self.deps[c] <= outer]
        row = [p for p in range(len(idx)) if p not in fixed]
        if not row:
            return None
        shape = shape_of(value.type)
        dims = [shape[p] for p in row]
        scratch_type = MemRefType(_element(value.type), [d if isinstance(d, int) else DYNAMIC_INDEX for d in dims])
        sizes = [self.size(d) for d in dims if not isinstance(d, int)]
        scratch = loop.ScratchOp(scratch_type, sizes)
        self._insert(scratch, m)
        buffer = scratch.result
        saved = self.stack
        ivs = []
        for n, p in enumerate(row):
            op, _ = self.parallel(self.size(shape[p]), "scratch", m + n, "t")
            ivs.append(op.iv)
        inner = list(idx)
        for p, iv in zip(row, ivs):
            inner[p] = iv
        self.filling.add(value)
        v = self.value_at(value, tuple(inner))
        self.filling.discard(value)
        self._insert(loop.StoreOp(v, buffer, ivs), self._level([v, *ivs]))
        self.stack = saved
        saved[m].scratch.setdefault(value, []).append((fixed, [idx[p] for p in fixed], buffer))
        return self.load(buffer, [idx[p] for p in row])

    def _compute(self, value: SSAValue, idx: tuple[SSAValue, ...]) -> SSAValue:
        if isinstance(value, BlockArgument):
            return self.load(self.buffers[value], idx)
        assert isinstance(value, OpResult)  # a value is a block argument or an op's result
        op = value.owner
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise LoweringError(f"lower-to-loops does not handle {op.name}")
        return handler(self, op, idx)

    # -- the output nests ---------------------------------------------------------------

    def build(self) -> loop.KernelOp:
        trie: dict = {"outs": [], "children": {}}
        for value, buffer in zip(self.outputs, self.out_buffers):
            node = trie
            for dim in shape_of(value.type):
                node = node["children"].setdefault(dim, {"outs": [], "children": {}})
            node["outs"].append((value, buffer))
        self._build_node(trie, ())
        return self.kernel

    def _build_node(self, node: dict, idx: tuple[SSAValue, ...]) -> None:
        values = self.values_at([(value, idx) for value, _ in node["outs"]])
        for v, (_, buffer) in zip(values, node["outs"]):
            self._insert(loop.StoreOp(v, buffer, idx), self._level([v, *idx]))
        for dim, child in node["children"].items():
            if dim == 1:  # no loop over a unit dimension
                self._build_node(child, (*idx, self.index(0)))
                continue
            op, _ = self.parallel(self.size(dim), hint=f"i{len(idx)}")
            self._build_node(child, (*idx, op.iv))
            self.stack.pop()


# ---------------------------------------------------------------------------
# Scalar lowering of each graph op: (emitter, op, index) -> scalar


_OpT = TypeVar("_OpT", bound=Operation)
_Handler = Callable[[_KernelEmitter, _OpT, tuple[SSAValue, ...]], SSAValue]
_HANDLERS: dict[type[Operation], _Handler[Operation]] = {}


def _handles(op_type: type[_OpT]) -> Callable[[_Handler[_OpT]], _Handler[_OpT]]:
    def register(fn: _Handler[_OpT]) -> _Handler[_OpT]:
        # _compute looks a handler up by the op's exact class, so it only ever passes
        # the handler an op_type
        _HANDLERS[op_type] = cast(_Handler[Operation], fn)
        return fn

    return register


class _ScalarBuilder:
    """The builder (``dialects.elementwise.Builder``) the elementwise entries lower with,
    on one kernel's scalars: an entry by name is its lowering (or its expansion, for a
    composite), and every op is placed and reused as the emitter places any scalar."""

    def __init__(self, e: _KernelEmitter):
        self.e = e

    def __call__(self, name: str, *operands: SSAValue) -> SSAValue:
        entry = BY_NAME[name]
        build = entry.lower or entry.expand
        assert build is not None  # an entry has one or the other (Elementwise.__post_init__)
        return build(self, *operands)

    def const(self, value: float | bool, like: SSAValue) -> SSAValue:
        return self.e.const(value, like.type)

    def op(self, cls: type[Operation], *operands: SSAValue, **attributes) -> SSAValue:
        key = (cls.name, *sorted(attributes.items()))
        return self.e.scalar(key if attributes else cls.name, operands, lambda: cls(*operands, **attributes))

    def is_float(self, value: SSAValue) -> bool:
        return is_float(value.type)


def _elementwise(e: _KernelEmitter, op: graph.ElementwiseOp, idx):
    operands = e.values_at([(v, idx) for v in op.operands])
    return _ScalarBuilder(e)(op.ENTRY.name, *operands)


for _op_class in graph.ELEMENTWISE.values():
    _handles(_op_class)(_elementwise)


def _constant_scalar(value: SSAValue) -> float | int | None:
    """The value of a splat constant, seen through broadcasts and layout ops."""
    value = _through_index_maps(value)
    if isinstance(value, BlockArgument) or not isinstance(value.owner, graph.ConstantOp):
        return None
    attr = value.owner.value
    values = attr.get_values()
    if len(values) == 0 or any(v != values[0] for v in values):
        return None
    return values[0]


def _int_power(e: _KernelEmitter, x: SSAValue, n: int) -> SSAValue:
    """x ** n for n >= 1 by square-and-multiply: integer powers are multiplies."""
    b = _ScalarBuilder(e)
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else b("mul", result, base)
        n >>= 1
        if n:
            base = b("mul", base, base)
    assert result is not None
    return result


@_handles(graph.PowOp)
def _pow(e: _KernelEmitter, op: graph.PowOp, idx):
    x = e.value_at(op.lhs, idx)
    is_f = is_float(op.result.type)
    b = _ScalarBuilder(e)
    c = _constant_scalar(op.rhs)
    if c is not None and float(c).is_integer() and abs(c) <= 64:
        n = int(c)
        if n == 0:
            return e.const(1, x.type)
        if n > 0:
            return _int_power(e, x, n)
        if is_f:
            return b("div", e.const(1.0, x.type), _int_power(e, x, -n))
    if c is not None and is_f and c in (0.5, -0.5):
        return b("sqrt" if c > 0 else "rsqrt", x)
    y = e.value_at(op.rhs, idx)
    if graph.checks_at_run_time(op):  # NumPy refuses a negative integer exponent
        hints = [v.name_hint for v in (op.lhs, op.rhs)]
        what = f"{hints[0]} ** {hints[1]}" if all(hints) else "an integer power"
        y = e.check(("check_exponent", what), (y,), idx, lambda: loop.CheckExponentOp(y, what))
    return b("pow", x, y)


_FLOAT_PREDICATES = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_INT_PREDICATES = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_BOOL_PREDICATES = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}


@_handles(graph.CompareOp)
def _compare(e: _KernelEmitter, op: graph.CompareOp, idx):
    a, b = e.values_at([(op.lhs, idx), (op.rhs, idx)])
    pred = op.predicate.data.value
    if is_float(op.lhs.type):
        p = _FLOAT_PREDICATES[pred]
        return e.scalar(("cmpf", p), (a, b), lambda: arith.CmpfOp(a, b, p))
    p = (_BOOL_PREDICATES if is_bool(op.lhs.type) else _INT_PREDICATES)[pred]
    return e.scalar(("cmpi", p), (a, b), lambda: arith.CmpiOp(a, b, p))


@_handles(graph.SelectOp)
def _select(e: _KernelEmitter, op: graph.SelectOp, idx):
    c, a, b = e.values_at([(op.cond, idx), (op.true_value, idx), (op.false_value, idx)])
    return e.scalar("select", (c, a, b), lambda: arith.SelectOp(c, a, b))


def convert(e: _KernelEmitter, x: SSAValue, target: Attribute) -> SSAValue:
    """NumPy ``astype`` of a scalar: float<->float, int<->int, int<->float (toward
    zero), and bool (nonzero is true; true is 1)."""
    source = x.type
    if source == target:
        return x
    s_float, t_float = is_float(source), is_float(target)
    s_bool = isinstance(source, IntegerType) and source.width.data == 1
    t_bool = isinstance(target, IntegerType) and target.width.data == 1
    if t_bool:
        zero = e.const(0, source)
        if s_float:
            return e.scalar(("cmpf", "une"), (x, zero), lambda: arith.CmpfOp(x, zero, "une"))
        return e.scalar(("cmpi", "ne"), (x, zero), lambda: arith.CmpiOp(x, zero, "ne"))
    if s_float and t_float and _float_width(target) == _float_width(source):
        # f16 <-> bf16: through f32, which holds either exactly, so rounded once
        return convert(e, convert(e, x, Float32Type()), target)
    if s_float and t_float:
        wider = _float_width(target) > _float_width(source)
        resize = arith.ExtFOp if wider else arith.TruncFOp
        return e.scalar((resize.name, str(target)), (x,), lambda: resize(x, target))
    if s_float:  # float -> int
        assert isinstance(target, IntegerType)  # neither a float nor bool (above)
        return e.scalar((arith.FPToSIOp.name, str(target)), (x,), lambda: arith.FPToSIOp(x, target))
    if t_float:  # int or bool -> float
        assert isinstance(target, AnyFloat)  # is_float
        to_float = arith.UIToFPOp if s_bool else arith.SIToFPOp
        return e.scalar((to_float.name, str(target)), (x,), lambda: to_float(x, target))
    # int -> int
    assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
    if target.width.data > source.width.data:
        extend = arith.ExtUIOp if s_bool else arith.ExtSIOp
        return e.scalar((extend.name, str(target)), (x,), lambda: extend(x, target))
    return e.scalar((arith.TruncIOp.name, str(target)), (x,), lambda: arith.TruncIOp(x, target))


def _float_width(type_: Attribute) -> int:
    assert isinstance(type_, AnyFloat)  # is_float
    return type_.bitwidth


@_handles(graph.CastOp)
def _cast(e: _KernelEmitter, op: graph.CastOp, idx):
    return convert(e, e.value_at(op.input, idx), _element(op.result.type))


@_handles(graph.ConstantOp)
def _constant(e: _KernelEmitter, op: graph.ConstantOp, idx):
    values: Sequence[int | float] = op.value.get_values()
    if len(values) != 1 and any(v != values[0] for v in values):
        raise LoweringError("lower-to-loops only takes scalar (or splat) graph.constant")
    return e.const(values[0], _element(op.result.type))


def _index_to(e: _KernelEmitter, n: SSAValue, target: Attribute) -> SSAValue:
    """An ``index`` as a scalar of ``target`` type."""
    if isinstance(target, IntegerType):
        return e.scalar(("index_cast", str(target)), (n,), lambda: arith.IndexCastOp(n, target))
    assert isinstance(target, AnyFloat)  # a graph tensor's element type: an integer or a float
    i64 = IntegerType(64)
    as_int = e.scalar(("index_cast", "i64"), (n,), lambda: arith.IndexCastOp(n, i64))
    return e.scalar((arith.SIToFPOp.name, str(target)), (as_int,), lambda: arith.SIToFPOp(as_int, target))


@_handles(graph.DimSizeOp)
def _dim_size(e: _KernelEmitter, op: graph.DimSizeOp, idx):
    dim = shape_of(op.input.type)[op.index.value.data]
    return _index_to(e, e.size(dim), _element(op.result.type))


@_handles(graph.BroadcastOp)
def _broadcast(e: _KernelEmitter, op: graph.BroadcastOp, idx):
    source, target = shape_of(op.input.type), shape_of(op.result.type)
    offset = len(target) - len(source)
    inner = tuple(
        e.index(0) if source[k] == 1 and target[offset + k] != 1 else idx[offset + k]
        for k in range(len(source))
    )
    return e.value_at(op.input, inner)


@_handles(graph.TransposeOp)
def _transpose(e: _KernelEmitter, op: graph.TransposeOp, idx):
    perm = op.permutation
    at = dict(zip(perm, idx))  # result axis i is input axis perm[i]
    return e.value_at(op.input, tuple(at[axis] for axis in range(len(perm))))


@_handles(graph.SliceOp)
def _slice(e: _KernelEmitter, op: graph.SliceOp, idx):
    inner = []
    for i, start, step in zip(idx, op.start_indices, op.step_values):
        offset = e.mul(i, e.index(abs(step)))
        inner.append(e.add(e.position(start), offset) if step > 0 else e.sub(e.position(start), offset))
    return e.value_at(op.input, tuple(inner))


def reshape_index(e: _KernelEmitter, source: Sequence[Dim], target: Sequence[Dim], idx: Sequence[SSAValue]) -> tuple[SSAValue, ...]:
    """The source index of a row-major reshape: equal leading and trailing sizes map
    one to one; the rest is cut into runs of sizes of equal products on both sides
    (``[2048, 1024]`` of ``[4, 512, 16, 64]``: 2048 = 4 * 512, 1024 = 16 * 64), each run
    linearised over its target sizes and split again over its source sizes with
    div/mod. So a merge of heads or of batch and rows reads ``i / 512``, ``i % 512``
    of its own index, which ``map-gpu`` can split into loops again."""
    lead = 0
    while lead < min(len(source), len(target)) and source[lead] == target[lead]:
        lead += 1
    trail = 0
    while (
        trail < min(len(source), len(target)) - lead
        and source[len(source) - 1 - trail] == target[len(target) - 1 - trail]
    ):
        trail += 1
    s_mid = list(source[lead : len(source) - trail])
    t_mid = list(target[lead : len(target) - trail])
    t_idx = list(idx[lead : len(target) - trail])
    mid: list[SSAValue] = []
    for s_run, t_run, i_run in _equal_runs(s_mid, t_mid, t_idx):
        mid += _split_run(e, s_run, t_run, i_run)
    return (*idx[:lead], *mid, *idx[len(target) - trail :])


def _equal_runs(s_mid: list[Dim], t_mid: list[Dim], t_idx: list[SSAValue]):
    """``s_mid`` and ``t_mid`` (with the target's indices) cut where the products of
    integer sizes agree; what follows a symbolic size is one run."""
    si = ti = 0
    while si < len(s_mid) and ti < len(t_mid):
        first_s, first_t = s_mid[si], t_mid[ti]
        if not isinstance(first_s, int) or not isinstance(first_t, int):
            break
        s_end, t_end, s_product, t_product = si + 1, ti + 1, first_s, first_t
        while s_product != t_product:
            next_s = s_mid[s_end] if s_end < len(s_mid) else None
            next_t = t_mid[t_end] if t_end < len(t_mid) else None
            if s_product < t_product and isinstance(next_s, int):
                s_product, s_end = s_product * next_s, s_end + 1
            elif t_product < s_product and isinstance(next_t, int):
                t_product, t_end = t_product * next_t, t_end + 1
            else:
                break
        if s_product != t_product:
            break
        yield s_mid[si:s_end], t_mid[ti:t_end], t_idx[ti:t_end]
        si, ti = s_end, t_end
    if si < len(s_mid) or ti < len(t_mid):
        yield s_mid[si:], t_mid[ti:], t_idx[ti:]


def _split_run(
    e: _KernelEmitter, s_run: Sequence[Dim], t_run: Sequence[Dim], i_run: Sequence[SSAValue]
) -> list[SSAValue]:
    """A run's target index linearised over its sizes and split over the source's."""
    linear = e.index(0)
    for dim, i in zip(t_run, i_run):
        linear = e.add(e.mul(linear, e.size(dim)), i)
    run: list[SSAValue] = []
    for k in range(len(s_run) - 1, -1, -1):
        if k == 0:
            run.append(linear)
        else:
            size = e.size(s_run[k])
            run.append(e.rem(linear, size))
            linear = e.div(linear, size)
    run.reverse()
    return run


@_handles(graph.ReshapeOp)
def _reshape(e: _KernelEmitter, op: graph.ReshapeOp, idx):
    inner = reshape_index(e, shape_of(op.input.type), shape_of(op.result.type), idx)
    return e.value_at(op.input, inner)


# ---------------------------------------------------------------------------
# Index generation and indexed loads: an iota is its loop index, a gather a load at
# an index read from its indices (through ``loop.check_index``)


@_handles(graph.IotaOp)
def _iota(e: _KernelEmitter, op: graph.IotaOp, idx):
    return _index_to(e, idx[op.axis.value.data], _element(op.result.type))


@_handles(graph.GatherOp)
def _gather(e: _KernelEmitter, op: graph.GatherOp, idx):
    """``y[a.., t.., b..] = x[a.., indices[t..], b..]``."""
    axis = op.axis.value.data
    rank = len(shape_of(op.indices.type))
    inner = idx[axis : axis + rank]
    raw = e.value_at(op.indices, inner)
    size = e.size(shape_of(op.input.type)[axis])
    name = f" of {op.input.name_hint}" if op.input.name_hint else ""
    what = f"gather{name} along axis {axis}"
    wraparound = op.wraparound
    # (checked in the loops over the dimensions before the axis, as NumPy's take checks
    # its indices wherever those are not empty, whatever the dimensions after it)
    position = e.check(
        ("check_index", what, wraparound), (raw, size), idx[:axis],
        lambda: loop.CheckIndexOp(raw, size, what, wraparound),
    )  # fmt: skip
    # it varies with the loops its indices' index does
    e.deps[position] = frozenset().union(*(e.deps[i] for i in inner))
    return e.value_at(op.input, (*idx[:axis], position, *idx[axis + rank :]))


# -- multi-input layout: concat and pad, as selects between index maps ----------------
#
# Both sides of an ``arith.select`` are computed, so every operand is read at an index
# clamped into its range; the select then keeps the one that covers the element.


def _clamp(e: _KernelEmitter, i: SSAValue, low: bool, high: SSAValue | None) -> SSAValue:
    """``i`` raised to 0 where ``low``, lowered to ``high`` where given."""
    if low:
        zero = e.index(0)
        i = e.scalar("maxsi", (i, zero), lambda: arith.MaxSIOp(i, zero))
    if high is not None:
        i = e.scalar("minsi", (i, high), lambda: arith.MinSIOp(i, high))
    return i


def _less(e: _KernelEmitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.scalar(("cmpi", "slt"), (a, b), lambda: arith.CmpiOp(a, b, "slt"))


def _and(e: _KernelEmitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.scalar("andi", (a, b), lambda: arith.AndIOp(a, b))


def _select_scalar(e: _KernelEmitter, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.scalar("select", (cond, a, b), lambda: arith.SelectOp(cond, a, b))


@_handles(graph.ConcatOp)
def _concat(e: _KernelEmitter, op: graph.ConcatOp, idx):
    """Operand ``k`` at ``idx[axis] - offset[k]``; the first operand whose end lies
    beyond ``idx[axis]`` is the one kept."""
    axis, i = op.axis_index, idx[op.axis_index]
    sizes = [shape_of(v.type)[axis] for v in op.inputs]
    ends = []
    for k in range(len(sizes)):
        end = sum_dims(sizes[: k + 1])
        assert end is not None  # the sizes share their names, as graph.concat verifies (concat_type)
        ends.append(e.size(end))
    last = len(sizes) - 1
    requests = []
    for k, operand in enumerate(op.inputs):
        local = e.sub(i, ends[k - 1]) if k else i
        top = e.sub(e.size(sizes[k]), e.index(1)) if k < last else None
        requests.append((operand, (*idx[:axis], _clamp(e, local, k > 0, top), *idx[axis + 1 :])))
    values = e.values_at(requests)
    result = values[last]
    for k in range(last - 1, -1, -1):
        result = _select_scalar(e, _less(e, i, ends[k]), values[k], result)
    return result


@_handles(graph.PadOp)
def _pad(e: _KernelEmitter, op: graph.PadOp, idx):
    """The input at ``idx - low`` where that is inside it on every padded axis, else
    the padding value."""
    shape = shape_of(op.input.type)
    inner, inside = list(idx), None
    for k, (low, high) in enumerate(op.widths):
        if low or high:
            inner[k], inside = _unpadded(e, idx[k], low, high, shape[k], inside)
    return _padded_read(e, op, inner, inside)


@_handles(graph.WindowOp)
def _window(e: _KernelEmitter, op: graph.WindowOp, idx):
    """The input at ``[n, o*stride + k*dilation - low, .., c]`` where that is inside it
    on every spatial axis, else the padding value."""
    shape = shape_of(op.input.type)
    rank = len(shape) - 2
    inner, inside = [idx[0]], None
    for a, ((_, stride, dilation, low), high) in enumerate(zip(op.taps(), op.high.get_values())):
        at = e.add(e.mul(idx[1 + a], e.index(stride)), e.mul(idx[1 + rank + a], e.index(dilation)))
        position, inside = _unpadded(e, at, low, high, shape[1 + a], inside)
        inner.append(position)
    inner.append(idx[-1])
    return _padded_read(e, op, inner, inside)


def _unpadded(
    e: _KernelEmitter, at: SSAValue, low: int, high: int, dim: Dim, inside: SSAValue | None
) -> tuple[SSAValue, SSAValue | None]:
    """Index ``at`` of an axis padded by ``low``/``high`` as an index of the unpadded axis
    of size ``dim``, clamped into it, and ``inside`` and-ed with whether it is there.
    Only a padded side needs its check: the padded sizes keep other reads inside."""
    size = e.size(dim)
    local = e.sub(at, e.index(low))
    checks = []
    if low:
        checks.append(_less(e, e.index(low - 1), at))
    if high:
        checks.append(_less(e, local, size))
    for check in checks:
        inside = check if inside is None else _and(e, inside, check)
    return _clamp(e, local, low > 0, e.sub(size, e.index(1)) if high else None), inside


def _padded_read(e: _KernelEmitter, op: graph.PadOp | graph.WindowOp, inner, inside: SSAValue | None) -> SSAValue:
    """``op``'s input at the clamped index ``inner`` where ``inside``, else its padding value."""
    x = e.value_at(op.input, tuple(inner))
    if inside is None:
        return x
    element = _element(op.result.type)
    padding = op.padding if is_float(op.result.type) else int(op.padding)
    return _select_scalar(e, inside, x, e.const(padding, element))


@_handles(graph.ReduceOp)
def _reduce(e: _KernelEmitter, op: graph.ReduceOp, idx):
    shape = shape_of(op.input.type)
    axes = op.axes_list
    keepdims = op.keepdims is not None
    reduction = op.reduction
    folds_bool = reduction.accepts is Accepts.BOOL  # as an i32 0 or 1: see dialects.reductions
    element = IntegerType(32) if folds_bool else _element(op.input.type)
    # the input index with holes at the reduced axes
    kept: list[SSAValue | None] = []
    it = iter(idx)
    for axis in range(len(shape)):
        if axis in axes:
            if keepdims:
                next(it)
            kept.append(None)
        else:
            kept.append(next(it))
    outer = [c for c in kept if c is not None]
    extents = [e.size(shape[a]) for a in axes]
    combiner = reduction.combiner
    identity = reduction.identity
    init = e.const(loop.combiner_identity(combiner, element) if identity is None else identity, element)
    level = e._level([*outer, *extents, init])

    def body(ivs: list[SSAValue]) -> SSAValue:
        reduced = dict(zip(axes, ivs))
        full = tuple(c if c is not None else reduced[axis] for axis, c in enumerate(kept))
        return convert(e, e.value_at(op.input, full), element)

    if not axes:  # a rank-0 input: the element itself, or NumPy's index 0 of an arg reduction
        if reduction.index:
            return e.const(0, _element(op.result.type))
        return convert(e, body([]), _element(op.result.type))
    if reduction.index:
        return _arg_reduce(e, op, extents, level, e.reduce_loops(level, combiner, init, extents, body), body)
    result = e.reduce_loops(level, combiner, init, extents, body)
    if folds_bool:
        return convert(e, result, _element(op.result.type))
    if reduction.averages:
        count = e.index(1)
        for extent in extents:
            count = e.mul(count, extent)
        return _ScalarBuilder(e)("div", result, _index_to(e, count, element))
    return result


def _arg_reduce(
    e: _KernelEmitter,
    op: graph.ReduceOp,
    extents: Sequence[SSAValue],
    level: int,
    extreme: SSAValue,
    body: Callable[[list[SSAValue]], SSAValue],
) -> SSAValue:
    """argmax = min { k : x[k] == max(x) or x[k] is NaN }, the index k counted row-major
    over the reduced axes: a second ``loop.reduce`` after the one finding the extreme.
    Both are plain min/max reductions, so the first occurrence wins however a target
    splits them over threads; NaN is the extreme when there is one (max and min
    propagate it), and then only a NaN matches."""
    i64 = IntegerType(64)
    none = e.const(loop.combiner_identity(loop.Combiner.MIN, i64), i64)

    def first_index(ivs: list[SSAValue]) -> SSAValue:
        x = body(ivs)
        if is_float(op.input.type):
            equal = e.scalar(("cmpf", "oeq"), (x, extreme), lambda: arith.CmpfOp(x, extreme, "oeq"))
            nan = e.scalar(("cmpf", "une"), (x, x), lambda: arith.CmpfOp(x, x, "une"))
            match = e.scalar(arith.OrIOp.name, (equal, nan), lambda: arith.OrIOp(equal, nan))
        else:
            match = e.scalar(("cmpi", "eq"), (x, extreme), lambda: arith.CmpiOp(x, extreme, "eq"))
        flat = ivs[0]
        for iv, extent in zip(ivs[1:], extents[1:]):
            flat = e.add(e.mul(flat, extent), iv)
        k = _index_to(e, flat, i64)
        return e.scalar("select", (match, k, none), lambda: arith.SelectOp(match, k, none))

    return e.reduce_loops(max(level, e._level([extreme])), loop.Combiner.MIN, none, extents, first_index)


def _broadcast_batch(e: _KernelEmitter, operand_batch: Sequence[Dim], out_batch: Sequence[Dim], idx: Sequence[SSAValue]) -> list[SSAValue]:
    offset = len(out_batch) - len(operand_batch)
    return [
        e.index(0) if operand_batch[k] == 1 and out_batch[offset + k] != 1 else idx[offset + k]
        for k in range(len(operand_batch))
    ]


@_handles(graph.MatmulOp)
def _matmul(e: _KernelEmitter, op: graph.MatmulOp, idx):
    """C[b.., i, j] = sum_k A[b.., i, k] * B[b.., k, j] (batch dims broadcast); with
    ``transpose_lhs`` A is read as A[b.., k, i], with ``transpose_rhs`` B as B[b.., j, k]."""
    lhs, rhs = op.operand_shapes()  # (..., M, K), (..., K, N) after the flags
    out = shape_of(op.result.type)
    batch, i, j = idx[:-2], idx[-2], idx[-1]
    lhs_batch = _broadcast_batch(e, lhs[:-2], out[:-2], batch)
    rhs_batch = _broadcast_batch(e, rhs[:-2], out[:-2], batch)
    swap_lhs, swap_rhs = op.transpose_lhs is not None, op.transpose_rhs is not None
    element = _element(op.result.type)
    init = e.const(0, element)
    extent = e.size(lhs[-1])
    level = e._level([*idx, extent, init])

    def body(ivs: list[SSAValue]) -> SSAValue:
        (k,) = ivs
        a_idx = (*lhs_batch, k, i) if swap_lhs else (*lhs_batch, i, k)
        b_idx = (*rhs_batch, j, k) if swap_rhs else (*rhs_batch, k, j)
        a, b = e.values_at([(op.lhs, a_idx), (op.rhs, b_idx)])
        return _ScalarBuilder(e)("mul", a, b)

    return e.reduce_loops(level, loop.Combiner.ADD, init, [extent], body)


# ---------------------------------------------------------------------------
# Host functions


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        candidate = f"{name}_{n}"
        n += 1
    taken.add(candidate)
    return candidate


def _single_op_group(op: Operation) -> graph.FusionGroupOp:
    """A fusion group holding just ``op`` (for graph ops found outside any group)."""
    operands = list(dict.fromkeys(op.operands))
    block = Block(arg_types=[v.type for v in operands])
    mapping: dict[SSAValue, SSAValue] = dict(zip(operands, block.args))
    clone = op.clone(value_mapper=mapping)
    block.add_op(clone)
    block.add_op(graph.YieldOp(*clone.results))
    return graph.FusionGroupOp(operands, [r.type for r in op.results], Region(block), kind=GroupKind.SINGLE)


def lower_function(fn: func.FuncOp, module: ModuleOp, taken: set[str]) -> func.FuncOp:
    """The host function of ``fn``; its kernels are inserted into ``module`` before it."""
    block = fn.body.block
    in_types = [memref_of(a.type) for a in block.args]
    out_types = [memref_of(t) for t in fn.function_type.outputs.data]
    arg_attrs = ArrayAttr(
        [DictionaryAttr({loop.SHAPE_ATTR: loop.ShapeAttr(symbolic_shape(a.type))}) for a in block.args]
    )
    host = func.FuncOp(fn.sym_name.data, (in_types, out_types), arg_attrs=arg_attrs, visibility=fn.sym_visibility)
    host_block = host.body.block
    buffers: dict[SSAValue, SSAValue] = dict(zip(block.args, host_block.args))
    allocated: list[SSAValue] = []
    for op in list(block.ops):
        if isinstance(op, func.ReturnOp):
            results = [buffers[v] for v in op.arguments]
            for buffer in allocated:
                if buffer not in results:
                    host_block.add_op(loop.DeallocOp(buffer))
            host_block.add_op(func.ReturnOp(*results))
            continue
        group = op if isinstance(op, graph.FusionGroupOp) else None
        if group is None:
            if op.dialect_name() != "graph" or isinstance(op, graph.YieldOp):
                raise LoweringError(f"lower-to-loops expects fusion groups in a function body, found {op.name}")
            group = _single_op_group(op)
        if group.strategy is GroupStrategy.LIBRARY:
            _lower_library_call(group, host_block, buffers, allocated)
            continue
        name = _unique(group.kernel_name or f"k{len(taken)}", taken)
        kernel = _KernelEmitter(group, name).build()
        Builder(InsertPoint.before(fn)).insert(kernel)
        outs = []
        for result in op.results:
            alloc = loop.AllocOp(symbolic_shape(result.type), memref_of(result.type))
            host_block.add_op(alloc)
            buffers[result] = alloc.result
            allocated.append(alloc.result)
            outs.append(alloc.result)
            if result.name_hint:
                alloc.result.name_hint = result.name_hint
        # the group's inputs, not the op's operands: a single op's group reads an operand
        # it uses twice (``x * x``) once
        host_block.add_op(loop.LaunchOp(name, [*[buffers[v] for v in group.inputs], *outs]))
    for old, new in zip(block.args, host_block.args):
        if old.name_hint:
            new.name_hint = old.name_hint
    derived = _derived_sizes(fn)
    if derived:
        host.attributes[loop.DERIVED_SIZES_ATTR] = loop.ShapeAttr(derived)
    bounds = _index_bounds(fn)
    if bounds:
        host.attributes[loop.INDEX_BOUNDS_ATTR] = loop.ShapeAttr(bounds)
    nonempty = _nonempty_axes(fn)
    if nonempty:
        host.attributes[loop.NONEMPTY_AXES_ATTR] = loop.ShapeAttr(nonempty)
    return host


def _lower_library_call(
    group: graph.FusionGroupOp, host_block: Block, buffers: dict[SSAValue, SSAValue], allocated: list[SSAValue]
) -> None:
    """A ``strategy = "library"`` group holding one matmul (after
    ``split-library-groups``) -> strided views of its operands and a ``loop.gemm``."""
    block = group.body.block
    local: dict[SSAValue, SSAValue] = {a: buffers[v] for a, v in zip(block.args, group.inputs)}
    view: loop.PermuteOp | loop.ViewOp
    for op in block.ops:
        if isinstance(op, graph.TransposeOp):
            view = loop.PermuteOp(local[op.input], op.perm.get_values(), memref_of(op.result.type))
        elif isinstance(op, graph.ReshapeOp):
            view = loop.ViewOp(local[op.input], symbolic_shape(op.result.type), memref_of(op.result.type))
        elif isinstance(op, graph.MatmulOp) and len(group.results) == 1:
            result = group.results[0]
            alloc = loop.AllocOp(symbolic_shape(result.type), memref_of(result.type))
            if result.name_hint:
                alloc.result.name_hint = result.name_hint
            host_block.add_op(alloc)
            gemm = loop.GemmOp(
                local[op.lhs],
                local[op.rhs],
                alloc,
                op.transpose_lhs is not None,
                op.transpose_rhs is not None,
                group.kernel_name or None,  # what profiles file its time under
            )
            host_block.add_op(gemm)
            buffers[result] = alloc.result
            allocated.append(alloc.result)
            continue
        elif isinstance(op, graph.YieldOp):
            continue
        else:
            raise LoweringError(
                f"a library call holds one matmul and the layout ops of its operands, not {op.name}"
                " (run split-library-groups first)"
            )
        host_block.add_op(view)
        local[op.results[0]] = view.result


def _derived_sizes(fn: func.FuncOp) -> tuple[str, ...]:
    """The derived sizes (``"D/4"``) in the types of ``fn``'s values, first use first."""
    found: dict[str, None] = {}
    for op in fn.walk():
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            if isinstance(value.type, TensorType):
                found.update((d, None) for d in shape_of(value.type) if is_derived(d))
    return tuple(found)


def _index_bounds(fn: func.FuncOp) -> tuple[Dim, ...]:
    """The first and last index each slice of ``fn`` reads along each axis it cuts, with
    that axis's size and the slice's length along it, where sizes are symbolic (the
    verifier checked the static ones): ``(index, size, length, ...)``, first use first
    (``loop.INDEX_BOUNDS_ATTR``). Index 0 and index ``size - 1`` are in range whenever the
    axis holds an element, which another check of the axis implies, or a length that is
    the axis's own size (nothing is read from an empty axis); otherwise the first index
    is checked, so that ``x[0]`` of an axis bound to 0 is an error, not a read past it."""
    found: dict[tuple[str, Dim, Dim], None] = {}
    for op in fn.walk():
        if isinstance(op, graph.SliceOp):
            lengths = shape_of(op.result.type)
            for axis, first, last, dim in op.reads():
                length = lengths[axis]
                checked = [
                    index for index in dict.fromkeys((first, last), None)
                    if not (index.constant == 0 or index.text == (Linear.of(dim) - Linear.of(1)).text)
                    and (index.constant is None or isinstance(dim, str))
                ]  # fmt: skip
                if not checked and isinstance(dim, str) and length != dim:
                    checked = [first]
                found.update(((index.text, dim, length), None) for index in checked)
    return tuple(d for triple in found for d in triple)


def _nonempty_axes(fn: func.FuncOp) -> tuple[Dim, ...]:
    """Each max, min, argmax and argmin of ``fn`` over an axis of symbolic size (an
    integer size is at least 1), and each gather along one, as ``(op, axis, size,
    elements, ...)``, first use first (``loop.NONEMPTY_AXES_ATTR``): a reduction's
    ``loop.reduce`` would start from -inf, inf or an index past the end, and a gather's
    failed index check would still read index 0 of the empty axis."""
    found: dict[tuple[Dim, ...], None] = {}
    for op in fn.walk():
        if isinstance(op, graph.ReduceOp) and op.reduction.needs_elements:
            shape = shape_of(op.input.type)
            # NumPy refuses an empty axis even where the result is empty: elements 1
            found.update(((op.reduction.name, axis, shape[axis], 1), None) for axis in op.axes_list if isinstance(shape[axis], str))
        elif isinstance(op, graph.GatherOp) and isinstance(size := shape_of(op.input.type)[op.axis.value.data], str):
            # NumPy's take refuses an empty axis where the dimensions before it and the
            # indices hold elements, whatever the dimensions after it
            taken = shape_of(op.result.type)[: op.axis.value.data + len(shape_of(op.indices.type))]
            found[("gather", op.axis.value.data, size, Size.product(taken).dim)] = None
    return tuple(d for quadruple in found for d in quadruple)


@dataclass(frozen=True)
class LowerToLoopsPass(ModulePass):
    """Fusion groups -> ``loop.kernel``s (a ``strategy = "library"`` group -> ``loop.gemm``
    calls and the kernels between them, through ``split-library-groups``); functions ->
    host functions over buffers."""

    name = "lower-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        SplitLibraryGroupsPass().apply(ctx, op)  # library groups become their calls and kernels first
        taken = {o.sym_name.data for o in op.ops if isinstance(o, func.FuncOp | loop.KernelOp)}
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            if fn.is_declaration or any(o.dialect_name() == "loop" for o in fn.body.block.ops):
                continue  # nothing to lower, or lowered already
            host = lower_function(fn, op, taken)
            Builder(InsertPoint.before(fn)).insert(host)
            fn.detach()
            fn.erase()
