"""The samples through the whole road on the CPU: front end, rewrites and fusion
(through ``Program.ir("fused")``), then lower-to-loops, map-cpu and plan-memory,
compiled with Numba; results against the samples' independent NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.api import compile as compile_program
from dialects import graph
from passes.lower_to_loops import LowerToLoopsPass
from passes.pipeline import loop_pipeline
from runtime.cpu.executor import CompiledProgram
from runtime.registry import TARGETS
from tests.loops.harness import kernel_cache, parse, run_passes  # noqa: F401  (a fixture)
from tests.samples.reference import SAMPLES


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_on_cpu_loops(name, kernel_cache):
    case = SAMPLES[name]
    program = compile_program(str(case.path), target="numpy")
    program.plan_for_inputs()  # the plan of the sample's `# dims:` sizes, whose kernels it counts
    module = parse(program.ir("fused"))
    if case.kernels is not None:  # fusion groups: a library group runs as calls and kernels
        assert sum(isinstance(op, graph.FusionGroupOp) for op in module.walk()) == case.kernels
    run_passes(module, ",".join([LowerToLoopsPass.name, *[p.name for p in loop_pipeline(TARGETS["cpu"].loop_passes)]]))
    compiled = CompiledProgram(module, cache_dir=kernel_cache)
    inputs = case.make_inputs(np.random.default_rng(0))
    arrays = [inputs[p.name] for p in program.params("main")]
    got = compiled.run("main", arrays)
    expected = case.reference(**inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == np.dtype(case.out_dtype)
        np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)
