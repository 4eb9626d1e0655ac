"""The fusion report of a compilation (docs/reference.md, "The fusion report"), as
`fusec --report` writes it."""

from __future__ import annotations

from typing import Any

from compiler.stages import Compilation
from passes.fusion.cost import DeviceModel, device_by_name
from passes.fusion.fuse import calibrated_decisions
from passes.fusion.report import entry_functions, fusion_report
from passes.fusion.select_strategy import calibrated_strategies
from runtime.target import Target


def device_model(target: Target) -> DeviceModel:
    """The machine the cost model plans for on `target` (the model it names)."""
    return device_by_name(target.device_model)


def build_report(program, compilation: Compilation, calibrated: bool = True) -> dict[str, Any]:
    """The report; ``calibrated``: with the program's calibration (``corrected_us``, the
    kernels' signatures, the ``calibration`` key; null where it has none)."""
    options = compilation.options
    dims = dict(options.dims)
    calibration = program.calibration if calibrated else None
    report = fusion_report(
        compilation.module("fused"),
        compilation.module("opt"),
        device=device_model(program.backend),
        dims=dims,
        entry=options.entry,
        calibration=calibration.calibration if calibration else None,
    )
    described = calibration.describe() if calibration else None
    return {"entry": options.entry, "target": program.target, **report, "calibration": described}


def kernel_counts(program, compilation: Compilation) -> tuple[int, int]:
    """(kernels without fusion, kernels launched) for the run summary."""
    report = build_report(program, compilation, calibrated=False)  # (signatures cost a print of each kernel)
    return report["kernels_unfused"], report["kernels"]


def calibrated_changes(compilation: Compilation) -> list[str]:
    """The run summary's lines on the decisions calibration changed (``fusion.calibrated``)."""
    functions = entry_functions(compilation.module("fused"), compilation.options.entry)
    return [
        record["decision"] for fn in functions for record in (*calibrated_decisions(fn), *calibrated_strategies(fn))
    ]
