"""The driver's side of calibration (``passes/fusion/calibration.py``; docs/cache.md,
"Calibration"): which device measurements are kept under, the ``Calibration`` the
planner and the report get from them, which measurements are trusted (``screen``),
filing them (``runtime/calibration_cache.py``), and ``fusec --calibration show|reset``.

Calibration is on unless the program was compiled with ``calibrate=False``
(``fusec --no-calibration``) or ``FUSEC_CALIBRATION=off`` is in the environment
(the test suite sets it: measurements a developer made must not change the plans
the tests expect).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passes.fusion.calibration import (
    FACTOR_KEYS,
    FACTOR_RANGE,
    HISTORY,
    MARGIN,
    STEP,
    Calibration,
    KindFactor,
    Observation,
    run_ratios,
    update_factors,
)
from runtime import knobs
from runtime.target import Target

if TYPE_CHECKING:
    from compiler.bench import KernelTimes

#: a kernel's repeats (the medians of the rounds) agree when their spread, largest
#: less smallest, is at most this fraction of their median
SPREAD = 0.25
#: the kernels' medians may add up to this multiple of the whole call's median (a
#: profiled call reads the clock around each launch; a whole call also allocates)
SUM_SLACK = 1.10


def enabled_here() -> bool:
    """Whether the environment lets programs calibrate (``FUSEC_CALIBRATION``)."""
    return knobs.CALIBRATION.value()


@dataclass(frozen=True)
class DeviceCalibration:
    """What the measurements kept for ``device`` say."""

    device: str
    calibration: Calibration

    def describe(self) -> dict:
        """The report's ``calibration`` key."""
        factors = dict(self.calibration.factors)
        return {"device": self.device, "factors": factors, "kernels": len(self.calibration.kernels)}


def device_key(target: Target) -> str | None:
    """``cpu-2core/AMD EPYC 7B13, 2 threads``: the cost model's device and the hardware
    that ran the kernels; ``None`` where the hardware is unknown (nothing is applied
    or kept then)."""
    hardware = target.hardware_name()
    return f"{target.device_model}/{hardware}" if hardware else None


def load(target: Target) -> DeviceCalibration | None:
    """The calibration of the machine ``target`` runs on, from the cache folder."""
    from runtime.calibration_cache import CalibrationFile

    device = device_key(target)
    if device is None:
        return None
    entries = CalibrationFile().load(device)
    # (a key no fusec writes, from a hand-edited file, is left out: no plan reads it)
    factors = {kind: e["factor"] for kind, e in entries.kinds.items() if kind in FACTOR_KEYS}
    kernels = {signature: e["measured_us"] for signature, e in entries.kernels.items()}
    return DeviceCalibration(device, Calibration(factors, kernels))


# -- which measurements are trusted -----------------------------------------------


#: why a measurement is not kept (``Verdict.rejected``)
DISAGREE = "with repeats that disagree"
LONGER = "longer than the whole call"
INCONSISTENT = "inconsistent with the whole call"


@dataclass(frozen=True)
class Verdict:
    """A fusion group's measurement: its median over the rounds, and why it is not
    kept (``rejected``, one of the reasons above, ``None``: kept; ``detail``: the numbers)."""

    kernel: str
    measured_us: float
    rejected: str | None = None
    detail: str = ""


def screen(kernels: Sequence[str], times: KernelTimes) -> list[Verdict]:
    """The measurements of the fusion groups ``kernels`` (a group split into library
    calls and kernels takes their sum, ``bench.group_measured_us``), each kept only
    when its rounds agree within ``SPREAD``, it is no longer than the whole call,
    and the kernels together are consistent with the whole call (``SUM_SLACK``).
    Groups nothing was measured of (run on the host) get no verdict."""
    from compiler.bench import group_measured_us

    whole_us = statistics.median(times.program)
    rounds_count = len(times.program)
    verdicts: list[Verdict] = []
    for kernel in kernels:
        rounds = [group_measured_us(times.round(i), kernel) for i in range(rounds_count)]
        measured = [us for us in rounds if us is not None]
        if len(measured) < rounds_count or not all(us > 0 for us in measured):
            continue
        median = statistics.median(measured)
        spread = (max(measured) - min(measured)) / median
        if spread > SPREAD:
            verdicts.append(Verdict(kernel, median, DISAGREE, f"spread {spread:.0%} > {SPREAD:.0%}"))
        elif median > whole_us:
            verdicts.append(Verdict(kernel, median, LONGER, f"{median:.3f} us > {whole_us:.3f} us"))
        else:
            verdicts.append(Verdict(kernel, median))
    total = sum(v.measured_us for v in verdicts)
    if total > SUM_SLACK * whole_us:
        detail = f"the kernels add up to {total:.3f} us, the whole call {whole_us:.3f} us"
        verdicts = [v if v.rejected else Verdict(v.kernel, v.measured_us, INCONSISTENT, detail) for v in verdicts]
    return verdicts


