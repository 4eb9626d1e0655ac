"""Python's cyclic garbage collector run less often while fusec builds and rewrites IR.

A compile allocates hundreds of thousands of small objects (operations, attributes, SSA
values, the planner's summaries) and frees few of them until it ends. At the default
threshold (a young collection every 700 allocations) the collector walks that growing heap
again and again for nothing: a program of 8,000 elementwise statements spent 18% of its
compile (6.5 s to reach loops) collecting on the 2-core CI machine, 5.3 s with the
threshold below. Reference counting still frees everything at once; only the search for
cycles waits. The caller's thresholds come back when the outermost compile step ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: allocations between young collections while compiling (Python's default: 700)
COMPILE_THRESHOLD = 50_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, young collections every ``COMPILE_THRESHOLD`` allocations;
    nested and concurrent blocks share one raise, undone by the last to end."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(COMPILE_THRESHOLD, _saved[0]), *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
