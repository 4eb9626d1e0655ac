"""The fusion report of a compilation (SPEC §3), as `fusec --report` writes it."""

from __future__ import annotations

from typing import Any

from compiler.stages import Compilation
from passes.fusion.cost import CPU_2CORE, GPU_H200, DeviceModel
from passes.fusion.report import fusion_report


def device_model(target: str) -> DeviceModel:
    """The machine the cost model plans for: the GPU for `cuda`, else the host."""
    return GPU_H200 if target == "cuda" else CPU_2CORE


def build_report(program, compilation: Compilation) -> dict[str, Any]:
    options = compilation.options
    dims = dict(options.dims)
    report = fusion_report(
        compilation.stage("fused"),
        compilation.stage("opt"),
        device=device_model(program.target),
        dims=dims,
        entry=options.entry,
    )
    return {"entry": options.entry, "target": program.target, **report}


def kernel_counts(program, compilation: Compilation) -> tuple[int, int]:
    """(kernels without fusion, kernels launched) for the run summary."""
    report = build_report(program, compilation)
    return report["kernels_unfused"], report["kernels"]
