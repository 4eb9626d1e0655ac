"""One part of an aten graph as a `.tdsl` program (docs/pytorch.md): its inputs the
parameters of `fn main`, each node a statement written by its rule in `aten_table.py`,
the values used after the part its results. The types come from the fake tensors Dynamo
traced; a dynamic dimension is a size name (`s0` is `S0`)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx import GraphModule, Node

from compiler.pytorch.aten_table import ATEN_TABLE, DTYPES, Operands, Unsupported, size_text, value_of

#: PyTorch's device types whose tensors fusec runs (a part's target follows its inputs')
TORCH_DEVICES = frozenset({"cpu", "cuda"})


def tensor_type(value: Any, names: dict[str, str]) -> str:
    """A fake tensor's `.tdsl` type: `f32[4, S0]`, or `f32` for a scalar."""
    if not isinstance(value, torch.Tensor):
        raise Unsupported(f"a value that is not a tensor ({type(value).__name__})")
    if value.dtype not in DTYPES:
        raise Unsupported(f"the dtype {value.dtype}, which fusec does not have")
    if value.dim() == 0:
        return DTYPES[value.dtype]
    return f"{DTYPES[value.dtype]}[{', '.join(size_text(s, names) for s in value.shape)}]"


def unsupported_reason(node: Node) -> str | None:
    """Why `node` cannot be translated on its own (its op, its dtypes, its arguments),
    or None. A rule's own reasons show when the part is written (`translate`)."""
    if node.op != "call_function":
        return None if node.op in ("placeholder", "output", "get_attr") else f"a {node.op} node"
    if node.target is operator.getitem:
        source = node.args[0]
        return None if isinstance(source, Node) and source.target in ATEN_TABLE else "a part of an unsupported result"
    if node.target not in ATEN_TABLE:
        return f"{node.target} is not in fusec's table (docs/pytorch.md)"
    values = value_of(node)
    # (the parts of a result of several a node does not give, a norm's saved statistics,
    # may be empty: their getitems are not translated)
    operands = [value_of(a) for a in node.all_input_nodes]
    for value in [*operands, *([] if isinstance(values, (tuple, list)) else [values])]:
        if isinstance(value, torch.Tensor) and any(isinstance(d, int) and d == 0 for d in value.shape):
            return "an empty tensor (a dimension of 0, which fusec's types do not have)"
        if isinstance(value, torch.Tensor) and value.dtype not in DTYPES:
            return f"the dtype {value.dtype}, which fusec does not have"
        if isinstance(value, torch.Tensor) and value.device.type not in TORCH_DEVICES:
            return f"a tensor on {value.device}"
    try:
        write(node, _Trial(), {})
    except Unsupported as error:
        return str(error)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        return f"arguments fusec does not translate ({type(error).__name__}: {error})"
    return None


class _Trial(dict):
    """Expressions of a node's operands while asking whether it translates: a stand-in
    name for each."""

    def __getitem__(self, node: Node) -> str:
        return f"%{node.name}"


def write(node: Node, expressions: dict[Node, Any], names: dict[str, str]) -> Any:
    """The expression (or expressions, per result) of a call node."""
    if node.target is operator.getitem:
        source, index = node.args
        assert isinstance(source, Node) and isinstance(index, int), node.args
        parts = expressions[source]
        if not isinstance(parts, tuple) or parts[index] is None:  # type: ignore[index]
            raise Unsupported("a result fusec does not give (an index, a statistic)")
        return parts[index]  # type: ignore[index]
    return ATEN_TABLE[node.target].emit(Operands(node, expressions, names))


@dataclass(frozen=True)
class Translated:
    """A part as a program: its text, and its parameters and results in order."""

    source: str
    inputs: tuple[str, ...]  # the names of the part's placeholders that are its parameters
    outputs: int


def translate(part: GraphModule, name: str = "part") -> Translated:
    """The program of a part (a submodule the partitioner fused)."""
    names: dict[str, str] = {}
    expressions: dict[Node, Any] = {}
    params: list[str] = []
    statements: list[str] = []
    inputs: list[str] = []
    results: list[Any] = []
    for node in part.graph.nodes:
        if node.op == "placeholder":
            if isinstance(value_of(node), (int, torch.SymInt)):
                continue  # a dynamic size: the tensors' shapes bind it
            variable = f"a{len(params)}"
            params.append(f"{variable}: {tensor_type(value_of(node), names)}")
            inputs.append(node.name)
            expressions[node] = variable
        elif node.op == "call_function":
            value = write(node, expressions, names)
            if isinstance(value, tuple):  # several results: each used through a getitem
                expressions[node] = value
            else:
                variable = f"t{len(statements)}"
                statements.append(f"    {variable} = {value}")
                expressions[node] = variable
        elif node.op == "output":
            outs = node.args[0]
            results = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        else:
            raise Unsupported(f"a {node.op} node")
    types = [tensor_type(value_of(r), names) for r in results]
    returned = ", ".join(expressions[r] for r in results)
    header = f"fn main({', '.join(params)}) -> {types[0] if len(types) == 1 else '(' + ', '.join(types) + ')'} {{"
    source = "\n".join([f"# {name}: translated from PyTorch's aten graph by fusec.torch", header, *statements,
                        f"    return {returned}", "}", ""])  # fmt: skip
    return Translated(source, tuple(inputs), len(results))
