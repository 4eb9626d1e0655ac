"""``select-strategy``: how each matmul-bearing fusion group is lowered, by predicted time.

A group holding a matmul gets ``strategy`` (printed by ``--emit fused``, named in the
fusion report):

- ``generated``: one kernel fusec generates: a tiled GEMM applying the group's
  epilogue (bias, activation, residual, scale, output index map) before its store;
  for an attention group, one streaming (flash-style) kernel;
- ``library``: every matmul a call of the target's own GEMM library (NumPy's BLAS on
  the CPU, cuBLAS through CuPy on the GPU), operands read through strided views; the
  rest of the group runs as kernels between the calls (``split-library-groups``). An
  epilogue then costs one more write and read of the product; attention writes and
  reads its score matrix.

The predicted times, in the roofline of ``cost.DeviceModel``::

    generated = max(bytes / bandwidth, flops / rate) + launch
                (rate: gemm_generated; attention_generated for attention;
                 gemm_generated_siblings for sibling matmuls, which get no tiled GEMM)
    library   = sum over calls (flops / gemm_library + bytes / bandwidth + launch)
              + sum over the kernels between them (max(bytes / bandwidth, flops / flops) + launch)

where ``launch`` is ``DeviceModel.step_overhead``: on the GPU, what a kernel adds to a call
replayed as one CUDA graph (3 us), not the host's launch (20 us), which would charge the
library path's epilogue kernel a launch the replay never makes. The smaller wins where
``dims`` binds every size; a size left symbolic is judged at 256 and at 4096, and the
strategy least behind the best at either end wins (a program compiled once runs at any
size). A strategy the target lacks (``gemm_library = 0``, no
library; an ``attention_generated`` of 0, no fused attention kernel there) is chosen
only when it is the only one, and the library is not used where its temporaries grow
faster than the group's data and outgrow the device's memory at the large end (attention's
S x S scores). ``prefer`` forces one where the target has it. (On the GPU a library call is a
child graph of the call's CUDA graph, ``runtime/cuda/launch.py``, so it costs about what a
kernel node does: each group is judged alone.)

    %y = graph.fusion_group(%x, %w, %b) {kernel = "k0_matmul", kind = "matmul", strategy = "library"} ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import inf

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from dialects import graph
from dialects.group_kinds import GroupKind, GroupStrategy
from dialects.sizes import Size
from dialects.tensor_types import shape_of
from passes.fusion.calibration import MARGIN, Calibration, parse_factors
from passes.fusion.classify import is_free
from passes.fusion.cost import (
    DEFAULT_DIM,
    GPU_H200,
    DeviceModel,
    device_by_name,
    op_flops,
    parse_dims,
    value_bytes,
)
from passes.fusion.fuse import function_records, records_attr

#: the large end of the sizes a symbolic dimension is judged at (``size_scenarios``)
LARGE_DIM = 4096
#: the function attribute listing the strategies calibration chose against the model
CALIBRATED_ATTR = "strategy.calibrated"


# ---------------------------------------------------------------------------
# A group cut at its matmuls


@dataclass
class LibraryCall:
    """One matmul of a group run by the library: its operands are ``roots`` seen
    through ``chains`` (transposes and reshapes, outermost last)."""

    matmul: graph.MatmulOp
    roots: tuple[SSAValue, SSAValue]
    chains: tuple[list[Operation], list[Operation]]
    level: int


@dataclass
class KernelPart:
    """The group's other ops of one level: one kernel between library calls."""

    level: int
    ops: list[Operation] = field(default_factory=list)

    def inputs(self) -> list[SSAValue]:
        """Values the kernel reads from outside it (a free op it clones reads its own)."""
        inside = set(self.ops)
        found: dict[SSAValue, None] = {}

        def visit(v: SSAValue) -> None:
            owner = v.owner
            if isinstance(owner, Operation) and owner in inside:
                return
            if isinstance(owner, Operation) and is_free(owner):
                for w in owner.operands:
                    visit(w)
                return
            found[v] = None

        for op in self.ops:
            for v in op.operands:
                visit(v)
        return list(found)

    def outputs(self, yielded: set[SSAValue]) -> list[SSAValue]:
        inside = set(self.ops)
        return [
            r for op in self.ops for r in op.results
            if r in yielded or any(u.operation not in inside for u in r.uses)
        ]  # fmt: skip


