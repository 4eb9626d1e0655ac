"""Calibration of ``select-strategy``: factors per kind and strategy (``matmul:generated``,
``matmul:library``) measured on the machine weigh the generated product against the
library's; the model's choice changes only past the margin, and the change is said."""

from __future__ import annotations

import pytest

from compiler.context import make_context
from dialects import graph
from dialects.group_kinds import GroupStrategy
from passes.fusion.calibration import DEFAULT, Calibration, Observation, parse_factors, run_ratios
from passes.fusion.cost import CPU_2CORE
from passes.fusion.report import fusion_report
from passes.fusion.select_strategy import SelectStrategyPass, calibrated_choice, calibrated_strategies
from tests.passes.fusion.schedule import parse

# relu(x @ w) in one group: on the 2-core model the BLAS (250 GFLOP/s) and a pass for the
# relu predict 40 ms, the generated product (130 GFLOP/s) 66 ms
MATMUL_RELU = """
func.func @main(%x: tensor<4096x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<4096x1024xf32> {
  %y = graph.fusion_group(%x, %w) {kernel = "k0_matmul", kind = "matmul"} : (tensor<4096x1024xf32>, tensor<1024x1024xf32>) -> tensor<4096x1024xf32> {
  ^bb0(%a: tensor<4096x1024xf32>, %b: tensor<1024x1024xf32>):
    %m = graph.matmul %a, %b : tensor<4096x1024xf32>, tensor<1024x1024xf32> -> tensor<4096x1024xf32>
    %r = graph.relu %m : tensor<4096x1024xf32>
    graph.yield %r : tensor<4096x1024xf32>
  }
  func.return %y : tensor<4096x1024xf32>
}
"""


def _group(module) -> graph.FusionGroupOp:
    (fn,) = module.ops
    return next(op for op in fn.body.block.ops if isinstance(op, graph.FusionGroupOp))


def choice(factors: dict[str, float], prefer: str = "auto"):
    return calibrated_choice(_group(parse(MATMUL_RELU)), CPU_2CORE, {}, Calibration(factors), prefer)


def test_the_model_alone_keeps_the_library():
    assert choice({}) == (GroupStrategy.LIBRARY, None)


def test_a_generated_product_measured_fast_enough_is_chosen_and_said():
    strategy, decision = choice({"matmul:generated": 0.5, "matmul:library": 1.5})
    assert strategy is GroupStrategy.GENERATED
    assert decision is not None
    assert decision.startswith("calibration chose generated for k0_matmul: model library ")
    assert decision.endswith("margin 15%")


def test_a_lead_under_the_margin_leaves_the_models_choice():
    # generated 38.5 ms corrected against the library's 40.2: 4% of it, under 15%
    assert choice({"matmul:generated": 0.58}) == (GroupStrategy.LIBRARY, None)


@pytest.mark.parametrize("factors", [{"matmul": 3.0}, {DEFAULT: 0.3}, {"matmul:generated": 2, "matmul:library": 2}])
def test_a_factor_alike_for_both_strategies_changes_nothing(factors):
    assert choice(factors) == (GroupStrategy.LIBRARY, None)


def test_a_strategy_the_user_asked_for_stands():
    assert choice({"matmul:generated": 4.0, "matmul:library": 0.25}, prefer="generated") == (
        GroupStrategy.GENERATED,
        None,
    )


def test_the_pass_writes_the_change_on_the_function_and_the_report_lists_it():
    module = parse(MATMUL_RELU)
    SelectStrategyPass(device="cpu-2core", calibration="matmul:generated=0.5,matmul:library=1.5").apply(
        make_context(), module
    )
    (fn,) = module.ops
    assert _group(module).strategy is GroupStrategy.GENERATED
    (record,) = calibrated_strategies(fn)
    assert record["kernel"] == "k0_matmul"
    report = fusion_report(module, parse(MATMUL_RELU), device=CPU_2CORE)
    assert [c["kernel"] for c in report["calibrated"]] == ["k0_matmul"]


def test_a_run_gives_each_strategy_its_ratio_and_the_kind_all_of_them():
    ratios = run_ratios(
        [
            Observation("matmul", 10.0, 20.0, "generated"),
            Observation("matmul", 10.0, 5.0, "library"),
            Observation("elementwise", 10.0, 10.0),
        ]
    )
    assert ratios["matmul:generated"] == pytest.approx(2.0)
    assert ratios["matmul:library"] == pytest.approx(0.5)
    assert ratios["matmul"] == pytest.approx(1.0)
    assert "elementwise:generated" not in ratios and ratios[DEFAULT] == pytest.approx(1.0)


def test_a_strategys_factor_falls_back_to_its_kinds():
    calibration = Calibration({"conv": 2.0, "conv:library": 3.0})
    assert calibration.factor("conv", "library") == 3.0
    assert calibration.factor("conv", "generated") == 2.0
    assert calibration.factor("conv") == 2.0
    assert calibration.corrected_us("conv", 10.0, strategy="library") == 30.0


@pytest.mark.parametrize("spec", ["matmul:cublas=2", "softmax:library=2", "matmul:=2"])
def test_unknown_strategies_are_refused(spec):
    with pytest.raises(ValueError, match="STRATEGY one of generated, library"):
        parse_factors(spec)
