"""``select-strategy`` and ``split-library-groups``: which lowering a matmul group gets,
and how a library group is cut into calls and the kernels between them."""

from __future__ import annotations

from math import inf

import pytest

from compiler.api import compile as compile_program
from dialects import graph
from dialects.group_kinds import GroupStrategy
from passes.fusion.cost import CPU_2CORE, GPU_H200
from passes.fusion.select_strategy import (
    KernelPart,
    LibraryCall,
    SelectStrategyPass,
    choose,
    predicted_times,
    split_at_matmuls,
)
from tests.passes.harness import parse, run_passes
from tests.samples.reference import SAMPLES_DIR


def fused_groups(sample: str, dims: dict[str, int] | None = None, target: str = "cpu") -> list[graph.FusionGroupOp]:
    program = compile_program(SAMPLES_DIR / sample, target="numpy")
    module = parse(program.compilation(dims=dims).text("fused"))
    return [op for op in module.walk() if isinstance(op, graph.FusionGroupOp)]


def kinds(steps) -> list[str]:
    return ["call" if isinstance(s, LibraryCall) else "kernel" for s in steps]


def test_mlp_epilogue_follows_its_call():
    first = fused_groups("mlp.tdsl")[0]
    steps = split_at_matmuls(first.body.block)
    assert kinds(steps) == ["call", "kernel"]
    part = steps[1]
    assert isinstance(part, KernelPart)
    names = [op.name for op in part.ops]
    # the bias broadcast joins its reader instead of being written out before the call
    assert "graph.broadcast" in names and "graph.add" in names
    assert all(not isinstance(op, graph.MatmulOp) for op in part.ops)


def test_attention_splits_around_the_softmax():
    attention = next(g for g in fused_groups("attention.tdsl", {"B": 2, "S": 128}) if g.kind == "attention")
    steps = split_at_matmuls(attention.body.block)
    assert kinds(steps)[:3] == ["call", "kernel", "call"]
    softmax = steps[1]
    assert sum(isinstance(op, graph.ReduceOp) for op in softmax.ops) == 2
    # q @ k^T reads both operands as they come: no kernel copies them
    first = steps[0]
    assert first.level == 1 and steps[2].level == 2


def test_library_wins_big_matmuls_on_both_targets():
    group = fused_groups("mlp.tdsl", {"T": 4096, "D": 1024, "F": 4096})[0]
    for device in (CPU_2CORE, GPU_H200):
        times = predicted_times(group, device, {"T": 4096, "D": 1024, "F": 4096})
        assert times[GroupStrategy.LIBRARY] < times[GroupStrategy.GENERATED] < inf
        assert choose(times) == GroupStrategy.LIBRARY


def test_choice_follows_availability_and_preference():
    times = {GroupStrategy.GENERATED: 2.0, GroupStrategy.LIBRARY: 1.0}
    assert choose(times, "generated") == GroupStrategy.GENERATED
    assert (
        choose({GroupStrategy.GENERATED: 2.0, GroupStrategy.LIBRARY: inf}, "library") == GroupStrategy.GENERATED
    )  # no library there
    assert (
        choose({GroupStrategy.GENERATED: inf, GroupStrategy.LIBRARY: inf}) == GroupStrategy.GENERATED
    )  # runs anywhere


def test_cpu_attention_is_generated():
    # the CPU's flash kernel keeps its scores out of memory, which the library writes and
    # reads between its two BLAS calls (runtime/cpu/codegen_flash.py)
    attention = next(g for g in fused_groups("attention.tdsl", {"B": 2, "S": 128}) if g.kind == "attention")
    times = predicted_times(attention, CPU_2CORE, {"B": 2, "S": 128})
    assert times[GroupStrategy.GENERATED] < times[GroupStrategy.LIBRARY] < inf


@pytest.mark.parametrize(
    "options,expected",
    [
        ({}, GroupStrategy.LIBRARY),
        ({"library": False}, GroupStrategy.GENERATED),
        ({"prefer": "generated"}, GroupStrategy.GENERATED),
    ],
)
def test_pass_sets_the_attribute(options, expected):
    program = compile_program(SAMPLES_DIR / "mlp.tdsl", target="numpy", fuse=True)
    from passes.fusion.fuse import FusePass

    module = parse(program.compilation().text("opt"))
    fused = run_passes(
        module,
        [FusePass(device="cpu-2core"), SelectStrategyPass(device="cpu-2core", dims="T=2048,D=1024,F=4096", **options)],
    )
    strategies = {op.strategy for op in fused.walk() if isinstance(op, graph.FusionGroupOp)}
    assert strategies == {expected}


def test_unknown_options_are_refused():
    with pytest.raises(ValueError, match="prefer must be"):
        SelectStrategyPass(prefer="cublas")
    with pytest.raises(ValueError, match="unknown device"):
        SelectStrategyPass(device="tpu")


