"""Python's cyclic garbage collector paused while fusec builds IR or compiles kernels.

A compile allocates hundreds of thousands of small objects (operations, attributes, SSA
values, the planner's summaries; Numba's IR and types when it compiles a kernel) and frees
few of them until it ends. At the default threshold (a young collection every 700
allocations) the collector walks that growing heap again and again for nothing: a program
of 8,000 elementwise statements spent 18% of its compile collecting on the 2-core CI
machine. Measured there: 20,000 statements reach loops in about 12.9 s with a young
collection every 50,000 allocations, 12.6 s with the collector paused (peak memory
267 -> 271 MB: a compile leaves few cycles behind); Numba compiles the f32
flash-attention kernel of samples/attention.tdsl in 7.7 s with the collector on, 6.75 s
paused. Reference counting
still frees everything at once; only the search for cycles waits. The collector comes
back, as the caller had it, when the outermost block ends, and its next young collection
frees the cycles left (a loop of compiles stays at the same memory).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = gc.isenabled()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, no cyclic collection; nested and concurrent blocks share one
    pause, undone by the last to end."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
