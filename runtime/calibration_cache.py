"""What calibration keeps per device in ``<cache dir>/calibration.json``, from which
the driver calibrates the fusion cost model (``passes/fusion/calibration.py``,
``compiler/calibrate.py``; docs/cache.md, "Calibration").

    {DEVICE: {"kinds": {KIND: {"factor": 1.3, "history": [1.2, 1.3], "time": 1718000000.0}},
              "kernels": {SIGNATURE: {"kind": "reduction", "strategy": null, "kernel": "k0_softmax",
                                      "predicted_us": 41.2, "measured_us": 88.0,
                                      "time": 1718000000.0}}}}

``DEVICE`` is the cost model's device and the hardware it ran on
(``cpu-2core/AMD EPYC 7B13, 2 threads``). ``kinds`` holds each kernel kind's factor
(``default``: of the kinds not measured; ``matmul:library``: of a kind's groups lowered
by one strategy), the bounded ratios of the last runs it is
the median of, and when a run last moved it. ``kernels`` holds each kernel measured
(``SIGNATURE``: its code and sizes), its kind and strategy, the cost model's time before any correction,
the fastest trusted time measured of it and when it was last measured (the oldest
go past ``MAX_KERNELS`` per device).

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
from dataclasses import dataclass, field
from pathlib import Path

from runtime import cache_files

#: entries kept per device: enough for the kernels of many programs and sizes, few
#: enough that reading the file stays quick
MAX_KERNELS = 1000

_KERNEL_NUMBERS = ("predicted_us", "measured_us", "time")


def _number(value: object, positive: bool = True) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value) and (value > 0 or not positive and value >= 0)


def _valid_kernel(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
        return False
    predicted, measured, when = (entry.get(k) for k in _KERNEL_NUMBERS)
    return _number(predicted) and _number(measured) and _number(when, positive=False)


def _valid_kind(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("history"), list):
        return False
    return (
        _number(entry.get("factor"))
        and _number(entry.get("time"), positive=False)
        and all(_number(r) for r in entry["history"])
    )


@dataclass(frozen=True)
class DeviceEntries:
    """What is kept for one device: factors by kind, measurements by kernel signature."""

    kinds: dict[str, dict] = field(default_factory=dict)
    kernels: dict[str, dict] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.kinds or self.kernels)


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
        payload = cache_files.read_sealed(path, cache_files.MAX_JSON_BYTES) if path is not None else None
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

    def _entries(self, path: Path | None, device: str, data: Mapping) -> DeviceEntries:
        """``device``'s valid entries in ``data``; the rest left out with a warning."""
        kept = data.get(device, {})
        kinds, kernels = kept.get("kinds", {}), kept.get("kernels", {})
        if set(kept) - {"kinds", "kernels"} or not isinstance(kinds, dict) or not isinstance(kernels, dict):
            cache_files.warn(
                f"calibration: the entry for {device} in {path} is not this fusec's "
                "(kinds and kernels); ignoring it (fusec --calibration reset clears it)"
            )
            return DeviceEntries()
        entries = DeviceEntries(
            {k: e for k, e in kinds.items() if _valid_kind(e)},
            {s: e for s, e in kernels.items() if _valid_kernel(e)},
        )
        dropped = len(kinds) + len(kernels) - len(entries.kinds) - len(entries.kernels)
        if dropped:
            cache_files.warn(f"calibration: {dropped} entries for {device} in {path} are not measurements; ignoring them")
        return entries

    def load(self, device: str) -> DeviceEntries:
        """What is kept for ``device``."""
        path = self.path
        return self._entries(path, device, self._read(path))

    def devices(self) -> dict[str, DeviceEntries]:
        """What is kept for every device (``fusec --calibration show``)."""
        path = self.path
        data = self._read(path)
        return {device: self._entries(path, device, data) for device in sorted(data)}

    def store(self, device: str, kinds: Mapping[str, Mapping], kernels: Mapping[str, Mapping]) -> None:
        """Sets ``device``'s factors of ``kinds`` (kind -> ``{factor, history}``) and adds
        ``kernels`` (signature -> ``{kind, kernel, predicted_us, measured_us}``), keeping
        the faster time of a kernel measured before; a failure to write is only warned
        about. (Two processes storing at once: one's update may be lost, never the file.)"""
        path = self.path
        if path is None or not (kinds or kernels):
            return
        data = self._read(path)
        entries = self._entries(path, device, data)
        now = time.time()
        for kind, k in kinds.items():
            entries.kinds[kind] = {**k, "history": list(k["history"]), "time": now}
        for signature, m in kernels.items():
            # the fastest trusted time: other processes only ever slow a kernel down
            fastest = min(m["measured_us"], entries.kernels.get(signature, m)["measured_us"])
            entries.kernels[signature] = {**m, "measured_us": fastest, "time": now}
        newest = sorted(entries.kernels.items(), key=lambda item: item[1]["time"], reverse=True)[:MAX_KERNELS]
        data[device] = {"kinds": entries.kinds, "kernels": dict(newest)}
        cache_files.write_json(path, data)

    def clear(self) -> bool:
        """Removes the file (every device's entries); whether there was one. Raises
        ``OSError`` where it cannot be removed."""
        path = self.path
        if path is None or not (path.exists() or path.is_symlink()):
            return False
        path.unlink()
        return True
