"""`dialects.elementwise` declares each elementwise op once: its entries and the
dialect's elementwise ops are the same set, and the tables that read it (the NumPy
meanings, the cost model's FLOPs) cover every op."""

import numpy as np

from dialects import graph
from dialects.elementwise import BY_OP_NAME, OPS
from dialects.graph_semantics import BINARY, UNARY
from passes.fusion.cost import FLOPS_PER_ELEMENT


def test_every_elementwise_op_has_one_entry_of_its_arity():
    ops = {op.name: 1 for op in graph.UNARY_OPS} | {op.name: 2 for op in graph.BINARY_OPS}
    assert {op.op_name: op.arity for op in OPS} == ops
    assert len(BY_OP_NAME) == len(OPS)


def test_the_reference_and_the_cost_model_read_the_entries():
    for op in (*graph.UNARY_OPS, *graph.BINARY_OPS):
        entry = BY_OP_NAME[op.name]
        assert (UNARY | BINARY)[op] is entry.numpy
        assert FLOPS_PER_ELEMENT[op.name] == entry.flops


def test_a_meaning_keeps_the_dtype_of_float32():
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    for entry in OPS:
        assert entry.numpy(*[x] * entry.arity).dtype == np.float32, entry.name
