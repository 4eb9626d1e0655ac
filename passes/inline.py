"""``inline``: every call to a user function is replaced by the function's body.

Fusion works inside one function, so the calls of a program (``split_heads``,
``attention``, ``ffn`` of the transformer block) are inlined first, recursively, and
the functions nothing calls any more are dropped.

A callee's symbolic sizes are its own names: ``fn f(x: f32[N])`` called on a
``f32[T]`` (or a ``f32[8]``) computes with ``N = T`` (``N = 8``). The inlined body's
types are renamed accordingly, by matching the callee's parameter types against the
call's operand types, so every type in the caller speaks of the caller's sizes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from dialects.tensor_types import Dim, shape_of, tensor_type


def bind_sizes(params: Sequence[Attribute], args: Sequence[Attribute]) -> dict[str, Dim] | None:
    """The callee's size names -> the caller's sizes, from the parameter types and the
    call's operand types; None when they do not match (another dtype or rank, a static
    size that differs, a name bound to two different sizes)."""
    sizes: dict[str, Dim] = {}
    for param, arg in zip(params, args, strict=True):
        if param == arg:
            continue
        if not isinstance(param, TensorType) or not isinstance(arg, TensorType):
            return None
        if param.element_type != arg.element_type or len(param.get_shape()) != len(arg.get_shape()):
            return None
        for p, a in zip(shape_of(param), shape_of(arg)):
            if isinstance(p, str):
                if sizes.setdefault(p, a) != a:
                    return None
            elif p != a:
                return None
    return sizes


def rename_sizes(type_: Attribute, sizes: dict[str, Dim]) -> Attribute:
    """``type_`` with its size names replaced as ``sizes`` says."""
    if not sizes or not isinstance(type_, TensorType):
        return type_
    shape = shape_of(type_)
    renamed = tuple(sizes.get(d, d) if isinstance(d, str) else d for d in shape)
    return type_ if renamed == shape else tensor_type(type_.element_type, renamed)


def _rename_block_sizes(block: Block, sizes: dict[str, Dim]) -> None:
    """Renames the sizes in the type of every value defined in ``block`` and below."""
    for op in block.walk():
        values = [*op.results, *(arg for region in op.regions for b in region.blocks for arg in b.args)]
        for value in values:
            if (renamed := rename_sizes(value.type, sizes)) != value.type:
                Rewriter.replace_value_with_new_type(value, renamed)


def _callees(function: func.FuncOp) -> set[str]:
    return {op.callee.root_reference.data for op in function.walk() if isinstance(op, func.CallOp)}


def _reachable(call_graph: dict[str, set[str]], roots: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    stack = [r for r in roots if r in call_graph]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(c for c in call_graph[name] if c in call_graph)
    return seen


class InlineCall(RewritePattern):
    """call @f(a...) = f's body with its parameters bound to a... and its size names
    renamed to the caller's; the values f returns replace the call's results."""

    def __init__(self, inlinable: set[str]):
        self.inlinable = inlinable

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        name = op.callee.root_reference.data
        if name not in self.inlinable:
            return
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if not isinstance(callee, func.FuncOp):
            return
        sizes = bind_sizes([a.type for a in callee.body.block.args], [a.type for a in op.arguments])
        if sizes is None:
            return
        outputs = [rename_sizes(t, sizes) for t in callee.function_type.outputs.data]
        if outputs != [r.type for r in op.results]:
            return
        body = callee.body.clone()
        block = body.block
        _rename_block_sizes(block, sizes)
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        # a returned parameter is the call's operand: inline_block rebinds the uses of
        # the block's arguments, not this list
        bound = dict(zip(block.args, op.arguments))
        returned = [bound.get(v, v) for v in ret.arguments]
        ret.detach()
        ret.erase()
        rewriter.inline_block(block, InsertPoint.before(op), op.arguments)
        rewriter.replace(op, [], returned)


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inlines every call to a function of the module (not recursive ones), then keeps
    only the functions the program still needs: those reachable from ``entry`` by
    calls, or where there is no function ``entry``, those reachable from a public one
    (private functions nothing calls any more are dropped)."""

    name = "inline"

    entry: str = "main"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.body.block.ops if isinstance(f, func.FuncOp)}
        call_graph = {name: _callees(f) for name, f in functions.items()}
        inlinable = {
            name
            for name, f in functions.items()
            if not f.is_declaration
            and len(f.body.blocks) == 1
            and name not in _reachable(call_graph, call_graph[name])  # not recursive
        }
        PatternRewriteWalker(
            GreedyRewritePatternApplier([InlineCall(inlinable)], dce_enabled=False),
            apply_recursively=True,
        ).rewrite_module(op)

        call_graph = {name: _callees(f) for name, f in functions.items()}
        if self.entry in functions:
            roots = [self.entry]
        else:
            roots = [n for n, f in functions.items() if f.sym_visibility is None or f.sym_visibility.data != "private"]
        keep = _reachable(call_graph, roots)
        for name, function in functions.items():
            if name not in keep:
                function.detach()
                function.erase()
