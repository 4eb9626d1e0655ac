"""``runtime/cuda/numba_lowering.py``: the linear ``find_singly_assigned_variables`` finds
the variables numba-cuda's own quadratic method finds, on a kernel with straight-line
code, variables assigned twice in a block, loops and branches. It compiles PTX (no GPU
needed: NVVM and NVRTC) in a process of its own, outside the simulator the suite runs
under; skipped where those libraries are not installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from numba import cuda, float32

    def probe(a):
        a[0] = 1.0

    try:  # NVVM and NVRTC (numba-cuda asks it for the architectures it supports)
        cuda.compile_ptx(probe, (float32[:],), cc=(9, 0))
    except Exception as error:
        print("no CUDA toolkit:", type(error).__name__); raise SystemExit(0)
    from numba.cuda import lowering
    from runtime.cuda.numba_lowering import find_singly_assigned_variables

    original = lowering.Lower._find_singly_assigned_variable
    seen = []

    def both(self):
        original(self)
        expected = self._singly_assigned_vars
        find_singly_assigned_variables(self)
        seen.append((expected, self._singly_assigned_vars))

    lowering.Lower._find_singly_assigned_variable = both

    def kernel(a, b, out):
        i = cuda.grid(1)
        x = a[i] * 2
        y = x + b[i]
        y = y * y  # assigned twice in one block
        acc = float32(0.0)
        for k in range(a.size):  # loop-carried
            t = a[k] * b[k]
            acc += t
        if i < out.size:
            z = acc + y
            out[i] = z - x
        else:
            w = x * 3
            out[0] = w

    cuda.compile_ptx(kernel, (float32[:], float32[:], float32[:]), cc=(9, 0))
    assert seen and all(expected == found for expected, found in seen), seen
    print(len(seen), "functions", sum(len(found) for _, found in seen), "variables")
    """
)


def test_the_linear_count_finds_what_numba_cuda_finds():
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    if "no CUDA toolkit" in done.stdout:
        pytest.skip("NVVM or NVRTC is not installed: no PTX to compile")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "variables" in done.stdout and not done.stdout.startswith("0 ")
