"""compiler/fewer_collections.py: the collector's threshold raised while fusec compiles,
the caller's back after, nested and concurrent steps sharing one raise."""

from __future__ import annotations

import gc
import threading

import fusec
from compiler import fewer_collections as module
from compiler.fewer_collections import COMPILE_THRESHOLD, fewer_collections


def test_raised_inside_and_restored_after_the_outermost():
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold()[0] == max(COMPILE_THRESHOLD, before[0])
        with fewer_collections():
            assert gc.get_threshold()[0] == max(COMPILE_THRESHOLD, before[0])
        assert gc.get_threshold()[0] == max(COMPILE_THRESHOLD, before[0])
    assert gc.get_threshold() == before


def test_restored_when_the_compile_fails():
    before = gc.get_threshold()
    try:
        fusec.compile("fn main(x: f32[N]) -> f32[N] { return y }", target="numpy")
    except fusec.FusecError:
        pass
    assert gc.get_threshold() == before


def test_concurrent_compiles_restore_the_callers_threshold():
    before = gc.get_threshold()
    source = "fn main(x: f32[N]) -> f32[N] { return exp(x) * 2.0 }"

    def compile_one() -> None:
        fusec.compile(source, target="cpu").ir("loops")

    threads = [threading.Thread(target=compile_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.get_threshold() == before and module._depth == 0
