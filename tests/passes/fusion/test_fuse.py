"""The fuse and no-fuse passes: kernel counts of the seed patterns, group attributes,
the not-fused reasons, and the shape of the IR they build."""

from __future__ import annotations

import pytest
from xdsl.dialects import func

from dialects import graph
from passes.fusion.fuse import NOT_FUSED_ATTR, FusePass, NoFusePass, fuse_module, not_fused_reasons
from passes.fusion.planner import FusionOptions
from passes.registry import all_passes
from tests.passes.fusion.cases import CASES, CYCLE, MATMUL_PROLOGUE, program
from tests.passes.fusion.schedule import (
    assert_kernel_count,
    describe_schedule,
    fuse_text,
    fusion_groups,
    kernel_count,
    no_fuse_text,
    parse,
)


@pytest.mark.parametrize("name, body, fused, unfused", CASES, ids=[c[0] for c in CASES])
def test_kernel_counts(name, body, fused, unfused):
    assert_kernel_count(fuse_text(program(body)), fused)
    assert_kernel_count(no_fuse_text(program(body)), unfused)


def test_assert_kernel_count_prints_the_kernels(capsys):
    with pytest.raises(AssertionError, match="expected 3 kernels, got 2"):
        assert_kernel_count(fuse_text(program(CYCLE)), 3)
    printed = capsys.readouterr().out
    assert "k0_" in printed and "not fused:" in printed


def test_passes_are_registered():
    passes = all_passes()
    assert passes["fuse"]() is FusePass and FusePass.name == "fuse"
    assert passes["no-fuse"]() is NoFusePass and NoFusePass.name == "no-fuse"


def test_pass_options_parse_from_a_spec():
    from xdsl.passes import PassPipeline

    pipeline = PassPipeline.parse_spec(
        all_passes(), 'fuse{dims="N=1024,D=768" device=cpu-2core max-live=8 max-depth=50 max-inputs=4}'
    )
    (p,) = pipeline.passes
    assert isinstance(p, FusePass)
    assert (p.dims, p.device, p.max_live, p.max_depth, p.max_inputs) == ("N=1024,D=768", "cpu-2core", 8, 50, 4)
    options = p.options()
    assert options.dims == {"N": 1024, "D": 768} and options.device.name == "cpu-2core"


def test_group_attributes():
    (group,) = fusion_groups(fuse_text(program(CASES[2][1])))  # softmax
    assert group.kernel_name == "k0_softmax"
    assert group.kind == "reduction"
    assert group.rule.data == "reduce_rows"
    assert "pattern" not in group.attributes


def test_attention_group_is_marked():
    from tests.passes.fusion.cases import ATTENTION

    (group,) = fusion_groups(fuse_text(program(ATTENTION)))
    assert group.pattern.data == "attention"
    assert group.kind == "attention"
    assert group.kernel_name == "k0_attention"
    assert [type(op) for op in group.body.block.ops].count(graph.MatmulOp) == 2


def test_a_disabled_pattern_rule_names_itself_on_the_edges_it_would_have_joined():
    from tests.passes.fusion.cases import ATTENTION

    module = fuse_text(program(ATTENTION), disable_rules="attention")
    assert [g.kind for g in fusion_groups(module)] == ["matmul", "reduction", "matmul"]
    (fn,) = module.ops
    assert not_fused_reasons(fn) == [
        {"producer": "mul_2", "consumer": "reduce_max_3", "reason": "rule attention is disabled"},
        {"producer": "mul_2", "consumer": "sub_5", "reason": "rule attention is disabled"},
        {"producer": "div_9", "consumer": "matmul_10", "reason": "rule attention is disabled"},
    ]


def test_a_bad_option_value_is_refused_when_the_pass_is_made():
    with pytest.raises(ValueError, match="unknown fusion rule 'flash'"):
        FusePass(disable_rules="flash")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        FusePass(device="tpu")