def _chain(value: SSAValue, block: Block) -> tuple[SSAValue, list[Operation]]:
    """``value`` walked back through the layout ops of ``block``: (root, ops root-first)."""
    ops: list[Operation] = []
    while isinstance(value.owner, graph.TransposeOp | graph.ReshapeOp) and value.owner.parent_block() is block:
        ops.append(value.owner)
        value = value.owner.operands[0]
    return value, ops[::-1]


def split_at_matmuls(block: Block) -> list[LibraryCall | KernelPart]:
    """The group body ``block`` as library calls and kernels, in the order they run.

    A value's *level* is the number of library calls on its longest path from the
    group's inputs: a matmul is one more than its operands' roots, any other op the
    largest of its operands' (raised to its first reader's when no call reads it). The
    kernel of level L holds the ops of level L (free ops are cloned into it); it runs
    after the calls of level L and before those of L+1.
    Layout ops that only lead to a matmul operand become the call's strided views.
    """
    ops = [op for op in block.ops if not op.has_trait(IsTerminator)]
    terminator = block.last_op
    yielded = set(terminator.operands) if terminator is not None else set()
    calls: list[LibraryCall] = []
    chain_ops: set[Operation] = set()
    level: dict[SSAValue, int] = {}

    def level_of(v: SSAValue) -> int:
        return level.get(v, 0)

    for op in ops:
        if isinstance(op, graph.MatmulOp):
            (lhs, lhs_chain), (rhs, rhs_chain) = _chain(op.lhs, block), _chain(op.rhs, block)
            n = max(level_of(lhs), level_of(rhs)) + 1
            calls.append(LibraryCall(op, (lhs, rhs), (lhs_chain, rhs_chain), n))
            chain_ops.update(lhs_chain, rhs_chain)
            level[op.result] = n
        else:
            n = max((level_of(v) for v in op.operands), default=0)
            level.update((r, n) for r in op.results)
    roots = {r for c in calls for r in c.roots}
    # an op no call reads runs with its first reader: a bias broadcast joins its epilogue
    # rather than being written out by a kernel before the call
    for op in reversed(ops):
        if isinstance(op, graph.MatmulOp) or any(r in roots or r in yielded for r in op.results):
            continue
        readers = [level_of(u.operation.results[0]) for r in op.results for u in r.uses if u.operation.results]
        if readers:
            level.update((r, max(level_of(r), min(readers))) for r in op.results)
    parts: dict[int, KernelPart] = {}
    for op in ops:
        if isinstance(op, graph.MatmulOp):
            continue
        used_elsewhere = any(
            r in yielded
            or any(u.operation not in chain_ops and not isinstance(u.operation, graph.MatmulOp) for u in r.uses)
            for r in op.results
        )
        if op in chain_ops and not used_elsewhere:
            continue
        if is_free(op) and not any(r in roots for r in op.results):
            continue  # cloned into each kernel that reads it
        n = level_of(op.results[0])
        parts.setdefault(n, KernelPart(n)).ops.append(op)
    order: list[LibraryCall | KernelPart] = []
    for n in range(max([0, *(c.level for c in calls)]) + 1):
        order.extend(c for c in calls if c.level == n)
        if n in parts:
            order.append(parts[n])
    return order


# ---------------------------------------------------------------------------
# Predicted times


def _part_time(part: KernelPart, yielded: set[SSAValue], device: DeviceModel, dims: Mapping[str, int]) -> float:
    moved = sum(value_bytes(v, dims) for v in part.inputs()) + sum(value_bytes(v, dims) for v in part.outputs(yielded))
    return device.roofline(moved, sum(op_flops(op, dims) for op in part.ops)) + device.step_overhead