def test_report_names_the_strategy_and_both_predictions():
    program = compile_program(SAMPLES_DIR / "mlp.tdsl", target="cpu")
    from passes.fusion.cost import CPU_2CORE as device
    from passes.fusion.report import fusion_report

    report = fusion_report(program.compilation().stage("fused"), device=device)
    for group in report["groups"]:
        assert group["strategy"] == GroupStrategy.LIBRARY
        assert set(group["strategies_us"]) == {GroupStrategy.LIBRARY, GroupStrategy.GENERATED}
        assert group["predicted_us"] == group["strategies_us"][GroupStrategy.LIBRARY]


def test_symbolic_sizes_are_judged_at_both_ends(tmp_path):
    """Compiled once, a program runs at any size: with M, N, K unbound the GPU takes
    cuBLAS (a launch lost at 256, milliseconds won at 4096); bound small, generated."""
    from passes.fusion.fuse import FusePass

    path = tmp_path / "mm.tdsl"
    path.write_text("fn main(a: f32[M, K], w: f32[K, N], b: f32[N]) -> f32[M, N] { return relu(a @ w + b) }")
    module = parse(compile_program(path, target="numpy").compilation().text("opt"))

    def strategy(dims: str) -> str:
        fused = run_passes(module, [FusePass(device="gpu-h200"), SelectStrategyPass(device="gpu-h200", dims=dims)])
        (group,) = [op for op in fused.walk() if isinstance(op, graph.FusionGroupOp)]
        return group.strategy

    assert strategy("") == GroupStrategy.LIBRARY
    assert strategy("M=64,K=64,N=64") == GroupStrategy.GENERATED


def test_gpu_attention_streams_where_its_scores_would_outgrow_memory(tmp_path):
    """Library attention writes the S x S scores: at S = 4096 (a symbolic S is judged
    there) they outgrow an 80 GB card where the flash kernel's O(S) memory does not, so
    the GPU streams (without the memory rule the library's faster GEMMs would win there);
    so does the CPU, where the flash kernel is the faster at both ends."""
    from passes.fusion.fuse import FusePass

    path = tmp_path / "attn.tdsl"
    path.write_text(
        "fn main(q: f32[B, 16, S, 64], k: f32[B, 16, S, 64], v: f32[B, 16, S, 64]) -> f32[B, 16, S, 64] {\n"
        "    return softmax(q @ transpose(k, (0, 1, 3, 2)) * 0.125, axis=-1) @ v\n}"
    )
    module = parse(compile_program(path, target="numpy").compilation().text("opt"))

    def strategy(device: str, dims: str) -> str:
        fused = run_passes(module, [FusePass(device=device), SelectStrategyPass(device=device, dims=dims)])
        (group,) = [op for op in fused.walk() if isinstance(op, graph.FusionGroupOp)]
        assert group.kind == "attention"
        return group.strategy

    assert strategy("gpu-h200", "") == GroupStrategy.GENERATED
    assert strategy("gpu-h200", "B=1,S=65536") == GroupStrategy.GENERATED  # bound, and the scores do not fit
    assert strategy("gpu-h200", "B=8,S=2048") == GroupStrategy.LIBRARY  # bound, and they fit: cuBLAS's rate wins
    assert strategy("cpu-2core", "") == GroupStrategy.GENERATED


def test_half_products_are_judged_at_the_half_rates(tmp_path):
    """The same product in f16 or bf16 runs on tensor cores, in the library (cuBLAS's
    half and bfloat16 GEMMs) and in fusec's generated GEMM alike, at rates of their own
    (``DeviceModel.half``); where no library is installed, no precision counts one."""
    from passes.fusion.fuse import FusePass

    times = {}
    for dtype in ("f32", "f16", "bf16"):
        path = tmp_path / f"mm_{dtype}.tdsl"
        path.write_text(f"fn main(a: {dtype}[M, K], w: {dtype}[K, N]) -> {dtype}[M, N] {{ return relu(a @ w) }}")
        module = parse(compile_program(path, target="numpy").compilation().text("opt"))
        fused = run_passes(module, [FusePass(device="gpu-h200")])
        (group,) = [op for op in fused.walk() if isinstance(op, graph.FusionGroupOp)]
        dims = {"M": 4096, "K": 4096, "N": 4096}
        times[dtype] = predicted_times(group, GPU_H200, dims)
        assert predicted_times(group, GPU_H200.without_library(), dims)[GroupStrategy.LIBRARY] == inf
    assert GPU_H200.half is not None
    for strategy in (GroupStrategy.LIBRARY, GroupStrategy.GENERATED):
        assert times["f16"][strategy] < times["f32"][strategy] / 2
    assert times["bf16"] == times["f16"]
    assert choose(times["f16"]) == GroupStrategy.LIBRARY  # cuBLAS's tensor cores lead fusec's mma.sync
