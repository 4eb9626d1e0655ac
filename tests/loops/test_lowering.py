"""The loop passes on the hand-written fused modules: structure, round trips,
idempotence (no Numba here)."""

from __future__ import annotations

import pytest
from xdsl.dialects import func, math

from dialects import graph, loop
from passes.cpu.map_cpu import MapCpuPass
from passes.cuda.map_gpu import MapGpuPass
from passes.pipeline import loop_pipeline
from passes.plan_memory import PlanMemoryPass
from passes.tile import TilePass
from runtime.registry import TARGETS
from tests.loops.cases import CASES
from tests.loops.harness import CPU_PIPELINE, lowered, parse, run_passes

STAGES = ["lower-to-loops", "lower-to-loops,tile{sizes=4,8}", "lower-to-loops,map-cpu", "lower-to-loops,map-cpu,plan-memory"]


def ops_of(module, kind):
    return [op for op in module.walk() if isinstance(op, kind)]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("spec", STAGES)
def test_every_stage_verifies_and_round_trips(name, spec):
    module = lowered(CASES[name].text, spec)
    text = str(module)
    assert str(parse(text)) == text


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_kernel_per_group(name):
    source = parse(CASES[name].text)
    groups = ops_of(source, graph.FusionGroupOp)
    module = lowered(CASES[name].text)
    kernels = ops_of(module, loop.KernelOp)
    assert [k.sym_name.data for k in kernels] == [g.kernel_name for g in groups]
    for kernel, group in zip(kernels, groups):
        assert len(kernel.inputs) == len(group.inputs)
        assert len(kernel.outputs) == len(group.outputs)
    launches = ops_of(module, loop.LaunchOp)
    assert [l.kernel_name for l in launches] == [k.sym_name.data for k in kernels]
    assert not ops_of(module, graph.FusionGroupOp)


@pytest.mark.parametrize(
    "name, scratch, exps",
    [
        ("softmax_rows", 1, 1),  # exp(x - max) once per element, kept for the sum and the output
        ("layernorm_rows", 0, 0),  # centred values are recomputed, not kept
        ("elementwise_chain", 0, 0),
        ("attention", 3, 1),  # scores, exp, probabilities of one row
        ("transpose_reshape", 0, 1),  # layout is index maps: no temporaries
        ("matmul_bias_gelu", 0, 0),
    ],
)
def test_what_is_kept_per_row(name, scratch, exps):
    module = lowered(CASES[name].text, "lower-to-loops")
    assert len(ops_of(module, loop.ScratchOp)) == scratch
    assert len(ops_of(module, math.ExpOp)) == exps


def test_store_per_output_element_only():
    """Index maps are not copies: one store per output in the layout kernel."""
    module = lowered(CASES["transpose_reshape"].text)
    assert len(ops_of(module, loop.StoreOp)) == 2


@pytest.mark.parametrize("name", ["softmax_rows", "attention", "two_kernels", "transpose_reshape"])
def test_passes_are_idempotent(name):
    module = lowered(CASES[name].text, "lower-to-loops,tile{sizes=4,8},map-cpu,plan-memory")
    text = str(module)
    run_passes(module, "tile{sizes=4,8},map-cpu,plan-memory")
    assert str(module) == text


def test_results_become_arguments():
    module = lowered(CASES["two_kernels"].text)
    (host,) = ops_of(module, func.FuncOp)
    assert host.function_type.outputs.data == ()
    attrs = [a.data for a in host.arg_attrs.data]
    assert [a.get("loop.result") is not None for a in attrs] == [False, False, True, True]
    assert [a["loop.shape"].data for a in attrs] == [("N", "D"), ("D", "D"), ("N", "D"), ("N", "D")]
    assert len(ops_of(module, loop.CopyOp)) == 1  # the returned argument


def test_loop_pipeline():
    cpu = TARGETS["cpu"].loop_passes
    passes = loop_pipeline(cpu, (32, 32))
    assert [type(p) for p in passes] == [TilePass, MapCpuPass, PlanMemoryPass]
    assert passes[0].sizes == (32, 32)
    assert [type(p) for p in loop_pipeline(cpu)] == [MapCpuPass, PlanMemoryPass]
    assert [type(p) for p in loop_pipeline(TARGETS["cuda"].loop_passes)] == [MapGpuPass, PlanMemoryPass]


@pytest.mark.parametrize("name, interchanged", [("matmul_bias_gelu", 1), ("attention", 1), ("two_kernels", 1), ("softmax_rows", 0)])
def test_map_cpu_interchanges_strided_reductions(name, interchanged):
    """A reduction reading along the columns of a buffer (a matmul's right operand)
    becomes a loop.for over k updating a row of accumulators (the f32 matmuls here would
    otherwise get the gemm schedule: gemm=false)."""
    module = lowered(CASES[name].text, CPU_PIPELINE.replace("map-cpu", "map-cpu{gemm=false}"))
    assert len(ops_of(module, loop.ForOp)) == interchanged
    module = lowered(CASES[name].text, "lower-to-loops,map-cpu{interchange=false}")
    assert not ops_of(module, loop.ForOp)