def describe_verdicts(verdicts: Sequence[Verdict], device: str) -> list[str]:
    """``--bench``'s lines on what was kept and what was rejected (one each), the
    rejected grouped by reason."""
    kept = [v for v in verdicts if v.rejected is None]
    lines = [f"calibration: {len(kept)} kernel time(s) kept for {device}"]
    by_reason: dict[str, list[Verdict]] = {}
    for v in verdicts:
        if v.rejected is not None:
            by_reason.setdefault(v.rejected, []).append(v)
    parts = []
    for reason, rejected in by_reason.items():
        if reason == INCONSISTENT:  # one detail for them all
            parts.append(f"{len(rejected)} {reason} ({rejected[0].detail})")
            continue
        named = ", ".join(f"{v.kernel} ({v.detail})" for v in rejected[:3])
        parts.append(f"{len(rejected)} {reason}: {named}{', ...' if len(rejected) > 3 else ''}")
    if parts:
        lines.append(f"calibration: {len(verdicts) - len(kept)} rejected: {'; '.join(parts)}")
    return lines


def describe_measured(verdicts: Sequence[Verdict]) -> dict:
    """The report's ``calibration.measured``: the kernels kept, and why each other was not."""
    return {
        "kept": [v.kernel for v in verdicts if v.rejected is None],
        "rejected": {v.kernel: f"{v.rejected} ({v.detail})" for v in verdicts if v.rejected is not None},
    }


def record(device: str, groups: list[Mapping], verdicts: Sequence[Verdict]) -> None:
    """Files the kept measurements among the report's ``groups`` under ``device``:
    each kernel's time, and the run's ratio per kind folded into the kinds' factors as
    the file holds them now, with bounded influence (``KindFactor.update``)."""
    from runtime.calibration_cache import CalibrationFile

    kept = {v.kernel: v.measured_us for v in verdicts if v.rejected is None}
    measured = {
        g["signature"]: {
            "kind": g["kind"],
            "strategy": g.get("strategy"),
            "kernel": g["kernel"],
            "predicted_us": g["predicted_us"],
            "measured_us": kept[g["kernel"]],
        }
        for g in groups
        if g["kernel"] in kept and "signature" in g and g["predicted_us"] > 0
    }
    ratios = run_ratios(
        Observation(m["kind"], m["predicted_us"], m["measured_us"], m["strategy"]) for m in measured.values()
    )
    if not ratios:
        return
    file = CalibrationFile()
    current = {kind: KindFactor(e["factor"], tuple(e["history"])) for kind, e in file.load(device).kinds.items()}
    updated = update_factors(current, ratios)
    kinds = {kind: {"factor": updated[kind].factor, "history": updated[kind].history} for kind in ratios}
    file.store(device, kinds, measured)


# -- fusec --calibration show|reset -----------------------------------------------


def show() -> str:
    """What is kept, per device: each kind's factor, the runs it is the median of and
    when a run last moved it; the kernels measured."""
    from runtime.calibration_cache import CalibrationFile

    file = CalibrationFile()
    if file.path is None:
        return "calibration: no cache folder, so nothing is kept"
    devices = {device: entries for device, entries in file.devices().items() if entries}
    lines = [f"calibration: {file.path}"]
    if not enabled_here():
        lines.append("(FUSEC_CALIBRATION=off in this environment: no compilation uses it)")
    if not devices:
        lines.append("nothing kept: fusec --bench or --autotune measures kernels and keeps their times")
        return "\n".join(lines)
    for device, entries in devices.items():
        lines += ["", f"{device}: {len(entries.kernels)} kernel(s) measured"]
        lines.append(f"  {'kind':<18} {'factor':>7} {'runs':>5}  last moved")
        for kind, e in sorted(entries.kinds.items()):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e["time"]))
            lines.append(f"  {kind:<18} {e['factor']:>7.3f} {len(e['history']):>5}  {when}")
    low, high = FACTOR_RANGE
    bounds = (
        f"(a factor is the median of the last {HISTORY} runs' ratios, within {low:g}..{high:g}, "
        f"moved at most x{STEP:g} a run; it changes a plan only past a {MARGIN:.0%} margin)"
    )
    lines += ["", bounds]
    return "\n".join(lines)


def reset() -> str:
    """Clears what is kept, for every device; raises ``OSError`` where it cannot."""
    from runtime.calibration_cache import CalibrationFile

    file = CalibrationFile()
    return f"calibration: cleared {file.path}" if file.clear() else "calibration: nothing kept; nothing to clear"
