"""Every kind of fusion group, lowered to loops, compiled with Numba and run on the
CPU, equals the NumPy reference interpreter's evaluation of the same module."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.cpu.executor import CompiledProgram
from tests.loops.cases import CASES
from tests.loops.harness import (  # noqa: F401  (kernel_cache is a fixture)
    CPU_PIPELINE,
    assert_results_equal,
    draw_inputs,
    kernel_cache,
    lowered,
    parse,
    reference,
)


def check(name: str, spec: str, cache: str, sizes: dict[str, int] | None = None, seed: int = 0) -> CompiledProgram:
    case = CASES[name]
    arrays = draw_inputs(parse(case.text), sizes or case.sizes, seed)
    program = CompiledProgram(lowered(case.text, spec), cache_dir=cache)
    got = program.run("main", arrays)
    assert_results_equal(got, reference(case.text, arrays), case.rtol, case.atol)
    return program


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_reference(name, kernel_cache):
    check(name, CPU_PIPELINE, kernel_cache)


@pytest.mark.parametrize("name", ["softmax_rows", "matmul_bias_gelu", "transpose_reshape", "attention"])
def test_tiled_case_matches_reference(name, kernel_cache):
    """Tiles that do not divide the sizes: the last tile is cut at the bound."""
    check(name, "lower-to-loops,tile{sizes=2,4},map-cpu,plan-memory", kernel_cache)


@pytest.mark.parametrize("name", ["layernorm_rows", "reduce_axis0_and_all"])
def test_unmapped_and_unplanned_case_matches_reference(name, kernel_cache):
    """Straight out of lower-to-loops: serial loops, host function returning buffers."""
    check(name, "lower-to-loops", kernel_cache)


def test_one_compile_serves_every_size(kernel_cache, monkeypatch):
    """Symbolic sizes are read from the buffers: other sizes reuse the same machine
    code (one Numba signature per kernel variant; the largest size here runs the
    parallel variant, the others the serial one)."""
    monkeypatch.setenv("FUSEC_PARALLEL_MIN_WORK", "10000")
    program = check("softmax_rows", CPU_PIPELINE, kernel_cache, {"B": 3, "N": 5})
    for seed, sizes in enumerate([{"B": 1, "N": 1}, {"B": 17, "N": 130}], start=1):
        case = CASES["softmax_rows"]
        arrays = draw_inputs(parse(case.text), sizes, seed)
        assert_results_equal(program.run("main", arrays), reference(case.text, arrays), case.rtol, case.atol)
    (name,) = program.kernels
    assert len(program.dispatcher(name, parallel=False).signatures) == 1
    assert len(program.dispatcher(name, parallel=True).signatures) == 1


def test_empty_sizes(kernel_cache):
    """A size of 0 runs no iteration and gives empty results (the reduction over
    an empty row gives its identity)."""
    program = check("multi_output_row", CPU_PIPELINE, kernel_cache, {"N": 0, "D": 3})
    got = program.run("main", [np.zeros((2, 0), np.float32)])
    np.testing.assert_array_equal(got[1], np.zeros(2, np.float32))
