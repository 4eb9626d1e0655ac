"""Test-session setup shared by every test.

The CUDA backend is tested under Numba's CUDA simulator (CI has no GPU), which must be
chosen before anything imports Numba. On a GPU machine, `FUSEC_TEST_GPU=1 pytest
tests/cuda` runs the same tests on the real device instead.
"""

import os
import sys

if os.environ.get("FUSEC_TEST_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# Kernel times measured on this machine (`fusec --bench`) correct the cost model; the
# plans the tests expect are the model's own. Calibration tests turn it back on.
os.environ.setdefault("FUSEC_CALIBRATION", "off")
# The simulator runs each GPU thread as a Python thread; a short switch interval makes
# its barriers 2-5x faster (docs/gpu.md, "Testing without a GPU").
sys.setswitchinterval(5e-4)