def _io_bytes(group: graph.FusionGroupOp, dims: Mapping[str, int]) -> int:
    return sum(value_bytes(v, dims) for v in group.inputs) + sum(value_bytes(r, dims) for r in group.outputs)


def library_temporaries(group: graph.FusionGroupOp, dims: Mapping[str, int]) -> int:
    """Bytes the library path writes to memory that the group does not output: its
    products and the results of the kernels between its calls."""
    block = group.body.block
    yielded = set(block.last_op.operands) if block.last_op is not None else set()
    steps = split_at_matmuls(block)
    made: list[SSAValue] = [step.matmul.result for step in steps if isinstance(step, LibraryCall)]
    made += [v for step in steps if isinstance(step, KernelPart) for v in step.outputs(yielded)]
    return sum(value_bytes(v, dims) for v in set(made) - yielded)


def library_outgrows_memory(
    group: graph.FusionGroupOp, device: DeviceModel, scenarios: Sequence[Mapping[str, int]]
) -> bool:
    """Whether the library path's temporaries no longer fit in the device's memory at
    the large end, where the group's data does: at bound sizes, or where they grow faster
    than the data (the scores of attention: S^2 against S). It would fail there where
    the generated kernel runs."""
    large = scenarios[-1]
    data, temporaries = _io_bytes(group, large), library_temporaries(group, large)
    if not device.memory or data + temporaries <= device.memory:
        return False
    if len(scenarios) < 2:
        return data <= device.memory  # bound sizes at which only the generated kernel fits
    small = scenarios[0]
    return temporaries / max(1, data) > 2 * library_temporaries(group, small) / max(1, _io_bytes(group, small))


def library_time(group: graph.FusionGroupOp, device: DeviceModel, dims: Mapping[str, int]) -> float:
    """Seconds of ``group`` as library calls and the kernels between them."""
    if device.gemm_library <= 0:
        return inf
    block = group.body.block
    yielded = set(block.last_op.operands) if block.last_op is not None else set()
    total = 0.0
    for step in split_at_matmuls(block):
        if isinstance(step, LibraryCall):
            product = value_bytes(step.matmul.result, dims)
            moved = product + sum(value_bytes(r, dims) for r in set(step.roots))
            # the product's write is not hidden behind the FLOPs when its K is short
            total += op_flops(step.matmul, dims) / device.gemm_library + moved / device.bandwidth
            total += device.step_overhead
        else:
            total += _part_time(step, yielded, device, dims)
    return total


def generated_time(group: graph.FusionGroupOp, device: DeviceModel, dims: Mapping[str, int]) -> float:
    """Seconds of ``group`` as one generated kernel (inf where the target has no fast
    kernel of its kind: ``attention_generated = 0``)."""
    block = group.body.block
    ops = [op for op in block.ops if not op.has_trait(IsTerminator)]
    if group.kind is GroupKind.ATTENTION:
        rate = device.attention_generated
    elif _generated_siblings(group):
        rate = device.gemm_generated_siblings
    else:
        rate = device.gemm_generated
    if rate <= 0:
        return inf
    matmul_flops = sum(op_flops(op, dims) for op in ops if isinstance(op, graph.MatmulOp))
    other_flops = sum(op_flops(op, dims) for op in ops if not isinstance(op, graph.MatmulOp))
    moved = _io_bytes(group, dims)
    compute = matmul_flops / rate + other_flops / device.flops
    return max(moved / device.bandwidth, compute) + device.step_overhead


def _generated_siblings(group: graph.FusionGroupOp) -> bool:
    """Whether a generated ``group`` is a kernel of sibling matmuls (no tiled GEMM)."""
    matmuls = sum(isinstance(op, graph.MatmulOp) for op in group.body.block.ops)
    return group.kind is not GroupKind.ATTENTION and matmuls > 1


def _factor_type(group: graph.FusionGroupOp) -> Attribute | None:
    """The element type of the first matmul's left factor in ``group``."""
    for op in group.body.block.ops:
        if isinstance(op, graph.MatmulOp) and isinstance(op.operands[0].type, TensorType):
            return op.operands[0].type.element_type
    return None


