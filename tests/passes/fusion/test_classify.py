"""Op classes (TVM's order) and free ops."""

from __future__ import annotations

import pytest

from dialects import graph
from passes.fusion.classify import OP_CLASSES, OpClass, classify, is_free, is_index_map, short_name
from tests.passes.fusion.schedule import parse

IR = """
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %c = graph.constant dense<2.000000e+00> : tensor<f32>
  %n = graph.dim_size %x[1] : tensor<4x8xf32> -> tensor<f32>
  %r = graph.div %c, %n : tensor<f32>
  %cb = graph.broadcast %r : tensor<f32> -> tensor<4x8xf32>
  %e = graph.exp %x : tensor<4x8xf32>
  %a = graph.add %e, %cb : tensor<4x8xf32>
  %k = graph.cmp lt %a, %x : tensor<4x8xf32> -> tensor<4x8xi1>
  %s = graph.select %k, %a, %x : tensor<4x8xi1>, tensor<4x8xf32>
  %b = graph.broadcast %e : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %t = graph.transpose %s perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %ti = graph.transpose %s perm = [1, 0] {index_map} : tensor<4x8xf32> -> tensor<8x4xf32>
  %rs = graph.reshape %t : tensor<8x4xf32> -> tensor<32xf32>
  %sum = graph.reduce sum %s axes = [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = graph.matmul %s, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %sm = graph.softmax %m axis = 1 : tensor<4x8xf32>
  func.return %sm : tensor<4x8xf32>
}
"""


@pytest.fixture(scope="module")
def ops():
    module = parse(IR)
    fn = list(module.ops)[0]
    return {op.results[0].name_hint: op for op in fn.body.block.ops if op.results}


def test_the_classes_are_ordered_as_tvm_orders_them():
    assert (
        OpClass.FREE
        < OpClass.ELEMENTWISE
        < OpClass.BROADCAST
        < OpClass.INJECTIVE
        < OpClass.REDUCTION
        < OpClass.OUT_FUSABLE
        < OpClass.OPAQUE
    )


@pytest.mark.parametrize(
    "name, expected",
    [
        ("c", OpClass.FREE),
        ("n", OpClass.FREE),
        ("e", OpClass.ELEMENTWISE),
        ("a", OpClass.ELEMENTWISE),
        ("k", OpClass.ELEMENTWISE),
        ("s", OpClass.ELEMENTWISE),
        ("b", OpClass.BROADCAST),
        ("t", OpClass.INJECTIVE),
        ("ti", OpClass.INJECTIVE),
        ("rs", OpClass.INJECTIVE),
        ("sum", OpClass.REDUCTION),
        ("m", OpClass.OUT_FUSABLE),
        ("sm", OpClass.OPAQUE),
    ],
)
def test_classify(ops, name, expected):
    assert classify(ops[name]) == expected


def test_every_graph_op_has_a_class():
    for op_type in graph.Graph.operations:
        if op_type in (graph.FusionGroupOp, graph.YieldOp):
            continue
        assert op_type in OP_CLASSES, op_type.name


def test_composites_that_survive_are_opaque_but_elementwise_ones_fuse():
    assert OP_CLASSES[graph.SoftmaxOp] == OpClass.OPAQUE
    assert OP_CLASSES[graph.LayerNormOp] == OpClass.OPAQUE
    assert OP_CLASSES[graph.GeluOp] == OpClass.ELEMENTWISE
    assert OP_CLASSES[graph.SiluOp] == OpClass.ELEMENTWISE


def test_free_ops(ops):
    # constants and sizes, scalar arithmetic on them, a broadcast of a free value
    assert is_free(ops["c"]) and is_free(ops["n"]) and is_free(ops["r"]) and is_free(ops["cb"])
    # a broadcast of computed data is not free
    assert not is_free(ops["b"]) and not is_free(ops["e"]) and not is_free(ops["a"])


def test_index_map_flag(ops):
    assert is_index_map(ops["ti"])
    assert not is_index_map(ops["t"])
    assert not is_index_map(ops["e"])


def test_short_names(ops):
    assert short_name(ops["sum"]) == "reduce_sum"
    assert short_name(ops["e"]) == "exp"
    assert short_name(ops["m"]) == "matmul"
