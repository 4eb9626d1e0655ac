"""The peak of quantities sampled in a thread while a block runs (the Dask benchmarks:
the workers' resident memory, each card's used memory)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping


class PeakSampler:
    """Calls `read` (name -> quantity) every `every` seconds while the block runs;
    `peak[name]` is the largest value read of each name, `first` the values before it."""

    def __init__(self, read: Callable[[], Mapping[str, int]], every: float = 0.1):
        self.read = read
        self.first = dict(read())
        self.peak = dict(self.first)
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            with contextlib.suppress(Exception):  # (a worker that just died: its last value stands)
                for name, value in self.read().items():
                    self.peak[name] = max(self.peak.get(name, 0), value)
            self.stop.wait(self.every)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
