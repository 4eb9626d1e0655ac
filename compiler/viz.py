"""``fusec --viz``: the fused graph as Graphviz dot.

Ops are nodes, each fusion group a ``subgraph cluster_*`` labelled with its kernel
name, bytes and predicted time (from the fusion report); edges are the data flow
between ops, across groups too. An edge the planner left between two kernels is
drawn red with its reason as tooltip and label. Function arguments and results are
ellipses; free ops (constants, ``dim_size``) are not drawn.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import IsTerminator

from compiler.cli_files import replacing, write_text
from dialects import graph
from dialects.group_kinds import GroupKind
from dialects.tensor_types import dtype_of, format_shape, shape_of
from passes.fusion.classify import is_free
from passes.fusion.report import entry_functions, op_labels

_KIND_COLORS = {
    GroupKind.ELEMENTWISE: "#4c78a8",
    GroupKind.INJECTIVE: "#72b7b2",
    GroupKind.REDUCTION: "#f58518",
    GroupKind.MATMUL: "#54a24b",
    GroupKind.CONV: "#88d27a",
    GroupKind.ATTENTION: "#b279a2",
    GroupKind.OPAQUE: "#9d755d",
}


def _q(text: str) -> str:
    """A dot string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _type_text(value: SSAValue) -> str:
    try:
        return f"{dtype_of(value.type)}{format_shape(shape_of(value.type))}"
    except (AssertionError, ValueError):
        return str(value.type)


def _format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def to_dot(fused_module: ModuleOp, report: Mapping[str, Any] | None = None, entry: str | None = None) -> str:
    """Graphviz dot of the fused functions the report covers."""
    report = report or {}
    groups_by_kernel = {g["kernel"]: g for g in report.get("groups", [])}
    reasons = {(n["producer"], n["consumer"]): n["reason"] for n in report.get("not_fused", [])}
    functions = entry_functions(fused_module, entry)
    prefix = len(functions) > 1
    lines = [
        "digraph fusec {",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8];',
    ]
    for fn in functions:
        lines += _function_lines(fn, f"{fn.sym_name.data}/" if prefix else "", groups_by_kernel, reasons)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _function_lines(
    fn: func.FuncOp, tag: str, groups_by_kernel: Mapping[str, Any], reasons: Mapping[tuple[str, str], str]
) -> list[str]:
    """The dot lines of one fused function, its nodes' names prefixed with ``tag``."""
    lines: list[str] = []
    fname = fn.sym_name.data
    labels = {op: tag + label for op, label in op_labels(fn).items()}
    node = {op: _q(label) for op, label in labels.items()}
    block = fn.body.block

    def arg_node(arg: BlockArgument) -> str:
        return _q(f"{tag}%{arg.name_hint or arg.index}")

    for arg in block.args:
        lines.append(
            f"  {arg_node(arg)} [shape=ellipse, label={_q(f'%{arg.name_hint or arg.index}: {_type_text(arg)}')}];"
        )

    # where each group result comes from inside its group
    yielded: dict[SSAValue, SSAValue] = {}
    # what each group's block argument stands for outside
    outer: dict[SSAValue, SSAValue] = {}
    for index, op in enumerate(o for o in block.ops if isinstance(o, graph.FusionGroupOp)):
        body = op.body.block
        terminator = body.last_op
        assert terminator is not None
        for result, value in zip(op.results, terminator.operands):
            yielded[result] = value
        for arg, value in zip(body.args, op.inputs):
            outer[arg] = value
        kernel = op.kernel_name or f"k{index}"
        stats = groups_by_kernel.get(tag + kernel, {})
        caption = kernel
        if stats:
            caption += f"\n{_format_bytes(stats['bytes'])}, {stats['predicted_us']:.1f} us"
        color = _KIND_COLORS.get(op.kind, "#888888") if op.kind else "#888888"
        lines.append(f"  subgraph {_q('cluster_' + tag + kernel)} {{")
        lines.append(f"    label={_q(caption)}; style=rounded; color={_q(color)}; fontname=\"Helvetica\";")
        for inner in body.ops:
            if inner.has_trait(IsTerminator) or is_free(inner) or inner not in node:
                continue
            text = f"{labels[inner]}\n{_type_text(inner.results[0])}" if inner.results else labels[inner]
            lines.append(f"    {node[inner]} [label={_q(text)}, color={_q(color)}];")
        lines.append("  }")
    for op in block.ops:
        if op in node and not isinstance(op, graph.FusionGroupOp):
            lines.append(f"  {node[op]} [label={_q(labels[op])}];")

    def source(value: SSAValue) -> str | None:
        """The node producing ``value`` (through group boundaries)."""
        for _ in range(64):
            if value in outer:
                value = outer[value]
                continue
            if value in yielded:
                value = yielded[value]
                continue
            break
        if isinstance(value, BlockArgument) and value.owner is block:
            return arg_node(value)
        if isinstance(value, OpResult) and value.op in node:
            return node[value.op]
        return None

    seen: set[tuple[str, str]] = set()

    def edge(src: str | None, dst: str, producer: Operation | None, consumer: Operation | None) -> None:
        if src is None or (src, dst) in seen:
            return
        seen.add((src, dst))
        reason = None
        if producer is not None and consumer is not None:
            reason = reasons.get((labels.get(producer, ""), labels.get(consumer, "")))
        if reason is not None:
            lines.append(
                f"  {src} -> {dst} [color=red, fontcolor=red, label={_q(_wrap(reason))}, tooltip={_q(reason)}];"
            )
        else:
            lines.append(f"  {src} -> {dst};")

    by_node = {n: op for op, n in node.items()}

    def producer_op(value: SSAValue) -> Operation | None:
        src = source(value)
        return by_node.get(src) if src is not None else None

    for consumer in node:
        for operand in consumer.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and is_free(owner):
                continue
            edge(source(operand), node[consumer], producer_op(operand), consumer)
    terminator = block.last_op
    if terminator is not None:
        ret = _q(f"{tag}return")
        lines.append(f"  {ret} [shape=ellipse, label={_q(fname + ' results')}];")
        for value in terminator.operands:
            edge(source(value), ret, None, None)
    return lines


