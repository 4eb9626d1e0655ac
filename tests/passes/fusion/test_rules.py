"""The rule table is data: every rule named and written as a pattern, every pair of
kinds either joined by a rule or refused with a reason."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from dialects.group_kinds import GroupKind
from passes.fusion.facts import OpSetFacts
from passes.fusion.graph_view import FuncGraph
from passes.fusion.rules import (
    ANY,
    REFUSALS,
    RULES,
    RULES_BY_NAME,
    TEMPLATES,
    dominant_rule,
    find_rule,
    parse_rule_names,
    refusal_reason,
)
from tests.passes.fusion.schedule import parse


def test_rule_names_are_unique_and_every_rule_has_a_pattern():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    for rule in RULES:
        assert rule.pattern and rule.doc
        assert rule.matcher or (rule.producer and rule.consumer)


def test_every_rule_is_documented_by_name():
    """docs/reference.md lists the rules that --disable-rule takes, one line each."""
    reference = (Path(__file__).parents[3] / "docs" / "reference.md").read_text()
    for rule in RULES:
        assert f"| `{rule.name}` |" in reference, rule.name


def test_the_seed_patterns_are_in_the_table():
    assert RULES_BY_NAME["ew_chain"].pattern == "EW+"
    assert "Softmax" in RULES_BY_NAME["attention"].pattern
    assert RULES_BY_NAME["attention"].matcher
    assert {"reduce_prologue", "reduce_epilogue", "reduce_rows", "matmul_epilogue"} <= set(RULES_BY_NAME)
    assert {r.name for r in RULES if r.horizontal} == {
        "horizontal_matmul",
        "horizontal_reduce",
        "horizontal_elementwise",
    }


def test_vertical_lookups():
    assert find_rule("elementwise", "elementwise").name == "ew_chain"
    assert find_rule("index_map", "injective").name == "ew_chain"
    assert find_rule("elementwise", "reduction").name == "reduce_prologue"
    assert find_rule("reduction", "elementwise").name == "reduce_epilogue"
    assert find_rule("reduction", "reduction").name == "reduce_rows"
    assert find_rule("matmul", "elementwise").name == "matmul_epilogue"
    # the bias of an epilogue comes from the other side of the edge
    assert find_rule("elementwise", "matmul").name == "matmul_epilogue"
    assert find_rule("index_map", "attention").name == "attention_operands"
    assert find_rule("attention", "elementwise").name == "attention_epilogue"
    assert find_rule("matmul", "matmul") is None
    assert find_rule("opaque", "elementwise") is None


def test_disabled_rules_are_skipped():
    assert find_rule("matmul", "elementwise", disabled=frozenset({"matmul_epilogue"})) is None
    assert find_rule("reduction", "elementwise", disabled=frozenset({"matmul_epilogue"})).name == "reduce_epilogue"


def test_rule_names_from_options():
    assert parse_rule_names("") == frozenset()
    assert parse_rule_names("ew_chain, matmul-epilogue") == {"ew_chain", "matmul_epilogue"}
    assert parse_rule_names(["attention", "reduce_rows,ew_chain"]) == {"attention", "reduce_rows", "ew_chain"}
    with pytest.raises(ValueError, match="unknown fusion rule 'epilogue': the rules are attention, "):
        parse_rule_names("ew_chain,epilogue")


def test_horizontal_lookups():
    assert find_rule("reduction", "reduction", horizontal=True).name == "horizontal_reduce"
    assert find_rule("matmul", "matmul", horizontal=True).name == "horizontal_matmul"
    assert find_rule("elementwise", "elementwise", horizontal=True).name == "horizontal_elementwise"
    assert find_rule("matmul", "reduction", horizontal=True) is None


def test_every_unjoined_pair_of_kinds_has_a_reason():
    for producer, consumer in itertools.product(sorted(ANY), repeat=2):
        if find_rule(producer, consumer) is not None:
            continue
        reason = refusal_reason(producer, consumer, "p", "c")
        # None: the merged group's template names the reason
        assert reason is None or reason.strip()


def test_named_refusals():
    assert refusal_reason("reduction", "matmul", "reduce_sum", "matmul") == "matmul prologue is not fused"
    assert "opaque" in refusal_reason("opaque", "elementwise", "softmax", "exp")
    assert all(r.producer and r.consumer for r in REFUSALS)


def test_every_kind_has_a_template():
    assert set(TEMPLATES) == set(ANY)


def test_dominant_rule_follows_the_table_order():
    assert dominant_rule(["ew_chain", "reduce_rows"]) == "reduce_rows"
    assert dominant_rule(["ew_chain", "attention"]) == "attention"
    assert dominant_rule([]) == "none"


#: a matmul's left operand read through a reshape that the function also returns
RESHAPED_OPERAND_RETURNED = """
func.func @main(%x: tensor<4x8x16xf32>, %w: tensor<16x16xf32>) -> (tensor<32x16xf32>, tensor<32x16xf32>) {
  %a = graph.reshape %x {index_map} : tensor<4x8x16xf32> -> tensor<32x16xf32>
  %y = graph.matmul %a, %w : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
  func.return %y, %a : tensor<32x16xf32>, tensor<32x16xf32>
}"""


def test_an_operand_map_whose_value_leaves_the_kernel_is_refused():
    """The matmul reads its operand tile by tile: a reshape both read there and returned
    would be a second loop nest in the kernel (on a GPU, one thread block for it all)."""
    g = FuncGraph.build(list(parse(RESHAPED_OPERAND_RETURNED).ops)[0])
    facts = OpSetFacts(g, frozenset({0, 1}))
    assert TEMPLATES[GroupKind.MATMUL](facts) == "reshape of the matmul's operand is also used outside the kernel"


#: a product returned as it is and transposed (a conv's NCHW result and its NHWC copy)
PRODUCT_IN_TWO_LAYOUTS = """
func.func @main(%x: tensor<32x16xf32>, %w: tensor<16x8xf32>) -> (tensor<32x8xf32>, tensor<8x32xf32>) {
  %y = graph.matmul %x, %w : tensor<32x16xf32>, tensor<16x8xf32> -> tensor<32x8xf32>
  %e = graph.exp %y : tensor<32x8xf32>
  %t = graph.transpose %e perm = [1, 0] {index_map} : tensor<32x8xf32> -> tensor<8x32xf32>
  func.return %e, %t : tensor<32x8xf32>, tensor<8x32xf32>
}"""


def test_a_product_kept_in_two_layouts_is_two_kernels():
    """The kernel walks its output tiles in one order: a second output transposed would
    be a second loop nest (resnet18's convolutions: one thread block per image)."""
    g = FuncGraph.build(list(parse(PRODUCT_IN_TWO_LAYOUTS).ops)[0])
    assert TEMPLATES[GroupKind.MATMUL](OpSetFacts(g, frozenset({0, 1, 2}))) == (
        "outputs in two layouts ([32, 8], [8, 32]) would need two loop nests"
    )
    assert TEMPLATES[GroupKind.MATMUL](OpSetFacts(g, frozenset({0, 1}))) is None
