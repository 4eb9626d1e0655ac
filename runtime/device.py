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


def copy_bandwidth(cache_dir=None) -> float:
    """Bytes per second read plus written by a copy of 512 MiB on the current GPU, by a
    kernel of the shape fusec's elementwise kernels have (8 elements a thread, loads
    first); the median of 20 copies timed with events. Measured once per GPU and kept
    in the kernel cache directory (a DMA copy, ``cuMemcpyDtoD``, reaches only about
    half of it on an H200, so it would flatter every kernel)."""
    import json

    import numpy as np

    from runtime.kernel_cache import cache_dir as kernel_cache_dir

    cuda = cuda_module()
    name = cuda.get_current_device().name
    name = name.decode() if isinstance(name, bytes) else str(name)
    path = kernel_cache_dir(cache_dir) / "gpu-bandwidth.json"
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        known = {}
    known = known if isinstance(known, dict) else {}
    if isinstance(known.get(name), float):
        return known[name]

    @cuda.jit
    def copy(source, target):
        base = cuda.blockIdx.x * 2048 + cuda.threadIdx.x
        values = cuda.local.array(8, np.float32)
        for u in range(8):
            values[u] = source[base + u * 256]
        for u in range(8):
            target[base + u * 256] = values[u]

    source = cuda.device_array(1 << 27, np.float32)
    target = cuda.device_array_like(source)
    times = []
    for _ in range(23):
        begin, end = cuda.event(), cuda.event()
        begin.record()
        copy[source.size // 2048, 256](source, target)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1e-3)
    bandwidth = 2 * source.nbytes / sorted(times[3:])[len(times[3:]) // 2]
    known[name] = bandwidth
    tmp = path.with_name(f"{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(known, indent=1))
    os.replace(tmp, path)
    return bandwidth
