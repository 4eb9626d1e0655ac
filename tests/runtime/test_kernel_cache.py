"""The disk cache of generated kernels: content-addressed, written once, and a second
process running the same kernels compiles nothing. (Faults: test_cache_faults.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from runtime import kernel_cache
from runtime.kernel_compiler import compile_in_helper

SOURCE = textwrap.dedent(
    """\
    import numpy as np
    from numba import prange

    c0 = np.float32(2.0)


    def kernel(a0, a1):
        for i0 in prange(a0.shape[0]):
            a1[i0] = a0[i0] * c0
    """
)
OPTIONS = {"parallel": True, "fastmath": True, "error_model": "numpy"}


def test_key_covers_source_options_and_versions():
    key = kernel_cache.kernel_key(SOURCE, OPTIONS)
    assert key == kernel_cache.kernel_key(SOURCE, dict(reversed(list(OPTIONS.items()))))
    assert key != kernel_cache.kernel_key(SOURCE + "\n", OPTIONS)
    assert key != kernel_cache.kernel_key(SOURCE, {**OPTIONS, "parallel": False})


def test_written_once_as_a_real_module(tmp_path):
    k = kernel_cache.load_kernel(SOURCE, OPTIONS, directory=tmp_path, compile_aside=compile_in_helper)
    (path,) = tmp_path.glob("fusec_*.py")
    assert path.read_text() == SOURCE
    stamp = path.stat().st_mtime_ns
    modname = path.stem
    assert sys.modules[modname].__file__ == str(path)
    assert kernel_cache.load_kernel(SOURCE, OPTIONS, directory=tmp_path, compile_aside=compile_in_helper) is k
    x = np.arange(5, dtype=np.float32)
    y = np.empty_like(x)
    k(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    assert path.stat().st_mtime_ns == stamp
    assert list(tmp_path.glob("*.tmp*")) == []


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(tmp_path / "c"))
    assert kernel_cache.cache_dir() == tmp_path / "c"
    assert (tmp_path / "c").is_dir()
    monkeypatch.delenv("FUSEC_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert kernel_cache.cache_dir() == tmp_path / "home" / ".cache" / "fusec"


# A process that lowers, compiles and runs three kernels (softmax, a matmul with its
# epilogue, and a layout kernel) and prints what Numba's cache did for each, and how
# many kernels the compile helper compiled.
SCRIPT = textwrap.dedent(
    """\
    import json, sys
    from runtime.cpu.executor import CompiledProgram
    from runtime.kernel_compiler import HELPER
    from tests.loops.cases import CASES
    from tests.loops.harness import draw_inputs, lowered, parse

    stats = {}
    for name in ("softmax_rows", "matmul_bias_gelu", "transpose_reshape"):
        case = CASES[name]
        program = CompiledProgram(lowered(case.text))
        arrays = draw_inputs(parse(case.text), case.sizes)
        program.run("main", arrays)
        for kernel, dispatcher in program.launched_kernels("main", arrays).items():
            s = dispatcher.stats
            stats[kernel] = [sum(s.cache_hits.values()), sum(s.cache_misses.values())]
    print(json.dumps({"stats": stats, "helper_compiled": HELPER.requests}))
    """
)


def run_process(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["FUSEC_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_compiles_nothing(tmp_path):
    # the first compiles in its helper and loads from the cache, as the second does
    first = run_process(tmp_path)
    assert set(first["stats"]) == {"k0_softmax", "k0_matmul", "k0_heads"}
    assert first["helper_compiled"] == 3
    second = run_process(tmp_path)
    assert second["helper_compiled"] == 0
    for stats in (first["stats"], second["stats"]):
        assert all(hits >= 1 and misses == 0 for hits, misses in stats.values()), stats
    assert len(list(tmp_path.glob("fusec_*.py"))) == 3


def test_a_compile_made_here_is_timed_under_its_label(tmp_path):
    """`--time-passes` names each kernel's compile, in a helper process or in this one
    (a GPU call's only missing kernel compiles where it is needed): the time from the
    cache's miss to its save."""
    from runtime import timing

    source = SOURCE.replace("2.0", "3.0")  # a kernel no other test compiled
    k = kernel_cache.load_kernel(source, OPTIONS, directory=tmp_path, label="@k7_scale (parallel)")
    x = np.arange(4, dtype=np.float32)
    with timing.recording() as steps:
        k(x, np.empty_like(x))
    (step,) = [s for s in steps if s.phase is timing.Phase.COMPILE]
    assert step.name == "@k7_scale (parallel)" and step.where == "" and step.seconds > 0
