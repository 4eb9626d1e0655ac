"""Every CPU kernel's source, by the schedule ``map-cpu`` gave it: a cache-blocked matrix
product (``codegen_gemm``, ``cpu.schedule = "gemm"``), an attention kernel
(``codegen_flash``, ``"flash"``) or the loop nest as mapped (``codegen``, whose pieces
the others build on)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, StringAttr

from dialects import loop
from dialects.loop import CPU_SCHEDULE, CpuSchedule
from runtime.cpu.codegen import CpuKernelSource
from runtime.cpu.codegen_flash import flash_source
from runtime.cpu.codegen_gemm import gemm_source

#: the generator of each schedule's kernels
GENERATORS = {CpuSchedule.GEMM: gemm_source, CpuSchedule.FLASH: flash_source}


def kernel_source(kernel: loop.KernelOp) -> str:
    """The Python source of one kernel: a module defining ``kernel(a0, a1, ...)``."""
    schedule = kernel.attributes.get(CPU_SCHEDULE)
    if isinstance(schedule, StringAttr):
        return GENERATORS[CpuSchedule(schedule.data)](kernel)
    return CpuKernelSource(kernel).source()


def module_kernel_sources(module: ModuleOp) -> dict[str, str]:
    """Every kernel's source, by kernel symbol, in module order (``--emit kernel``)."""
    return {op.sym_name.data: kernel_source(op) for op in module.walk() if isinstance(op, loop.KernelOp)}


def module_source(module: ModuleOp) -> str:
    """The text ``fusec --emit kernel`` prints: every kernel's source, in order, each
    under a ``# kernel @name`` banner whose name is quoted as a Python string literal
    (the only place a name appears)."""
    parts = []
    for name, source in module_kernel_sources(module).items():
        parts.append(f"# ---- kernel {name!r} ----\n{source}")
    return "\n".join(parts)
