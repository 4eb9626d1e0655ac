"""What the machine offers: whether the GPU path can run here, and Numba's CUDA module.

``NUMBA_ENABLE_CUDASIM=1`` (set before Numba is imported) swaps the GPU for Numba's
CUDA simulator: ``--target cuda`` then runs there, slowly, which is how CI tests the
CUDA backend; ``--target auto`` never picks the simulator.
"""

import functools
import re
import warnings
from typing import Any

import numpy as np

from runtime import knobs


def simulated() -> bool:
    """Whether Numba's CUDA simulator stands in for a GPU."""
    return knobs.NUMBA_ENABLE_CUDASIM.value() != 0


def quiet_simulated_kernels() -> None:
    """Under the simulator a kernel's arithmetic runs on NumPy scalars, which warn
    (overflow, divide by zero, invalid value) where a GPU, as fusec's CPU kernels, wraps an
    integer or makes an inf or NaN without a word (docs/reference.md, "Numerics"): those
    RuntimeWarnings, raised in fusec's kernel modules only, are ignored. Made at each
    launch, since a caller's `warnings.catch_warnings` (pytest's, around each test) drops
    a filter made inside it. A warning filter, not `np.errstate`: the filters are the
    process's, shared by the simulator's threads, where each thread has its own errstate."""
    from runtime.kernel_cache import MODULE_PREFIX  # here: it loads Numba, which a GPU's caller may not

    warnings.filterwarnings("ignore", category=RuntimeWarning, module=re.escape(MODULE_PREFIX) + r"[0-9a-f]+\Z")


def quiet_launches() -> None:
    """Numba warns of a launch of fewer than 128 blocks ("low occupancy"), guessing at a
    beginner's mistake; fusec sizes each grid to its problem (a small problem is a small
    grid, docs/gpu.md), so the warning names nothing a user can change: it is ignored, for
    that message only. Made at each launch, as ``quiet_simulated_kernels``."""
    warnings.filterwarnings("ignore", message=r".*Grid size [0-9]+ will likely result in GPU under-utilization")


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


def gpu_count() -> int:
    """How many GPUs this process sees (``CUDA_VISIBLE_DEVICES`` applied); 0 without a
    usable one."""
    return len(cuda_module().gpus) if cuda_usable() else 0


def cuda_module():
    """``numba.cuda`` (numba-cuda's, not the copy bundled with Numba)."""
    from numba import cuda

    return cuda


def gpu_name() -> str:
    """The current GPU's name (``NVIDIA H200``): what measurements of it are kept under."""
    name = cuda_module().get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


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


def _is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a PyTorch tensor (or parameter), read through its own accessors:
    its ``__cuda_array_interface__`` raises where it requires gradients."""
    return type(obj).__module__.startswith("torch") and hasattr(obj, "detach")


def is_on_device(obj: Any) -> bool:
    """Whether ``obj`` lives on the GPU: a Numba device array, or anything with
    ``__cuda_array_interface__`` (PyTorch, CuPy)."""
    if _is_tensor(obj):
        return bool(obj.is_cuda)
    return hasattr(obj, "__cuda_array_interface__") or is_device_array(obj)


def as_device_array(obj: Any, stream: int | None = None):
    """A Numba device array viewing ``obj`` (no copy): ``obj`` itself when it is one.
    ``stream``: the raw handle of the stream the caller's work on it goes to (0 for the
    legacy default). The host waits for the stream the array's interface names (where
    its maker's work is queued) only where that is another: work queued on the same
    stream runs after the maker's anyway (the interface's rule), and waiting would stall
    the host until the GPU caught up, where a call is meant to queue its kernels and
    return (docs/gpu.md, "Arrays, streams and results")."""
    if is_device_array(obj):
        return obj
    if _is_tensor(obj):
        obj = obj.detach()  # the same memory, without the gradient's bookkeeping
    interface = obj.__cuda_array_interface__
    ordered = stream is not None and same_stream(interface.get("stream"), stream)
    return cuda_module().from_cuda_array_interface(interface, owner=obj, sync=not ordered)


#: how `__cuda_array_interface__` names the legacy default stream (its raw handle is 0,
#: which the interface leaves out: 0 there is no stream)
INTERFACE_LEGACY_STREAM = 1


def same_stream(named: int | None, stream: int) -> bool:
    """Whether the stream an array interface names (None: none, 1: the legacy default,
    2: the per-thread default, else a handle) is the stream of raw handle ``stream``."""
    return named is not None and named == (stream or INTERFACE_LEGACY_STREAM)


def copy_bandwidth(cache_dir=None) -> float:
    """Bytes per second read plus written by a copy of 512 MiB on the current GPU: a
    kernel of the shape fusec's elementwise kernels have (8 elements a thread, loads
    first), the median of 20 copies timed with events, or PyTorch's copy where PyTorch
    is installed and faster (on an H200: 3.73 against 4.25 TB/s). Measured once per
    GPU and kept in the kernel cache directory. (A DMA copy, ``cuMemcpyDtoD``, reaches
    only about half, so it would flatter every kernel.)"""
    from runtime import cache_files
    from runtime.kernel_cache import cache_dir as kernel_cache_dir

    cuda = cuda_module()
    name = gpu_name()
    root = kernel_cache_dir(cache_dir)
    path = root / "gpu-bandwidth.json" if root is not None else None
    known = cache_files.read_json(path)
    if isinstance(known.get(name), float) and known[name] > 0:
        return known[name]

    step = np.uint64(256)

    @cuda.jit
    def copy(source, target):
        # written out as fusec's exact elementwise kernels are: unsigned indices (no
        # wraparound code), every load before any store
        i0 = np.uint64(cuda.blockIdx.x) * np.uint64(2048) + np.uint64(cuda.threadIdx.x)
        i1, i2, i3 = i0 + step, i0 + step * np.uint64(2), i0 + step * np.uint64(3)
        i4, i5, i6, i7 = i0 + step * np.uint64(4), i0 + step * np.uint64(5), i0 + step * np.uint64(6), i0 + step * np.uint64(7)
        v0, v1, v2, v3 = source[i0], source[i1], source[i2], source[i3]
        v4, v5, v6, v7 = source[i4], source[i5], source[i6], source[i7]
        target[i0], target[i1], target[i2], target[i3] = v0, v1, v2, v3
        target[i4], target[i5], target[i6], target[i7] = v4, v5, v6, v7

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
    bandwidth = max(2 * source.nbytes / sorted(times[3:])[len(times[3:]) // 2], _torch_copy_bandwidth())
    known[name] = bandwidth
    cache_files.write_json(path, known)
    return bandwidth


def _torch_copy_bandwidth() -> float:
    """PyTorch's device copy of 512 MiB, bytes read plus written per second (0 where
    PyTorch is not installed): the anchor the project's benchmarks compare with."""
    try:
        import torch
    except ImportError:
        return 0.0
    if not torch.cuda.is_available():
        return 0.0
    source = torch.empty(1 << 27, dtype=torch.float32, device="cuda")
    target = torch.empty_like(source)
    times = []
    for _ in range(23):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        target.copy_(source)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1e-3)
    return 2 * source.numel() * 4 / sorted(times[3:])[len(times[3:]) // 2]
