"""The processor a target's kernels run on, as measurements of them are kept under."""

import functools
import os

from runtime import knobs
from runtime.cuda.device import cuda_module, cuda_usable


def hardware_name(target: str) -> str | None:
    """The processor kernels of ``target`` run on, as measurements of them are kept
    under: the GPU's name for ``cuda``, the host CPU's model and Numba's threads for
    ``cpu``. ``None`` where it cannot be known or measured (no usable GPU, or the
    simulator, whose times say nothing of a GPU)."""
    if target == "cuda":
        if not cuda_usable():
            return None
        name = cuda_module().get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)
    if target != "cpu":
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = knobs.NUMBA_NUM_THREADS.value() or cores  # Numba's default
    return f"{_cpu_model()}, {threads} threads"


@functools.cache
def _cpu_model() -> str:
    import platform

    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