def test_every_op_is_in_exactly_one_group_and_constants_are_cloned():
    module = fuse_text(program(CASES[1][1]))  # gelu: four constants
    fn = list(module.ops)[0]
    top = [op for op in fn.body.block.ops if not isinstance(op, func.ReturnOp)]
    assert all(isinstance(op, graph.FusionGroupOp) for op in top)
    (group,) = top
    constants = [op for op in group.body.block.ops if isinstance(op, graph.ConstantOp)]
    assert len(constants) == 4
    # a constant is never an input
    assert all(not isinstance(v.owner, graph.ConstantOp) for v in group.inputs)


def test_not_fused_reasons_live_on_the_function():
    module = fuse_text(program(MATMUL_PROLOGUE))
    fn = list(module.ops)[0]
    assert NOT_FUSED_ATTR in fn.attributes
    assert not_fused_reasons(fn) == [
        {"producer": "relu_0", "consumer": "matmul_1", "reason": "matmul prologue is not fused"}
    ]


def test_fuse_module_returns_the_plans():
    module = parse(program(CYCLE))
    plans = fuse_module(module, FusionOptions())
    plan = plans["main"]
    assert len(plan.groups) == 2
    assert plan.not_fused_records() == not_fused_reasons(list(module.ops)[0])
    assert all(record["reason"] for record in plan.not_fused_records())


def test_no_fuse_reasons():
    module = no_fuse_text(program(CASES[0][1]))  # sincos
    reasons = not_fused_reasons(list(module.ops)[0])
    assert len(reasons) == 4  # sin->mul, cos->mul, mul->add twice
    assert {r["reason"] for r in reasons} == {"fusion disabled (no-fuse)"}


def test_fusing_twice_changes_nothing():
    once = fuse_text(program(CASES[3][1]))
    twice = once.clone()
    FusePass().apply(None, twice)  # type: ignore[arg-type]
    assert str(once) == str(twice)


def test_dim_size_is_read_from_an_argument():
    text = """
    func.func @main(%x: tensor<?x?xf32, ["N", "D"]>) -> tensor<?x1xf32, ["N", ""]> {
      %e = graph.exp %x : tensor<?x?xf32, ["N", "D"]>
      %s = graph.reduce sum %e axes = [1] keepdims : tensor<?x?xf32, ["N", "D"]> -> tensor<?x1xf32, ["N", ""]>
      %n = graph.dim_size %e[1] : tensor<?x?xf32, ["N", "D"]> -> tensor<f32>
      %nb = graph.broadcast %n : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
      %y = graph.div %s, %nb : tensor<?x1xf32, ["N", ""]>
      func.return %y : tensor<?x1xf32, ["N", ""]>
    }
    """
    module = fuse_text(text)
    (group,) = fusion_groups(module)
    (size,) = [op for op in group.body.block.ops if isinstance(op, graph.DimSizeOp)]
    # it reads the argument %x (a block argument of the group), not the exp inside
    assert size.input.owner is group.body.block


def test_symbolic_dims_change_the_decision():
    text = """
    func.func @main(%x: tensor<?x64xf32, ["N", ""]>, %b: tensor<64xf32>) -> tensor<?x64xf32, ["N", ""]> {
      %t1 = graph.tanh %b : tensor<64xf32>
      %t2 = graph.tanh %t1 : tensor<64xf32>
      %t3 = graph.tanh %t2 : tensor<64xf32>
      %tb = graph.broadcast %t3 : tensor<64xf32> -> tensor<?x64xf32, ["N", ""]>
      %y = graph.add %x, %tb : tensor<?x64xf32, ["N", ""]>
      func.return %y : tensor<?x64xf32, ["N", ""]>
    }
    """
    assert_kernel_count(fuse_text(text), 1)
    assert_kernel_count(fuse_text(text, device="cpu-2core", dims="N=2"), 1)
    big = fuse_text(text, device="cpu-2core", dims="N=100000")
    assert_kernel_count(big, 2)
    assert "cost model" in describe_schedule(big)


