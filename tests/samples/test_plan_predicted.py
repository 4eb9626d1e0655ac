"""The fused plan of each sample is never predicted slower than ``--no-fuse``, at any size.

A program is planned once, at the cost model's default sizes (``passes/fusion/cost.py``,
``DEFAULT_DIM``), and that plan runs at every size; so its kernels are costed here at
small, default and large sizes, as ``Program.record_times`` costs the kernels that ran.
Every merge the planner makes saves predicted time (``planner.py``), and the strategy a
matmul group gets is the faster one (``select_strategy.py``): the sum over the fused
plan's kernels stays at or below the sum over one kernel per op. The measured side of the
same claim is ``benchmarks/fusion_speed.py`` (tests never read a clock).
"""

from __future__ import annotations

import pytest

import fusec
from compiler.report import device_model
from passes.fusion.report import fusion_report
from tests.samples.reference import SAMPLES_DIR

#: every symbolic size at once: launches dominate, the default plan's own size, memory dominates
SIZES = (8, 256, 2048)


def predicted_us(program, size: int) -> float:
    names = {d for p in program.params("main") for d in p.shape if isinstance(d, str)}
    report = fusion_report(
        program.compilation("main").module("fused"),
        device=device_model(program.backend),
        dims=dict.fromkeys(names, size),
        entry="main",
    )
    return sum(group["predicted_us"] for group in report["groups"])


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES_DIR.glob("*.tdsl")))
def test_the_fused_plan_is_predicted_no_slower_than_unfused(sample):
    fused = fusec.compile(SAMPLES_DIR / sample, target="cpu", calibrate=False)
    unfused = fused.unfused()
    for size in SIZES:
        assert predicted_us(fused, size) <= predicted_us(unfused, size), f"{sample} at {size} each"
