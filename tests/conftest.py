"""Test-session setup shared by every test.

The suite keeps its kernels (and any calibration or autotuning) in a cache folder under
the session's temporary folder, never in the user's `~/.cache/fusec` nor a
`FUSEC_CACHE_DIR` of theirs: `pytest_configure` points `FUSEC_CACHE_DIR` there before any
test runs, and the `fusec` commands the tests start inherit it. Under pytest-xdist each
worker's temporary folder is inside the session's, so the workers share one cache.

The CUDA backend is tested under Numba's CUDA simulator (CI has no GPU), which must be
chosen before anything imports Numba. On a GPU machine, `FUSEC_TEST_GPU=1 pytest
tests/cuda` runs the same tests on the real device instead.
"""

import os
import sys

import pytest

if os.environ.get("FUSEC_TEST_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# Kernel times measured on this machine (`fusec --bench`) correct the cost model; the
# plans the tests expect are the model's own. Calibration tests turn it back on.
os.environ.setdefault("FUSEC_CALIBRATION", "off")
# The simulator runs each GPU thread as a Python thread; a short switch interval makes
# its barriers 2-5x faster (docs/gpu.md, "Testing without a GPU").
sys.setswitchinterval(5e-4)


#: the session's kernel cache, inside the temporary folder pytest keeps for the session
#: (pytest removes all but the last few sessions' folders)
CACHE_FOLDER = "fusec-cache"


@pytest.hookimpl(trylast=True)  # after pytest's own tmp_path plugin has set up the folder
def pytest_configure(config: pytest.Config) -> None:
    session_folder = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker's folder is popen-gwN in the session's
        session_folder = session_folder.parent
    os.environ["FUSEC_CACHE_DIR"] = str(session_folder / CACHE_FOLDER)
