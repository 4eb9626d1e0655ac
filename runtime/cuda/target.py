"""The target of an NVIDIA GPU (or Numba's CUDA simulator): kernels as Numba CUDA
functions (``runtime/cuda/codegen.py``), run by ``CudaProgram`` (``runtime/cuda/executor.py``)
on device arrays taken in place, replayed as CUDA graphs, and autotuned
(``runtime/cuda/autotune.py``). Its programs compile anywhere (``--emit`` needs no GPU);
running them needs a usable GPU or the simulator (``runtime/cuda/device.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from runtime.cuda import array_kinds, device
from runtime.host_plan import BF16_BITS
from runtime.target import Executable, Target

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


class CudaTarget(Target):
    description = "the GPU, Numba CUDA"
    device_model = "gpu-h200"
    loop_passes = ("map-gpu",)
    takes_device_arrays = True
    replays_graphs = True
    autotunes = True
    # ten calls bring the clocks up from idle; a kernel's time is the median of twenty
    timing_warmup_calls = 10
    timing_min_calls = 20
    argument = staticmethod(array_kinds.argument)

    def unavailable_reason(self) -> str | None:
        return None if device.cuda_runnable() else device.cuda_unavailable_reason()

    def picked_by_auto(self) -> bool:
        return device.cuda_usable()  # never the simulator

    def hardware_name(self) -> str | None:
        """The GPU's name; None without a usable GPU (the simulator's times say nothing of one)."""
        return device.gpu_name() if device.cuda_usable() else None

    def gemm_library_available(self) -> bool:
        from runtime.cuda.gemm import cuda_library_available

        return cuda_library_available()

    def kernel_source(self, tiled: ModuleOp) -> str:
        from runtime.cuda.sources import format_kernel_sources

        return format_kernel_sources(tiled, shuffles=not device.simulated())

    def executable(self, module: ModuleOp) -> Executable:
        from runtime.cuda.executor import CudaProgram

        return CudaProgram(module)

    def to_device(self, arrays: Sequence[Any]) -> list[Any]:
        cuda = device.cuda_module()
        return [a if hasattr(a, "copy_to_host") else cuda.to_device(_bits_if_bf16(a)) for a in arrays]

    def synchronize(self) -> None:
        device.cuda_module().synchronize()

    def autotune(
        self, executable: Executable, entry: str, arrays: Sequence[Any], budget_s: float
    ) -> dict[str, tuple[Any, float]]:
        from runtime.cuda.autotune import autotune
        from runtime.cuda.executor import CudaProgram

        assert isinstance(executable, CudaProgram), executable
        return autotune(executable, entry, arrays, budget_s=budget_s)

    def copy_bandwidth(self) -> float | None:
        return None if device.simulated() else device.copy_bandwidth()


def _bits_if_bf16(array: Any) -> Any:
    """A host array as Numba can copy it: ml_dtypes' bfloat16, which the buffer protocol
    cannot carry, as its bits (``BF16_BITS``, the storage bf16 kernels take)."""
    array = np.asarray(array)
    return array.view(BF16_BITS) if array.dtype.name == "bfloat16" else array
