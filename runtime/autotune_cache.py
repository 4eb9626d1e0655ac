"""Launch parameters of GPU kernels, and the file the autotuner keeps its results in.

``fusec --autotune`` (``runtime.autotune``) times each kernel of a program under a few
``Tuning``s and keeps the fastest, per GPU, kernel and shapes, in
``<cache dir>/autotune.json``; a normal run reads that file and uses what it finds
there, else the ``map-gpu`` defaults, and never tunes by itself.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from runtime.kernel_cache import cache_dir as kernel_cache_dir


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
        return cls(**{k: int(v) for k, v in data.items() if k in ("threads", "per_thread", "max_registers")})


class TuningCache:
    """``autotune.json``: GPU name -> kernel key -> shapes -> the best ``Tuning``.

    A file that cannot be read or parsed is treated as empty (the defaults are always
    correct, only slower); it is rewritten whole, atomically."""

    FILE = "autotune.json"

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = directory
        self._entries: dict | None = None

    @property
    def path(self):
        return kernel_cache_dir(self.directory) / self.FILE

    def _load(self) -> dict:
        if self._entries is None:
            try:
                data = json.loads(self.path.read_text())
            except (OSError, ValueError):
                data = {}
            self._entries = data if isinstance(data, dict) else {}
        return self._entries

    @staticmethod
    def gpu() -> str:
        from runtime.device import cuda_module, simulated

        if simulated():
            return "simulator"
        name = cuda_module().get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)

    @staticmethod
    def _shapes(shapes) -> str:
        return ";".join("x".join(map(str, s)) for s in shapes)

    def lookup(self, kernel: str, shapes) -> Tuning | None:
        entry = self._load().get(self.gpu(), {}).get(kernel, {}).get(self._shapes(shapes))
        if not isinstance(entry, dict):
            return None
        try:
            return Tuning.from_dict(entry)
        except (TypeError, ValueError):
            return None

    def store(self, kernel: str, shapes, tuning: Tuning) -> None:
        entries = self._load()
        entries.setdefault(self.gpu(), {}).setdefault(kernel, {})[self._shapes(shapes)] = tuning.describe()
        tmp = self.path.with_name(f"{self.FILE}.{os.getpid()}")
        tmp.write_text(json.dumps(entries, indent=1, sort_keys=True))
        os.replace(tmp, self.path)
