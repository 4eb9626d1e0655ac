"""The live line on standard error while kernels compile (`compiling 12 kernels: 7 done,
5 running`), drawn from the ``fusec.compile`` logger (``runtime.timing.PROGRESS``): shown
once a compile has taken ``DELAY_S``, redrawn at each kernel done, cleared at the end;
never when standard error is not a terminal, nor with `--quiet`."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from runtime.timing import PROGRESS as LOG

#: how long a compile runs before the line shows (a short one never shows it)
DELAY_S = 1.0


class ProgressLine(logging.Handler):
    """Draws the pool's latest message over the last one (a carriage return, the line
    cleared to its end)."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(logging.INFO)
        self.stream = stream
        self._latest = ""
        self._shown = False
        self._timer: threading.Timer | None = None
        self._guard = threading.RLock()  # the timer's thread draws too

    def emit(self, record: logging.LogRecord) -> None:
        done, total = getattr(record, "done", 0), getattr(record, "total", 0)
        with self._guard:
            self._latest = record.getMessage()
            if done == total:
                self._stop()
                return
            if self._shown:
                self._draw(self._latest)
            elif self._timer is None:
                self._timer = threading.Timer(DELAY_S, self._show)
                self._timer.daemon = True
                self._timer.start()

    def _show(self) -> None:
        with self._guard:
            if self._timer is not None:
                self._shown = True
                self._draw(self._latest)

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._shown:
            self._draw("")
            self._shown = False

    def _draw(self, text: str) -> None:
        try:
            self.stream.write(f"\r\x1b[K{text}")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken terminal: no line
            pass


@contextmanager
def shown(stream: TextIO | None = None) -> Iterator[None]:
    """The progress line on ``stream`` (standard error) while the block runs, when it
    is a terminal."""
    stream = stream if stream is not None else sys.stderr
    if not stream.isatty():
        yield
        return
    handler = ProgressLine(stream)
    level = LOG.level
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    try:
        yield
    finally:
        LOG.removeHandler(handler)
        LOG.setLevel(level)
        with handler._guard:
            handler._stop()
