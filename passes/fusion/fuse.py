"""The passes ``fuse`` and ``no-fuse``: a function's ops become ``graph.fusion_group``s.

    %y = graph.fusion_group(%x) {kernel = "k0_softmax", kind = "reduction", rule = "reduce_rows"}
           : (tensor<?x?xf32, ["B", "N"]>) -> tensor<?x?xf32, ["B", "N"]> {
    ^bb0(%x_1: tensor<?x?xf32, ["B", "N"]>):
      ...
      graph.yield %r : tensor<?x?xf32, ["B", "N"]>
    }

Each group's inputs are the values it reads from outside (function arguments,
other groups' outputs; an argument read only for its shape by a cloned
``graph.dim_size`` too), its outputs the values used outside it; constants and
``graph.dim_size`` are cloned into every group that uses them. Group properties:

- ``kernel``: ``k<index>_<description>``, index = position in the function;
- ``kind``: a ``GroupKind`` as written (``dialects.group_kinds.FUSED_KINDS``);
- ``rule``: the fusion rule that formed it (the first in ``rules.RULES`` order
  among those applied), ``none`` for a single op;
- ``pattern``: the pattern rule (``attention``, ``conv``) that matched in it.

Why each remaining producer→consumer edge between two groups was not fused goes on
the function as ``fusion.not_fused``: an array of dictionaries
``{producer = "exp_3", consumer = "matmul_4", reason = "..."}`` where op labels are
``<short op name>_<position among the function's non-free ops in the fused order>``
(``report.op_labels`` recomputes them from the fused IR). ``not_fused_reasons``
reads them back; ``fuse_module`` also returns the plans.

Where calibration overruled the cost model (``calibration.calibrated_verdict``), the
function also gets ``fusion.calibrated``: ``{first = "reduce_1", second = "div_3",
decision = "calibration split reduce_1 | div_3: model 1 kernel ..."}`` per decision it
changed (``calibrated_decisions`` reads them back); without such a decision the
attribute is absent.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from dialects import graph
from dialects.sizes import Size
from dialects.tensor_types import dtype_of, is_float, shape_of
from passes.fusion.calibration import Calibration, parse_factors
from passes.fusion.cost import GPU_H200, device_by_name, parse_dims
from passes.fusion.graph_view import FuncGraph
from passes.fusion.planner import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_INPUTS,
    DEFAULT_MAX_LIVE,
    FusionOptions,
    Plan,
    plan_function,
)
from passes.fusion.rules import parse_rule_names
from passes.fusion.run_checks import with_checked_values

NOT_FUSED_ATTR = "fusion.not_fused"
CALIBRATED_ATTR = "fusion.calibrated"


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Partition every function into fusion groups (one kernel each).

    Options: ``dims`` binds symbolic sizes for the cost model (``"N=1024,D=768"``,
    256 each by default); ``device`` names the cost model's device model (``gpu-h200``,
    the default, or ``cpu-2core``: ``cost.DEVICES``); ``max_live`` bounds the
    values a kernel holds at once (``live.py``), ``max_depth`` its chains of
    dependent ops (``depth.py``), ``max_inputs`` its inputs; ``disable_rules`` names
    rules of ``rules.RULES`` that join no groups; ``calibration`` gives factors
    ``measured / predicted`` of kernel times by kind (``calibration.py``), which the
    driver reads from measurements; ``library``: whether matmul groups may run as calls
    of the target's GEMM library (``select-strategy``'s option: the driver passes False
    where none is installed or ``--matmul generated`` forces fusec's kernels), which
    decides whether sibling matmuls are worth one group.

        fusec-opt f.mlir -p 'fuse{dims="N=1024,D=768" device=cpu-2core max-live=16}'
        fusec-opt f.mlir -p 'fuse{disable-rules="matmul_epilogue,attention"}'
        fusec-opt f.mlir -p 'fuse{calibration="reduction=2.0,elementwise=0.5"}'

    A bad option value is refused when the pass is made, before any IR is read.
    """

    name = "fuse"

    dims: str = ""
    device: str = GPU_H200.name
    max_live: int = DEFAULT_MAX_LIVE
    max_depth: int = DEFAULT_MAX_DEPTH
    max_inputs: int = DEFAULT_MAX_INPUTS
    disable_rules: str = ""
    calibration: str = ""
    library: bool = True

    def __post_init__(self) -> None:
        self.options()  # raises ValueError, which fusec-opt reports as a usage error

    def options(self) -> FusionOptions:
        device = device_by_name(self.device)
        return FusionOptions(
            device=device if self.library else device.without_library(),
            dims=parse_dims(self.dims),
            max_live=self.max_live,
            max_depth=self.max_depth,
            max_inputs=self.max_inputs,
            disabled_rules=parse_rule_names(self.disable_rules),
            calibration=Calibration(parse_factors(self.calibration)),
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_module(op, self.options())


@dataclass(frozen=True)
class NoFusePass(ModulePass):
    """One fusion group per op: the unfused baseline (constants cloned in)."""

    name = "no-fuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_module(op, FusionOptions(enabled=False))


def fuse_module(module: ModuleOp, options: FusionOptions) -> dict[str, Plan]:
    """Fuse every function with a body that holds no fusion group yet; the plans by
    function name."""
    plans: dict[str, Plan] = {}
    for fn in list(module.ops):
        if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
            continue
        if any(isinstance(o, graph.FusionGroupOp) for o in fn.body.block.ops):
            continue
        plans[fn.sym_name.data] = fuse_function(fn, options)
    return plans


def fuse_function(fn: func.FuncOp, options: FusionOptions) -> Plan:
    rewriter = PatternRewriter(fn)
    _retarget_dim_sizes(fn, rewriter)
    g = FuncGraph.build(fn)
    plan = plan_function(g, options)
    emit(plan, rewriter)
    fn.attributes[NOT_FUSED_ATTR] = records_attr(plan.not_fused_records())
    if plan.calibrated:
        fn.attributes[CALIBRATED_ATTR] = records_attr(plan.calibrated_records())
    return plan


def records_attr(records: list[dict[str, str]]) -> ArrayAttr:
    """Records of strings as a function attribute (``fusion.not_fused``, ``fusion.calibrated``,
    ``strategy.calibrated``); ``function_records`` reads them back."""
    return ArrayAttr([DictionaryAttr({k: StringAttr(v) for k, v in record.items()}) for record in records])


def not_fused_reasons(fn: func.FuncOp) -> list[dict[str, str]]:
    """The ``fusion.not_fused`` records of a fused function (empty when absent)."""
    return function_records(fn, NOT_FUSED_ATTR)


def calibrated_decisions(fn: func.FuncOp) -> list[dict[str, str]]:
    """The ``fusion.calibrated`` records of a fused function (empty when absent)."""
    return function_records(fn, CALIBRATED_ATTR)


def function_records(fn: func.FuncOp, name: str) -> list[dict[str, str]]:
    attr = fn.attributes.get(name)
    if not isinstance(attr, ArrayAttr):
        return []
    records = []
    for entry in attr.data:
        assert isinstance(entry, DictionaryAttr)
        records.append({k: v.data for k, v in entry.data.items() if isinstance(v, StringAttr)})
    return records


def _retarget_dim_sizes(fn: func.FuncOp, rewriter: PatternRewriter) -> None:
    """Make ``graph.dim_size`` read a function argument (or become a constant) so
    that cloning it into a group adds no dependence on another group: a static size
    is a constant, a symbolic one is read from an argument that has it."""
    block = fn.body.block
    named: dict[str, tuple[BlockArgument, int]] = {}
    for arg in block.args:
        try:
            shape = shape_of(arg.type)
        except AssertionError:
            continue
        for axis, d in enumerate(shape):
            if isinstance(d, str) and d not in named:
                named[d] = (arg, axis)
    for op in list(block.ops):
        if not isinstance(op, graph.DimSizeOp) or isinstance(op.input, BlockArgument):
            continue
        d = shape_of(op.input.type)[op.index.value.data]
        dtype = dtype_of(op.result.type)
        if isinstance(d, int):
            rewriter.replace(op, graph.ConstantOp.scalar(d, dtype))
        elif d in named:
            arg, axis = named[d]
            rewriter.replace(op, graph.DimSizeOp(arg, axis, dtype))
        elif all(n in named for n in Size.of(d).names):
            # a derived size no argument has (A*B of a reshape, the count of a mean of
            # it): the product of its names' sizes, read from the arguments that have them
            size = Size.of(d)
            ops: list[Operation] = [graph.DimSizeOp(*named[n], dtype) for n in size.names]
            product = ops[0].results[0]
            for factor in ops[1:]:
                ops.append(graph.MulOp(product, factor.results[0]))
                product = ops[-1].results[0]
            if size.factor.numerator != 1:
                ops += [scale := graph.ConstantOp.scalar(size.factor.numerator, dtype), graph.MulOp(product, scale)]
                product = ops[-1].results[0]
            if size.factor.denominator != 1:  # whole when the program runs (dialects/sizes.py)
                divide = graph.DivOp if is_float(op.result.type) else graph.FloordivOp
                ops += [scale := graph.ConstantOp.scalar(size.factor.denominator, dtype), divide(product, scale)]
                product = ops[-1].results[0]
            rewriter.replace(op, ops, [product])


def emit(plan: Plan, rewriter: PatternRewriter) -> None:
    """Build the plan's fusion groups before the function's terminator and erase the
    original ops."""
    g = plan.graph
    terminator = g.block.last_op
    assert terminator is not None
    position = {op: n for n, op in enumerate(g.block.ops)}
    for grp in plan.groups:
        io = g.io(grp.ops)
        io.outputs = with_checked_values(g.group_ops(grp.ops), io.outputs)
        _sort_inputs(io, position)
        body = Block(arg_types=[v.type for v in io.inputs])
        mapping: dict[SSAValue, SSAValue] = {}
        for value, arg in zip(io.inputs, body.args):
            mapping[value] = arg
            if value.name_hint:
                arg.name_hint = value.name_hint
        for op in io.free_ops:
            body.add_op(op.clone(value_mapper=mapping))
        for op in g.group_ops(grp.ops):
            body.add_op(op.clone(value_mapper=mapping))
        body.add_op(graph.YieldOp(*[mapping[v] for v in io.outputs]))
        group_op = graph.FusionGroupOp(
            io.inputs,
            [v.type for v in io.outputs],
            Region(body),
            kernel=grp.kernel,
            kind=grp.kind.written,
            rule=grp.rule,
            pattern=grp.pattern or None,
        )
        rewriter.insert(group_op, InsertPoint.before(terminator))
        position[group_op] = len(position)
        for old, new in zip(io.outputs, group_op.results):
            if old.name_hint:
                new.name_hint = old.name_hint
            rewriter.replace_all_uses_with(old, new)
    for op in reversed(g.ops):
        rewriter.erase(op)
    for op in reversed(g.free_ops):
        if all(not r.uses for r in op.results):
            rewriter.erase(op)


def _sort_inputs(io, position: dict[Operation, int]) -> None:
    """Order a group's inputs as they are defined (``position``: of the ops in the
    block): arguments first, in order."""

    def key(value: SSAValue) -> tuple[int, int, int]:
        if isinstance(value, BlockArgument):
            return (0, value.index, 0)
        assert isinstance(value, OpResult)
        return (1, position.get(value.op, -1), value.index)

    pairs = sorted(zip(io.inputs, io.shape_only), key=lambda p: key(p[0]))
    io.inputs = [v for v, _ in pairs]
    io.shape_only = [s for _, s in pairs]
