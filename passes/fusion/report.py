"""The fusion report (docs/reference.md, "The fusion report"), computed from a fused module.

    fusion_report(fused, unfused, device, dims, entry=None, calibration=None) -> dict

``fused`` is the module after ``fuse``; ``unfused`` is the module before it (graph
ops, or the output of ``no-fuse``), a dict of counts ``{"kernels": N, "bytes": B,
"ops": N}``, or None (then every compute op of ``fused`` counts as a kernel of its
own, which is what ``no-fuse`` would give). The driver adds ``entry``, ``target``
and ``bench``. Keys:

- ``ops``: compute ops after the rewrites (constants, ``dim_size`` and broadcasts
  of constants are free: they are cloned into kernels, not run as kernels);
- ``kernels`` / ``kernels_unfused``: kernels launched with and without fusion;
- ``bytes_fused`` / ``bytes_unfused``: global-memory bytes of every kernel's
  inputs and outputs (each read once, written once); merging kernels only removes
  traffic, so ``bytes_fused <= bytes_unfused`` always;
- ``groups``: ``{kernel, ops, kind, bytes, predicted_us, corrected_us, measured_us:
  None}`` per kernel in launch order, plus ``rule``, ``pattern``, ``flops``, ``inputs``,
  ``outputs``; ``corrected_us`` is ``predicted_us`` corrected by ``calibration``
  (``calibration.py``), and with a calibration each group has its ``signature``,
  the key its measurement is kept under; a group holding a matmul adds ``strategy``
  (``generated`` | ``library``, see ``strategy.py``) and ``strategies_us``, each
  strategy's predicted time (None where the target lacks it); its ``predicted_us`` is
  that of its strategy;
- ``not_fused``: ``{producer, consumer, reason}`` for every edge left between two
  kernels, read from the functions' ``fusion.not_fused`` attribute;
- ``calibrated``: ``{first, second, decision}`` for every merge decision calibration
  changed (``fuse.calibrated_decisions``), empty without one.

Op labels are ``<short op name>_<position>``, the position counting the compute ops
of the function in the fused program's order (``op_labels``), the same labels the
``fuse`` pass wrote in ``fusion.not_fused``. With several functions reported, labels
are prefixed with ``<function>/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import IsTerminator

from dialects import graph
from dialects.group_kinds import GroupKind
from passes.fusion.calibration import Calibration, kernel_signature
from passes.fusion.classify import is_free, short_name
from passes.fusion.cost import (
    GPU_H200,
    DeviceModel,
    group_flops,
    parse_dims,
    value_bytes,
)
from passes.fusion.fuse import calibrated_decisions, not_fused_reasons
from passes.fusion.graph_view import ROW_KINDS
from passes.fusion.select_strategy import calibrated_strategies, has_matmul, strategy_report


def entry_functions(module: ModuleOp, entry: str | None = None) -> list[func.FuncOp]:
    """The functions a report covers: ``entry``; else the only function, else
    ``main``, else all of them."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    if entry is not None:
        chosen = [f for f in funcs if f.sym_name.data == entry]
        if not chosen:
            raise KeyError(f"no function @{entry} in the module")
        return chosen
    if len(funcs) == 1:
        return funcs
    mains = [f for f in funcs if f.sym_name.data == "main"]
    return mains or funcs


def _compute_ops(block: Block) -> list[Operation]:
    return [op for op in block.ops if not op.has_trait(IsTerminator) and not is_free(op)]


def op_labels(fn: func.FuncOp) -> dict[Operation, str]:
    """Labels of a fused function's compute ops, in program order, ops inside
    fusion groups included (the groups themselves are not labelled)."""
    labels: dict[Operation, str] = {}
    for op in _compute_ops(fn.body.block):
        inner = _compute_ops(op.body.block) if isinstance(op, graph.FusionGroupOp) else [op]
        for o in inner:
            labels[o] = f"{short_name(o)}_{len(labels)}"
    return labels


def _shape_only(arg: BlockArgument) -> bool:
    """A group input read only through ``graph.dim_size``, or not read at all (it gives
    the kernel a size), moves no bytes."""
    return all(isinstance(u.operation, graph.DimSizeOp) for u in arg.uses)


def group_stats(group: graph.FusionGroupOp, device: DeviceModel, dims: Mapping[str, int]) -> dict[str, Any]:
    """Bytes, FLOPs and predicted time of one fusion group."""
    block = group.body.block
    inputs = [v for v, arg in zip(group.inputs, block.args) if not _shape_only(arg)]
    moved = sum(value_bytes(v, dims) for v in inputs) + sum(value_bytes(r, dims) for r in group.outputs)
    terminator = block.last_op
    yielded = set(terminator.operands) if terminator is not None else set()
    ops = [op for op in block.ops if not op.has_trait(IsTerminator)]
    kind = group.kind or GroupKind.ELEMENTWISE
    flops, _ = group_flops(ops, lambda v: v in yielded, kind in ROW_KINDS, dims)
    return {
        "bytes": int(moved),
        "flops": float(flops),
        "predicted_us": device.time(moved, flops) * 1e6,
        "inputs": len(inputs),
        "outputs": len(group.outputs),
    }


