"""``decompose-composites``: every composite becomes primitive ops with the same values."""

from __future__ import annotations

import pytest

from passes.decompose_composites import DecomposeCompositesPass
from tests.passes.harness import assert_same_results, op_names, parse, run_passes

COMPOSITES = {"graph.softmax", "graph.layernorm", "graph.rmsnorm", "graph.gelu", "graph.silu", "graph.sigmoid"}
TYPES = {
    "symbolic": ('tensor<?x?x8xf32, ["B", "N", ""]>', 'tensor<8xf32>'),
    "static": ("tensor<2x3x8xf32>", "tensor<8xf32>"),
    "f64": ("tensor<3x8xf64>", "tensor<8xf64>"),
}

#: name -> the op computing %r from %x (type T), %g and %b (type P)
CASES = {
    "softmax last": "%r = graph.softmax %x axis = {last} : {T}",
    "softmax first": "%r = graph.softmax %x axis = 0 : {T}",
    "layernorm": "%r = graph.layernorm %x, %g, %b eps = 1.000000e-05 : {T}, {P}",
    "rmsnorm": "%r = graph.rmsnorm %x, %g eps = 1.000000e-06 : {T}, {P}",
    "gelu": "%r = graph.gelu %x : {T}",
    "silu": "%r = graph.silu %x : {T}",
    "sigmoid": "%r = graph.sigmoid %x : {T}",
}


def _module(body: str, t: str, p: str) -> str:
    return (
        f"func.func @main(%x: {t}, %g: {p}, %b: {p}) -> {t} {{\n"
        f"  {body}\n  func.return %r : {t}\n}}"
    )


@pytest.mark.parametrize("types", sorted(TYPES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_decomposition_keeps_values(case, types):
    t, p = TYPES[types]
    last = t.count("x") - 1
    before = parse(_module(CASES[case].format(T=t, P=p, last=last), t, p))
    after = run_passes(before, [DecomposeCompositesPass()])
    names = op_names(after)
    assert not COMPOSITES & set(names), names
    assert "graph.reduce mean" not in str(after)
    assert_same_results(before, after, rtol=1e-5, atol=1e-6)


def test_softmax_shape_of_the_decomposition():
    """max, subtract, exp, sum, divide: two reductions, with explicit broadcasts."""
    before = parse(_module("%r = graph.softmax %x axis = 1 : {T}".format(T="tensor<4x8xf32>"), "tensor<4x8xf32>", "tensor<8xf32>"))
    after = run_passes(before, [DecomposeCompositesPass()])
    assert op_names(after) == [
        "graph.reduce", "graph.broadcast", "graph.sub", "graph.exp",
        "graph.reduce", "graph.broadcast", "graph.div",
    ]  # fmt: skip


MEANS = {
    # input type, axes, keepdims, result type, whether a reduced size is symbolic
    "static axis": ("tensor<4x6xf32>", [1], False, "tensor<4xf32>", False),
    "static axes keepdims": ("tensor<4x6x2xf32>", [0, 2], True, "tensor<1x6x1xf32>", False),
    "static axis of symbolic": ('tensor<?x6xf32, ["N", ""]>', [1], False, 'tensor<?xf32, ["N"]>', False),
    "symbolic axis": ('tensor<?x6xf32, ["N", ""]>', [0], False, "tensor<6xf32>", True),
    "mixed axes": ('tensor<?x6x?xf32, ["N", "", "M"]>', [0, 1, 2], False, "tensor<f32>", True),
    "mixed keepdims": ('tensor<?x6x?xf32, ["N", "", "M"]>', [1, 2], True, 'tensor<?x1x1xf32, ["N", "", ""]>', True),
}


@pytest.mark.parametrize("case", sorted(MEANS))
def test_mean_is_a_scaled_sum(case):
    t, axes, keepdims, r, symbolic = MEANS[case]
    kd = " keepdims" if keepdims else ""
    before = parse(
        f"func.func @main(%x: {t}) -> {r} {{\n"
        f"  %r = graph.reduce mean %x axes = {axes}{kd} : {t} -> {r}\n  func.return %r : {r}\n}}"
    )
    after = run_passes(before, [DecomposeCompositesPass()])
    text = str(after)
    assert "graph.reduce mean" not in text and "graph.reduce sum" in text
    assert ("graph.dim_size" in text) == symbolic
    assert_same_results(before, after, sizes={"N": 5, "M": 3})


def test_max_and_sum_are_left_alone():
    t = "tensor<4x6xf32>"
    before = parse(
        f"func.func @main(%x: {t}) -> tensor<4xf32> {{\n"
        f"  %m = graph.reduce max %x axes = [1] : {t} -> tensor<4xf32>\n"
        f"  %s = graph.reduce sum %x axes = [1] : {t} -> tensor<4xf32>\n"
        "  %r = graph.add %m, %s : tensor<4xf32>\n  func.return %r : tensor<4xf32>\n}"
    )
    after = run_passes(before, [DecomposeCompositesPass()])
    assert op_names(after) == op_names(before)
