"""Calibration by measurement: factors moved by runs with bounded influence, a merge
the corrected times refuse only past the margin (and say so), the report's
corrected_us, kernel signatures."""

from __future__ import annotations

import itertools

import pytest

from passes.fusion import calibration as calibration_module
from passes.fusion.calibration import (
    DEFAULT,
    FACTOR_RANGE,
    HISTORY,
    STEP,
    Calibration,
    KindFactor,
    Observation,
    kernel_signature,
    parse_factors,
    run_ratios,
    update_factors,
)
from passes.fusion.cost import GPU_H200, KernelCost
from passes.fusion.graph_view import FuncGraph
from passes.fusion.planner import FusionOptions, plan_function
from passes.fusion.report import fusion_report
from tests.passes.fusion.cases import SINCOS, SOFTMAX, program
from tests.passes.fusion.schedule import fuse_text, fusion_groups, kernel_count, parse

# x / sum(x, rows): the division joins the reduction's kernel (reduce_epilogue), which
# saves the elementwise kernel's launch and its read of x.
NORMALIZE = """
func.func @main(%x: !t) -> !t {
  %s = graph.reduce sum %x axes = [1] keepdims : !t -> !r
  %sb = graph.broadcast %s : !r -> !t
  %y = graph.div %x, %sb : !t
  func.return %y : !t
}
"""
DIMS = {"N": 65536, "D": 1024}

#: reductions measured twice as slow as predicted, elementwise kernels twice as fast
SLOW_ROWS = Calibration({"reduction": 2.0, "elementwise": 0.5})


def plan(body: str, calibration: Calibration):
    (fn,) = parse(program(body)).ops
    return plan_function(FuncGraph.build(fn), FusionOptions(device=GPU_H200, dims=DIMS, calibration=calibration))


def test_a_correction_flips_a_merge():
    """Model: saving = t(reduce) + t(div) - t(both) > 0, one kernel. Corrected, the
    merged kernel is a slow reduction doing the division's full-size work, which a
    fast elementwise kernel does in less: two kernels."""
    assert [g.kind for g in plan(NORMALIZE, Calibration()).groups] == ["reduction"]
    split = plan(NORMALIZE, SLOW_ROWS)
    assert [g.kind.written for g in split.groups] == ["reduction", "elementwise"]
    (refused,) = split.not_fused_records()
    assert refused["reason"] == "cost model: fusing saves no time (calibrated: 1 kernel 294.441 us, 2 kernels 240.986 us)"
    (change,) = split.calibrated_records()
    assert change == {
        "first": "reduce_sum_0",
        "second": "broadcast_1",
        "decision": "calibration split reduce_sum_0 | broadcast_1: model 1 kernel 147.221 us (2 kernels 230.955 us), "
        "calibrated 2 kernels 240.986 us (1 kernel 294.441 us), margin 15%",
    }


#: reductions 1.6× slower, elementwise kernels 2× faster: corrected, the merged kernel
#: takes 13% more than the two (235.6 us against 207.5 us), under the margin
NEAR_THE_MARGIN = Calibration({"reduction": 1.6, "elementwise": 0.5})


def test_a_corrected_change_under_the_margin_leaves_the_models_plan(monkeypatch):
    model = plan(NORMALIZE, Calibration())
    near = plan(NORMALIZE, NEAR_THE_MARGIN)
    assert [sorted(g.ops) for g in near.groups] == [sorted(g.ops) for g in model.groups]
    assert near.calibrated == [] and near.not_fused_records() == []
    monkeypatch.setattr(calibration_module, "MARGIN", 0.0)  # without it, the noise would split the kernel
    assert len(plan(NORMALIZE, NEAR_THE_MARGIN).groups) == 2


def test_a_change_over_the_margin_is_written_on_the_function_and_in_the_report():
    text = program(NORMALIZE)
    fused = fuse_text(text, dims="N=65536,D=1024", calibration="reduction=2.0,elementwise=0.5")
    printed = str(fused)
    assert "fusion.calibrated = [{" in printed
    assert "calibration split reduce_sum_0 | broadcast_1: model 1 kernel" in printed
    near = fuse_text(text, dims="N=65536,D=1024", calibration="reduction=1.6,elementwise=0.5")
    assert "fusion.calibrated" not in str(near)
    (record,) = fusion_report(fused, parse(text), dims=DIMS)["calibrated"]
    assert record["first"] == "reduce_sum_0" and record["decision"].startswith("calibration split reduce_sum_0 | ")


def test_the_fuse_pass_takes_the_factors_as_an_option():
    fused = fuse_text(program(NORMALIZE), dims="N=65536,D=1024", calibration="reduction=2.0,elementwise=0.5")
    assert kernel_count(fused) == 2
    assert kernel_count(fuse_text(program(NORMALIZE), dims="N=65536,D=1024")) == 1


def test_one_factor_for_every_kind_changes_no_decision():
    """Every saving scales alike: what differs between kinds is what decides."""
    for body in (NORMALIZE, SOFTMAX, SINCOS):
        uniform = plan(body, Calibration({DEFAULT: 3.0}))
        assert [sorted(g.ops) for g in uniform.groups] == [sorted(g.ops) for g in plan(body, Calibration()).groups]


