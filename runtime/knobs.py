"""Every environment variable fusec reads, declared once: docs/reference.md's table
("Environment") lists the same, and ``tests/runtime/test_knobs.py`` checks that the two
agree and that no other module of fusec reads ``os.environ``.

Each knob is a constant named as its variable without ``FUSEC_``. Its class is its type,
and each type reads its values one way:

- ``Switch``: ``on`` or ``off``, also ``1``/``0``, ``true``/``false``, ``yes``/``no``, in any case;
- ``Number``: a decimal number, ``minimum`` or more (``inf`` is one, ``nan`` is not);
- ``WholeNumber``: a whole number, ``minimum`` or more (``int()``, as Numba reads its own);
- ``Folder``: a path;
- ``Text``: another library's value, which fusec does not parse: it only asks whether
  the variable is set;
- ``LibrarySetting``: another library's variable that fusec sets to a value of its own
  while it is unset (``set_default``), where the library reads it.

Blanks around a value are ignored, and an empty value is the same as none. Any other
value is an ``InputError`` naming the variable, its value and what it takes, raised where
the knob is used, so that ``fusec`` reports it in one line (exit status 1) rather than
reading it as the default.

A knob is read each time it is used, never at import, so a change counts from the next
use. There is no override of its own for tests: a test sets a knob as a user does, with
``monkeypatch.setenv``, which also reaches the processes fusec starts after it (the
compile helper, a ``fusec.Worker``); an override inside this process would not. This
module imports nothing but the errors, so that ``compiler/__init__.py`` can use it
before NumPy is imported.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from runtime.errors import InputError

#: a switch's spellings, either way
SWITCH_VALUES = {"1": True, "on": True, "true": True, "yes": True, "0": False, "off": False, "false": False, "no": False}


@dataclass(frozen=True, kw_only=True)
class Knob(ABC):
    """An environment variable fusec reads (the subclasses are its types)."""

    name: str
    #: what the variable changes: the last column of docs/reference.md's table
    changes: str
    #: what holds while it is unset, where the reader works it out (the table's default)
    default_text: str = ""

    @abstractmethod
    def values(self) -> str:
        """The values it takes, as the table says and the error for any other value."""

    def documented_default(self) -> str:
        """What holds while it is unset, as the table says."""
        return self.default_text

    def text(self) -> str | None:
        """The variable's value, blanks removed; ``None`` when unset or empty."""
        return os.environ.get(self.name, "").strip() or None

    def is_set(self) -> bool:
        return self.text() is not None

    def invalid(self) -> InputError:
        """The error for the value the variable holds, which is not one of ``values``."""
        return InputError(f"{self.name}={os.environ.get(self.name)!r}: expected {self.values()}")


@dataclass(frozen=True, kw_only=True)
class Switch(Knob):
    default: bool

    def values(self) -> str:
        return "on or off (also 1/0, true/false, yes/no, in any case)"

    def documented_default(self) -> str:
        return "on" if self.default else "off"

    def value(self) -> bool:
        text = self.text()
        if text is None:
            return self.default
        if text.lower() not in SWITCH_VALUES:
            raise self.invalid()
        return SWITCH_VALUES[text.lower()]


@dataclass(frozen=True, kw_only=True)
class Number(Knob):
    """A number whose default the reader works out (``None`` while unset)."""

    minimum: float

    def values(self) -> str:
        return f"a number, {self.minimum:g} or more"

    def value(self) -> float | None:
        text = self.text()
        if text is None:
            return None
        try:
            number = float(text)
        except ValueError:
            raise self.invalid() from None
        if math.isnan(number) or number < self.minimum:
            raise self.invalid()
        return number


@dataclass(frozen=True, kw_only=True)
class WholeNumber(Knob):
    """A whole number: ``default`` while unset, or ``None`` where the reader works it
    out (``default_text`` says what it is)."""

    minimum: int
    default: int | None = None

    def values(self) -> str:
        return f"a whole number, {self.minimum} or more"

    def documented_default(self) -> str:
        return self.default_text or f"`{self.default}`"

    def value(self) -> int | None:
        text = self.text()
        if text is None:
            return self.default
        try:
            number = int(text)
        except ValueError:
            raise self.invalid() from None
        if number < self.minimum:
            raise self.invalid()
        return number


@dataclass(frozen=True, kw_only=True)
class Folder(Knob):
    """A folder whose default the reader works out (``None`` while unset)."""

    def values(self) -> str:
        return "a folder"

    def value(self) -> Path | None:
        text = self.text()
        return Path(text) if text is not None else None


