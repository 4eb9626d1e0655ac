"""The helper processes fusec starts and how it talks to them: the kernel compile
helper (``runtime.kernel_compiler``) and the worker (``compiler.worker``).

A helper is a fresh Python (not a fork, which would inherit Numba's OpenMP threads
and locks in whatever state they were in; nor ``multiprocessing``'s spawn, which would
import the caller's main script again) running one module's ``serve()``. Requests go
on its standard input, replies come back on its standard output, each a
length-prefixed pickle; it ends at the end of its input.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO

_HEADER = 8  # bytes of a message's length

#: runs in the helper: the package root first on the path, so that it imports this
#: fusec, whatever the working directory holds
_BOOT = "import sys; sys.path.insert(0, {root!r}); from {module} import serve; serve()"


def start(module: str) -> subprocess.Popen:
    """A helper process running ``module.serve()``; `OSError` when it cannot start."""
    root = str(Path(__file__).resolve().parent.parent)
    return subprocess.Popen(
        [sys.executable, "-c", _BOOT.format(root=root, module=module)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        close_fds=True,
    )


def send(stream: BinaryIO, message: Any) -> None:
    """Writes ``message``; pickled whole first, so one that cannot be pickled writes
    nothing and leaves the stream in step."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(_HEADER, "little") + data)
    stream.flush()


def receive(stream: BinaryIO) -> Any | None:
    """The next message, or ``None`` at the end of the stream."""
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        return None
    size = int.from_bytes(header, "little")
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def serving() -> tuple[BinaryIO, BinaryIO]:
    """In a helper: its (requests, replies) streams. Standard output is kept for the
    replies, and stray prints go to standard error from now on; Ctrl-C, which reaches
    the whole process group, is left to the caller (the helper ends with its input)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return sys.stdin.buffer, replies
