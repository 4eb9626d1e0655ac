"""``split-chunks``: the functions a chunked run of a function calls, one per round of
partial reductions and one for the chunk's results, when its arguments are split into
chunks along some sizes (``fusec.dask``).

Along a *parallel* size (``partition-axes``) each chunk runs the whole function; along
a *reduction* size ``S``, a reduction over ``S`` (or a matmul contracting it) needs
every chunk. Such an op is a *cut*: each chunk computes the op on its own elements (a
partial), the partials of all chunks are combined (``add``, ``max`` or ``min``), and
the ops after it read the combined value. Cuts that read other cuts wait for them, so
the function becomes:

- ``@NAME.partial0``, ``@NAME.partial1``, ...: one per round, returning on a chunk
  the partials of that round's cuts from the chunk's arguments and the combined values
  of earlier rounds;
- ``@NAME.chunk``: the function's results on a chunk, every cut read as its combined
  value; it also computes each op that checks its operands and that nothing reads (an
  unused gather: ``graph.checks_at_run_time``), whose check every chunk makes all the
  same (docs/reference.md, "Numerics").

Softmax along its rows ``N`` is two rounds, its max then its sum of exponentials:

    func.func @main.partial0(%x: tensor<?x?xf32, ["B", "N"]>) -> tensor<?x1xf32, ["B", ""]>
        attributes {chunk_operands = ["x"], chunk_results = ["cut0"], combine = ["max"]}
    func.func @main.partial1(%x: ..., %cut0: tensor<?x1xf32, ["B", ""]>) -> ...
        attributes {chunk_operands = ["x", "cut0"], chunk_results = ["cut1"], combine = ["add"]}
    func.func @main.chunk(%x: ..., %cut0: ..., %cut1: ...) -> tensor<?x?xf32, ["B", "N"]>
        attributes {chunk_operands = ["x", "cut0", "cut1"]}

``chunk_operands`` names each argument: a parameter of the function, or ``cutK``, the
combined value of the K-th cut (in program order). Each function takes only what its
results need. A ``graph.dim_size`` of a split size would read a chunk's size where
the function means the whole size (``mean`` divides by it), so it becomes a constant
from the ``sizes`` option. Without ``size`` (every split size parallel) there are no
cuts and ``NAME.chunk`` is the function with those constants.

Run it on inlined, decomposed IR (``mean`` is then a sum and a division), as
``partition-axes``; a size that is unsplittable fails the pass with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException
from xdsl.utils.hints import isa

from dialects import graph
from dialects.reductions import Fold
from dialects.tensor_types import dtype_of, is_half_float, shape_of, tensor_type
from passes.partition_axes import SplitKind, cuts, signature_sizes

#: attributes of the functions the pass adds (see the module docstring)
OPERANDS_ATTR = "chunk_operands"
RESULTS_ATTR = "chunk_results"
COMBINE_ATTR = "combine"

#: the suffix of the function that computes a chunk's results
CHUNK = "chunk"


def listed_names(function: func.FuncOp, attribute: str) -> list[str]:
    """The names an attribute of a function this pass added lists (``OPERANDS_ATTR``,
    ``RESULTS_ATTR``, ``COMBINE_ATTR``)."""
    names = function.attributes[attribute]
    assert isa(names, ArrayAttr[StringAttr])  # as the pass writes them
    return [name.data for name in names.data]


def partial_name(entry: str, round_: int) -> str:
    return f"{entry}.partial{round_}"


def chunk_name(entry: str) -> str:
    return f"{entry}.{CHUNK}"


def _constant_sizes(spec: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, value = item.partition("=")
        if not value.strip().isdigit():
            raise PassFailedException(f"split-chunks: sizes={spec!r}: expected NAME=INTEGER,...")
        sizes[name.strip()] = int(value)
    return sizes


def _build(
    function: func.FuncOp,
    name: str,
    outputs: list[SSAValue],
    cut_inputs: Mapping[SSAValue, int],
    sizes: dict[str, int],
    unread: Sequence[SSAValue] = (),
) -> func.FuncOp:
    """A function computing ``outputs`` (and ``unread``, values it computes for their
    checks alone) from the parameters of ``function`` and the combined values of the
    cuts in ``cut_inputs`` (value -> cut index), taking only those it reads."""
    ops = [op for op in function.body.block.ops if not isinstance(op, func.ReturnOp)]
    needed: set[SSAValue] = {*outputs, *unread}
    kept: list[Operation] = []
    for op in reversed(ops):
        if not any(r in needed for r in op.results) or op.results[0] in cut_inputs:
            continue
        kept.append(op)
        if isinstance(op, graph.DimSizeOp) and shape_of(op.input.type)[op.index.value.data] in sizes:
            continue  # becomes a constant: its operand is not read
        needed.update(op.operands)
    kept.reverse()
    params = [a for a in function.body.block.args if a in needed]
    read = sorted((k, v) for v, k in cut_inputs.items() if v in needed)
    # a chunk's sizes come from its arguments: keep a parameter binding a size of a
    # result that no kept argument binds (a result broadcast from combined values)
    bound = {d for a in [*params, *(v for _, v in read)] for d in shape_of(a.type)}
    for dim in (d for v in outputs for d in shape_of(v.type) if isinstance(d, str) and d):
        if dim not in bound:
            carrier = next((a for a in function.body.block.args if dim in shape_of(a.type)), None)
            if carrier is not None and carrier not in params:
                params.append(carrier)
                bound.update(shape_of(carrier.type))
    params.sort(key=lambda a: a.index)
    inputs: list[SSAValue] = [*params, *(v for _, v in read)]
    body = Block(arg_types=[v.type for v in inputs])
    names = [a.name_hint or f"arg{a.index}" for a in params] + [f"cut{k}" for k, _ in read]
    for arg, arg_name in zip(body.args, names):
        arg.name_hint = arg_name
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for op in kept:
        if (
            isinstance(op, graph.DimSizeOp)
            and isinstance(size_name := shape_of(op.input.type)[op.index.value.data], str)
            and size_name in sizes
        ):
            clone = graph.ConstantOp.scalar(sizes[size_name], dtype_of(op.result.type))
        else:
            clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))
        for old, new in zip(op.results, clone.results):
            if old.name_hint:
                new.name_hint = old.name_hint
    body.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
    result = func.FuncOp(name, ([v.type for v in inputs], [v.type for v in outputs]), Region(body))
    result.attributes[OPERANDS_ATTR] = ArrayAttr([StringAttr(n) for n in names])
    return result


def widen_half_partials(function: func.FuncOp, size: str) -> None:
    """sum(x) = cast(sum(cast(x, f32))) for each half-float sum or product cut along
    ``size``, and a @ b = cast(cast(a, f32) @ cast(b, f32)) for each half-float matmul
    contracting it (rewritten in place): a whole sum, product or matmul of ``f16`` or
    ``bf16`` accumulates in ``f32`` and rounds once (the product of two half floats is
    exact in ``f32``), so a chunk's partial is kept in ``f32`` too, and so is their
    combination; rounding each partial to the half float would round twice and may
    overflow where the whole does not."""
    _, found = cuts(function, size)
    for cut in found:
        op = cut.op
        if not is_half_float(op.results[0].type):
            continue
        if isinstance(op, graph.ReduceOp) and cut.combiner in (Fold.ADD, Fold.MUL):
            widened = [graph.CastOp(op.input, tensor_type("f32", shape_of(op.input.type)))]
            wide: Operation = graph.ReduceOp(widened[0], op.reduction.kind, op.axes_list, op.keepdims is not None)
        elif isinstance(op, graph.MatmulOp):
            widened = [graph.CastOp(v, tensor_type("f32", shape_of(v.type))) for v in (op.lhs, op.rhs)]
            wide = graph.MatmulOp(
                widened[0], widened[1], op.transpose_lhs is not None, op.transpose_rhs is not None
            )
        else:
            continue
        half_type = op.results[0].type
        assert isa(half_type, TensorType)  # graph ops' results are tensors
        narrow = graph.CastOp(wide, half_type)
        block = op.parent_block()
        assert block is not None  # an op of the function's body
        block.insert_ops_before([*widened, wide, narrow], op)
        op.results[0].replace_all_uses_with(narrow.result)
        op.detach()
        op.erase()


def split_function(function: func.FuncOp, size: str, sizes: dict[str, int]) -> list[func.FuncOp]:
    """The partial functions of each round and the chunk function of ``function``
    split along the reduction size ``size`` ("" for none), with the ``graph.dim_size``
    of each size in ``sizes`` made a constant."""
    entry = function.sym_name.data
    known = signature_sizes(function)
    unknown = [name for name in (size, *sizes) if name and name not in known]
    if unknown:
        raise PassFailedException(
            f"split-chunks: {unknown[0]} is no size of {entry} (sizes: {', '.join(known) or 'none'})"
        )
    if size:
        widen_half_partials(function, size)
    axis, cut_list = cuts(function, size) if size else (None, [])
    if axis is not None and axis.kind is SplitKind.UNSPLITTABLE:
        raise PassFailedException(f"split-chunks: {entry} cannot be split along {size}: {axis.reason}")
    for cut in cut_list:
        if isinstance(cut.op, graph.ReduceOp) and not cut.op.reduction.combines_own_partials:
            raise PassFailedException(
                f"split-chunks: {cut.op.name} {cut.op.reduction.name} along {size}: decompose it first"
            )
    values: list[SSAValue] = [cut.op.results[0] for cut in cut_list]
    functions = []
    for round_ in range(1, max((cut.round for cut in cut_list), default=0) + 1):
        members = [k for k, cut in enumerate(cut_list) if cut.round == round_]
        earlier = {values[k]: k for k, cut in enumerate(cut_list) if cut.round < round_}
        partial = _build(function, partial_name(entry, round_ - 1), [values[k] for k in members], earlier, sizes)
        partial.attributes[RESULTS_ATTR] = ArrayAttr([StringAttr(f"cut{k}") for k in members])
        partial.attributes[COMBINE_ATTR] = ArrayAttr([StringAttr(cut_list[k].combiner.value) for k in members])
        functions.append(partial)
    ret = function.body.block.last_op
    assert isinstance(ret, func.ReturnOp)  # a func.func's body ends with its return
    returned = list(ret.operands)
    # an op that checks its operands is computed though nothing reads it (docs/reference.md,
    # "Numerics"): on every chunk, by the chunk's function
    unread = [r for op in function.body.block.ops if graph.checks_at_run_time(op) for r in op.results if not r.uses]
    cut_values = {v: k for k, v in enumerate(values)}
    functions.append(_build(function, chunk_name(entry), returned, cut_values, sizes, unread))
    return functions


@dataclass(frozen=True)
class SplitChunksPass(ModulePass):
    """Adds to the module the functions a chunked run of ``entry`` calls when its
    arguments are split along the reduction size ``size`` ("" for none) and along
    parallel sizes; ``sizes`` (``N=4096,...``) gives the whole size of each split size.
    A half-float sum or product cut along ``size`` is first written as an ``f32`` one
    between casts, in ``entry`` itself (``widen_half_partials``: the same values)."""

    name = "split-chunks"

    entry: str = "main"
    size: str = ""
    sizes: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = next(
            (f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == self.entry),
            None,
        )
        if function is None or function.is_declaration:
            raise PassFailedException(f"split-chunks: no function @{self.entry} with a body")
        for new in split_function(function, self.size, _constant_sizes(self.sizes)):
            op.body.block.add_op(new)
