"""``runtime/cuda/numba_linear.py``: the linear ``find_singly_assigned_variables`` finds
the variables numba-cuda's own quadratic method finds, and ``run_ssa`` gives the SSA form
numba-cuda's ``_run_ssa`` gives (the same statements, names and phis; the same PTX), on a
kernel with straight-line code, variables assigned twice in a block, loops and branches.
It compiles PTX (no GPU needed: NVVM and NVRTC) in a process of its own, outside the
simulator the suite runs under; skipped where those libraries are not installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent(
    """
    import numpy as np
    from numba import cuda, float32

    def probe(a):
        a[0] = 1.0

    try:  # NVVM and NVRTC (numba-cuda asks it for the architectures it supports)
        cuda.compile_ptx(probe, (float32[:],), cc=(9, 0))
    except Exception as error:
        print("no CUDA toolkit:", type(error).__name__); raise SystemExit(0)

    def kernel(a, b, out):
        i = cuda.grid(1)
        x = a[i] * 2
        y = x + b[i]
        y = y * y  # assigned twice in one block
        acc = float32(0.0)
        run = float32(0.0)
        for k in range(a.size):  # loop-carried
            t = a[k] * b[k]
            acc += t
            for j in range(4):  # nested, carried through both loops
                run = max(run, t + j)
                acc = acc * float32(0.5) + run
            if t > run:  # reassigned on one branch only: a phi after it
                x = t
        if i < out.size:
            z = acc + y
            out[i] = z - x
        else:
            w = x * 3
            while w > acc:
                w = w - run
            out[0] = w + run

    SIGNATURE = (float32[:], float32[:], float32[:])
    """
)

LOWERING = PROBE + textwrap.dedent(
    """
    from numba.cuda import lowering
    from runtime.cuda.numba_linear import find_singly_assigned_variables

    original = lowering.Lower._find_singly_assigned_variable
    seen = []

    def both(self):
        original(self)
        expected = self._singly_assigned_vars
        find_singly_assigned_variables(self)
        seen.append((expected, self._singly_assigned_vars))

    lowering.Lower._find_singly_assigned_variable = both
    cuda.compile_ptx(kernel, SIGNATURE, cc=(9, 0))
    assert seen and all(expected == found for expected, found in seen), seen
    print(len(seen), "functions", sum(len(found) for _, found in seen), "variables")
    """
)

SSA = PROBE + textwrap.dedent(
    """
    import re
    from numba.cuda.core import ssa
    from runtime.cuda.numba_linear import run_ssa

    def recorded(run, record):
        def recording(blocks):
            done = run(blocks)
            record.append([(label, [str(stmt) for stmt in block.body]) for label, block in done.items()])
            return done
        return recording

    theirs, ours = [], []
    ssa._run_ssa, original = recorded(ssa._run_ssa, theirs), ssa._run_ssa
    expected, _ = cuda.compile_ptx(kernel, SIGNATURE, cc=(9, 0))
    ssa._run_ssa = recorded(run_ssa, ours)
    found, _ = cuda.compile_ptx(kernel, SIGNATURE, cc=(9, 0))
    assert theirs and ours == theirs, (theirs, ours)
    unversioned = lambda ptx: re.sub(r"B[0-9]+v[0-9]+", "", ptx)  # the mangled name counts compiles
    assert unversioned(found) == unversioned(expected)
    phis = sum(" = phi(" in stmt for function in ours for _, body in function for stmt in body)
    print(len(ours), "functions", phis, "phis")
    """
)


def _run(script: str) -> str:
    """The script's output, run outside the simulator; a skip without a CUDA toolkit."""
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    if "no CUDA toolkit" in done.stdout:
        pytest.skip("NVVM or NVRTC is not installed: no PTX to compile")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_linear_count_finds_what_numba_cuda_finds():
    out = _run(LOWERING)
    assert "variables" in out and not out.startswith("0 ")


def test_the_indexed_ssa_reconstruction_gives_numba_cudas_form():
    out = _run(SSA)
    assert "phis" in out and not out.startswith("0 ") and not out.strip().endswith(" 0 phis")
