"""The memory the reference interpreter holds during a call (`--target numpy`, and the
reference `fusec --check` and `--bench` run), for the up-front memory check.

The interpreter keeps every value a function defines until the function returns
(`runtime/reference/interpreter.py`), so a call holds the sum of its values, its
callees' while they run, and the copies of its results it returns; an op's own
temporaries (a padded image, a product before it is summed) are counted as twice the
largest value.
"""

from __future__ import annotations

import math

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block
from xdsl.traits import SymbolTable

from dialects import graph
from dialects.graph_semantics import numpy_dtype
from dialects.sizes import SizeError, evaluate_dim, is_derived
from dialects.tensor_types import shape_of


def held_bytes(module: ModuleOp, entry: str, sizes: dict[str, int]) -> int:
    """The most bytes the interpreter holds while it runs `entry` under `sizes`."""
    total, largest, results = _function(module, entry, sizes)
    return total + 2 * largest + results


def _bytes(type_, sizes: dict[str, int]) -> int:
    if not isinstance(type_, TensorType):
        return 0
    try:
        elements = math.prod(evaluate_dim(d, sizes) for d in shape_of(type_))
    except SizeError:  # a size the arguments do not bind: none of the program's
        return 0
    return elements * numpy_dtype(type_).itemsize


def _function(module: ModuleOp, name: str, sizes: dict[str, int]) -> tuple[int, int, int]:
    """(bytes of every value the function defines, the largest, its results') under `sizes`."""
    callee = SymbolTable.lookup_symbol(module, name)
    assert isinstance(callee, func.FuncOp)  # a checked program calls only its functions
    total, largest = _block(module, callee.body.block, sizes)
    results = sum(_bytes(t, sizes) for t in callee.function_type.outputs.data)
    return total, largest, results


def _block(module: ModuleOp, block: Block, sizes: dict[str, int]) -> tuple[int, int]:
    total = largest = 0
    for op in block.ops:
        if isinstance(op, func.CallOp):
            bound = _callee_sizes(module, op, sizes)
            inner, inner_largest, _ = _function(module, op.callee.root_reference.data, bound)
        elif isinstance(op, graph.FusionGroupOp):
            inner, inner_largest = _block(module, op.body.block, sizes)
        else:
            each = [_bytes(r.type, sizes) for r in op.results]
            inner, inner_largest = sum(each), max(each, default=0)
        total += inner
        largest = max(largest, inner_largest)
    return total, largest


def _callee_sizes(module: ModuleOp, call: func.CallOp, sizes: dict[str, int]) -> dict[str, int]:
    """The callee's size names bound by the caller's operands."""
    callee = SymbolTable.lookup_symbol(module, call.callee.root_reference.data)
    assert isinstance(callee, func.FuncOp)
    bound: dict[str, int] = {}
    for operand, arg in zip(call.operands, callee.body.block.args):
        if not isinstance(operand.type, TensorType) or not isinstance(arg.type, TensorType):
            continue
        for outer, inner in zip(shape_of(operand.type), shape_of(arg.type)):
            if isinstance(inner, str) and not is_derived(inner):
                try:
                    bound.setdefault(inner, evaluate_dim(outer, sizes))
                except SizeError:
                    pass
    return bound
