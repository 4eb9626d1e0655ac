"""runtime/fewer_collections.py: the cyclic collector paused while fusec compiles, as the
caller had it after, nested and concurrent steps sharing one pause."""

from __future__ import annotations

import gc
import threading

import fusec
from runtime import fewer_collections as module
from runtime.fewer_collections import fewer_collections


def test_paused_inside_and_restored_after_the_outermost():
    assert gc.isenabled()
    with fewer_collections():
        assert not gc.isenabled()
        with fewer_collections():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_caller_that_paused_it_keeps_it_paused():
    gc.disable()
    try:
        with fewer_collections():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_restored_when_the_compile_fails():
    try:
        fusec.compile("fn main(x: f32[N]) -> f32[N] { return y }", target="numpy")
    except fusec.FusecError:
        pass
    assert gc.isenabled()


def test_concurrent_compiles_restore_the_collector():
    source = "fn main(x: f32[N]) -> f32[N] { return exp(x) * 2.0 }"

    def compile_one() -> None:
        fusec.compile(source, target="cpu").ir("loops")

    threads = [threading.Thread(target=compile_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled() and module._depth == 0
