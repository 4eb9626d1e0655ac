"""The driver's side of calibration (``passes/fusion/calibration.py``): which device
measurements are kept under, the ``Calibration`` the planner and the report get from
them, and filing new measurements (``runtime/calibration_cache.py``).

Calibration is on unless the program was compiled with ``calibrate=False``
(``fusec --no-calibration``) or ``FUSEC_CALIBRATION=off`` is in the environment
(the test suite sets it: measurements a developer made must not change the plans
the tests expect).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from passes.fusion.calibration import Calibration, Observation
from runtime import knobs
from runtime.target import Target


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
    observations = {
        signature: Observation(e["kind"], e["predicted_us"], e["measured_us"]) for signature, e in entries.items()
    }
    return DeviceCalibration(device, Calibration.fit(observations))


def record(device: str, groups: list[Mapping], measured_us: Mapping[str, float]) -> int:
    """Files the measured kernels (``measured_us`` by launch name; a group split into
    library calls and kernels takes their sum) among the report's ``groups`` under
    ``device``; returns how many."""
    from compiler.bench import group_measured_us
    from runtime.calibration_cache import CalibrationFile

    measured = {}
    for g in groups:
        us = group_measured_us(measured_us, g["kernel"])
        if "signature" in g and g["predicted_us"] > 0 and us is not None and us > 0:
            measured[g["signature"]] = {
                "kind": g["kind"],
                "kernel": g["kernel"],
                "predicted_us": g["predicted_us"],
                "measured_us": us,
            }
    CalibrationFile().store(device, measured)
    return len(measured)