def _wrap(text: str, width: int = 28) -> str:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    if line:
        lines.append(line)
    return "\n".join(lines)


def dot_path(path: str) -> Path:
    """Where `--viz path` keeps the dot text: `path` itself for `.dot`, else beside it."""
    target = Path(path)
    return target if target.suffix == ".dot" else target.with_suffix(".dot")


def write_viz(path: str, compilation, report: Mapping[str, Any]) -> str | None:
    """Writes the drawing to `path`: dot text for `.dot`, else rendered by Graphviz's
    `dot` (`.svg`, `.png`, ...), with the dot text beside it. A drawing that cannot be
    rendered (no Graphviz, a format it lacks) stops nothing: the dot text is kept and
    the reason returned, for the caller to warn with."""
    text = to_dot(compilation.module("fused"), report, compilation.options.entry)
    target, dot_file = Path(path), dot_path(path)
    write_text(dot_file, text)
    if target == dot_file:
        return None
    renderer = shutil.which("dot")
    if renderer is None:
        return f"--viz {target}: not drawn, Graphviz's `dot` is not installed; the graph is in {dot_file}"
    fmt = target.suffix.lstrip(".") or "svg"
    try:
        with replacing(target) as rendered:
            result = subprocess.run([renderer, f"-T{fmt}", str(dot_file), "-o", str(rendered)],
                                    check=False, capture_output=True, text=True)
            if result.returncode != 0:  # leaves `target` as it was
                raise _NotDrawn(" ".join(result.stderr.split()) or f"dot exited with status {result.returncode}")
    except _NotDrawn as error:
        return f"--viz {target}: not drawn ({error}); the graph is in {dot_file}"
    return None


class _NotDrawn(Exception):
    """Graphviz could not render the drawing; the message is its own."""
