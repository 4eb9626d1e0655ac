"""What the machine offers: whether the GPU path can run here, and Numba's CUDA module.

``NUMBA_ENABLE_CUDASIM=1`` (set before Numba is imported) swaps the GPU for Numba's
CUDA simulator: ``--target cuda`` then runs there, slowly, which is how CI tests the
CUDA backend; ``--target auto`` never picks the simulator.
"""

import functools
import os
from typing import Any


def simulated() -> bool:
    """Whether Numba's CUDA simulator stands in for a GPU."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@functools.cache
def cuda_usable() -> bool:
    """True when a real CUDA device is present (the simulator does not count)."""
    if simulated():
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # no driver, no toolkit: no GPU
        return False


def cuda_module():
    """``numba.cuda`` (numba-cuda's, not the copy bundled with Numba)."""
    from numba import cuda

    return cuda


def cuda_runnable() -> bool:
    """Whether ``--target cuda`` can run: a usable GPU, or the simulator."""
    return simulated() or cuda_usable()


def cuda_unavailable_reason() -> str:
    try:
        from numba import cuda

        reason = cuda.cuda_error()
    except Exception as error:  # an import that fails is the reason
        reason = str(error)
    reason = " ".join(str(reason or "no CUDA device is visible").split())
    return f"no usable CUDA GPU: {reason}"


def is_device_array(obj: Any) -> bool:
    """Whether ``obj`` is a Numba device array (real or simulated)."""
    return cuda_module().devicearray.is_cuda_ndarray(obj)


def is_on_device(obj: Any) -> bool:
    """Whether ``obj`` lives on the GPU: a Numba device array, or anything with
    ``__cuda_array_interface__`` (PyTorch, CuPy)."""
    return hasattr(obj, "__cuda_array_interface__") or (
        "numba" in __import__("sys").modules and is_device_array(obj)
    )
