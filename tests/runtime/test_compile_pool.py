"""The compile pool: kernels compiled at once in helper processes into the disk cache,
each launch waiting for its own (runtime/kernel_compiler.py); its progress on the
``fusec.compile`` logger and in ``--time-passes``. CPU kernels stand in for GPU ones here
(the CUDA simulator compiles nothing); tests/cuda runs the pool on a GPU."""

from __future__ import annotations

import io
import logging
import time

import numpy as np
import pytest
from numba import types

from compiler import progress
from runtime import kernel_cache, kernel_compiler, timing
from tests.runtime.test_kernel_cache import OPTIONS, SOURCE

SIGNATURE = (types.Array(types.float32, 1, "C"), types.Array(types.float32, 1, "C"))


def sources(count: int) -> list[str]:
    return [SOURCE.replace("2.0", f"{k + 2}.0") for k in range(count)]


def test_the_pool_compiles_each_missing_kernel_once_and_the_launches_load_them(tmp_path, caplog):
    pool = kernel_compiler.CompilePool()
    dispatchers = [
        kernel_cache.load_kernel(s, OPTIONS, directory=tmp_path, compile_aside=pool.wait) for s in sources(3)
    ]
    requests = [kernel_cache.missing_compile(d, SIGNATURE) for d in dispatchers]
    assert all(r is not None for r in requests)
    try:
        with timing.recording() as steps, caplog.at_level(logging.INFO, logger="fusec.compile"):
            pool.submit([(f"k{i}", r) for i, r in enumerate(requests)] + [("again", requests[0])])
            x = np.arange(4, dtype=np.float32)
            for k, dispatcher in enumerate(dispatchers):
                y = np.empty_like(x)
                dispatcher(x, y)
                np.testing.assert_array_equal(y, (k + 2) * x)
                assert dispatcher.stats.cache_hits and not dispatcher.stats.cache_misses  # loaded, not compiled here
    finally:
        pool.close()
    assert sorted(s.name for s in steps if s.phase is timing.Phase.COMPILE) == ["k0", "k1", "k2"]
    assert {s.where for s in steps} == {"helper"}
    assert caplog.messages[0] == "compiling 3 kernels: 0 done, 3 running"
    assert caplog.messages[-1].startswith("compiled 3 kernels in ")
    assert all(kernel_cache.missing_compile(d, SIGNATURE) is None for d in dispatchers)


def test_a_kernel_the_pool_never_had_compiles_where_it_runs(tmp_path):
    pool = kernel_compiler.CompilePool()
    (source,) = sources(1)
    dispatcher = kernel_cache.load_kernel(source, OPTIONS, directory=tmp_path, compile_aside=pool.wait)
    x = np.arange(4, dtype=np.float32)
    y = np.empty_like(x)
    dispatcher(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    assert dispatcher.stats.cache_misses


def test_workers_come_from_the_knob_else_the_cores(monkeypatch):
    monkeypatch.setenv("FUSEC_COMPILE_WORKERS", "3")
    assert kernel_compiler.workers() == 3
    monkeypatch.delenv("FUSEC_COMPILE_WORKERS")
    assert 1 <= kernel_compiler.workers() <= kernel_compiler.MAX_WORKERS
    monkeypatch.setenv("FUSEC_COMPILE_WORKERS", "0")
    with pytest.raises(kernel_compiler.knobs.InputError, match="FUSEC_COMPILE_WORKERS"):
        kernel_compiler.workers()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_shows_on_a_terminal_after_a_delay_and_is_cleared(monkeypatch):
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    screen = Terminal()
    with progress.shown(screen):
        bar = kernel_compiler.CompileProgress()
        bar.begin(2)
        for _ in range(500):  # the line's timer fires in its own thread
            if screen.getvalue():
                break
            time.sleep(0.01)
        bar.finish_one()
        bar.finish_one()
    text = screen.getvalue()
    assert "compiling 2 kernels: 0 done, 2 running" in text
    assert "compiling 2 kernels: 1 done, 1 running" in text
    assert text.endswith("\r\x1b[K")  # cleared at the end


def test_no_progress_line_off_a_terminal():
    screen = io.StringIO()
    with progress.shown(screen):
        bar = kernel_compiler.CompileProgress()
        bar.begin(1)
        bar.finish_one()
    assert screen.getvalue() == ""


def test_a_cpu_call_hands_the_pool_the_types_its_launches_pass(tmp_path, monkeypatch):
    """A call binding new shapes hands the pool each missing kernel with the argument
    types its launch will pass: an argument given as a transposed view (non-contiguous)
    is passed C-contiguous, so it is typed so too, and each launch finds its compile."""
    import fusec
    from runtime.cpu import executor

    monkeypatch.setenv("FUSEC_CACHE_DIR", str(tmp_path))
    handed = []
    monkeypatch.setattr(executor.COMPILE_POOL, "submit", lambda requests: handed.extend(requests))
    program = fusec.compile(
        "fn main(x: f32[N, M]) -> f32[N, M] { return softmax(exp(x), axis=-1) * 2.0 }", target="cpu"
    )
    x = np.arange(12, dtype=np.float32).reshape(3, 4).T  # [4, 3], not C-contiguous
    program.main(x)
    launched = program.executable("main").launched_kernels("main", [x])
    assert handed and {r["signature"] for _, r in handed} <= {s for d in launched.values() for s in d.signatures}
