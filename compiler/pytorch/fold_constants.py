"""The aten ops of a graph that read none of its inputs, evaluated once (docs/pytorch.md).

A model computes some tensors from its shapes alone: Hugging Face's decoders build the
positions (`arange`) and the causal mask (`arange`, `cumsum`, `ne`, `index`, `le`, `&`)
anew on every call, twelve-odd small eager launches around the compiled part. Their
values are the same on every call of the graph's shapes (Dynamo compiles a graph per set
of static shapes, and a dynamic size is an input, which such a node then reads), so each
is computed here once, by PyTorch itself, and the graph reads the result as a constant:
a call launches none of them, and the part that uses it takes it as one more input.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.fx import GraphModule, Node
from torch.fx.node import map_arg

#: the largest value kept as a constant: a folded tensor lives as long as the compiled
#: graph, where eager would make it and drop it each call
MAX_CONSTANT_BYTES = 16 << 20

#: the prefix of the folded values' attributes of the graph module
CONSTANT_PREFIX = "fusec_constant_"


def _foldable(node: Node) -> bool:
    """Whether a call gives the same value every time from the same operands: an aten
    op without side effects, random numbers or a mutated operand."""
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return False
    if torch.Tag.nondeterministic_seeded in target.tags:
        return False
    schema = target._schema
    writes = any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)
    return not schema.is_mutable and not writes


def _too_large(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.numel() * value.element_size() > MAX_CONSTANT_BYTES


def fold_constants(graph: GraphModule) -> list[Node]:
    """Replaces, in ``graph``, each value computed from no input (a chain of calls from
    literals and the module's constants) by a constant of the module; returns the call
    nodes folded (which a call no longer runs)."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    values: dict[Node, Any] = {}
    with unset_fake_temporarily():  # (AOTAutograd compiles under its fake mode: real values here)
        for node in graph.graph.nodes:
            if node.op == "get_attr":
                values[node] = getattr(graph, str(node.target))
            elif _foldable(node) and all(arg in values for arg in node.all_input_nodes):
                args = map_arg(node.args, values.__getitem__)
                kwargs = map_arg(node.kwargs, values.__getitem__)
                value = node.target(*args, **kwargs)  # type: ignore[operator]
                if not _too_large(value):  # (else its operands are the constants, it runs each call)
                    values[node] = value
    folded = [node for node in values if node.op == "call_function"]
    for node in folded:
        value = values[node]
        if all(user in values for user in node.users) or not isinstance(value, torch.Tensor):
            continue  # (only other folded nodes read it, or it is no tensor a graph holds)
        name = f"{CONSTANT_PREFIX}{node.name}"
        with unset_fake_temporarily():
            graph.register_buffer(name, value.contiguous())
        with graph.graph.inserting_before(node):
            constant = graph.graph.get_attr(name)
        constant.meta = {**node.meta, "val": getattr(graph, name)}
        node.replace_all_uses_with(constant)
    graph.graph.eliminate_dead_code()
    graph.recompile()
    live = set(graph.graph.nodes)
    return [node for node in folded if node not in live]
