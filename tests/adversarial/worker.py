"""A worker process of the campaign: `python -m tests.adversarial.worker`.

It reads requests from standard input, each a length-prefixed pickle of a `Case`
(None: exit), runs the case's kind on it and answers on the channel it was started with
(its standard output at start; everything printed afterwards goes to standard error,
so that a kernel or a library printing cannot corrupt an answer). An answer is
(index, failures, seconds). The parent kills a worker whose case overruns its time and
reads a worker that died without answering as a crash of that case.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import time

HEADER = struct.Struct("!Q")


def read_message(stream):
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return EOFError
    (length,) = HEADER.unpack(header)
    data = stream.read(length)
    if len(data) < length:
        return EOFError
    return pickle.loads(data)


def write_message(stream, message) -> None:
    data = pickle.dumps(message)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def run_case(case):
    """The failures of `case`: what its kind found, or the harness's own exception."""
    from . import kinds
    from .outcome import traceback_failure

    try:
        return kinds.load(case.kind).run(case)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - a kind's runner let something through: report it
        return [traceback_failure(f"{case.kind}: uncaught", error)]


def main() -> None:
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints from here on (kernels, libraries) go to standard error
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    while True:
        case = read_message(requests)
        if case is None or case is EOFError:
            return
        started = time.monotonic()
        failures = run_case(case)
        write_message(channel, (case.index, failures, time.monotonic() - started))


if __name__ == "__main__":
    main()
