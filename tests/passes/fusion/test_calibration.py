"""Calibration by measurement: factors fitted from measured kernel times, a merge the
corrected times refuse, the report's corrected_us, kernel signatures."""

from __future__ import annotations

import math

import pytest

from passes.fusion.calibration import DEFAULT, Calibration, Observation, kernel_signature, parse_factors
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
    assert refused["reason"].startswith("cost model: fusing saves no time (score -")
    assert refused["reason"].endswith(" us, calibrated)")


def test_the_fuse_pass_takes_the_factors_as_an_option():
    fused = fuse_text(program(NORMALIZE), dims="N=65536,D=1024", calibration="reduction=2.0,elementwise=0.5")
    assert kernel_count(fused) == 2
    assert kernel_count(fuse_text(program(NORMALIZE), dims="N=65536,D=1024")) == 1


def test_one_factor_for_every_kind_changes_no_decision():
    """Every saving scales alike: what differs between kinds is what decides."""
    for body in (NORMALIZE, SOFTMAX, SINCOS):
        uniform = plan(body, Calibration({DEFAULT: 3.0}))
        assert [sorted(g.ops) for g in uniform.groups] == [sorted(g.ops) for g in plan(body, Calibration()).groups]


def test_factors_are_fitted_by_kind_with_a_default_for_the_rest():
    calibration = Calibration.fit(
        {
            "a": Observation("reduction", 10.0, 20.0),
            "b": Observation("reduction", 100.0, 400.0),
            "c": Observation("reduction", 1.0, 3.0),
            "d": Observation("elementwise", 10.0, 5.0),
        }
    )
    assert calibration.factors["reduction"] == pytest.approx(3.0)  # the median ratio
    assert calibration.factors["elementwise"] == pytest.approx(0.5)
    assert calibration.factors[DEFAULT] == pytest.approx(math.sqrt(2 * 3))
    assert calibration.factor("matmul") == pytest.approx(math.sqrt(6))
    assert calibration.factor("index_map") == calibration.factor("injective")  # the planner's kind
    assert calibration.kernels == {"a": 20.0, "b": 400.0, "c": 3.0, "d": 5.0}
    assert Calibration.fit({}) == Calibration() and not Calibration()


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
