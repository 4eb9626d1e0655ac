"""The helper processes fusec starts and how it talks to them: the kernel compile
helper (``runtime.kernel_compiler``) and the worker (``compiler.worker``).

A helper is a fresh Python (not a fork, which would inherit Numba's OpenMP threads
and locks in whatever state they were in; nor ``multiprocessing``'s spawn, which would
import the caller's main script again) running one module's ``serve()``. Requests go
on its standard input, replies come back on its standard output, each a
length-prefixed pickle; it ends at the end of its input.
"""

from __future__ import annotations

import io
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

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


def pipes(process: subprocess.Popen) -> tuple[IO[bytes], IO[bytes]]:
    """A helper's (requests, replies) pipes: its standard input and output, which
    ``start`` opens as pipes."""
    requests, replies = process.stdin, process.stdout
    assert requests is not None and replies is not None
    return requests, replies


def stop(process: subprocess.Popen) -> None:
    """Stops a helper (it exits at the end of its input) and waits for it; one that
    does not exit within ten seconds is killed."""
    requests, replies = pipes(process)
    try:
        requests.close()
        process.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        process.kill()
        process.wait()
    replies.close()


def send(stream: IO[bytes], message: Any) -> None:
    """Writes ``message``: its pickle, then the data of the arrays in it as they lie
    in memory (pickle protocol 5's out-of-band buffers: no copy of a large array into
    the pickle). Pickled whole first, so one that cannot be pickled writes nothing and
    leaves the stream in step."""
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    views = [buffer.raw() for buffer in buffers]
    sizes = [len(data), len(views), *(view.nbytes for view in views)]
    stream.write(b"".join(size.to_bytes(_HEADER, "little") for size in sizes))
    stream.writelines((data, *views))
    stream.flush()


def receive(stream: IO[bytes]) -> Any | None:
    """The next message, or ``None`` at the end of the stream."""
    header = _read(stream, 2 * _HEADER)
    if header is None:
        return None
    size, count = int.from_bytes(header[:_HEADER], "little"), int.from_bytes(header[_HEADER:], "little")
    sizes = _read(stream, count * _HEADER)
    data = _read(stream, size)
    if sizes is None or data is None:
        return None
    buffers = [_read(stream, int.from_bytes(sizes[i : i + _HEADER], "little")) for i in range(0, len(sizes), _HEADER)]
    if any(buffer is None for buffer in buffers):
        return None
    return pickle.loads(data, buffers=buffers)


def _read(stream: IO[bytes], size: int) -> bytearray | None:
    """``size`` bytes read straight into a buffer of their own (an array unpickled
    from it keeps it, uncopied), or ``None`` at the end of the stream."""
    # a helper's pipes and standard input are buffered readers, which typing's IO does
    # not say (it has no readinto)
    reader = cast(io.BufferedIOBase, stream)
    buffer = bytearray(size)
    view, done = memoryview(buffer), 0
    while done < size:
        got = reader.readinto(view[done:])
        if not got:
            return None
        done += got
    return buffer


def serving() -> tuple[BinaryIO, BinaryIO]:
    """In a helper: its (requests, replies) streams. Standard output is kept for the
    replies, and stray prints go to standard error from now on; Ctrl-C, which reaches
    the whole process group, is left to the caller (the helper ends with its input)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return sys.stdin.buffer, replies
