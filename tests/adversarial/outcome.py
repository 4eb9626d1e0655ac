"""What a campaign case ends in: the classes of failure, a failure with its reproducer,
and the helpers kinds use to classify what they saw."""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from tests.frontend.fuzz import TRACEBACK_TEXT  # noqa: F401 - the kinds' one test for a traceback

ROOT = Path(__file__).resolve().parents[2]

# the classes a failure falls in, in the order the table shows them
WRONG = "wrong result"
TRACEBACK = "traceback"
CRASH = "crash/signal"
HANG = "hang"
CLOBBERED = "clobbered file"
NONDETERMINISM = "nondeterminism"
CLASSES = (WRONG, TRACEBACK, CRASH, HANG, CLOBBERED, NONDETERMINISM)


@dataclass(frozen=True)
class Case:
    """Case `index` of a kind in the campaign of `seed`: the same case on every run."""

    kind: str
    seed: int
    index: int

    def rng_seed(self) -> str:
        """The seed of the case's own `random.Random` (a string: Python hashes it stably)."""
        return f"{self.kind}:{self.seed}:{self.index}"

    def command(self) -> str:
        return f"python -m tests.adversarial --kinds {self.kind} --seed {self.seed} --only {self.index}"


@dataclass
class Failure:
    """One thing wrong with a case. `key` groups failures of one cause (the class, and a
    short description without the case's particulars); `files` is the reproducer: file
    name -> text or bytes (a program, its inputs, the command that shows the fault)."""

    cls: str
    key: str
    detail: str
    files: dict[str, str | bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        assert self.cls in CLASSES, self.cls


def where(error: BaseException) -> str:
    """The exception's type and the innermost frame of the project's code that raised it:
    a traceback's group key (the message varies with the case)."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f.filename.startswith(str(ROOT)) and "/tests/" not in f.filename] or frames[-1:]
    if not ours:
        return type(error).__name__
    return f"{type(error).__name__} at {ours[-1].filename.removeprefix(str(ROOT) + '/')}:{ours[-1].lineno}"


def traceback_failure(what: str, error: BaseException, files: dict[str, str | bytes] | None = None) -> Failure:
    """An exception that is not one of fusec's documented errors."""
    return Failure(TRACEBACK, f"{what}: {where(error)}", f"{what}: {traceback.format_exc()}", files or {})


def last_exception_line(stderr: str) -> str:
    """The exception line ending a Python traceback in `stderr` (its group key)."""
    lines = [line for line in stderr.strip().splitlines() if line and not line.startswith(" ")]
    return lines[-1][:160] if lines else "no message"


def signal_name(returncode: int) -> str:
    import signal

    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def stable(text: str) -> str:
    """`text` with its numbers, paths and quoted names blanked: one key for the faults
    of one cause that differ in their particulars."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"(/[\w.+-]+)+", "PATH", text)
    return re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)[:160]


#: the address space a command the campaign starts may take: one reading a file that never
#: ends (/dev/zero) must fail on its own, not take the machine's memory with it
MEMORY_LIMIT = 8 << 30


def limit_memory() -> None:
    """`preexec_fn` of the commands a kind starts."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