def _chain(n: int) -> str:
    """``n`` elementwise ops in a row, each reading only the one before: the kernel
    holds one value at a time however long the chain."""
    names = ["graph.exp", "graph.sin", "graph.neg", "graph.tanh"]
    lines = [f"  %v{i} = {names[i % 4]} {'%v' + str(i - 1) if i else '%x'} : !t" for i in range(n)]
    return "func.func @main(%x: !t) -> !t {\n" + "\n".join(lines) + f"\n  func.return %v{n - 1} : !t\n}}\n"


@pytest.mark.parametrize("device", ["gpu-h200", "cpu-2core"])
def test_a_long_chain_holding_one_value_is_one_kernel(device):
    """No op count splits a kernel: 100 ops with one live value are one kernel
    (the old limit of 64 ops split them and paid a round trip to memory)."""
    assert_kernel_count(fuse_text(program(_chain(100)), device=device), 1)


WIDE = """
func.func @main(%x: !t) -> !t {
  %a = graph.sin %x : !t
  %b = graph.cos %x : !t
  %c = graph.exp %x : !t
  %d = graph.tanh %x : !t
  %s1 = graph.add %a, %b : !t
  %s2 = graph.add %s1, %c : !t
  %s3 = graph.add %s2, %d : !t
  func.return %s3 : !t
}
"""


def test_live_values_bound_a_kernel():
    """Four values computed before any is combined: the kernel holds four at once
    (at the first add). Under max_live=3 it splits, and the report says why."""
    assert_kernel_count(fuse_text(program(WIDE)), 1)
    limited = fuse_text(program(WIDE), max_live=3)
    schedule = describe_schedule(limited)
    assert kernel_count(limited) > 1, schedule
    assert "kernel would hold 4 values at once (max_live=3)" in schedule


def test_chains_of_dependent_ops_bound_a_kernel():
    """lower-to-loops recurses along a kernel's longest chain: max_depth bounds it."""
    limited = fuse_text(program(_chain(10)), max_depth=4)
    schedule = describe_schedule(limited)
    assert kernel_count(limited) == 3, schedule
    for group in fusion_groups(limited):
        assert len([o for o in group.body.block.ops if not isinstance(o, graph.YieldOp)]) <= 4
    assert "(max_depth=4, for lower-to-loops)" in schedule
    long = fuse_text(program(_chain(200)))  # the default: 128
    assert kernel_count(long) > 1
    assert all(len(list(group.body.block.ops)) <= 128 + 1 for group in fusion_groups(long))


#: SwiGLU: silu(x @ w1) * (x @ w3), silu written out as Llama's is, g / (1 + exp(-g))
SWIGLU = """
func.func @main(%x: !x, %w1: !w, %w3: !w) -> !h {
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %g = graph.matmul %x, %w1 : !x, !w -> !h
  %u = graph.matmul %x, %w3 : !x, !w -> !h
  %n = graph.neg %g : !h
  %e = graph.exp %n : !h
  %oneb = graph.broadcast %one : tensor<f32> -> !h
  %d = graph.add %oneb, %e : !h
  %sig = graph.div %oneb, %d : !h
  %silu = graph.mul %g, %sig : !h
  %y = graph.mul %silu, %u : !h
  func.return %y : !h
}
"""


@pytest.mark.parametrize("device", ["gpu-h200", "cpu-2core"])
def test_an_activation_between_two_gemms_joins_the_epilogue_that_reads_it(device):
    """Merging the activation into either GEMM's group saves the same time (the GEMM's
    FLOPs bound both): it joins the second, whose epilogue reads the first product, rather
    than the first, which would then write its product and the activation both."""
    fused = fuse_text(program(SWIGLU), device=device, dims="T=2048,D=1024,F=2816")
    first, second = fusion_groups(fused)
    assert [op.name for op in first.body.block.ops] == ["graph.matmul", "graph.yield"]
    assert len(first.results) == 1 and len(second.results) == 1
    assert {"graph.exp", "graph.div"} <= {op.name for op in second.body.block.ops}