def predicted_times(
    group: graph.FusionGroupOp, device: DeviceModel, dims: Mapping[str, int]
) -> dict[GroupStrategy, float]:
    """Seconds of each strategy of a matmul-bearing group (inf: the target lacks it),
    at the rates of its matmuls' factors (``DeviceModel.for_factors``)."""
    device = device.for_factors(_factor_type(group))
    return {
        GroupStrategy.GENERATED: generated_time(group, device, dims),
        GroupStrategy.LIBRARY: library_time(group, device, dims),
    }


def choose(
    times: Mapping[GroupStrategy, float] | Sequence[Mapping[GroupStrategy, float]], prefer: str = "auto"
) -> GroupStrategy:
    """The strategy to use: ``prefer`` where the target has it, else the one whose
    time is least behind the best over the size scenarios (the fastest, with one),
    ``generated`` when the target has neither: it runs anywhere, if slowly."""
    scenarios = [times] if isinstance(times, Mapping) else list(times)
    if prefer in tuple(GroupStrategy) and all(t[GroupStrategy(prefer)] < inf for t in scenarios):
        return GroupStrategy(prefer)
    best = min(GroupStrategy, key=lambda s: regret(scenarios, s))  # a tie goes to the first, generated
    return best if regret(scenarios, best) < inf else GroupStrategy.GENERATED


def regret(scenarios: Sequence[Mapping[GroupStrategy, float]], strategy: GroupStrategy) -> float:
    """How far ``strategy`` is behind the best strategy, at the scenario where it is furthest."""
    return max(t[strategy] - min(t.values()) for t in scenarios)


def size_scenarios(group: graph.FusionGroupOp, dims: Mapping[str, int]) -> list[dict[str, int]]:
    """The bindings a group's strategy is judged under: ``dims`` when it binds every
    size the group's values have, else its unbound names at ``DEFAULT_DIM`` and at
    ``LARGE_DIM`` alike. Compiled once, the program runs at any size: the choice must
    not lose much at either end (a launch at small sizes, milliseconds at large ones)."""
    names: set[str] = set()
    values = [*group.body.block.args, *(r for op in group.body.walk() for r in op.results)]
    for value in values:
        if isinstance(value.type, TensorType):
            names.update(n for d in shape_of(value.type) if isinstance(d, str) for n in Size.of(d).names)
    unbound = sorted(names - set(dims))
    if not unbound:
        return [dict(dims)]
    return [{**dims, **{n: size for n in unbound}} for size in (DEFAULT_DIM, LARGE_DIM)]


def scenario_times(
    group: graph.FusionGroupOp, device: DeviceModel, dims: Mapping[str, int]
) -> list[dict[GroupStrategy, float]]:
    """Each strategy's predicted seconds in each of the group's size scenarios, the
    library's infinite where its temporaries outgrow the device's memory
    (``library_outgrows_memory``)."""
    scenarios = size_scenarios(group, dims)
    times = [predicted_times(group, device, d) for d in scenarios]
    if library_outgrows_memory(group, device, scenarios) and all(t[GroupStrategy.GENERATED] < inf for t in times):
        times = [{**t, GroupStrategy.LIBRARY: inf} for t in times]
    return times


def choose_for(
    group: graph.FusionGroupOp, device: DeviceModel, dims: Mapping[str, int], prefer: str = "auto"
) -> GroupStrategy:
    """``choose`` over the group's size scenarios (``scenario_times``)."""
    return choose(scenario_times(group, device, dims), prefer)


