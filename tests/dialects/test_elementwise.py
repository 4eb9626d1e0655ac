"""`dialects.elementwise` declares each elementwise op once: the dialect's elementwise
ops are written from its entries, and every layer that knows an elementwise op (the
checker's builtins, the reference, the cost model, the lowering) reads the entry."""

from pathlib import Path

import numpy as np

from compiler.frontend.builtins import BUILTINS
from dialects import graph
from dialects.elementwise import BY_OP_NAME, OPS, Accepts
from dialects.graph_semantics import ELEMENTWISE
from passes.fusion.cost import FLOPS_PER_ELEMENT
from passes.lower_to_loops import _HANDLERS


def test_every_entry_is_one_op_of_the_dialect():
    assert {cls.name: cls.ENTRY for cls in graph.ELEMENTWISE.values()} == BY_OP_NAME
    assert len(BY_OP_NAME) == len(OPS)
    for entry in OPS:
        assert getattr(graph, entry.class_name).ENTRY is entry


def test_every_layer_reads_the_entries():
    for cls in graph.ELEMENTWISE.values():
        entry = cls.ENTRY
        assert ELEMENTWISE[cls] is entry.numpy
        assert FLOPS_PER_ELEMENT[entry.op_name] == entry.flops
        assert cls in _HANDLERS
        if entry.builtin:
            assert tuple(p.name for p in BUILTINS[entry.name].params) == entry.params
        else:
            assert entry.name not in BUILTINS


def test_a_meaning_keeps_the_dtype_of_float32():
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    b = x > 0
    for entry in OPS:
        operand = b if entry.accepts is Accepts.BOOL else x
        with np.errstate(all="ignore"):  # log(-2) and the like: only the dtype matters
            result = entry.numpy(*[operand] * entry.arity)
        assert result.dtype == (np.bool_ if entry.predicate or entry.accepts is Accepts.BOOL else np.float32), entry.name


def test_the_docs_list_every_op_and_builtin():
    docs = Path(__file__).parents[2] / "docs"
    language = (docs / "language.md").read_text()
    reference = (docs / "reference.md").read_text()
    for op in graph.Graph.operations:
        if op.name not in ("graph.fusion_group", "graph.yield", "graph.constant", "graph.dim_size"):
            assert f"`{op.name}`" in language, op.name
    for name in BUILTINS:
        assert name in reference, name
