"""Tests of the project's dialects, and module-building helpers the runtime tests share."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dialects.graph import FusionGroupOp, YieldOp

Values = SSAValue | Operation | Sequence[SSAValue | Operation]


def _values(result: Values) -> list[SSAValue]:
    if isinstance(result, SSAValue | Operation):
        result = [result]
    return [SSAValue.get(v) for v in result]


def func_op(name: str, arg_types: Sequence[Attribute], body: Callable[..., Values]) -> func.FuncOp:
    """``func.func @name(args) -> ...`` whose body ``body(*args)`` builds (ops created
    inside are appended) and whose return value(s) it returns."""
    block = Block(arg_types=arg_types)
    with ImplicitBuilder(block):
        results = _values(body(*block.args))
        func.ReturnOp(*results)
    return func.FuncOp(name, (arg_types, [r.type for r in results]), Region(block))


def module_of(*funcs: func.FuncOp) -> ModuleOp:
    return ModuleOp(list(funcs))


def single_func(arg_types: Sequence[Attribute], body: Callable[..., Values], name: str = "f") -> ModuleOp:
    return module_of(func_op(name, arg_types, body))


def fusion_group(
    inputs: Sequence[SSAValue | Operation], body: Callable[..., Values], kernel: str | None = "k0"
) -> FusionGroupOp:
    """A ``graph.fusion_group`` over ``inputs`` whose body ``body(*block_args)`` builds."""
    inputs = [SSAValue.get(v) for v in inputs]
    block = Block(arg_types=[v.type for v in inputs])
    with ImplicitBuilder(block):
        results = _values(body(*block.args))
        YieldOp(*results)
    return FusionGroupOp(inputs, [r.type for r in results], Region(block), kernel=kernel)
