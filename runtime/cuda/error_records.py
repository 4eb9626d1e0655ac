"""Reading the kernels' error records: an index out of range, a negative integer exponent
(docs/reference.md, "Numerics").

A kernel that checks a value writes the first failure it meets into its error record, a
small device array that stays zero otherwise. The general path reads a record right after
its kernel (``raise_recorded``), which waits for the GPU; a shape's first call waits
anyway, compiling and loading its kernels.

A call on device arrays whose shapes were seen before (the packed launches, the CUDA
graph) returns as soon as its work is queued, as a PyTorch or CuPy call does. Waiting for
its records there would leave the GPU idle while the host prepares the next call: 0.2 ms
of a 0.72 ms call of a two-layer GPT-2 in bf16 on an H100, whose embeddings check their
ids. So ``RecordReads`` queues a copy of the call's records into pinned host memory behind
its kernels, with an event, and reads the copies whose events have passed at the start of
the program's next call, which raises an earlier call's failure before it queues anything,
as a device-side assert of PyTorch's CUDA kernels surfaces at a later call.
``FUSEC_CUDA_SYNC_CHECKS=on`` waits at the end of each call instead, so that a call raises
its own failure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from dialects import loop
from runtime.cuda.device import cuda_module
from runtime.cuda.launch import core_stream, numba_stream
from runtime.errors import recorded_error

#: copies queued and not yet read, per program: a host this many calls ahead of the GPU
#: waits for the oldest
MAX_PENDING = 16


class CheckedLaunch(Protocol):
    """A launch whose kernel checks values: its name, its checks (``loop.check_descriptions``)
    and its buffers, the error record last."""

    kernel: str
    checks: tuple[tuple[str, str], ...]
    workspaces: tuple[Any, ...]


def raise_recorded(step: CheckedLaunch, stream: int) -> None:
    """Raises the error ``step``'s kernel recorded, if any, waiting for it on ``stream``.
    A record is zero until a check fails, so it is cleared only after a failure."""
    record = step.workspaces[-1]
    numba = numba_stream(stream)
    found = record.copy_to_host(stream=numba)
    numba.synchronize()
    if found[0]:
        _clear(step, numba)
        raise recorded_error(step.kernel, step.checks, found)


def _clear(step: CheckedLaunch, numba: Any) -> None:
    step.workspaces[-1].copy_to_device(np.zeros(loop.ERROR_RECORD_LENGTH, np.int64), stream=numba)
    numba.synchronize()


@dataclass
class _Copy:
    """Pinned host memory for one call's records, and the event recorded after its copy."""

    host: np.ndarray  # (records, ERROR_RECORD_LENGTH) int64
    event: Any = None  # (``cuda.core``'s: Numba's simulator has no event to query)


@dataclass
class _Pending:
    steps: Sequence[CheckedLaunch]
    copy: _Copy
    stream: int
    spare: list[_Copy]  # where ``copy`` goes back once read


@dataclass
class RecordReads:
    """A program's queued reads of its calls' error records, oldest first."""

    pending: deque[_Pending] = field(default_factory=deque)

    def queue(self, steps: Sequence[CheckedLaunch], stream: int, spare: list[_Copy]) -> None:
        """Copies the records of ``steps`` into pinned memory behind the call just queued on
        ``stream``; ``spare``: the copies of these shapes already read, used again."""
        while len(self.pending) >= MAX_PENDING:
            self.raise_earlier(wait_for=1)
        if spare:
            copy = spare.pop()
        else:
            copy = _Copy(cuda_module().pinned_array((len(steps), loop.ERROR_RECORD_LENGTH), np.int64))
        numba = numba_stream(stream)
        for k, step in enumerate(steps):
            step.workspaces[-1].copy_to_host(copy.host[k], stream=numba)
        copy.event = core_stream(stream).record(copy.event)
        self.pending.append(_Pending(steps, copy, stream, spare))

    def raise_earlier(self, wait_for: int = 0) -> None:
        """Reads the queued copies whose calls have finished, in order (waiting for the
        first ``wait_for`` of them), and raises the first failure one recorded."""
        waited = 0
        while self.pending:
            read = self.pending[0]
            if waited < wait_for:
                read.copy.event.sync()
                waited += 1
            elif not read.copy.event.is_done:
                return
            self.pending.popleft()
            read.spare.append(read.copy)
            for step, found in zip(read.steps, read.copy.host):
                if found[0]:
                    error = recorded_error(step.kernel, step.checks, found)
                    self._forget(read)
                    raise type(error)(f"{error} (in an earlier call, whose kernels ran after it returned)")

    def _forget(self, failed: _Pending) -> None:
        """After a failure: the later copies, which may hold the same record, dropped once
        their calls finish, and every record found set cleared (one error is raised)."""
        reads = [failed]
        while self.pending:
            read = self.pending.popleft()
            read.copy.event.sync()
            read.spare.append(read.copy)
            reads.append(read)
        for read in reads:
            numba = numba_stream(read.stream)
            for step, found in zip(read.steps, read.copy.host):
                if found[0]:
                    _clear(step, numba)