def calibrated_choice(
    group: graph.FusionGroupOp,
    device: DeviceModel,
    dims: Mapping[str, int],
    calibration: Calibration,
    prefer: str = "auto",
) -> tuple[GroupStrategy, str | None]:
    """The strategy by the model's times, or by the times corrected with the factors
    calibration measured on this machine for the group's kind under each strategy
    (``matmul:generated``, ``matmul:library``) where the two differ and the corrected
    choice's lead, in regret over the scenarios, exceeds ``MARGIN`` of the model's
    choice's corrected time; with the decision described where calibration changed it."""
    times = scenario_times(group, device, dims)
    model = choose(times, prefer)
    kind = group.kind or GroupKind.MATMUL
    corrected = [{s: t * calibration.factor(kind, s) for s, t in ts.items()} for ts in times]
    best = choose(corrected, prefer)
    if best is model:
        return model, None
    at = max(range(len(times)), key=lambda i: corrected[i][model])  # the scenario the choice weighs most
    if regret(corrected, model) - regret(corrected, best) <= MARGIN * corrected[at][model]:
        return model, None
    m, c = times[at], corrected[at]
    decision = (
        f"calibration chose {best} for {group.kernel_name}: model {model} {m[model] * 1e6:.3f} us "
        f"({best} {m[best] * 1e6:.3f} us), calibrated {best} {c[best] * 1e6:.3f} us "
        f"({model} {c[model] * 1e6:.3f} us), margin {MARGIN:.0%}"
    )
    return best, decision


def calibrated_strategies(fn: func.FuncOp) -> list[dict[str, str]]:
    """The ``strategy.calibrated`` records of a function (``{kernel, decision}``; empty
    when calibration changed no strategy)."""
    return function_records(fn, CALIBRATED_ATTR)


def has_matmul(group: graph.FusionGroupOp) -> bool:
    return any(isinstance(op, graph.MatmulOp) for op in group.body.block.ops)


@dataclass(frozen=True)
class SelectStrategyPass(ModulePass):
    """Sets ``strategy`` on every fusion group holding a matmul (see the module doc).

    Options: ``device`` and ``dims`` as ``fuse``'s; ``library``: whether the target's
    GEMM library can be called (the driver knows: NumPy always, CuPy on a real GPU);
    ``prefer``: ``auto``, ``library`` or ``generated``.

        fusec-opt f.mlir -p 'fuse{device=cpu-2core},select-strategy{device=cpu-2core prefer=library}'
    """

    name = "select-strategy"

    device: str = GPU_H200.name
    dims: str = ""
    library: bool = True
    prefer: str = "auto"
    calibration: str = ""

    def __post_init__(self) -> None:
        self.settings()  # raises ValueError, which fusec-opt reports as a usage error

    def settings(self) -> tuple[DeviceModel, dict[str, int], Calibration]:
        if self.prefer not in ("auto", *GroupStrategy):
            raise ValueError(f"select-strategy: prefer must be auto, {' or '.join(GroupStrategy)}, not {self.prefer!r}")
        device = device_by_name(self.device)
        calibration = Calibration(parse_factors(self.calibration))
        return (device if self.library else device.without_library()), parse_dims(self.dims), calibration

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        device, dims, calibration = self.settings()
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or fn.is_declaration:
                continue
            records = []
            for group in fn.body.block.ops:
                if isinstance(group, graph.FusionGroupOp) and has_matmul(group):
                    group.strategy, decision = calibrated_choice(group, device, dims, calibration, self.prefer)
                    if decision is not None:
                        records.append({"kernel": group.kernel_name or "", "decision": decision})
            if records:
                fn.attributes[CALIBRATED_ATTR] = records_attr(records)


def strategy_report(group: graph.FusionGroupOp, device: DeviceModel, dims: Mapping[str, int]) -> dict[str, object]:
    """The report's fields of a matmul-bearing group: its strategy and each one's
    predicted microseconds (None where the target lacks it)."""
    times = predicted_times(group, device, dims)
    return {
        "strategy": (group.strategy or choose_for(group, device, dims)).value,
        "strategies_us": {s.value: (t * 1e6 if t < inf else None) for s, t in times.items()},
    }


__all__: Sequence[str] = [
    "KernelPart",
    "LibraryCall",
    "SelectStrategyPass",
    "calibrated_choice",
    "calibrated_strategies",
    "choose",
    "choose_for",
    "has_matmul",
    "predicted_times",
    "split_at_matmuls",
    "strategy_report",
]
