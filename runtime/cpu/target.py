"""The target of the host's cores: kernels as Numba ``njit`` functions (``runtime/cpu/codegen.py``),
run by ``CompiledProgram`` (``runtime/cpu/executor.py``), which binds each call once per shape."""

from __future__ import annotations

import functools
import platform
from typing import TYPE_CHECKING

from runtime.target import Executable, Target

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


class CpuTarget(Target):
    description = "the host's cores, Numba"
    device_model = "cpu-2core"
    loop_passes = ("map-cpu",)

    def picked_by_auto(self) -> bool:
        return True

    def hardware_name(self) -> str:
        """The host CPU's model and Numba's threads: ``AMD EPYC 7B13, 2 threads``."""
        from runtime.cpu.threads import pool_threads

        return f"{_cpu_model()}, {pool_threads()} threads"

    def gemm_library_available(self) -> bool:
        return True  # NumPy's matmul (runtime/cpu/gemm.py)

    def kernel_source(self, tiled: ModuleOp) -> str:
        from runtime.cpu.sources import module_source

        return module_source(tiled)

    def executable(self, module: ModuleOp) -> Executable:
        from runtime.cpu.executor import CompiledProgram

        return CompiledProgram(module)


@functools.cache
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
