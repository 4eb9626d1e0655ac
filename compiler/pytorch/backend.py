"""`torch.compile(model, backend="fusec")` and `fusec.torch.explain` (docs/pytorch.md).

Dynamo hands the backend an FX graph of torch calls; AOTAutograd turns it into aten ops
(functionalised, the composite ops PyTorch decomposes itself decomposed); PyTorch's
capability-based partitioner groups the nodes `aten_table.py` translates into parts; each
part with something to compute becomes a `.tdsl` program (`to_tdsl.py`) compiled by fusec
for the inputs' device, and the rest runs in eager. A part fusec cannot compile runs in
eager too, its reason kept for `explain`.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.fx import GraphModule, Node
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from compiler.pytorch.aten_table import ATEN_TABLE, Unsupported
from compiler.pytorch.fold_constants import fold_constants
from compiler.pytorch.to_tdsl import translate, unsupported_reason
from runtime import registry
from runtime.errors import FusecError, IndexOutOfRangeError

#: the prefix of the parts' submodules in the partitioned graph
PART_PREFIX = "fusec_part_"


@dataclass
class Part:
    """A part of a model that ran in fusec: its aten ops and its program."""

    name: str
    target: str
    ops: list[str]
    source: str
    program: Any = field(default=None, repr=False)  # the compiled program (`fusec.Program`)


@dataclass
class Report:
    """What a compile did, for `explain`: the parts compiled, and for each aten op left
    to eager, why and how often."""

    graphs: int = 0
    parts: list[Part] = field(default_factory=list)
    fallbacks: Counter = field(default_factory=Counter)  # (op, reason) -> nodes
    folded: Counter = field(default_factory=Counter)  # op -> nodes evaluated once, at compile
    inference_only: bool = False

    def __str__(self) -> str:
        lines = [
            (
                f"fusec.torch: {self.graphs} graph(s) from Dynamo, {len(self.parts)} part(s) compiled by fusec, "
                f"{sum(self.fallbacks.values())} aten op(s) left to eager"
            )
        ]
        if self.inference_only:
            lines.append("  gradients were wanted: fusec compiles inference only (torch.no_grad(), "
                         "torch.inference_mode()); the graph ran in eager")  # fmt: skip
        if self.folded:
            folded = ", ".join(f"{op} x{count}" for op, count in sorted(self.folded.items()))
            lines.append(f"  folded to constants (they read no input; computed once, at compile): {folded}")
        for (op, reason), count in sorted(self.fallbacks.items()):
            lines.append(f"  eager: {op} x{count}: {reason}")
        for part in self.parts:
            ops = Counter(part.ops)
            lines.append(f"\n{part.name} (fusec, {part.target}): " + ", ".join(f"{op} x{n}" for op, n in ops.items()))
            lines.append(part.source.rstrip())
        return "\n".join(lines)


class _Supported(OperatorSupportBase):
    """The table's answer per node, asked once: the partitioner asks again and again,
    and the report wants the reasons."""

    def __init__(self) -> None:
        super().__init__()
        self.reasons: dict[Node, str | None] = {}

    def reason(self, node: Node) -> str | None:
        if node not in self.reasons:
            self.reasons[node] = unsupported_reason(node)
        return self.reasons[node]

    def is_node_supported(self, submodules, node: Node) -> bool:
        return node.op == "call_function" and self.reason(node) is None


def _op_name(node: Node) -> str:
    if node.op != "call_function":
        return node.op
    return "getitem" if node.target is operator.getitem else str(node.target)


def _computes(nodes: Sequence[Node]) -> bool:
    """Whether a part has work for a kernel: a node whose rule computes (a view or a
    cast alone is left to eager, where it is free or one copy)."""
    return any(node.target in ATEN_TABLE and ATEN_TABLE[node.target].compute for node in nodes)


def _target(example_inputs: Sequence[Any]) -> str:
    """The target a part runs on: the GPU's where its first tensor is a CUDA tensor, else
    the host's (the registry names both)."""
    for value in example_inputs:
        if isinstance(value, torch.Tensor):
            return registry.gpu_target() if value.is_cuda else registry.host_target()
    return registry.host_target()


class IdOutOfRangeError(IndexOutOfRangeError, RuntimeError):
    """An id out of its table in a part's gather (`embedding`, `index_select`, indexing):
    eager raises `IndexError` for some (`embedding`, `index_select` along the first axis
    on the CPU) and `RuntimeError` for others (`index_select` along a later axis), so the
    door's error is both, and fusec's `IndexOutOfRangeError` still."""