def _op_as_kernel(op: Operation, dims: Mapping[str, int]) -> tuple[int, float]:
    """(bytes, FLOPs) of one compute op run as a kernel of its own."""
    seen: set[SSAValue] = set()
    moved = 0
    for v in op.operands:
        owner = v.owner
        if v in seen or (isinstance(owner, Operation) and is_free(owner)):
            continue
        if isinstance(owner, Operation) and isinstance(owner, graph.DimSizeOp):
            continue
        seen.add(v)
        moved += value_bytes(v, dims)
    moved += sum(value_bytes(r, dims) for r in op.results)
    return moved, 0.0


def unfused_counts(module: ModuleOp, dims: Mapping[str, int], entry: str | None = None) -> dict[str, int]:
    """Kernels and bytes of ``module`` run one compute op per kernel. ``module`` may
    be unfused graph IR, the output of ``no-fuse`` or of ``fuse`` (whose groups are
    looked into: the count is that of its ops)."""
    kernels = 0
    moved = 0
    for fn in entry_functions(module, entry):
        for op in _compute_ops(fn.body.block):
            inner = _compute_ops(op.body.block) if isinstance(op, graph.FusionGroupOp) else [op]
            for o in inner:
                kernels += 1
                moved += _op_as_kernel(o, dims)[0]
    return {"kernels": kernels, "bytes": moved, "ops": kernels}


def fusion_report(
    fused_module: ModuleOp,
    unfused_module_or_counts: ModuleOp | Mapping[str, int] | None = None,
    device: DeviceModel = GPU_H200,
    dims: Mapping[str, int] | str | None = None,
    entry: str | None = None,
    calibration: Calibration | None = None,
) -> dict[str, Any]:
    """The fusion report for ``entry`` (see the module docstring)."""
    dims = parse_dims(dims)
    functions = entry_functions(fused_module, entry)
    prefix = len(functions) > 1
    groups: list[dict[str, Any]] = []
    not_fused: list[dict[str, str]] = []
    calibrated: list[dict[str, str]] = []
    kernels = 0
    bytes_fused = 0
    for fn in functions:
        labels = op_labels(fn)
        tag = f"{fn.sym_name.data}/" if prefix else ""
        for op in _compute_ops(fn.body.block):
            if isinstance(op, graph.FusionGroupOp):
                stats = group_stats(op, device, dims)
                entry_ops = [tag + labels[o] for o in _compute_ops(op.body.block)]
                record = {
                    "kernel": tag + (op.kernel_name or f"k{kernels}"),
                    "ops": entry_ops,
                    "kind": (op.kind or GroupKind.ELEMENTWISE).value,
                    "bytes": stats["bytes"],
                    "predicted_us": stats["predicted_us"],
                    "corrected_us": None,  # below, once predicted_us is final
                    "measured_us": None,
                    "rule": op.rule.data if op.rule is not None else "none",
                    "flops": stats["flops"],
                    "inputs": stats["inputs"],
                    "outputs": stats["outputs"],
                }
                if op.pattern is not None:
                    record["pattern"] = op.pattern.data
                if has_matmul(op):
                    record.update(strategy_report(op, device, dims))
                    chosen = record["strategies_us"][record["strategy"]]
                    if chosen is not None:
                        record["predicted_us"] = chosen
                if calibration is not None:
                    record["signature"] = kernel_signature(op, dims)
            else:  # an op outside any group (a module that was not fused)
                moved, _ = _op_as_kernel(op, dims)
                record = {
                    "kernel": f"{tag}k{kernels}_{short_name(op)}",
                    "ops": [tag + labels[op]],
                    "kind": GroupKind.OPAQUE.value,
                    "bytes": moved,
                    "predicted_us": device.time(moved, 0.0) * 1e6,
                    "corrected_us": None,
                    "measured_us": None,
                    "rule": "none",
                }
            record["corrected_us"] = (
                calibration.corrected_us(
                    record["kind"], record["predicted_us"], record.get("signature"), record.get("strategy")
                )
                if calibration is not None
                else record["predicted_us"]
            )
            groups.append(record)
            kernels += 1
            bytes_fused += record["bytes"]
        for r in not_fused_reasons(fn):
            not_fused.append({"producer": tag + r["producer"], "consumer": tag + r["consumer"], "reason": r["reason"]})
        for r in calibrated_decisions(fn):
            calibrated.append({"first": tag + r["first"], "second": tag + r["second"], "decision": r["decision"]})
        for r in calibrated_strategies(fn):
            calibrated.append({"kernel": tag + r["kernel"], "decision": r["decision"]})

    if unfused_module_or_counts is None:
        unfused = unfused_counts(fused_module, dims, entry)
    elif isinstance(unfused_module_or_counts, ModuleOp):
        unfused = unfused_counts(unfused_module_or_counts, dims, entry)
    else:
        unfused = dict(unfused_module_or_counts)
    ops = unfused.get("ops")
    if ops is None:
        ops = unfused_counts(fused_module, dims, entry)["ops"]
    return {
        "ops": int(ops),
        "kernels": kernels,
        "kernels_unfused": int(unfused["kernels"]),
        "bytes_unfused": int(unfused["bytes"]),
        "bytes_fused": int(bytes_fused),
        "device": device.name,
        "groups": groups,
        "not_fused": not_fused,
        "calibrated": calibrated,
    }