@dataclass(frozen=True, kw_only=True)
class Text(Knob):
    """Another library's variable, which fusec only asks about (``is_set``)."""

    #: the values the library takes
    takes: str

    def values(self) -> str:
        return self.takes


@dataclass(frozen=True, kw_only=True)
class LibrarySetting(Knob):
    """Another library's variable, set by fusec to ``fusec_value`` while it is unset."""

    #: the values the library takes
    takes: str
    fusec_value: str

    def values(self) -> str:
        return self.takes

    def documented_default(self) -> str:
        return f"`{self.fusec_value}`, set by fusec"

    def set_default(self) -> None:
        """Sets the variable to ``fusec_value`` while it is unset (or empty)."""
        if not self.is_set():
            os.environ[self.name] = self.fusec_value


CACHE_DIR = Folder(
    name="FUSEC_CACHE_DIR",
    default_text="`~/.cache/fusec`",
    changes="where compiled kernels, autotuned launch parameters and measured kernel times are kept",
)

CALIBRATION = Switch(
    name="FUSEC_CALIBRATION",
    default=True,
    changes="off: every compilation plans as with `--no-calibration` (the test suite sets it)",
)

COMPILE_WORKERS = WholeNumber(
    name="FUSEC_COMPILE_WORKERS",
    minimum=1,
    default_text="the cores this process may use, at most 16",
    changes="the helper processes that compile a call's missing kernels at once; 1: one at a time",
)

CUDA_GRAPHS = Switch(
    name="FUSEC_CUDA_GRAPHS",
    default=True,
    changes="off: a GPU program launches its kernels one by one, as with `--no-graphs`, instead of replaying them as one CUDA graph",
)

CUDA_SYNC_CHECKS = Switch(
    name="FUSEC_CUDA_SYNC_CHECKS",
    default=False,
    changes="on: a GPU call on device arrays waits for its kernels and raises the index out of range (or negative exponent) it recorded itself, rather than the program's next call raising it",
)

PARALLEL_MIN_WORK = Number(
    name="FUSEC_PARALLEL_MIN_WORK",
    minimum=0,
    default_text="1.7 million on two threads (120 µs of one thread's work, which pays for the pool's 60 µs wake), 0.9 million on sixteen; on one thread, never",
    changes="the work (ops) from which a CPU kernel runs on all of Numba's threads rather than on one; 0: always",
)

NUMBA_ENABLE_CUDASIM = WholeNumber(
    name="NUMBA_ENABLE_CUDASIM",
    minimum=0,
    default=0,
    changes="Numba's: not 0, set before Numba is imported, runs `--target cuda` on Numba's CUDA simulator; `--target auto` never picks it",
)

NUMBA_NUM_THREADS = WholeNumber(
    name="NUMBA_NUM_THREADS",
    minimum=1,
    default_text="every core",
    changes="Numba's: the threads of a parallel CPU kernel; fusec keeps the kernel times it measures on the CPU per count",
)

NUMBA_THREADING_LAYER_PRIORITY = Text(
    name="NUMBA_THREADING_LAYER_PRIORITY",
    takes="Numba's: omp, tbb and workqueue in any order, space-separated",
    default_text="`omp tbb workqueue`, set by fusec",
    changes="Numba's order of threading layers, which fusec then leaves alone; fusec sets its own just before Numba's thread pool starts",
)

OPENBLAS_THREAD_TIMEOUT = LibrarySetting(
    name="OPENBLAS_THREAD_TIMEOUT",
    takes="OpenBLAS's: 4 to 30, idle threads spin 2^N cycles (its own default: 28)",
    fusec_value="4",
    changes="how long NumPy's BLAS threads spin before they sleep; fusec sets it when imported, before NumPy loads OpenBLAS (see below)",
)

GOMP_SPINCOUNT = LibrarySetting(
    name="GOMP_SPINCOUNT",
    takes="GNU OpenMP's: spins before an idle thread sleeps (its own default: 300000)",
    fusec_value="0",
    changes="how long the CPU kernels' OpenMP threads spin before they sleep (fusec's: not at all); fusec sets it when imported, before an OpenMP pool starts (see below)",
)


def usable_cores() -> int:
    """The cores this process may run on: what ``NUMBA_NUM_THREADS`` and
    ``COMPILE_WORKERS`` count from when unset."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