class FusecPart(torch.nn.Module):
    """A part of the graph run by a fusec program on its tensor inputs (a dynamic size
    given as an argument is bound by the shapes, and dropped)."""

    def __init__(self, program: Any, tensors: Sequence[int], results: int):
        super().__init__()
        self.program = program
        self.tensors = tuple(tensors)
        self.single = results == 1
        self.run = program.main

    def forward(self, *args):
        try:
            return self._forward(*args)
        except IndexOutOfRangeError as error:
            raise IdOutOfRangeError(str(error)) from None

    def _forward(self, *args):
        arrays = [args[i] for i in self.tensors]
        if arrays and not arrays[0].is_cuda:
            results = self.run(*[_to_numpy(a) for a in arrays])
            results = _from_numpy(results) if self.single else tuple(map(_from_numpy, results))
        else:
            results = self.run(*[a if a.is_contiguous() else a.contiguous() for a in arrays])
        return results if self.single else tuple(results)  # as the fused submodule returned


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A CPU tensor as NumPy sees it, without a copy where it is contiguous (bf16 as
    ml_dtypes' bfloat16, which NumPy lacks)."""
    tensor = tensor.detach().contiguous()
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


def _from_numpy(array: Any) -> torch.Tensor:
    array = np.asarray(array)
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def compile_aten(graph: GraphModule, example_inputs: Sequence[Any], report: Report) -> Callable:
    """The aten graph partitioned: its translatable parts run by fusec, the rest eager."""
    from compiler.api import compile as compile_program

    report.graphs += 1
    target = _target(example_inputs)
    report.folded.update(_op_name(node) for node in fold_constants(graph))
    support = _Supported()
    partitioner = CapabilityBasedPartitioner(graph, support, allows_single_node_partition=True)
    parts = [p for p in partitioner.propose_partitions() if _computes(list(p.nodes))]
    in_parts = {node for p in parts for node in p.nodes}
    for node in graph.graph.nodes:
        if node.op == "call_function" and node not in in_parts:
            reason = support.reason(node) or "a view or a cast alone, no kernel's worth"
            report.fallbacks[_op_name(node), reason] += 1
    partitioned = partitioner.fuse_partitions(parts, prefix=PART_PREFIX)
    for name, module in list(partitioned.named_children()):
        if not name.startswith(PART_PREFIX) or not isinstance(module, GraphModule):
            continue
        ops = [_op_name(n) for n in module.graph.nodes if n.op == "call_function"]
        try:
            translated = translate(module, name)
            if not translated.inputs:  # (it would compute on the host, then copy)
                raise Unsupported("it reads no tensor (it makes constants of the graph)")
            program = compile_program(translated.source, target=target)
        except (Unsupported, FusecError) as error:
            for op in ops:
                report.fallbacks[op, f"its part stays in eager: {error}"] += 1
            continue
        placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
        tensors = [i for i, n in enumerate(placeholders) if n.name in translated.inputs]
        setattr(partitioned, name, FusecPart(program, tensors, translated.outputs))
        report.parts.append(Part(name, target, ops, translated.source, program))
    partitioned.recompile()
    return partitioned.forward


def _wants_gradients(example_inputs: Sequence[Any]) -> bool:
    return torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in example_inputs)


def backend(graph: GraphModule, example_inputs: Sequence[Any], report: Report | None = None) -> Callable:
    """The `torch.compile` backend named "fusec": inference graphs are compiled, a graph
    that needs gradients runs in eager (with a warning that says how to compile it)."""
    from torch._dynamo.backends.common import aot_autograd

    report = report if report is not None else Report()
    if _wants_gradients(example_inputs):
        report.inference_only = True
        warnings.warn(
            "fusec compiles inference only: run the model under torch.no_grad() or torch.inference_mode() "
            "(training through fusec is not supported yet); this graph runs in eager",
            stacklevel=2,
        )
        return graph.forward
    compiler = functools.partial(compile_aten, report=report)
    return aot_autograd(fw_compiler=compiler, decompositions={})(graph, example_inputs)


def explain(model: Callable, *inputs: Any, **named: Any) -> Report:
    """Compiles `model` with the fusec backend (without gradients) and runs it once on
    `inputs`: the report says which parts ran in fusec, as `.tdsl`, and which aten ops
    stayed in eager and why. `print(fusec.torch.explain(model, x))`."""
    import torch._dynamo

    report = Report()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=functools.partial(backend, report=report))
    with torch.no_grad():
        compiled(*inputs, **named)
    torch._dynamo.reset()
    return report
