"""``inline``: every call to a user function is replaced by the function's body.

Fusion works inside one function, so the calls of a program (``split_heads``,
``attention``, ``ffn`` of the transformer block) are inlined first, recursively, and
the functions nothing calls any more are dropped.

A callee's symbolic sizes are its own names: ``fn f(x: f32[N])`` called on a
``f32[T]`` (or a ``f32[8]``) computes with ``N = T`` (``N = 8``). The inlined body's
types are renamed accordingly, by matching the callee's parameter types against the
call's operand types, so every type in the caller speaks of the caller's sizes.

Inlining copies a callee once per call, so a call tree that doubles at each level
grows exponentially. Before copying anything the pass computes, for every function,
the number of operations inlining adds to it; where that exceeds ``max_inlined_ops``
it raises ``InlineSizeError`` naming the call that crosses the limit.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dialects import graph
from dialects.sizes import SizeError, is_derived, substitute
from dialects.tensor_types import Dim, shape_of, tensor_type

#: operations inlining may add to one function: about five times what the compile-time
#: goal covers (20,000 statements in seconds), far below what exhausts memory
DEFAULT_MAX_INLINED_OPS = 100_000


class InlineSizeError(Exception):
    """Inlining ``call`` would make its function hold more inlined operations than the
    limit; ``call.location`` says where the program makes it."""

    def __init__(self, call: func.CallOp, caller: str, added: int, limit: int):
        self.call = call
        self.callee = call.callee.root_reference.data
        self.caller = caller
        self.added = added
        self.limit = limit
        super().__init__(self.describe(self.callee, caller))

    def describe(self, callee: str, caller: str) -> str:
        """The message, with the functions called as the program calls them."""
        return (
            f"inlining this call of '{callee}' takes '{caller}' past the limit of {self.limit:,} "
            f"inlined operations (its calls would add {self.added:,}): the calls nest too deep "
            f"or too wide to inline"
        )


def bind_sizes(params: Sequence[Attribute], args: Sequence[Attribute]) -> dict[str, Dim] | None:
    """The callee's size names -> the caller's sizes, from the parameter types and the
    call's operand types; None when they do not match (another dtype or rank, a static
    size that differs, a name bound to two different sizes)."""
    sizes: dict[str, Dim] = {}
    derived: list[tuple[Dim, Dim]] = []  # checked once the plain names are bound
    for param, arg in zip(params, args, strict=True):
        if param == arg:
            continue
        if not isinstance(param, TensorType) or not isinstance(arg, TensorType):
            return None
        if param.element_type != arg.element_type or len(param.get_shape()) != len(arg.get_shape()):
            return None
        for p, a in zip(shape_of(param), shape_of(arg)):
            if is_derived(p):
                derived.append((p, a))
            elif isinstance(p, str):
                if sizes.setdefault(p, a) != a:
                    return None
            elif p != a:
                return None
    try:
        if any(substitute(p, sizes) != a for p, a in derived):
            return None
    except SizeError:
        return None
    return sizes


def rename_sizes(type_: Attribute, sizes: dict[str, Dim]) -> Attribute:
    """``type_`` with its size names replaced as ``sizes`` says."""
    if not sizes or not isinstance(type_, TensorType):
        return type_
    shape = shape_of(type_)
    renamed = tuple(substitute(d, sizes) for d in shape)
    return type_ if renamed == shape else tensor_type(type_.element_type, renamed)


def _rename_block_sizes(block: Block, sizes: dict[str, Dim]) -> None:
    """Renames the sizes in the type of every value defined in ``block`` and below, and
    in the starts of its slices (``E/2`` of a callee is ``D/2`` of its caller)."""
    for op in block.walk():
        if isinstance(op, graph.SliceOp):
            op.properties["starts"] = graph.starts_attr([s.substituted(sizes) for s in op.start_indices])
        values = [*op.results, *(arg for region in op.regions for b in region.blocks for arg in b.args)]
        for value in values:
            if (renamed := rename_sizes(value.type, sizes)) != value.type:
                Rewriter.replace_value_with_new_type(value, renamed)


def _callee(call: func.CallOp) -> str:
    return call.callee.root_reference.data


def _calls(function: func.FuncOp) -> list[func.CallOp]:
    """The calls of ``function``, in program order."""
    return [op for op in function.walk() if isinstance(op, func.CallOp)]


def _reachable(call_graph: dict[str, list[str]], roots: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    stack = [r for r in roots if r in call_graph]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(c for c in call_graph[name] if c in call_graph)
    return seen


def recursive_functions(call_graph: dict[str, list[str]]) -> set[str]:
    """The functions on a cycle of calls (Tarjan's strongly connected components,
    iteratively: a call chain may be thousands of functions deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    recursive: set[str] = set()
    for root in call_graph:
        if root in index:
            continue
        work = [(root, iter(call_graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            name, callees = work[-1]
            callee = next((c for c in callees if c in call_graph), None)
            if callee is not None:
                if callee not in index:
                    index[callee] = low[callee] = len(index)
                    stack.append(callee)
                    on_stack.add(callee)
                    work.append((callee, iter(call_graph[callee])))
                elif callee in on_stack:
                    low[name] = min(low[name], index[callee])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[name])
            if low[name] == index[name]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == name:
                        break
                if len(component) > 1 or name in call_graph[name]:
                    recursive.update(component)
    return recursive


@dataclass
class CallTree:
    """The module's functions and their calls, and what inlining would make of them."""

    functions: dict[str, func.FuncOp]
    calls: dict[str, list[func.CallOp]]  # per function, in program order
    inlinable: set[str]  # defined here, one block, on no cycle of calls

    @staticmethod
    def of(module: ModuleOp) -> CallTree:
        functions = {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, func.FuncOp)}
        calls = {name: _calls(f) for name, f in functions.items()}
        graph = {name: [_callee(c) for c in cs] for name, cs in calls.items()}
        cyclic = recursive_functions(graph)
        inlinable = {
            name
            for name, f in functions.items()
            if not f.is_declaration and len(f.body.blocks) == 1 and name not in cyclic
        }
        return CallTree(functions, calls, inlinable)

    def call_graph(self) -> dict[str, list[str]]:
        return {name: [_callee(c) for c in cs] for name, cs in self.calls.items()}

    def inlined_calls(self, name: str) -> list[func.CallOp]:
        return [c for c in self.calls[name] if _callee(c) in self.inlinable]

    def added_ops(self) -> dict[str, int]:
        """Per function, the operations that inlining every call in it (recursively) adds:
        the sum over its inlined calls of the callee's size once inlined, where a
        function's size is its own operations, calls and return aside, plus what
        inlining adds to it. Bottom-up over the call graph, each function once."""
        added: dict[str, int] = {}
        for name in self._callees_first():
            added[name] = sum(self.size(_callee(c), added) for c in self.inlined_calls(name))
        return added

    def size(self, name: str, added: dict[str, int]) -> int:
        """The operations of function ``name`` once inlined, calls and return aside."""
        function = self.functions[name]
        own = sum(1 for op in function.body.block.ops if not isinstance(op, func.CallOp | func.ReturnOp))
        return own + added[name]

    def _callees_first(self) -> list[str]:
        """Every function after the inlinable functions it calls (a post-order walk;
        inlinable functions are on no cycle, so this order exists)."""
        order: list[str] = []
        done: set[str] = set()
        for root in self.functions:
            if root in done:
                continue
            done.add(root)
            work = [(root, iter(self.inlined_calls(root)))]
            while work:
                name, calls = work[-1]
                call = next((c for c in calls if _callee(c) not in done), None)
                if call is None:
                    work.pop()
                    order.append(name)
                    continue
                done.add(_callee(call))
                work.append((_callee(call), iter(self.inlined_calls(_callee(call)))))
        return order

    def check_size(self, roots: Iterable[str], limit: int) -> None:
        """Raises ``InlineSizeError`` where inlining would add more than ``limit``
        operations to a function reachable from ``roots``. The call named is the
        innermost one to blame: in the deepest function over the limit whose inlined
        callees are all within it, the call that takes the running total past it."""
        added = self.added_ops()
        over = [n for n in _reachable(self.call_graph(), roots) if added[n] > limit]
        if not over:
            return
        name = min(over, key=lambda n: (added[n], n))
        while True:
            deeper = [_callee(c) for c in self.inlined_calls(name) if added[_callee(c)] > limit]
            if not deeper:
                break
            name = deeper[0]
        calls = self.inlined_calls(name)
        running = itertools.accumulate(self.size(_callee(c), added) for c in calls)
        crossing = next(c for c, total in zip(calls, running) if total > limit)
        raise InlineSizeError(crossing, name, added[name], limit)


def inline_call(call: func.CallOp, callee: func.FuncOp) -> list[func.CallOp] | None:
    """call @f(a...) = f's body with its parameters bound to a... and its size names
    renamed to the caller's; the values f returns replace the call's results. Returns
    the calls the inlined body holds, or None (and leaves the call) where the call's
    types cannot bind the callee's sizes."""
    sizes = bind_sizes([a.type for a in callee.body.block.args], [a.type for a in call.arguments])
    if sizes is None:
        return None
    outputs = [rename_sizes(t, sizes) for t in callee.function_type.outputs.data]
    if outputs != [r.type for r in call.results]:
        return None
    block = callee.body.clone().block
    _rename_block_sizes(block, sizes)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    # a returned parameter is the call's operand: inline_block rebinds the uses of
    # the block's arguments, not this list
    bound: dict[SSAValue, SSAValue] = dict(zip(block.args, call.arguments))
    returned = [bound.get(v, v) for v in ret.arguments]
    ret.detach()
    ret.erase()
    inner = [op for op in block.ops if isinstance(op, func.CallOp)]
    Rewriter.inline_block(block, InsertPoint.before(call), call.arguments)
    for result, value in zip(call.results, returned, strict=True):
        result.replace_all_uses_with(value)
    call.detach()
    call.erase()
    return inner


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inlines every call to a function of the module (not recursive ones), then keeps
    only the functions the program still needs: those reachable from ``entry`` by
    calls, or where there is no function ``entry``, those reachable from a public one
    (private functions nothing calls any more are dropped). ``max_inlined_ops`` bounds
    the operations inlining may add to one function (``InlineSizeError`` beyond).

    Each kept function is inlined top-down from a worklist of its calls: every
    operation is copied once per place it ends up in, so the work is the size of the
    result, however deep the calls nest."""

    name = "inline"

    entry: str = "main"
    max_inlined_ops: int = DEFAULT_MAX_INLINED_OPS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tree = CallTree.of(op)
        functions = tree.functions
        if self.entry in functions:
            roots = [self.entry]
        else:
            roots = [n for n, f in functions.items() if f.sym_visibility is None or f.sym_visibility.data != "private"]
        tree.check_size(roots, self.max_inlined_ops)

        keep: set[str] = set()
        pending = list(roots)
        while pending:
            name = pending.pop()
            if name in keep or name not in functions:
                continue
            keep.add(name)
            calls = list(reversed(tree.calls[name]))
            while calls:
                call = calls.pop()
                callee = _callee(call)
                inner = inline_call(call, functions[callee]) if callee in tree.inlinable else None
                if inner is None:
                    pending.append(callee)
                else:
                    calls.extend(reversed(inner))
        for name, function in functions.items():
            if name not in keep:
                function.detach()
                function.erase()
