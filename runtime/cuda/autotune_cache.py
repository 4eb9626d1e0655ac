"""Launch parameters of GPU kernels, and the file the autotuner keeps its results in.

``fusec --autotune`` (``runtime.cuda.autotune``) times each kernel of a program under a few
``Tuning``s and keeps the fastest, per GPU, kernel and shapes, in
``<cache dir>/autotune.json``; a normal run reads that file and uses what it finds
there, else the ``map-gpu`` defaults, and never tunes by itself.

The file is sealed like every cache file (``runtime.cache_files``), and every value
read from it is checked against what the autotuner could have written: a damaged file
or a value out of range is ignored (the defaults are always correct, only slower).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from runtime import cache_files
from runtime.kernel_cache import cache_dir as kernel_cache_dir

#: the values each field of a tuning may take: the autotuner's candidates are powers
#: of two in these ranges, so anything else in the file was not written by it
LIMITS = {"threads": (32, 1024), "per_thread": (1, 64), "max_registers": (16, 255)}


@dataclass(frozen=True)
class Tuning:
    """Launch parameters that replace a kernel's ``map-gpu`` defaults: threads per
    block, elements per thread, and a cap on registers per thread (more blocks fit an
    SM, so more loads are in flight)."""

    threads: int | None = None
    per_thread: int | None = None
    max_registers: int | None = None

    def describe(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict) -> Tuning:
        """The tuning ``data`` describes; ``ValueError`` when a value is not one the
        autotuner could have chosen."""
        values = {k: v for k, v in data.items() if k in LIMITS}
        for name, value in values.items():
            low, high = LIMITS[name]
            if type(value) is not int or not low <= value <= high:
                raise ValueError(f"{name}={value!r} is out of range")
            if name != "max_registers" and value & (value - 1):
                raise ValueError(f"{name}={value} is not a power of two")
        return cls(**values)


class TuningCache:
    """``autotune.json``: GPU name -> kernel key -> shapes -> the best ``Tuning``.

    A file that cannot be read, is damaged or does not parse is treated as empty; it is
    rewritten whole, atomically, and a failure to write it is only warned about."""

    FILE = "autotune.json"

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = directory
        self._entries: dict | None = None

    @property
    def path(self) -> Path | None:
        """The file, or ``None`` where there is no cache folder at all."""
        root = kernel_cache_dir(self.directory)
        return root / self.FILE if root is not None else None

    def _load(self) -> dict:
        if self._entries is None:
            self._entries = cache_files.read_json(self.path)
        return self._entries

    @staticmethod
    def gpu() -> str:
        from runtime.cuda.device import gpu_name, simulated

        return "simulator" if simulated() else gpu_name()

    @staticmethod
    def _shapes(shapes) -> str:
        return ";".join("x".join(map(str, s)) for s in shapes)

    def lookup(self, kernel: str, shapes) -> Tuning | None:
        kernels = self._load().get(self.gpu())
        shapes_seen = kernels.get(kernel) if isinstance(kernels, dict) else None
        entry = shapes_seen.get(self._shapes(shapes)) if isinstance(shapes_seen, dict) else None
        if not isinstance(entry, dict):
            return None
        try:
            return Tuning.from_dict(entry)
        except ValueError:
            return None

    def store(self, kernel: str, shapes, tuning: Tuning) -> None:
        entries = self._load()
        kernels = entries.get(self.gpu())
        if not isinstance(kernels, dict):
            kernels = entries[self.gpu()] = {}
        shapes_seen = kernels.get(kernel)
        if not isinstance(shapes_seen, dict):
            shapes_seen = kernels[kernel] = {}
        shapes_seen[self._shapes(shapes)] = tuning.describe()
        cache_files.write_json(self.path, entries)
