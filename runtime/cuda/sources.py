"""Every CUDA kernel's source, by the schedule ``map-gpu`` gave it: a tiled GEMM
(``codegen_gemm``, on tensor cores ``codegen_gemm_mma``), flash attention (``codegen_flash``), or the loop nest as mapped
(``codegen``, whose pieces the other two build on).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from dialects import loop
from dialects.gpu.mapping import MMA, Schedule
from runtime.cuda.codegen import CudaKernelSource, schedule_of, variants
from runtime.cuda.codegen_flash import kernel_source as flash_source
from runtime.cuda.codegen_gemm import gemm_source
from runtime.cuda.codegen_gemm_mma import mma_gemm_source


def kernel_source(
    kernel: loop.KernelOp,
    variant: str = "loop",
    shuffles: bool = True,
    per_thread: int | None = None,
    threads: int | None = None,
) -> str:
    """The Python source of one kernel in one variant: ``kernel`` and ``sizes``;
    ``per_thread`` and ``threads`` replace the kernel's ``gpu.per_thread`` and
    ``gpu.threads`` (the autotuner's knobs; the block size is a constant of the code,
    so index arithmetic folds, and the runtime launches each source with its own)."""
    if schedule_of(kernel) == Schedule.GEMM:
        generate = mma_gemm_source if MMA in kernel.attributes else gemm_source
        return generate(kernel, variant, aligned=shuffles)  # no shuffles: the simulator
    if schedule_of(kernel) == Schedule.FLASH:
        return flash_source(kernel, shuffles)
    return CudaKernelSource(kernel, variant, shuffles, per_thread, threads).source()


def format_kernel_sources(module: ModuleOp, shuffles: bool = True) -> str:
    """Every kernel's sources, each variant under a ``# kernel`` banner (``--emit kernel``)."""
    parts = []
    for op in module.walk():
        if isinstance(op, loop.KernelOp):
            for variant in variants(op):
                parts.append(
                    f"# ---- kernel {op.sym_name.data!r} ({variant}) ----\n{kernel_source(op, variant, shuffles)}"
                )
    return "\n".join(parts)
