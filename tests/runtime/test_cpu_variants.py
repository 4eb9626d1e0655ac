"""A CPU kernel's serial and parallel variants: the work a launch does on given
shapes (``runtime/cpu/loop_work.py``), the threshold between the variants
(``runtime/cpu/threads.py``), and the variant each launch takes."""

from __future__ import annotations

import pytest

import fusec
from runtime import knobs
from runtime.cpu import threads as cpu_threads
from runtime.cpu.executor import CompiledProgram
from runtime.cpu.loop_work import TRANSCENDENTAL, work_counter
from tests.loops.cases import CASES
from tests.loops.harness import CPU_PIPELINE, draw_inputs, kernel_cache, lowered, parse, run_passes  # noqa: F401  (a fixture)

SOFTMAX = "fn main(x: f32[B, N]) -> f32[B, N] {\n    return softmax(x, axis=1)\n}\n"


def kernel_of(case: str, pipeline: str = CPU_PIPELINE):
    (kernel,) = [op for op in run_passes(parse(CASES[case].text), pipeline).ops if op.name == "loop.kernel"]
    return kernel


def test_softmax_rows_work_is_rows_times_columns_times_its_ops():
    count = work_counter(kernel_of("softmax_rows"))
    per_element = count([(3, 40), (3, 40)]) / (3 * 40)
    # max: a load; exp: load, sub, exp, store; sum: a load; divide: load, div, store
    assert 1 + 3 + TRANSCENDENTAL + 1 + 3 <= per_element < 1 + 3 + TRANSCENDENTAL + 1 + 3 + 1
    assert count([(6, 40), (6, 40)]) - count([(3, 40), (3, 40)]) == count([(3, 40), (3, 40)]) - count([(0, 40), (0, 40)])


def test_matmul_work_grows_with_the_product_of_its_sizes():
    count = work_counter(kernel_of("matmul_bias_gelu"))
    small, large = count([(8, 16), (16, 24), (24,), (8, 24)]), count([(64, 16), (16, 24), (24,), (64, 24)])
    assert large == pytest.approx(8 * small, rel=0.01)
    assert small > 8 * 16 * 24  # a multiply-add per (row, column, k), and the epilogue


def test_tiles_count_once_each():
    """An inner tile loop bounded by ``min(i + T, n)`` counts a whole tile."""
    tiled = work_counter(kernel_of("softmax_rows", "lower-to-loops,tile{sizes=2,4},map-cpu,plan-memory"))
    plain = work_counter(kernel_of("softmax_rows"))
    assert tiled([(8, 16), (8, 16)]) == pytest.approx(plain([(8, 16), (8, 16)]), rel=0.1)


def test_the_threshold_is_the_work_that_pays_for_waking_the_pool(monkeypatch):
    monkeypatch.delenv(knobs.PARALLEL_MIN_WORK.name, raising=False)
    for threads in (2, 16):
        serial_us = cpu_threads.parallel_min_work(threads) * cpu_threads.NS_PER_OP / 1e3
        # from there, the threads' share of the work and the wake take less than the work
        assert serial_us / threads + cpu_threads.WAKE_US == pytest.approx(serial_us)
    assert cpu_threads.parallel_min_us(2) == pytest.approx(2 * cpu_threads.WAKE_US)
    assert cpu_threads.parallel_min_work(1) == float("inf")


def test_the_threshold_from_the_environment(monkeypatch):
    monkeypatch.setenv(knobs.PARALLEL_MIN_WORK.name, "123")
    assert cpu_threads.parallel_min_work(2) == 123
    for bad in ("many", "-1", "nan"):
        monkeypatch.setenv(knobs.PARALLEL_MIN_WORK.name, bad)
        with pytest.raises(fusec.InputError, match=knobs.PARALLEL_MIN_WORK.name):
            cpu_threads.parallel_min_work(2)


def variants(program: CompiledProgram, arrays) -> set[bool]:
    """Which variants (parallel or not) the launches of a call take."""
    parallel = {program.dispatcher(name, parallel=True) for name in program.kernels}
    return {kernel in parallel for kernel in program.launched_kernels("main", arrays).values()}


def test_small_calls_run_serial_and_large_ones_parallel(monkeypatch, kernel_cache):
    monkeypatch.setenv(knobs.PARALLEL_MIN_WORK.name, "5000")
    program = CompiledProgram(lowered(CASES["softmax_rows"].text), cache_dir=kernel_cache)
    module = parse(CASES["softmax_rows"].text)
    small, large = draw_inputs(module, {"B": 4, "N": 8}), draw_inputs(module, {"B": 64, "N": 64})
    assert variants(program, small) == {False}
    assert variants(program, large) == {True}


def test_one_thread_never_launches_the_parallel_variant(monkeypatch, kernel_cache):
    monkeypatch.delenv(knobs.PARALLEL_MIN_WORK.name, raising=False)
    monkeypatch.setattr(cpu_threads, "threads", lambda: 1)
    program = CompiledProgram(lowered(CASES["softmax_rows"].text), cache_dir=kernel_cache)
    assert variants(program, draw_inputs(parse(CASES["softmax_rows"].text), {"B": 4096, "N": 512})) == {False}


def test_a_bad_threshold_is_one_clear_error(monkeypatch):
    monkeypatch.setenv(knobs.PARALLEL_MIN_WORK.name, "lots")
    program = fusec.compile(SOFTMAX, target="cpu")
    with pytest.raises(fusec.InputError, match="FUSEC_PARALLEL_MIN_WORK='lots'"):
        program.main(draw_inputs(parse(CASES["softmax_rows"].text), {"B": 2, "N": 3})[0])
