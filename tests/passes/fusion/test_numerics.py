"""A fused module computes what the unfused one computes: both run through the
NumPy reference interpreter (``runtime.reference.interpreter.evaluate``), which runs a
``graph.fusion_group`` by running its body."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import func

from tests.passes.fusion.cases import CASES, program
from tests.passes.fusion.schedule import assert_kernel_count, fuse_text, no_fuse_text, parse
from tests.passes.harness import assert_same_results

REPO = Path(__file__).resolve().parents[3]
FILECHECK_INPUTS = sorted((REPO / "tests/filecheck/passes/fuse").glob("*.mlir"))


@pytest.mark.parametrize("name, body, fused, unfused", CASES, ids=[c[0] for c in CASES])
def test_cases_fused_equal_unfused(name, body, fused, unfused):
    text = program(body)
    original = parse(text)
    assert_same_results(original, fuse_text(text), "main", rtol=0, atol=0)
    assert_same_results(original, no_fuse_text(text), "main", rtol=0, atol=0)
    assert_same_results(original, fuse_text(text, device="cpu-2core", max_live=1, max_depth=3), "main", rtol=0, atol=0)


def _functions(path: Path) -> list[str]:
    return [op.sym_name.data for op in parse(path.read_text()).ops if isinstance(op, func.FuncOp)]


@pytest.mark.parametrize(
    "path, entry",
    [(p, f) for p in FILECHECK_INPUTS for f in _functions(p)],
    ids=[f"{p.stem}-{f}" for p in FILECHECK_INPUTS for f in _functions(p)],
)
def test_filecheck_inputs_fused_equal_unfused(path, entry):
    text = path.read_text()
    original = parse(text)
    sizes = {"N": 5, "D": 7, "T": 3, "F": 6, "B": 2, "S": 5}
    assert_same_results(original, fuse_text(text), entry, sizes=sizes, rtol=0, atol=0)


# ---------------------------------------------------------------------------
# the samples, through the front end and the rewrites

SAMPLE_KERNELS = {
    "attention": 3,  # Q‖K‖V projections, attention, output projection
    "bias_gelu_residual": 1,
    "gelu_chain": 1,
    "layernorm": 1,
    "mlp": 2,  # two matmuls with their epilogues
    "reductions": 1,
    "rmsnorm": 1,
    "sincos": 1,
    "softmax": 1,
    "transformer_block": 7,
}


def _opt_module(path: Path):
    from compiler.source import source_to_module

    pipeline = pytest.importorskip("passes.pipeline")
    from tests.passes.harness import run_passes

    graph_module = source_to_module(path.read_text(), str(path))
    return run_passes(graph_module, pipeline.graph_rewrite_pipeline("main"))


@pytest.mark.parametrize("sample", sorted(SAMPLE_KERNELS))
def test_samples_kernel_counts_and_numbers(sample):
    from passes.fusion.fuse import FusePass
    from tests.passes.harness import run_passes

    opt = _opt_module(REPO / "samples" / f"{sample}.tdsl")
    fused = run_passes(opt, [FusePass()])
    assert_kernel_count(fused, SAMPLE_KERNELS[sample], entry="main")
    assert_same_results(opt, fused, "main", sizes={"N": 5, "D": 6, "B": 2, "S": 3, "T": 4, "F": 5})
