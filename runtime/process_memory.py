"""How much memory a process holds: its resident set size (RSS).

The worker process reports its own after each request (``compiler.worker``), and the
memory benchmark and tests read it. Linux tells the current RSS of any process through
``/proc``; elsewhere only a process's own peak is known (``getrusage``), which is what
a limit on growth needs, since memory a process has grown into is rarely given back.
"""

from __future__ import annotations

import os
import sys


def rss_bytes(pid: int | None = None) -> int | None:
    """The resident memory of process ``pid`` (default: this one) in bytes; ``None``
    where it cannot be read (the process is gone, or it is another process and this
    is not Linux)."""
    try:
        with open(f"/proc/{pid or 'self'}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    if pid not in (None, os.getpid()):
        return None
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere
