"""The same bits on any number of threads, NaNs included (docs/reference.md, "Numerics"):
one process on one thread (every kernel's serial variant) and one on two (its parallel
variant, whose loop body LLVM optimises twice) give the same NaN, sign and payload, for
a sum and a variance of rows full of NaNs of both signs and elementwise ops where NaN
meets NaN; a square root's NaNs are NumPy's (an input NaN kept, sqrt of a negative the
machine's default NaN), and so are those of `x * y - y` (of two NaNs, the first's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from runtime import knobs

ROOT = Path(__file__).parents[2]
#: run in a fresh process: the program on NaN-laden rows, its results' bits saved to argv[1]
CHILD = """
import sys
import numpy as np
import fusec

rng = np.random.default_rng(0)
shape = (200, 203)  # 203: no multiple of any vector width
bits = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
kind = rng.random(shape)
nans = (np.uint32(0x7FC00000) | (rng.integers(0, 64, shape).astype(np.uint32) << np.uint32(16))
        | (rng.integers(0, 2, shape).astype(np.uint32) << np.uint32(31)))
bits = np.where(kind < 0.1, nans, bits)
bits = np.where((kind > 0.1) & (kind < 0.12), np.uint32(0x7F800000), bits)
bits = np.where((kind > 0.12) & (kind < 0.14), np.uint32(0xFF800000), bits)
x = bits.view(np.float32)
y = np.roll(x, 1, axis=1)  # NaN meets NaN of another sign and payload
source = '''fn main(x: f32[R, C], y: f32[R, C]) -> (f32[C], f32[R], f32[R, C], f32[R, C], f32[R, C]) {
    return sum(x, axis=0), var(x, axis=1), sqrt(x), x * y - y, sin(x) ** 2 + cos(x) ** 2
}'''
results = fusec.compile(source, target="cpu").main(x, y)
np.savez(sys.argv[1], x=x, y=y, *results)
"""


def run(threads: int, parallel_from: str | None, path: Path):
    env = {**os.environ, "NUMBA_NUM_THREADS": str(threads)}
    env.pop(knobs.PARALLEL_MIN_WORK.name, None)
    if parallel_from is not None:
        env[knobs.PARALLEL_MIN_WORK.name] = parallel_from
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return np.load(path)


def test_nan_bits_are_the_same_on_one_thread_and_two(tmp_path):
    serial = run(1, None, tmp_path / "one.npz")
    threaded = run(2, "0", tmp_path / "two.npz")  # a size this small takes the parallel variant only so
    results = (("arr_0", "column sums"), ("arr_1", "row variances"), ("arr_2", "square roots"),
               ("arr_3", "x * y - y"), ("arr_4", "sin(x) ** 2 + cos(x) ** 2"))  # fmt: skip
    for name, what in results:
        assert np.isnan(serial[name]).any(), what
        np.testing.assert_array_equal(serial[name].view(np.uint32), threaded[name].view(np.uint32), err_msg=what)
    with np.errstate(invalid="ignore"):
        numpy_sqrt = np.sqrt(serial["x"])
        numpy_binary = serial["x"] * serial["y"] - serial["y"]  # of two NaNs, the first's
    np.testing.assert_array_equal(serial["arr_2"].view(np.uint32), numpy_sqrt.view(np.uint32))
    np.testing.assert_array_equal(serial["arr_3"].view(np.uint32), numpy_binary.view(np.uint32))
