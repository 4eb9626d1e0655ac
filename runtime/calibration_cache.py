"""Measured kernel times, kept per device in ``<cache dir>/calibration.json``, from which
the driver calibrates the fusion cost model (``passes/fusion/calibration.py``).

    {DEVICE: {SIGNATURE: {"kind": "reduction", "kernel": "k0_softmax",
                          "predicted_us": 41.2, "measured_us": 88.0, "time": 1718000000.0}}}

``DEVICE`` is the cost model's device and the hardware it ran on
(``cpu-2core/AMD EPYC 7B13, 2 threads``); ``SIGNATURE`` identifies a kernel and its
sizes; ``predicted_us`` is the cost model's time before any correction,
``measured_us`` the fastest time measured of the kernel, ``time`` when it was last
measured (the oldest entries go past ``MAX_KERNELS`` per device).

The file is sealed like every cache file (``runtime.cache_files``). A file that
cannot be read, is damaged, does not parse or holds entries that are not
measurements is ignored, entirely or those entries, with a warning: without it
fusec plans with the cost model alone, which is always correct, only less tuned.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path

from runtime import cache_files

#: entries kept per device: enough for the kernels of many programs and sizes, few
#: enough that reading the file stays quick
MAX_KERNELS = 1000

_NUMBERS = ("predicted_us", "measured_us", "time")


def _valid(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
        return False
    numbers = [entry.get(k) for k in _NUMBERS]
    return all((type(v) is int or type(v) is float) and math.isfinite(v) and v >= 0 for v in numbers) and all(numbers[:2])


class CalibrationFile:
    """``calibration.json`` in the cache folder (``directory``, else the kernel cache's)."""

    FILE = "calibration.json"

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = directory

    @property
    def path(self) -> Path | None:
        """The file, or ``None`` where there is no cache folder at all."""
        from runtime.kernel_cache import cache_dir

        root = cache_dir(self.directory)
        return root / self.FILE if root is not None else None

    def _read(self, path: Path | None) -> dict:
        payload = cache_files.read_sealed(path) if path is not None else None
        if payload is None:
            return {}
        try:
            data = json.loads(payload)
        except ValueError as error:
            cache_files.warn(f"calibration: {path} is not JSON ({error}); ignoring it")
            return {}
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            cache_files.warn(f"calibration: {path} does not hold measurements by device; ignoring it")
            return {}
        return data

    def load(self, device: str) -> dict[str, dict]:
        """The measurements of ``device`` by kernel signature; entries that are not
        measurements are left out, with a warning."""
        path = self.path
        entries = self._read(path).get(device, {})
        valid = {s: e for s, e in entries.items() if _valid(e)}
        if len(valid) < len(entries):
            cache_files.warn(
                f"calibration: {len(entries) - len(valid)} entries for {device} in {path} "
                "are not measurements; ignoring them"
            )
        return valid

    def store(self, device: str, measured: Mapping[str, Mapping]) -> None:
        """Adds ``measured`` (kernel signature -> ``{kind, kernel, predicted_us,
        measured_us}``) to ``device``'s entries, keeping the faster time of a kernel
        measured before; a failure to write is only warned about. (Two processes
        storing at once: one's new entries may be lost, never the file.)"""
        path = self.path
        if path is None or not measured:
            return
        data = self._read(path)
        entries = {s: e for s, e in data.get(device, {}).items() if _valid(e)}
        now = time.time()
        for signature, m in measured.items():
            # the fastest time seen: other processes only ever slow a kernel down
            fastest = min(m["measured_us"], entries.get(signature, m)["measured_us"])
            entries[signature] = {**m, "measured_us": fastest, "time": now}
        newest = sorted(entries.items(), key=lambda item: item[1]["time"], reverse=True)[:MAX_KERNELS]
        data[device] = dict(newest)
        cache_files.write_json(path, data)
