"""What the machine offers: whether the GPU path can run here."""

import functools
import os


@functools.cache
def cuda_usable() -> bool:
    """True when a real CUDA device is present (the simulator does not count)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # no driver, no toolkit: no GPU
        return False
