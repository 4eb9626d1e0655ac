"""The loop dialect from Python: building ops, verifying them, printing and parsing."""

from __future__ import annotations

import io

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, MemRefType, ModuleOp, f32
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from compiler.context import make_context
from dialects import loop

M = MemRefType(f32, [DYNAMIC_INDEX, DYNAMIC_INDEX])


def row_sum_module() -> ModuleOp:
    """y[i] = sum_j x[i, j], built op by op, with its host function."""
    kernel = loop.KernelOp("row_sum", [M], [MemRefType(f32, [DYNAMIC_INDEX])])
    x, y = kernel.body.block.args
    c0 = arith.ConstantOp.from_int_and_width(0, IndexType())
    c1 = arith.ConstantOp.from_int_and_width(1, IndexType())
    zero = arith.ConstantOp(FloatAttr(0.0, f32))
    rows, cols = loop.DimOp(x, 0), loop.DimOp(x, 1)
    rows_loop = loop.ParallelOp(c0, rows, c1, mapping=loop.MapKind.PRANGE)
    red = loop.ReduceOp(c0, cols, c1, [loop.Combiner.ADD], [zero], mapping=loop.MapKind.VECTOR)
    value = loop.LoadOp(x, [rows_loop.iv, red.iv])
    red.body.block.add_ops([value, loop.YieldOp(value)])
    rows_loop.body.block.add_ops([red, loop.StoreOp(red.res[0], y, [rows_loop.iv])])
    kernel.body.block.add_ops([c0, c1, zero, rows, cols, rows_loop])
    host_block = Block(arg_types=[M])
    out = loop.AllocOp(("N",), MemRefType(f32, [DYNAMIC_INDEX]))
    host_block.add_ops([out, loop.LaunchOp("row_sum", [host_block.args[0], out.result]), func.ReturnOp(out.result)])
    host = func.FuncOp("main", ([M], [out.result.type]), Region(host_block))
    return ModuleOp([kernel, host])


def printed(module: ModuleOp, generic: bool = False) -> str:
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue()


def test_built_module_verifies_and_round_trips():
    module = row_sum_module()
    module.verify()
    text = printed(module)
    assert "loop.reduce add %" in text and "map(prange)" in text and "map(vector)" in text
    for form in (text, printed(module, generic=True)):
        parsed = Parser(make_context(), form).parse_module()
        parsed.verify()
        assert parsed.is_structurally_equivalent(module)
        assert printed(parsed) == text


def test_kernel_accessors():
    kernel = row_sum_module().ops.first
    assert isinstance(kernel, loop.KernelOp)
    assert len(kernel.inputs) == 1 and len(kernel.outputs) == 1
    assert kernel.arg_types == (M, MemRefType(f32, [DYNAMIC_INDEX]))


@pytest.mark.parametrize("name", ['a"b', "λ", "back\\slash", "N*768", "with space"])
def test_shape_names_round_trip(name):
    attr = loop.ShapeAttr((name, 4))
    text = f"func.func @f(%x: memref<?x4xf32> {{loop.shape = {attr}}}) {{\n  func.return\n}}"
    parsed = Parser(make_context(), text).parse_module()
    arg_attrs = parsed.ops.first.arg_attrs.data[0].data
    assert arg_attrs["loop.shape"] == attr


def test_verifiers():
    module = row_sum_module()
    kernel = module.ops.first
    store = next(op for op in kernel.walk() if isinstance(op, loop.StoreOp))
    store.operands = [store.value, store.buffer]  # drop the index
    with pytest.raises(VerifyException, match="loop.store takes 1 indices"):
        module.verify()
    with pytest.raises(VerifyException, match="does not fit"):
        loop.AllocOp((4,), MemRefType(f32, [DYNAMIC_INDEX])).verify()
    with pytest.raises(VerifyException, match="num_inputs"):
        bad = loop.KernelOp("k", [M], [])
        bad.properties["num_inputs"] = loop.IntegerAttr(2, loop.i64)
        bad.verify()


def test_memref_compatibility_for_launches():
    assert loop._memref_compatible(M, MemRefType(f32, [3, 4]))
    assert not loop._memref_compatible(MemRefType(f32, [4, DYNAMIC_INDEX]), MemRefType(f32, [3, 4]))
    assert not loop._memref_compatible(M, MemRefType(f32, [3]))
