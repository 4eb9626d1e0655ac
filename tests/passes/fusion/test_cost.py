"""The cost model: device figures, bytes, FLOPs, roofline time, fusion score."""

from __future__ import annotations

import dataclasses

import pytest

from passes.fusion.cost import (
    CPU_2CORE,
    DEFAULT_DIM,
    GPU_H200,
    DeviceModel,
    KernelCost,
    device_by_name,
    element_count,
    fusion_score,
    op_flops,
    parse_dims,
    recompute_factors,
)
from passes.fusion.graph_view import FuncGraph
from tests.passes.fusion.cases import SOFTMAX, program
from tests.passes.fusion.schedule import parse


def test_gpu_figures_are_notes_gpu_md():
    assert GPU_H200.bandwidth == 4.22e12
    assert GPU_H200.flops == 51e12
    assert 0 < GPU_H200.launch_overhead < 50e-6


def test_cpu_figures():
    # a 64 MiB copy (64 MiB read + 64 MiB written) in about 11 ms
    assert CPU_2CORE.bandwidth == pytest.approx(128 * 2**20 / 11e-3)
    assert 11e9 < CPU_2CORE.bandwidth < 13e9
    assert CPU_2CORE.flops < GPU_H200.flops


def test_device_model_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        GPU_H200.bandwidth = 1.0  # type: ignore[misc]


def test_device_by_name():
    assert device_by_name("gpu-h200") is GPU_H200
    assert device_by_name("CPU-2core") is CPU_2CORE
    with pytest.raises(ValueError, match="unknown device"):
        device_by_name("tpu")


def test_roofline_time():
    device = DeviceModel("toy", bandwidth=1e9, flops=1e10, launch_overhead=1e-6)
    # bandwidth-bound: 1e6 bytes at 1 GB/s = 1 ms
    assert device.time(1e6, 1e6) == pytest.approx(1e-3 + 1e-6)
    # compute-bound: 1e8 FLOPs at 10 GFLOP/s = 10 ms
    assert device.time(1e6, 1e8) == pytest.approx(1e-2 + 1e-6)


def test_parse_dims():
    assert parse_dims("N=1024,D=768") == {"N": 1024, "D": 768}
    assert parse_dims("") == {} and parse_dims(None) == {}
    assert parse_dims({"N": 3}) == {"N": 3}
    with pytest.raises(ValueError):
        parse_dims("N")


def test_symbolic_sizes_default_to_256():
    assert DEFAULT_DIM == 256
    assert element_count(("N", 3), {}) == 256 * 3
    assert element_count(("N", "D"), {"N": 10}) == 10 * 256


MATMUL = """
func.func @main(%a: tensor<?x64x32xf32, ["B", "", ""]>, %b: tensor<32x16xf32>, %c: tensor<?x16x32xf32, ["B", "", ""]>) -> tensor<?x64x16xf32, ["B", "", ""]> {
  %m = graph.matmul %a, %b : tensor<?x64x32xf32, ["B", "", ""]>, tensor<32x16xf32> -> tensor<?x64x16xf32, ["B", "", ""]>
  %t = graph.matmul %a, %c transpose_rhs : tensor<?x64x32xf32, ["B", "", ""]>, tensor<?x16x32xf32, ["B", "", ""]> -> tensor<?x64x16xf32, ["B", "", ""]>
  %s = graph.add %m, %t : tensor<?x64x16xf32, ["B", "", ""]>
  func.return %s : tensor<?x64x16xf32, ["B", "", ""]>
}
"""


def test_matmul_flops_are_2mnk_per_batch():
    g = FuncGraph.build(list(parse(MATMUL).ops)[0])
    m, t, s = g.ops
    assert op_flops(m, {"B": 2}) == 2 * 2 * 64 * 16 * 32
    assert op_flops(t, {"B": 2}) == 2 * 2 * 64 * 16 * 32  # K from the transposed rhs
    assert op_flops(s, {"B": 2}) == 2 * 64 * 16


def test_softmax_group_bytes_and_time():
    """Fused softmax moves x in and y out; unfused, every op moves its operands."""
    g = FuncGraph.build(list(parse(program(SOFTMAX)).ops)[0])
    dims = {"N": 1024, "D": 512}
    full = 1024 * 512 * 4
    row = 1024 * 4
    everything = frozenset(range(len(g.ops)))
    fused = g.cost(everything, "reduction", GPU_H200, dims)
    assert fused.bytes == 2 * full
    # reductions read D elements per row (max, sum); sub, exp, div one FLOP-ish each
    assert fused.flops == pytest.approx(1024 * 512 * (1 + 1 + 8 + 1 + 4))
    assert fused.seconds == pytest.approx(max(2 * full / 4.22e12, fused.flops / 51e12) + GPU_H200.launch_overhead)
    unfused = sum(g.cost(frozenset({i}), "elementwise", GPU_H200, dims).bytes for i in range(len(g.ops)))
    # max: x, m | bcast: m, mb | sub: x, mb, d | exp: d, e | sum: e, s | bcast: s, sb | div: e, sb, y
    assert unfused == 12 * full + 4 * row


def test_fusion_score_counts_launch_and_bytes():
    device = DeviceModel("toy", bandwidth=1e9, flops=1e12, launch_overhead=1e-5)
    a = KernelCost(bytes=2_000_000, flops=0, flops_once=0, seconds=device.time(2e6, 0))
    b = KernelCost(bytes=2_000_000, flops=0, flops_once=0, seconds=device.time(2e6, 0))
    merged = KernelCost(bytes=2_000_000, flops=0, flops_once=0, seconds=device.time(2e6, 0))
    score = fusion_score(a, b, merged, device)
    assert score.bytes_saved == 2_000_000
    assert score.saving == pytest.approx(2e-3 + 1e-5)
    assert score.benefit == pytest.approx(2e-3 + 1e-5) and score.cost == 0


def test_recomputation_makes_a_merge_lose():
    device = DeviceModel("toy", bandwidth=1e9, flops=1e9, launch_overhead=1e-6)
    a = KernelCost(bytes=1000, flops=1e3, flops_once=1e3, seconds=device.time(1000, 1e3))
    b = KernelCost(bytes=1_000_000, flops=1e6, flops_once=1e6, seconds=device.time(1e6, 1e6))
    merged = KernelCost(bytes=1_000_000, flops=1e8, flops_once=1.001e6, seconds=device.time(1e6, 1e8))
    score = fusion_score(a, b, merged, device)
    assert score.saving < 0 and score.recompute_flops > 0


RECOMPUTE = """
func.func @main(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %t = graph.tanh %b : tensor<16xf32>
  %tb = graph.broadcast %t : tensor<16xf32> -> tensor<8x16xf32>
  %y = graph.add %x, %tb : tensor<8x16xf32>
  func.return %y : tensor<8x16xf32>
}
"""


def test_ops_upstream_of_a_broadcast_are_recomputed_per_element():
    g = FuncGraph.build(list(parse(RECOMPUTE).ops)[0])
    ops = g.ops
    outputs = {ops[2].results[0]}
    factors = recompute_factors(ops, lambda v: v in outputs, hoists_broadcasts=False, dims={})
    assert factors[ops[2]] == 1 and factors[ops[1]] == 1
    assert factors[ops[0]] == 8  # tanh of the bias row, once per row of x
    hoisted = recompute_factors(ops, lambda v: v in outputs, hoists_broadcasts=True, dims={})
    assert hoisted[ops[0]] == 1