def test_a_run_gives_each_kind_its_median_ratio_and_a_default_over_all():
    ratios = run_ratios(
        [
            Observation("reduction", 10.0, 20.0),
            Observation("reduction", 100.0, 400.0),
            Observation("reduction", 1.0, 3.0),
            Observation("elementwise", 10.0, 5.0),
            Observation("index_map", 10.0, 10.0),  # measured as the injective kernel it is
        ]
    )
    assert ratios["reduction"] == pytest.approx(3.0)
    assert ratios["elementwise"] == pytest.approx(0.5)
    assert ratios["injective"] == pytest.approx(1.0)
    assert ratios[DEFAULT] == pytest.approx(2.0)  # the median of 0.5, 1, 2, 3, 4
    assert run_ratios([]) == {}
    calibration = Calibration({"reduction": 3.0, DEFAULT: 2.0})
    assert calibration.factor("matmul") == 2.0
    assert calibration.factor("index_map") == calibration.factor("injective")  # the planner's kind
    assert not Calibration()


def test_one_extreme_run_moves_a_factor_by_at_most_the_step():
    first = KindFactor().update(1000.0)  # a kernel timed while another process ran
    assert first.factor == pytest.approx(STEP) and first.history == (pytest.approx(STEP),)
    settled = KindFactor()
    for _ in range(HISTORY):
        settled = settled.update(1.2)
    assert settled.factor == pytest.approx(1.2)
    for extreme in (1000.0, 1e-6):
        moved = settled.update(extreme)
        assert 1.2 / STEP <= moved.factor <= 1.2 * STEP
        assert moved.factor == pytest.approx(1.2)  # the median of the last runs: one outlier moves it not at all


def test_runs_that_agree_move_a_factor_step_by_step_within_the_range():
    factors = [1.0]
    kind = KindFactor()
    for _ in range(10):
        kind = kind.update(100.0)
        factors.append(kind.factor)
    assert all(b / a <= STEP * (1 + 1e-12) for a, b in itertools.pairwise(factors))
    assert factors[-1] == pytest.approx(FACTOR_RANGE[1]) and len(kind.history) == HISTORY
    for _ in range(40):  # (the median of the last runs lags: a step every few runs)
        kind = kind.update(1e-9)
    assert kind.factor == pytest.approx(FACTOR_RANGE[0])


def test_a_run_moves_only_the_kinds_it_measured():
    before = {"reduction": KindFactor(2.0, (2.0,)), "matmul": KindFactor(0.5, (0.5,))}
    after = update_factors(before, {"reduction": 2.0, DEFAULT: 1.0})
    assert after["matmul"] == before["matmul"] and after["reduction"].history == (2.0, 2.0)
    assert after[DEFAULT] == KindFactor(1.0, (1.0,))


def test_corrected_times():
    cost = KernelCost(bytes=8, flops=0.0, flops_once=0.0, seconds=1e-5)
    assert SLOW_ROWS.correct("reduction", cost).seconds == pytest.approx(2e-5)
    assert Calibration().correct("reduction", cost) is cost
    calibration = Calibration({"reduction": 2.0}, {"sig": 7.0})
    assert calibration.corrected_us("reduction", 10.0) == 20.0
    assert calibration.corrected_us("reduction", 10.0, "sig") == 7.0  # its own measurement
    assert calibration.corrected_us("elementwise", 10.0, "other") == 10.0


def test_factors_round_trip_through_the_pass_option():
    calibration = Calibration({"reduction": 1 / 3, DEFAULT: 1.25})
    assert parse_factors(calibration.spec()) == calibration.factors
    assert parse_factors("") == {}


@pytest.mark.parametrize(
    "spec, message",
    [
        ("reduce=2", "KIND one of elementwise, "),
        ("reduction", "expected KIND=FACTOR"),
        ("reduction=-1", "must be a positive number"),
        ("reduction=nan", "must be a positive number"),
        ("reduction=fast", "must be a positive number"),
    ],
)
def test_bad_factors_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_factors(spec)


def test_the_report_shows_corrected_times_and_signatures():
    text = program(SOFTMAX)
    plain = fusion_report(fuse_text(text), parse(text), dims=DIMS)
    (group,) = plain["groups"]
    assert group["corrected_us"] == group["predicted_us"] and "signature" not in group

    corrected = fusion_report(fuse_text(text), parse(text), dims=DIMS, calibration=SLOW_ROWS)
    (group,) = corrected["groups"]
    assert group["corrected_us"] == pytest.approx(2 * group["predicted_us"])
    measured = Calibration(SLOW_ROWS.factors, {group["signature"]: 12.5})
    (group,) = fusion_report(fuse_text(text), parse(text), dims=DIMS, calibration=measured)["groups"]
    assert group["corrected_us"] == 12.5


SOFTMAX_RENAMED = SOFTMAX.replace("%x", "%input").replace("%e", "%exps").replace("@main", "@other")


def test_a_kernel_signature_is_its_code_and_sizes_not_its_names():
    (a,) = fusion_groups(fuse_text(program(SOFTMAX)))
    (b,) = fusion_groups(fuse_text(program(SOFTMAX_RENAMED)))
    assert kernel_signature(a, DIMS) == kernel_signature(b, DIMS)
    assert kernel_signature(a, DIMS) != kernel_signature(a, {"N": 8, "D": 1024})
    (c,) = fusion_groups(fuse_text(program(SOFTMAX.replace("reduce sum", "reduce max"))))
    assert kernel_signature(a, DIMS) != kernel_signature(c, DIMS)
